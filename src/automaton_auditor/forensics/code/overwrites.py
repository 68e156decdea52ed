"""Scores a later assignment replaces: ``final = min(final, 3)`` then, further on,
``if variance > 2: final = median``.

A decision of the synthesis sets the score (`Rule.sets`); the verdict is the score's LAST
assignment on each path. An assignment reached later in the same function (forwards: a
loop's next round is another criterion) that binds the same name again without reading the
value the decision set (nor a name derived from it) replaces it: on the paths through it,
the decision decides no verdict. The replacing line runs under the innermost decision
around it (its ``guard``); where that guard tests only the criterion or a judge's presence,
the decision is undone on some criteria only and still holds elsewhere, and where it reads
a detected fact, a later rule on the evidence takes over. Where a guard reads what the
judges say (their scores, the spread, words in an argument), the decision is undone exactly
when that test holds (when the judges disagree, for a spread): a cap so undone gives way to
the judges it should overrule, no override that holds "regardless": the note says the
security override or fact supremacy it was credited as holds only where that test fails (it
stays credited: the cap decides the other verdicts). A replacing line under no
decision makes the decision unused (`unused_decisions`), not this module's business.

No replacement is claimed where the code keeps the decision's bound after all: a test around
the replacing line reads the value it replaces (``if final > 5: final = 4``, a clamp); that
line sets a value within the cap's bound (``final = 1`` after ``min(final, 3)``; ``final =
p_score`` under ``if p_score <= 2``; ``final = tl`` after ``min(final, max(p, tl))``); the
same test caps the score again after it; or the two cannot both run: a test around it
negates the decision's own (``not (is_security and veto)``) or a note its body set (``not
dissent``), or keeps the criterion to values the decision's test excludes (``dim ==
"safe_tool"`` against ``dim in ["graph"]``).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.common import FunctionNode
from automaton_auditor.forensics.code.dead_stores import Flow
from automaton_auditor.forensics.code.exprs import call_name
from automaton_auditor.forensics.code.idle_caps import Bound, test_bounds
from automaton_auditor.forensics.code.named_rules import Lines
from automaton_auditor.forensics.code.paths import in_body
from automaton_auditor.forensics.code.source import code_at, parse_file
from automaton_auditor.forensics.code.spread_routes import Rule

CAPS = ("security_override", "fact_supremacy")  # rules the rubric wants to hold regardless
OPINION = frozenset({"score", "spread", "gap", "words"})  # what the judges say
MAX_NOTES = 2


class Overwrite(NamedTuple):
    """A score a decision sets, replaced further on."""

    rule: Rule  # the decision
    at: int  # the line where it sets the score
    by: int  # the line that replaces it
    guard: Rule | None  # the innermost decision the replacing line runs under
    holds: bool  # the replacing line runs where the guard's test holds (else: where it fails)
    guards: tuple[Rule, ...] = ()  # every decision around the replacing line


def _function(tree: ast.Module, line: int) -> FunctionNode | None:
    spans = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return max(spans, key=lambda n: n.lineno) if spans else None


def _assigned(fn: FunctionNode, line: int) -> ast.Assign | ast.AnnAssign | None:
    return next((n for n in ast.walk(fn) if isinstance(n, ast.Assign | ast.AnnAssign)
                 and n.lineno == line and n.value is not None), None)


def replaced_at(flow: Flow, stmt: ast.stmt, names: set[str]) -> tuple[list[int], set[str]]:
    """The lines reached forwards from `stmt` (no loop's next round) that bind one of `names`
    again without reading it or a name bound from it on the way; and those names."""
    start = flow.spans[id(stmt)][1]
    reached, todo = {start}, [start]
    while todo:
        index = todo.pop()
        fresh = [s for s in flow.nodes[index].succ if s > index and s not in reached]
        reached.update(fresh)
        todo += fresh
    tainted, lines = set(names), []
    for index in sorted(reached - {start}):
        node = flow.nodes[index]
        reads = node.reads.union(*(read for _w, read, _p in node.uses))
        if reads & tainted:
            tainted |= node.kills | {n for written, _r, _p in node.uses for n in written}
        elif node.kills & names:
            lines.append(node.line)
    return lines, tainted


def overwrites(repo: Path | None, rules: list[Rule]) -> list[Overwrite]:
    """Each score a decision sets that a later assignment replaces (module docstring)."""
    found: list[Overwrite] = []
    flows: dict[int, Flow | None] = {}
    for rule in sorted({r._replace(kind="") for r in rules if "score" in r.does and r.sets}):
        tree = parse_file(str(repo / rule.path)) if repo is not None else None
        fn = _function(tree, rule.line) if tree is not None else None
        if tree is None or fn is None:
            continue
        if id(fn) not in flows:
            flows[id(fn)] = Flow.build(fn)
        flow, test = flows[id(fn)], _test_at(fn, rule.line)
        for at in rule.sets:
            stmt = _assigned(fn, at)
            names = {t.id for t in (stmt.targets if isinstance(stmt, ast.Assign) else [
                stmt.target]) if isinstance(t, ast.Name)} if stmt is not None else set()
            if flow is None or stmt is None or id(stmt) not in flow.spans or not names:
                continue
            lines, tainted = replaced_at(flow, stmt, names)
            for by in (n for n in lines if not rule.line <= n <= max(rule.end, rule.line)):
                around = [n for n in _around(fn, by) if not _holds(n, at)]
                later = _assigned(fn, by)
                if later is None or _kept((tree, fn), stmt, later, around, tainted) or any(
                        r.fn == rule.fn and r.line > by and "cap" in r.does and test is not None
                        and (t := _test_at(fn, r.line)) is not None
                        and ast.dump(t) == ast.dump(test) for r in rules):
                    continue  # the same test caps it again
                guards = [r for r in rules if r.fn == rule.fn and r.line in
                          {n.lineno for n in around}]
                guard = max(guards, key=lambda r: (
                    bool(OPINION & set(r.reads)), r.line, r.kind != "words"), default=None)
                found.append(Overwrite(rule, at, by, guard, guard is None or in_body(
                    tree, by, {guard.line}), tuple(sorted({r._replace(kind="")
                                                           for r in guards}))))
    return found


def _test_at(fn: FunctionNode, line: int) -> ast.expr | None:
    return next((n.test for n in ast.walk(fn) if isinstance(n, ast.If) and n.lineno == line),
                None)


def _holds(node: ast.If, line: int) -> bool:
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def _around(fn: FunctionNode, line: int) -> list[ast.If]:
    """The ``if`` statements whose body or ``else`` holds `line`."""
    return [n for n in ast.walk(fn) if isinstance(n, ast.If) and n.lineno < line <= (
        n.end_lineno or n.lineno)]


def _kept(scope: tuple[ast.Module, FunctionNode], cap: ast.Assign | ast.AnnAssign,
          later: ast.Assign | ast.AnnAssign, around: list[ast.If], tainted: set[str]) -> bool:
    """Whether the decision's bound survives the replacing line (module docstring)."""
    if any(isinstance(n, ast.Name) and n.id in tainted for a in around
           for n in ast.walk(a.test)):
        return True  # a clamp on the value itself
    decision = next((n for n in ast.walk(scope[1]) if isinstance(n, ast.If) and any(
        s is cap for s in [*n.body, *n.orelse])), None)
    block = [] if decision is None else decision.body if any(
        s is cap for s in decision.body) else decision.orelse
    # the cap's own test holds where it runs, unless it runs in the ``else``
    test = decision.test if decision is not None and block is decision.body else None
    bound = _bound(cap.value)
    if later.value is not None and bound is not None and _within(
            scope, later.value, bound, test_bounds(test) if test is not None else []):
        return True
    settled = _settled(scope[1], block, later.lineno)
    return any(_excludes(a.test, test, settled) for a in around)


def _settled(fn: FunctionNode, block: list[ast.stmt], before: int) -> dict[str, ast.expr]:
    """The names the cap's block binds (``note = "capped"``, ``variance = 0``) that nothing
    binds to anything else up to `before` (a note, to nothing false): their value there is
    the block's."""
    if not block:
        return {}
    start, end = block[0].lineno, block[-1].end_lineno or block[-1].lineno
    sets = [(t.id, s.value, s.lineno) for s in ast.walk(fn) if isinstance(s, ast.Assign)
            for t in s.targets if isinstance(t, ast.Name)]
    own = {name: value for name, value, line in sets if start <= line <= end}
    # a note set true stays true if everything binding it again binds something true
    return {name: value for name, value in own.items() if all(
        ast.dump(v) == ast.dump(value) or (_truthy(v) and _truthy(value))
        for n, v, line in sets if n == name and start <= line < before)}


def _bound(value: ast.expr | None) -> ast.expr | None:
    """What a cap keeps the score at or under: ``min(final, B)``'s B, a plain value's own."""
    if isinstance(value, ast.Call) and call_name(value) == "min" and len(value.args) == 2:
        return value.args[1] if isinstance(value.args[0], ast.Name) else value.args[0]
    return value


def _number(tree: ast.Module, fn: FunctionNode, node: ast.expr) -> float | None:
    """A number, or a name bound once, in the function or the module, to one
    (``SECURITY_CAP = 3``, ``floor_score = 2.0``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and \
            not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name):
        bound = [s.value for s in [*tree.body, *ast.walk(fn)] if isinstance(s, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == node.id for t in s.targets)]
        return _number(tree, fn, bound[0]) if len(bound) == 1 else None
    return None


def _within(scope: tuple[ast.Module, FunctionNode], value: ast.expr, bound: ast.expr,
            known: list[Bound]) -> bool:
    """Whether `value` is never above `bound`: the same expression, numbers in order (the
    scale's floor, 1 or less, under any cap), a name the decision's test keeps under it, one
    side of a ``max`` bound or of a ``min`` value."""
    if ast.dump(value) == ast.dump(bound):
        return True
    if isinstance(bound, ast.Call) and call_name(bound) == "max":
        return any(_within(scope, value, b, known) for b in bound.args)
    if isinstance(value, ast.Call) and call_name(value) == "min":
        return any(_within(scope, v, bound, known) for v in value.args)
    own, limit = _number(*scope, value), _number(*scope, bound)
    if own is not None and own <= min(1.0, limit if limit is not None else 1.0):
        return True
    return limit is not None and ((own is not None and own <= limit) or any(
        seen == ast.dump(value) and way == "<=" and most <= limit for seen, way, most in known))


def _excludes(guard: ast.expr, test: ast.expr | None, settled: dict[str, ast.expr]) -> bool:
    """Whether `guard` cannot hold where the cap ran: it negates the cap's `test` (or the
    part of it it names) or a note the cap's block set (`settled`), bounds a number that
    block set away from its value (``variance = 0`` against ``variance > 2``), or keeps one
    value to strings `test` keeps it from."""
    own = {ast.dump(c) for c in _conjuncts(test)} if test is not None else set()
    for side in _conjuncts(guard):
        if isinstance(side, ast.UnaryOp) and isinstance(side.op, ast.Not) and ((
                own and {ast.dump(c) for c in _conjuncts(side.operand)} <= own) or (
                    isinstance(side.operand, ast.Name) and _truthy(settled.get(
                        side.operand.id)))):
            return True
    for seen, way, limit in test_bounds(guard):
        value = next((v for name, v in settled.items()
                      if ast.dump(ast.Name(id=name, ctx=ast.Load())) == seen), None)
        number = value.value if isinstance(value, ast.Constant) else None
        if isinstance(number, int | float) and not isinstance(number, bool) and (
                number < limit if way == ">=" else number > limit):
            return True
    theirs, ours = _pinned(guard), _pinned(test) if test is not None else {}
    return any(key in ours and not theirs[key] & ours[key] for key in theirs)


def _truthy(value: ast.expr | None) -> bool:
    return isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.Constant) and bool(value.value))


def _conjuncts(test: ast.expr) -> list[ast.expr]:
    return test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
        else [test]


def _pinned(test: ast.expr) -> dict[str, set[str]]:
    """The strings each value is kept to by a side of an ``and``: ``dim == "x"``, ``dim in
    ("x", "y")``."""
    out: dict[str, set[str]] = {}
    for side in _conjuncts(test):
        if not isinstance(side, ast.Compare) or len(side.ops) != 1:
            continue
        right = side.comparators[0]
        if isinstance(side.ops[0], ast.Eq) and isinstance(right, ast.Constant) and \
                isinstance(right.value, str):
            out[ast.dump(side.left)] = {right.value}
        elif isinstance(side.ops[0], ast.In) and isinstance(right, ast.List | ast.Tuple | ast.Set) \
                and right.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                       for e in right.elts):
            out[ast.dump(side.left)] = {str(e.value) for e in right.elts
                                        if isinstance(e, ast.Constant)}
    return out


def contested(item: Overwrite) -> bool:
    """Whether the replacing line runs on what the judges say (their scores, the spread, the
    words they wrote), not only on the criterion, a judge's presence or a detected fact (a
    later rule on the evidence): the decision gives way to the judges it should overrule."""
    return item.guard is None or any(OPINION & set(g.reads) for g in item.guards)


def overwrite_notes(repo: Path | None, over: list[Overwrite], named: dict[str, Lines]) -> str:
    """``; the score set at p.py:202 (final = min(final, 3)) is replaced at p.py:234 (...)
    where the test at p.py:226 (variance > 2) holds, so it decides no verdict there``, with
    what that costs the rule it was credited as (two replacing lines at most)."""
    notes: list[str] = []
    # the replacements that cost a rule its credit first
    for by in sorted({(o.rule.path, o.by) for o in over},
                     key=lambda b: (not any(contested(o) for o in over
                                            if (o.rule.path, o.by) == b), b))[:MAX_NOTES]:
        items = sorted({o.at: o for o in over if (o.rule.path, o.by) == by}.values(),
                       key=lambda o: o.at)
        first, guard = items[0], items[0].guard
        sets = " and ".join(f"{o.rule.path}:{o.at} ({code_at(repo, o.rule.path, o.at)})"
                            for o in items)
        others = sorted({g.line for g in first.guards} - {guard.line}) if guard else []
        when = "" if guard is None else (
            f" where the test at {guard.path}:{guard.line} ({code_at(repo, guard.path, guard.line)}"
            f") {'holds' if first.holds else 'fails'}" + (
                f" (inside the test{'s' if len(others) > 1 else ''} at "
                f"{', '.join(f'{guard.path}:{n}' for n in others)})" if others else ""))
        lost = sorted({n for o in items if contested(o) for n in CAPS
                       if (o.rule.path, o.rule.line) in named.get(n, [])})
        notes.append(f"; the score set at {sets} is overwritten at {by[0]}:{by[1]} "
                     f"({code_at(repo, *by)}), which does not read it,{when or ' always'}: "
                     "there it decides no verdict" + (
                         f", so its {' or '.join(lost)} holds only where that test fails "
                         "(a cap undone whenever it holds does not hold regardless)"
                         if lost else ""))
    return "".join(notes)

