"""Call facts of the whole repository: selecting them by kind, quoting them, and turning them
into a located finding (shared by the safety, structured-output and other finding families);
a failure fact quoting (path, line) pairs (`quoted_finding`); and the dangerous-call facts
(`dangerous_calls`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.state import Finding

MAX_LISTED = 20
MAX_QUOTED = 15  # lines a failure fact quotes from (path, line) pairs


def calls_of(facts: dict[str, JSON], kind: str) -> list[tuple[str, JSON]]:
    """(path, call) pairs of one kind, in path and line order."""
    return [(p, c) for p in sorted(facts) for c in facts[p].get("calls") or []
            if c["kind"] == kind]


def quote_calls(items: list[tuple[str, JSON]]) -> str:
    """`path:line: snippet` lines of the first MAX_LISTED calls."""
    return "\n".join(f"{p}:{c['line']}: {c['snippet']}" for p, c in items[:MAX_LISTED])


def call_finding(facet: str, goal: str, found: bool, pattern: Any,
                 items: list[tuple[str, JSON]], rationale: str, security: bool = False,
                 confidence: float = 0.9,
                 **data: Any) -> Finding:
    """A finding located at the first of `items`, quoting them (at most MAX_LISTED)."""
    loc = f"{items[0][0]}:{items[0][1]['line']}" if items else "."
    return Finding(facet=facet, goal=goal, found=found, pattern=pattern, location=loc,
                   content=quote_calls(items) or None, rationale=rationale, security=security,
                   confidence=confidence,
                   data={"locations": [f"{p}:{c['line']}" for p, c in items[:100]], **data})


def quoted_finding(facet: str, goal: str, found: bool, quotes: list[tuple[str, int]],
                   repo: Path | None, rationale: str, confidence: float, where: str,
                   **data: object) -> Finding:
    """A failure fact quoting the (path, line) `quotes` (the first one is its location)."""
    loc = f"{quotes[0][0]}:{quotes[0][1]}" if quotes else where
    content = "\n".join(line_at(repo, p, n) for p, n in quotes[:MAX_QUOTED]) or None
    return Finding(facet=facet, goal=goal, found=found, pattern="failure", location=loc,
                   content=content, rationale=rationale, confidence=confidence, data=data)


def dangerous_calls(facet: str, goal: str, items: list[tuple[str, JSON]], what: str) -> Finding:
    """A failure fact on shell or interpreter calls: data-driven input is the flaw (a
    security failure); a constant command is poor style, not an injection."""
    tainted = [(p, c) for p, c in items if not c.get("literal")]
    chosen = tainted or items
    if not items:
        return call_finding(facet, goal, False, "failure", [], f"No {what} in the code.")
    text = (f"{len(tainted)} {what} on non-literal input (data reaches a shell or "
            "interpreter)." if tainted else f"{len(items)} {what} with constant input only.")
    return call_finding(facet, goal, True, "failure", chosen, text, security=bool(tainted),
                        confidence=0.9 if tainted else 0.6, tainted=len(tainted), total=len(items))
