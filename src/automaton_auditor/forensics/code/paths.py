"""Does a branch change the score? Its paths compared with the paths taken without it.

``if spread > 2: final = sum(s) // len(s); return final, note`` followed by ``final =
sum(s) // len(s); return max(1, min(5, final)), ""`` writes a note on a spread and scores
as if it had not looked: the branch decides the note, not the score. So does a rule nested
in others whose score every later rule and the default give as well.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable

from automaton_auditor.forensics.code.exprs import SCORE_TARGET, call_name, walk_expr

Effect = Callable[[ast.AST], bool]
LOGS = re.compile(r"(^|\.)(print|debug|info|warning|warn|error|exception|log)$")


SETS = ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return
MAX_PATHS = 32  # straight paths compared; more and the branch is left as changing the score


def same_score(body: list[ast.stmt], orelse: list[ast.stmt], rest: list[ast.stmt] | None,
               sets_score: Effect) -> tuple[int, ...]:
    """The lines the path without a branch sets the score on, when the branch (`body`) scores
    exactly as that path (its ``else`` and then `rest`, the code run after the branch up to
    the function's end; None when a loop or handler around it makes that unknown); else ().

    Every straight path of both, a nested ``if`` that sets the score or returns split into
    its two sides, must end in a return and set the same score expressions, each path's
    local names read through its own assignments, a clamp to the scale (``max(1, min(5,
    x))``) aside. Such a branch changes no score, whatever note it writes: ``if spread > 2:
    final = t; return final, note`` followed by later rules and a default that all give
    ``final = t``. `sets_score` says whether a statement or a returned item sets the score."""
    if rest is None:
        return ()
    mine, theirs = _paths([*body, *rest], sets_score), _paths([*orelse, *rest], sets_score)
    if mine is None or theirs is None or not mine:
        return ()
    outcomes = {None if not p or not isinstance(p[-1], ast.Return) else
                _frozen(_path_scores(p, sets_score)) for p in [*mine, *theirs]}
    if len(outcomes) != 1 or None in outcomes or not next(iter(outcomes)):
        return ()  # code after a path that does not return may read what it left behind
    return tuple(sorted({s.lineno for p in theirs for s in p
                         if isinstance(s, SETS) and sets_score(s)}))


def _frozen(scores: set[str] | None) -> frozenset[str] | None:
    return None if scores is None else frozenset(scores)


def _paths(stmts: list[ast.stmt], sets_score: Effect) -> list[list[ast.stmt]] | None:
    """Every straight path through `stmts`, each up to its first return: an ``if`` that sets
    the score or returns is split into its body and its ``else`` (None past MAX_PATHS)."""
    open_: list[list[ast.stmt]] = [[]]
    ended: list[list[ast.stmt]] = []
    for stmt in stmts:
        if isinstance(stmt, ast.If) and (sets_score(stmt) or any(
                isinstance(n, ast.Return) for n in ast.walk(stmt))):
            body, orelse = _paths(stmt.body, sets_score), _paths(stmt.orelse, sets_score)
            if body is None or orelse is None:
                return None
            joined = [p + s for p in open_ for s in [*body, *orelse]]
            ended += [p for p in joined if p and isinstance(p[-1], ast.Return)]
            open_ = [p for p in joined if not p or not isinstance(p[-1], ast.Return)]
        else:
            open_ = [[*p, stmt] for p in open_]
            if isinstance(stmt, ast.Return):
                ended, open_ = ended + open_, []
        if len(open_) + len(ended) > MAX_PATHS:
            return None
        if not open_:
            break
    return ended + open_


def _path_scores(stmts: list[ast.stmt], sets_score: Effect) -> set[str] | None:
    """The score values a straight path sets (None when a nested block sets one)."""
    env: dict[str, ast.expr] = {}
    out: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            out |= {f"return {key}{_dump(_inline(item, env))}"
                    for key, item in _returned(stmt.value, sets_score)}
        elif isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            if stmt.value is None or (isinstance(stmt, ast.Assign) and len(stmt.targets) > 1):
                return None
            value = _inline(stmt.value, env)
            if isinstance(stmt, ast.AugAssign):
                value = ast.BinOp(_inline(target, env), stmt.op, value)
            if sets_score(stmt):
                out.add(f"{_dump(target)} = {_dump(value)}")
            elif not isinstance(target, ast.Name):
                return None  # ``ops[0] = x``: changes what both paths may read
            if isinstance(target, ast.Name):
                env[target.id] = value
        elif isinstance(stmt, ast.Expr) and not _harmless(stmt.value):
            return None  # ``scores.append(t)``: a call may change what the score is made of
        elif not isinstance(stmt, ast.Expr | ast.Pass) and not _nested(stmt, env, sets_score):
            return None  # a nested block that sets a score: paths are not compared
    return out


def _nested(stmt: ast.stmt, env: dict[str, ast.expr], sets_score: Effect) -> bool:
    """True for a nested block that sets no score and changes nothing a score may be made
    of; the names it binds hold values only known at run time, different on each path."""
    if sets_score(stmt):
        return False
    for sub in walk_expr(stmt):
        if isinstance(sub, ast.Expr) and not _harmless(sub.value):
            return False
        if isinstance(sub, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                return False
            env.update({t.id: ast.Name(f"{t.id}@{id(env)}") for t in targets
                        if isinstance(t, ast.Name)})
    return True


def _harmless(value: ast.expr) -> bool:
    """A docstring, or a call that only prints or logs."""
    return isinstance(value, ast.Constant) or bool(LOGS.search(call_name(value)))


def _returned(value: ast.expr, sets_score: Effect) -> list[tuple[str, ast.expr]]:
    """The score items of a returned value: tuple items and dict values that set a score
    (a dict's value under a score-like key, whatever it is)."""
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    out: list[tuple[str, ast.expr]] = []
    for item in items:
        if isinstance(item, ast.Dict):
            out += [(f"[{k.value!r}] ", v) for k, v in zip(item.keys, item.values, strict=True)
                    if isinstance(k, ast.Constant) and (
                        SCORE_TARGET.search(str(k.value)) or sets_score(v))]
        elif sets_score(item):
            out.append(("", item))
    return out


def _inline(node: ast.expr, env: dict[str, ast.expr]) -> ast.expr:
    """`node` with the names the path assigned replaced by their values."""
    class _Sub(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.AST:
            return env.get(name.id, name)
    return unclamped(_Sub().visit(copy.deepcopy(node)))


def unclamped(node: ast.expr) -> ast.expr:
    """``max(1, min(5, x))`` / ``min(5, max(1, x))`` -> ``x``: a clamp to the scale."""
    while isinstance(node, ast.Call) and call_name(node) in ("max", "min") and \
            len(node.args) == 2 and not node.keywords and \
            isinstance(node.args[0], ast.Constant) and call_name(node.args[1]) in (
                "max", "min") and call_name(node.args[1]) != call_name(node):
        inner = node.args[1]
        assert isinstance(inner, ast.Call)
        if len(inner.args) != 2 or not isinstance(inner.args[0], ast.Constant):
            break
        node = inner.args[1]
    return node


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=False)


def judge_fallback(node: ast.IfExp) -> list[ast.AST]:
    """``tl.score if tl else sum(s) // len(s)``: one judge's own score, the other side taken
    only when that judge is missing. The nodes of that other side (a mean there is a
    fallback, not how the verdict is made)."""
    for mine, other in ((node.body, node.orelse), (node.orelse, node.body)):
        owner = mine.value if isinstance(mine, ast.Attribute | ast.Subscript) else None
        key = mine.attr if isinstance(mine, ast.Attribute) else getattr(
            getattr(mine, "slice", None), "value", None)
        if isinstance(owner, ast.Name) and key == "score" and _tests_presence(
                node.test, owner.id, negated=mine is node.orelse):
            return walk_expr(other)
    return []


def _tests_presence(test: ast.expr, name: str, negated: bool) -> bool:
    """``tl`` / ``tl is not None`` (`negated`: ``not tl`` / ``tl is None``)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
            test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        negated ^= isinstance(test.ops[0], ast.Is)
        test = test.left
    return isinstance(test, ast.Name) and test.id == name and not negated


def in_body(tree: ast.AST, line: int, tests: set[int]) -> bool:
    """Whether `line` lies in the body, not the ``else``, of an ``if`` at one of the lines
    `tests` (a statement run only when that test holds)."""
    return any(isinstance(node, ast.If) and node.lineno in tests and node.body[0].lineno <= line
               <= (node.body[-1].end_lineno or node.body[-1].lineno) for node in ast.walk(tree))
