"""``justice.tie_break``: the score spread only picks among the judges' scores.

The rubric asks that a variance above 2 trigger "a specific re-evaluation of the evidence
cited". A decision on the spread whose every change to the score takes one of the scores
already given (``final = tech_lead.score``, ``computed_score = t_score``) or a statistic of
them (``statistics.median(scores)``, ``max(...)``, ``sorted(scores)[len(scores) // 2]``)
breaks the tie: it reads no evidence and asks no judge again. A variance rule still (it is
credited as one, `justice.variance`), but the re-evaluation the success pattern names is
missing: no full marks. Read from the lines the decision sets the score on, as written; a
helper call, arithmetic on the scores or a router to a re-evaluation node is something else.
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.exprs import call_name
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.spread_routes import Route, Rule
from automaton_auditor.state import Finding

FACET = "justice.tie_break"
STATISTICS = frozenset({"median", "median_low", "median_high", "max", "min", "mode"})
WRAPPERS = frozenset({"int", "float", "round"})  # a number's form, not a new value


def _picked(value: ast.expr | None) -> bool:
    """Whether `value` is a score already given, or a statistic of the scores given."""
    if isinstance(value, ast.Call) and call_name(value) in WRAPPERS and len(value.args) == 1:
        return _picked(value.args[0])
    if isinstance(value, ast.Name | ast.Attribute):
        return True  # a score read as it is: one judge's, or one held before
    if isinstance(value, ast.Call):  # of the scores, not a clamp (``max(1, base - 1)``)
        return call_name(value).rsplit(".", 1)[-1] in STATISTICS and len(value.args) == 1
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) \
            and isinstance(value.value, ast.Name | ast.Attribute):
        return True  # one score of a table of them (``scores["techlead"]``)
    if isinstance(value, ast.Dict) and value.values:  # the table itself, of scores given
        return all(v is not None and _picked(v) for v in value.values)
    return isinstance(value, ast.Subscript) and call_name(value.value) == "sorted"


def _set_values(repo: Path | None, path: str) -> dict[int, ast.expr]:
    """The value each assignment or return of the file sets, by its line (the file parsed
    once for every line a decision sets the score on)."""
    tree = parse_file(str(repo / path)) if repo is not None else None
    values: dict[int, ast.expr] = {}
    for node in ast.walk(tree) if tree is not None else []:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.Return) and node.value is not None:
            values.setdefault(node.lineno, node.value)  # the first statement of a line
    return values


def tie_break_finding(rules: list[Rule], routes: list[Route], repo: Path | None) -> Finding:
    """``justice.tie_break`` (see the module docstring)."""
    spread = [r for r in rules if r.kind == "spread"]
    scored = [r for r in spread if {"score", "cap"} & set(r.does) and r.sets]
    values = {path: _set_values(repo, path) for path in sorted({r.path for r in scored})}
    picks = sorted({(r.path, line) for r in scored for line in r.sets})
    if len(scored) != len(spread) or not all(
            _picked(values[path].get(line)) for path, line in picks):
        picks = []
    found = bool(picks) and not any(r.feeds for r in routes)
    quoted = [line_at(repo, p, n) for p, n in picks[:6]]
    return Finding(
        facet=FACET, goal="The score spread only picks among the judges' scores (a tie-break, "
        "no re-evaluation of the evidence)", found=found, pattern="failure", confidence=0.7,
        location=f"{picks[0][0]}:{picks[0][1]}" if found else ".",
        content="\n".join(quoted) if found else None,
        rationale=("Every change the score spread makes to the score takes a score already "
                   "given or a statistic of them: " + "; ".join(
                       q.split(": ", 1)[-1].strip() for q in quoted[:3]) + ". No evidence "
                   "is read again and no judge is asked again." if found else
                   "No decision on the score spread only picks among the judges' scores."),
        data={"lines": [f"{p}:{n}" for p, n in picks[:20]]})
