"""Two audits compared: what changed in the scores, which failure facts are new and which
were resolved, and whether that is a regression (for "why did we score lower than last
week?" and for CI baselines).

Failure facts are matched by facet and where they point, never by evidence id (ids change
with the lines a fact quotes): a file fact by its path (a moved line is the same fact), a
report fact by its goal (pages move when the report is edited), a history fact by its goal
(the commit moves with every change).

A regression is any criterion scored lower (or judged before and not judged now: nothing shows
it still reaches its score, as with ``--fail-on``), or a new failure fact at least as confident
as the baseline was about the same fact (or, when the baseline had no such fact, at least
`NEW_FACT_CONFIDENCE`).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any, Literal

from automaton_auditor.output.document import fact_record
from automaton_auditor.output.locations import parse_location
from automaton_auditor.output.risks import FailureFact, all_evidence, failure_facts
from automaton_auditor.output.summary import fact_headline
from automaton_auditor.state import AuditReport, CriterionResult, Evidence

NEW_FACT_CONFIDENCE = 0.5
WIDTH = 80

MatchKey = tuple[str, str, str]
NOT_JUDGED: Literal["not judged"] = "not judged"
# A criterion's score in one audit: its final score, NOT_JUDGED (its input was unusable, so
# the score is only a placeholder) or None (the criterion is not in that audit).
Score = int | Literal["not judged"] | None


def match_key(facet: str, location: str, goal: str) -> MatchKey:
    """What identifies a fact across two audits."""
    where = parse_location(location)
    if where.in_file and where.path:
        return facet, where.path, ""
    anchor = where.kind if where.kind in ("report", "commit") else where.text
    return facet, anchor, goal


def _key(item: FailureFact | Evidence) -> MatchKey:
    return match_key(item.facet, item.location, item.goal)


@dataclass(frozen=True)
class ScoreChange:
    """One criterion's score in both audits."""

    criterion: str
    name: str
    old: Score
    new: Score

    @property
    def lower(self) -> bool:
        """True when the criterion scored lower than in the baseline, or was judged there
        and is not judged now."""
        if not isinstance(self.old, int):
            return False
        return self.new == NOT_JUDGED or (isinstance(self.new, int) and self.new < self.old)


@dataclass
class ReportDiff:
    """What changed between a baseline audit and a new one."""

    old: AuditReport
    new: AuditReport
    scores: list[ScoreChange]
    new_facts: list[FailureFact] = field(default_factory=list)
    resolved_facts: list[FailureFact] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @property
    def regression(self) -> bool:
        """True when the new audit is worse: exit 1."""
        return bool(self.reasons)

    @property
    def changed_scores(self) -> list[ScoreChange]:
        """The criteria whose score changed, appeared or disappeared."""
        return [s for s in self.scores if s.old != s.new]


def _score(criteria: dict[str, CriterionResult], cid: str) -> Score:
    result = criteria.get(cid)
    if result is None:
        return None
    return result.final_score if result.judged else NOT_JUDGED


def _scores(old: AuditReport, new: AuditReport) -> list[ScoreChange]:
    before = {c.dimension_id: c for c in old.criteria}
    after = {c.dimension_id: c for c in new.criteria}
    order = list(dict.fromkeys([*after, *before]))
    return [ScoreChange(cid, (after.get(cid) or before[cid]).dimension_name,
                        _score(before, cid), _score(after, cid)) for cid in order]


def diff_reports(old: AuditReport, new: AuditReport) -> ReportDiff:
    """Compare a baseline audit (`old`) with a new one."""
    old_facts = {_key(f): f for f in failure_facts(all_evidence(old))}
    new_facts = {_key(f): f for f in failure_facts(all_evidence(new))}
    baseline_confidence: dict[MatchKey, float] = {}
    for item in all_evidence(old):
        key = _key(item)
        baseline_confidence[key] = max(baseline_confidence.get(key, 0.0), item.confidence)
    result = ReportDiff(old, new, _scores(old, new),
                        [f for k, f in new_facts.items() if k not in old_facts],
                        [f for k, f in old_facts.items() if k not in new_facts])
    for change in result.scores:
        if change.lower:
            result.reasons.append(f"{change.name} {change.old} → {change.new}")
    for fact in result.new_facts:
        floor = baseline_confidence.get(_key(fact), NEW_FACT_CONFIDENCE)
        if fact.confidence >= floor:
            result.reasons.append(f"new failure {fact.facet} at {fact.location}")
    return result


def _label(report: AuditReport) -> str:
    return f"{report.run_id or report.generated_at or 'report'} ({report.overall_score:.2f})"


def _wrap(text: str, indent: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=width, initial_indent=indent,
                         subsequent_indent=indent + "    ", break_on_hyphens=False) or [indent]


def _fact_lines(fact: FailureFact, mark: str, width: int) -> list[str]:
    head = f"{mark} {fact.consequence}: {fact_headline(fact)} ({fact.location})"
    return _wrap(head, "  ", width) + _wrap(
        f"{fact.rationale} [confidence {fact.confidence:.2f}]", "      ", width)


def _score_line(change: ScoreChange, width: int) -> str:
    old = "-" if change.old is None else str(change.old)
    new = "-" if change.new is None else str(change.new)
    delta = (f"{change.new - change.old:+d}" if isinstance(change.old, int)
             and isinstance(change.new, int) else "")
    tail = f" {old} → {new} {delta:>3}"
    name = textwrap.shorten(change.name, width=max(10, width - len(tail) - 3), placeholder="…")
    return f"  {name}".ljust(width - len(tail)) + tail


def render_diff(diff: ReportDiff, width: int = WIDTH) -> str:
    """The comparison as plain text, no wider than `width` columns."""
    old, new = diff.old.overall_score, diff.new.overall_score
    lines = _wrap(f"baseline {_label(diff.old)} → new {_label(diff.new)}", "", width)
    lines += [f"overall {old:.2f} → {new:.2f} ({new - old:+.2f})", ""]
    changed = diff.changed_scores
    lines.append(f"scores: {len(changed)} changed, {len(diff.scores) - len(changed)} unchanged")
    lines += [_score_line(c, width) for c in changed]
    for title, facts, mark in (("new failure facts", diff.new_facts, "✗"),
                               ("resolved failure facts", diff.resolved_facts, "✓")):
        lines += ["", f"{title}: {len(facts)}"]
        for fact in facts:
            lines += _fact_lines(fact, mark, width)
    verdict = ("regression: " + "; ".join(diff.reasons)) if diff.regression else "no regression"
    lines += ["", *_wrap(verdict, "", width)]
    return "\n".join(lines) + "\n"


def diff_document(diff: ReportDiff) -> dict[str, Any]:
    """The comparison as JSON."""
    def side(report: AuditReport) -> dict[str, Any]:
        return {"run_id": report.run_id, "target": report.repo_url, "commit": report.commit,
                "overall_score": report.overall_score, "verdict": report.verdict}

    return {"baseline": side(diff.old), "new": side(diff.new),
            "overall_delta": round(diff.new.overall_score - diff.old.overall_score, 2),
            "scores": [{"criterion": s.criterion, "name": s.name, "old": s.old, "new": s.new}
                       for s in diff.changed_scores],
            "new_failures": [fact_record(f) for f in diff.new_facts],
            "resolved_failures": [fact_record(f) for f in diff.resolved_facts],
            "regression": diff.regression, "reasons": diff.reasons}
