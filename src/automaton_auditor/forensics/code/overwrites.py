"""Scores a later assignment replaces: ``final = min(final, 3)`` then, further on,
``if variance > 2: final = median``.

A decision of the synthesis sets the score (`Rule.sets`); the verdict is the score's LAST
assignment on each path. An assignment reached later in the same function (forwards: a
loop's next round is another criterion) that binds the same name again without reading the
value the decision set (nor a name derived from it) replaces it: on the paths through it,
the decision decides no verdict. The replacing line runs under the innermost decision
around it (its ``guard``); where that guard tests only the criterion or a judge's presence,
the decision is undone on some criteria only and still holds elsewhere. Where the guard
reads the judges' scores, the spread, words or evidence, the decision is undone exactly when
that test holds (when the judges disagree, for a spread): a cap so undone is no override
that holds "regardless", so it is not credited as the security override or fact supremacy
(`uncredit`). A replacing line under no decision makes the decision unused
(`unused_decisions`), not this module's business.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.common import FunctionNode
from automaton_auditor.forensics.code.dead_stores import Flow
from automaton_auditor.forensics.code.named_rules import STEADY, Lines
from automaton_auditor.forensics.code.paths import in_body
from automaton_auditor.forensics.code.source import code_at, parse_file
from automaton_auditor.forensics.code.spread_routes import Rule

CAPS = ("security_override", "fact_supremacy")  # rules the rubric wants to hold regardless
MAX_NOTES = 2


class Overwrite(NamedTuple):
    """A score a decision sets, replaced further on."""

    rule: Rule  # the decision
    at: int  # the line where it sets the score
    by: int  # the line that replaces it
    guard: Rule | None  # the innermost decision the replacing line runs under
    holds: bool  # the replacing line runs where the guard's test holds (else: where it fails)


def _function(tree: ast.Module, line: int) -> FunctionNode | None:
    spans = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return max(spans, key=lambda n: n.lineno) if spans else None


def _assigned(fn: FunctionNode, line: int) -> ast.Assign | ast.AnnAssign | None:
    return next((n for n in ast.walk(fn) if isinstance(n, ast.Assign | ast.AnnAssign)
                 and n.lineno == line and n.value is not None), None)


def replaced_at(flow: Flow, stmt: ast.stmt, names: set[str]) -> list[int]:
    """The lines reached forwards from `stmt` (no loop's next round) that bind one of `names`
    again without reading it or a name bound from it on the way."""
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
    return lines


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
        flow = flows[id(fn)]
        for at in rule.sets:
            stmt = _assigned(fn, at)
            names = {t.id for t in (stmt.targets if isinstance(stmt, ast.Assign) else [
                stmt.target]) if isinstance(t, ast.Name)} if stmt is not None else set()
            if flow is None or stmt is None or id(stmt) not in flow.spans or not names:
                continue
            for by in replaced_at(flow, stmt, names):
                if rule.line <= by <= max(rule.end, rule.line):
                    continue  # its own body's
                guards = [r for r in rules if r.fn == rule.fn and r.line < by <= r.end]
                guard = max(guards, key=lambda r: (r.line, r.kind != "words"), default=None)
                found.append(Overwrite(rule, at, by, guard, guard is None or in_body(
                    tree, by, {guard.line})))
    return found


def contested(item: Overwrite) -> bool:
    """Whether the replacing line runs on what the judges or the evidence say (not only on
    the criterion or a judge's presence): the decision does not hold in those cases."""
    return item.guard is None or not set(item.guard.reads) <= STEADY


def uncredit(named: dict[str, Lines], over: list[Overwrite]) -> dict[str, Lines]:
    """`named` without the caps (`CAPS`) a contested later assignment replaces."""
    undone = {(o.rule.path, o.rule.line) for o in over if contested(o)}
    return {name: [i for i in items if name not in CAPS or i not in undone]
            for name, items in named.items()}


def overwrite_notes(repo: Path | None, over: list[Overwrite], named: dict[str, Lines]) -> str:
    """``; the score set at p.py:202 (final = min(final, 3)) is replaced at p.py:234 (...)
    where the test at p.py:226 (variance > 2) holds, so it decides no verdict there``, with
    what that costs the rule it was credited as (two replacing lines at most)."""
    notes: list[str] = []
    # the replacements that cost a rule its credit first
    for by in sorted({(o.rule.path, o.by) for o in over},
                     key=lambda b: (not any(contested(o) for o in over
                                            if (o.rule.path, o.by) == b), b))[:MAX_NOTES]:
        items = sorted({o.at: o for o in over if (o.rule.path, o.by) == by}.values())
        first, guard = items[0], items[0].guard
        sets = " and ".join(f"{o.rule.path}:{o.at} ({code_at(repo, o.rule.path, o.at)})"
                            for o in items)
        when = "" if guard is None else (
            f" where the test at {guard.path}:{guard.line} ({code_at(repo, guard.path, guard.line)}"
            f") {'holds' if first.holds else 'fails'}")
        lost = sorted({n for o in items if contested(o) for n in CAPS
                       if (o.rule.path, o.rule.line) in named.get(n, [])})
        notes.append(f"; the score set at {sets} is overwritten at {by[0]}:{by[1]} "
                     f"({code_at(repo, *by)}), which does not read it,{when or ' always'}: "
                     "there it decides no verdict" + (
                         f", so it is not counted as {' or '.join(lost)} (a cap undone "
                         "whenever that test holds does not hold regardless)" if lost else ""))
    return "".join(notes)

