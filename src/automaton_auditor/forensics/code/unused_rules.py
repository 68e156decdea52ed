"""``justice.unused_rules``: rules the synthesis code applies that change no score.

A decision `unused_decisions` marks writes, text aside, only what is never read, or what is
bound again before anything reads it, on every path from it: its result is never read (a
cap ``final = min(final, 3)`` that a later ``final = weighted(...)`` always replaces; a
judge pruned from a list that is then built afresh). One `logic` marks ``same`` sets the
score exactly as every path without it does (`paths.same_score`: ``final = t_score`` where
every later rule and the default give ``final = t_score`` too): it gives the same score as
without it. Either changes no score, so `effective` credits it as nothing but the text it
writes (a dissent written on the spread is still one): it is no security override, fact
supremacy, weight, re-evaluation or keyword rule. The fact names each decision the code
would otherwise have credited, as the rule it was credited as, quoting the decision, the
lines it writes on and those that bind its names again, and says which of the two it is. A
failure that costs full marks (`judging.caps`); where it was the only rule, the rules fact
itself no longer holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.spread_routes import SPREAD, Rule
from automaton_auditor.state import Finding

FACET = "justice.unused_rules"
UNCREDITED = ("none", "dead")  # kinds of decision credited as no rule anyway
KINDS = {"words": "a keyword rule", "evidence": "a rule on the evidence",
         "spread": "a rule on the score spread", "dissent": "a dissent rule",
         "score_cap": "a cap on a judge's score", "criterion": "a rule on the criterion",
         "judge": "a rule on a judge", "consensus": "a rule for agreeing judges"}
MAX_LISTED = 4


class Unused(NamedTuple):
    """A credited decision whose result nothing reads."""

    rule: Rule  # as the code would have credited it
    names: tuple[str, ...]  # what it writes
    at: tuple[int, ...]  # the lines it writes them on
    over: tuple[int, ...]  # the lines that bind them again next (none: never read)
    same: bool = False  # it sets the score, as every path without it does (`over`)


def _mark(graph: CallGraph, rule: Rule) -> JSON | None:
    """The ``unused`` mark of the branch a rule was read from, if any, else its ``same``
    mark (with ``same`` set and no names: it sets the score itself)."""
    path, _, qual = rule.fn.rpartition(":")
    logic = (graph.functions.get((path, qual)) or {}).get("logic") or {}
    branch: JSON = next((b for b in logic.get("branches", []) if b["line"] == rule.line), {})
    same = branch.get("same")
    return branch.get("unused") or (same and {**same, "names": [], "same": True})


def effective(graph: CallGraph, rules: list[Rule]) -> tuple[list[Rule], list[Unused]]:
    """The rules as credited, a decision that changes nothing kept only for the text it
    writes; and those decisions."""
    kept: list[Rule] = []
    unused: list[Unused] = []
    for rule in rules:
        mark = _mark(graph, rule) if rule.kind not in UNCREDITED else None
        if mark is None:
            kept.append(rule)
            continue
        unused.append(Unused(rule, tuple(mark["names"]), tuple(mark["at"]),
                             tuple(mark["over"]), bool(mark.get("same"))))
        if "text" in rule.does:
            kept.append(rule._replace(kind="dissent" if SPREAD & set(rule.reads) else "none",
                                      does=("text",), sets=()))
    return kept, unused


def _lines(lines: tuple[int, ...]) -> str:
    return ", ".join(f":{n}" for n in lines[:MAX_LISTED])


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sentence(item: Unused, label: str) -> str:
    """``the decision at p.py:12 (credited as fact supremacy) writes x (:13), which nothing
    reads before :20 binds it again``."""
    rule = item.rule
    kind = label if label in (*KINDS.values(), "a rule") else f"credited as {label}"
    if item.same:
        return (f"the decision at {rule.path}:{rule.line} ({kind}) gives the same score as "
                f"without it: it sets the score ({_lines(item.at)}) as every path without it "
                f"does ({_lines(item.over)})")
    where = f" ({_lines(item.at)})" if item.at else ""
    after = (f", which nothing reads before {_lines(item.over)} "
             f"bind{'s' if len(item.over) == 1 else ''} it again" if item.over
             else ", which nothing reads")
    # the decision is named by its place; the name the rule reading gave it is said apart,
    # since a decision set aside as unused may have been credited for text it only writes
    return (f"the decision at {rule.path}:{rule.line} ({kind}) writes "
            f"{', '.join(item.names)}{where}{after}")


def _goal(same: set[bool]) -> str:
    """The fact's goal, saying which of the two ways the rules found change nothing: their
    result is never read (a value bound again first), or they score as the path without
    them; both when neither or both are found."""
    ways = [w for flag, w in ((False, "its result is never read"),
                              (True, "it gives the same score as without it"))
            if flag in same or not same]
    return f"A rule the synthesis applies changes nothing ({', or '.join(ways)})"


def unused_finding(unused: list[Unused], named: dict[str, list[tuple[str, int]]],
                   repo: Path | None) -> Finding:
    """``justice.unused_rules`` (module docstring); `named`: the named rules as credited
    before the unused decisions were set aside."""
    first: dict[tuple[str, int], Unused] = {}
    for item in sorted(unused, key=lambda u: u.rule):  # one per decision
        first.setdefault((item.rule.path, item.rule.line), item)
    items = list(first.values())
    labels = [next((n.replace("_", " ") for n, lines in named.items()
                    if (u.rule.path, u.rule.line) in lines), KINDS.get(u.rule.kind, "a rule"))
              for u in items]
    quoted = sorted({(u.rule.path, n) for u in items
                     for n in (u.rule.line, *u.at[:2], *(u.over[-2:] if u.same else u.over[:2]))})
    return Finding(
        facet=FACET, goal=_goal({u.same for u in items}), found=bool(items), pattern="failure",
        confidence=0.75,
        location=f"{items[0].rule.path}:{items[0].rule.line}" if items else ".",
        content="\n".join(line_at(repo, p, n) for p, n in quoted[:12]) or None,
        rationale=(_capital("; ".join(_sentence(u, label) for u, label in zip(
                       items, labels, strict=True)))
                   + ": they change no score and are not counted as rules that do." if items else
                   "No rule the synthesis applies is shown to change nothing (what each "
                   "writes may be read later, as far as the code can be followed)."),
        data={"lines": [f"{p}:{n}" for p, n in quoted[:20]],
              "rules": [{"line": f"{u.rule.path}:{u.rule.line}", "rule": label,
                         "names": list(u.names), "at": list(u.at), "over": list(u.over)}
                        for u, label in zip(items, labels, strict=True)]})
