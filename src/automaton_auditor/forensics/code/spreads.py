"""How far the judges' scores lie apart, as code computes and tests it.

A spread is ``max(s) - min(s)`` (directly or through names holding each end). A test on it
points one way: ``spread > 2`` holds when the judges disagree, ``spread <= 1`` when they
agree. A branch taken only when they agree (a median for a consensus), with no ``else``,
changes the score but re-evaluates nothing when they disagree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from automaton_auditor.forensics.code.exprs import call_name

Reads = Callable[[ast.AST], set[str]]


def extreme(node: ast.AST, binds: dict[str, list[ast.expr]], name: str) -> bool:
    """``max(s)`` itself (`name`), or a local name bound only to such a call
    (``max_s = max(scores)``)."""
    if isinstance(node, ast.Name) and binds.get(node.id):
        return all(call_name(b) == name for b in binds[node.id])
    return call_name(node) == name


def is_spread(node: ast.AST, binds: dict[str, list[ast.expr]]) -> bool:
    """``max(s) - min(s)``, directly or through the names holding each end."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and \
        extreme(node.left, binds, "max") and extreme(node.right, binds, "min")


def agreement_test(test: ast.expr, reads: Reads) -> bool:
    """True for a test that holds only when the judges' scores lie close: ``spread <= 1``,
    ``2 > spread``, ``spread == 0``, ``not spread > 2``."""
    return _points(test, reads) == "agree"


def _points(test: ast.expr, reads: Reads) -> str | None:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _points(test.operand, reads)
        return {"agree": "differ", "differ": "agree"}.get(inner or "")
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    left_spread, right_spread = "spread" in reads(left), "spread" in reads(right)
    if left_spread == right_spread:
        return None
    if isinstance(op, ast.Eq):
        return "agree"  # ``spread == 0``: every judge gave the same score
    below = isinstance(op, ast.Lt | ast.LtE)
    if not below and not isinstance(op, ast.Gt | ast.GtE):
        return None
    return "agree" if below == left_spread else "differ"


def squares(node: ast.AST) -> bool:
    """``sum((s - mean) ** 2 for s in scores)``: a sum of squared deviations (a variance's
    numerator), not a sum of scores."""
    return any(isinstance(s, ast.BinOp) and isinstance(s.op, ast.Pow) and
               isinstance(s.left, ast.BinOp) and isinstance(s.left.op, ast.Sub)
               for s in ast.walk(node))


def is_variance(node: ast.AST) -> bool:
    """``sum((s - mean) ** 2 for s in scores) / len(scores)``: a variance of the scores."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and squares(node.left)


def measured(value: ast.expr, reads: set[str]) -> dict[str, bool]:
    """``{"spread": True}`` when a returned `value` (reading `reads`) is a spread itself (a
    helper that measures it), not a verdict returned under a test on one nor a record or a
    text that quotes it (a dict, a tuple, an f-string, an object built with named fields:
    nebiyuephrata's ``return CriterionResult(final_score=..., dissent_summary=...)``); else
    ``{}``."""
    record = isinstance(value, ast.Dict | ast.JoinedStr | ast.Tuple) or (
        isinstance(value, ast.Call) and bool(value.keywords))
    return {"spread": True} if "spread" in reads and not record else {}
