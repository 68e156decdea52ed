"""Caps a decision's own test makes idle: ``if p_sc <= 2: final = min(p_sc, 3)``.

The test already keeps the capped value at or under the cap (``p_sc <= 2`` against a cap of
3), so ``min(p_sc, 3)`` is ``p_sc``: the decision sets the score to that value, and the cap
lowers nothing. The same holds for a floor (``if t >= 4: final = max(t, 3)``). The rules fact
still credits the decision for what it does (it sets the score where its test holds); a
note says its cap changes nothing, so the cap is not read as the rubric's "cap at 3".
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.exprs import call_name, number_value
from automaton_auditor.forensics.code.override_reads import override_notes
from automaton_auditor.forensics.code.score_bands import Band
from automaton_auditor.forensics.code.source import parse_file
from automaton_auditor.forensics.code.spread_routes import Rule

# a bound the test puts on a value: (the value's dump, "<=" or ">=", the number)
Bound = tuple[str, str, float]
_FLIP = {ast.LtE: "<=", ast.Lt: "<=", ast.GtE: ">=", ast.Gt: ">="}
_MIRROR = {"<=": ">=", ">=": "<="}
MAX_NOTES = 2


def test_bounds(test: ast.expr) -> list[Bound]:
    """The bounds every case the test holds in satisfies: each side of an ``and`` and one
    comparison of a value with a number (``p_sc <= 2``, ``2 >= p.score``)."""
    sides = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
        else [test]
    out: list[Bound] = []
    for side in sides:
        if not isinstance(side, ast.Compare) or len(side.ops) != 1 or \
                type(side.ops[0]) not in _FLIP:
            continue
        way, right = _FLIP[type(side.ops[0])], side.comparators[0]
        if (limit := number_value(right)) is not None and number_value(side.left) is None:
            out.append((ast.dump(side.left), way, limit))
        elif (limit := number_value(side.left)) is not None and number_value(right) is None:
            out.append((ast.dump(right), _MIRROR[way], limit))
    return out


def _idle(call: ast.Call, bounds: list[Bound]) -> ast.expr | None:
    """The value a ``min(x, 3)`` / ``max(x, 3)`` call always gives under `bounds`, if any."""
    name = call_name(call)
    if name not in ("min", "max") or len(call.args) != 2 or call.keywords:
        return None
    for value, other in (call.args, call.args[::-1]):
        cap = number_value(other)
        if cap is None or number_value(value) is not None:
            continue
        if any(seen == ast.dump(value) and (way, name) in (("<=", "min"), (">=", "max"))
               and (limit <= cap if way == "<=" else limit >= cap)
               for seen, way, limit in bounds):
            return value
    return None


def idle_caps(repo: Path | None, rules: list[Rule]) -> str:
    """A note for each capping decision whose cap its own test makes idle (module
    docstring): ``; the cap min(p_sc, 3) at p.py:43 changes nothing: the test at p.py:42
    (p_sc <= 2) already keeps p_sc within it, so the value there is p_sc`` (two at most)."""
    notes: list[str] = []
    for rule in sorted({r for r in rules if "cap" in r.does}, key=lambda r: (r.path, r.line)):
        tree = parse_file(str(repo / rule.path)) if repo is not None else None
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.If)
                     and n.lineno == rule.line), None) if tree is not None else None
        if node is None or not (bounds := test_bounds(node.test)):
            continue
        for call in (c for s in node.body for c in ast.walk(s) if isinstance(c, ast.Call)):
            kept = _idle(call, bounds)
            if kept is not None and not _rebound(node.body, kept, call.lineno):
                notes.append(f"; the cap {ast.unparse(call)} at {rule.path}:{call.lineno} "
                             f"changes nothing: the test at {rule.path}:{rule.line} "
                             f"({ast.unparse(node.test)}) already keeps {ast.unparse(kept)} "
                             f"within it, so the value there is {ast.unparse(kept)}")
    return "".join(list(dict.fromkeys(notes))[:MAX_NOTES])


def _rebound(body: list[ast.stmt], value: ast.expr, line: int) -> bool:
    """Whether a name the value reads is bound again in the body before `line`."""
    names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names
               and n.lineno < line for s in body for n in ast.walk(s))


def rule_notes(repo: Path | None, rules: list[Rule], facts: dict[str, Any],
               bands: dict[str, Band] | None = None) -> str:
    """What the rules fact adds about its caps: what the overrides read and the rules a
    judge's prompt decides (`override_notes`; `bands`: `score_bands`), and the caps their own
    tests make idle (`idle_caps`)."""
    return override_notes(repo, rules, facts, bands) + idle_caps(repo, rules)
