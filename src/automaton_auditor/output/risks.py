"""Failure facts, ranked: what the top risks, the remediation plan, SARIF and `audit diff`
are made of.

A failure fact is evidence that argues for a rubric failure pattern (a bad thing found, or a
required thing missing), counted once however many criteria it bears on. Two kinds of such
evidence are not failures of the audited work and are kept out:

- tool limitations (``data["limitation"]``: the auditor could not establish the fact, e.g.
  diagram images without a vision model): they go to Warnings, once each;
- vacuous checks (``data["total"] == 0``: "0 of 0 subprocess calls pass timeout="): there
  was nothing to check.

Facts are ranked by consequence (security > functional break > integrity > docs), then
confirmed before absent (a flaw seen in the code outranks a feature not found), then
confidence, then how low the criteria it bears on scored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from automaton_auditor.output.locations import Location, evidence_locations, parse_location
from automaton_auditor.state import AuditReport, CriterionResult, Evidence

Consequence = Literal["security", "functional", "integrity", "docs"]
CONSEQUENCES: tuple[Consequence, ...] = get_args(Consequence)
# Facet prefixes whose failures say the submission misrepresents itself (first match wins);
# everything else the code shows is a functional break, everything the report shows docs.
_INTEGRITY = ("git.", "claims.", "vision.compare.misleading")
_DOCS = ("doc.", "vision.")
PERFECT = 5


@dataclass(frozen=True)
class FailureFact:
    """One failure fact, once, with every criterion it bears on."""

    facet: str
    goal: str
    rationale: str
    location: str
    consequence: Consequence
    confirmed: bool
    confidence: float
    criteria: tuple[str, ...]
    evidence_ids: tuple[str, ...]
    # Every location the fact names (call facts list each call they quote).
    locations: tuple[Location, ...] = field(default=(), compare=False)
    # The lines the fact quotes (call facts: ``path:line: snippet`` per call).
    content: str | None = field(default=None, compare=False)

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the fact across runs: facet and location (evidence ids change
        with the content a fact quotes)."""
        return self.facet, self.location

    @property
    def where(self) -> Location:
        """The parsed location."""
        return parse_location(self.location)

    @property
    def files(self) -> list[Location]:
        """Every file location the fact names (one per quoted call, say), or none."""
        return [loc for loc in self.locations if loc.in_file]

    def quote_at(self, location: Location) -> str | None:
        """The quoted line for one of the fact's file locations, when it quotes one."""
        prefix = f"{location.path}:{location.line}: "
        for line in (self.content or "").splitlines():
            if line.startswith(prefix):
                return line[len(prefix):].strip() or None
        return None


def consequence_of(evidence: Evidence) -> Consequence:
    """How bad a failure of this fact is: the detective's own ``data["consequence"]``
    when it gives one, else security flags, then the facet's family, then the source."""
    declared = evidence.data.get("consequence")
    if declared in CONSEQUENCES:
        return declared  # type: ignore[no-any-return]
    if evidence.security:
        return "security"
    if evidence.facet.startswith(_INTEGRITY):
        return "integrity"
    if evidence.facet.startswith(_DOCS) or evidence.source in ("doc", "vision"):
        return "docs"
    return "integrity" if evidence.source == "aggregator" else "functional"


def limitation_of(evidence: Evidence) -> str | None:
    """Why the auditor could not establish this fact, when that is the case."""
    return evidence.limitation


def is_failure(evidence: Evidence) -> bool:
    """A failure of the audited work: evidence for the failure pattern that is neither a
    tool limitation nor a vacuous check."""
    vacuous = evidence.pattern == "success" and evidence.data.get("total") == 0
    return evidence.supports_failure and not vacuous and limitation_of(evidence) is None


def all_evidence(report: AuditReport) -> list[Evidence]:
    """Every evidence item of a report, in source order."""
    return [e for items in report.evidence.values() for e in items]


def failure_facts(evidence: Iterable[Evidence]) -> list[FailureFact]:
    """Failure facts, one per (facet, location), most serious first."""
    groups: dict[tuple[str, str], list[Evidence]] = {}
    for item in evidence:
        if is_failure(item):
            groups.setdefault((item.facet, item.location), []).append(item)
    facts = []
    for items in groups.values():
        first = max(items, key=lambda e: (e.confidence, e.security))
        fact = FailureFact(
            facet=first.facet, goal=first.goal, rationale=first.rationale,
            location=first.location, consequence=consequence_of(first),
            confirmed=first.pattern == "failure", confidence=first.confidence,
            criteria=tuple(sorted({e.dimension for e in items})),
            evidence_ids=tuple(sorted({e.evidence_id for e in items})),
            locations=tuple(evidence_locations(first)), content=first.content)
        facts.append(fact)
    return sorted(facts, key=rank)


def rank(fact: FailureFact, scores: dict[str, int] | None = None) -> tuple[object, ...]:
    """Sort key: consequence, confirmed first, confidence, lowest criterion score, then
    reading order (file and line) so that ties are stable."""
    lowest = min((scores or {}).get(c, PERFECT) for c in fact.criteria) if fact.criteria else 0
    where = fact.where
    return (CONSEQUENCES.index(fact.consequence), not fact.confirmed, -fact.confidence,
            lowest, not where.in_file, where.path or "", where.line or 0, fact.facet,
            fact.location)


def scores_of(criteria: Iterable[CriterionResult]) -> dict[str, int]:
    """Final score by criterion id (judged criteria only: a criterion that could not be
    judged has no score, and its input's failure is no risk of the submission)."""
    return {c.dimension_id: c.final_score for c in criteria if c.judged}


def open_facts(report: AuditReport) -> list[FailureFact]:
    """Failure facts that bear on a criterion below 5/5 (a criterion at 5/5 has nothing to
    remediate), each naming only those criteria, most serious first."""
    scores = scores_of(report.criteria)
    out = []
    for fact in failure_facts(all_evidence(report)):
        weak = tuple(c for c in fact.criteria if c in scores and scores[c] < PERFECT)
        if weak:
            out.append(replace(fact, criteria=weak))
    return sorted(out, key=lambda f: rank(f, scores))


def same_place(facts: Iterable[FailureFact]) -> list[list[FailureFact]]:
    """Facts grouped by what a reader would fix as one thing, in rank order: facts on the
    same file line (two detectors flag one ``os.system`` call), or facts elsewhere with the
    same location and rationale (four diagram facts missing for one reason)."""
    groups: dict[tuple[str, ...], list[FailureFact]] = {}
    for fact in facts:
        where = fact.where
        key = (("line", where.path or "", str(where.line)) if where.in_file and where.line
               else ("place", fact.location, fact.rationale))
        groups.setdefault(key, []).append(fact)
    return list(groups.values())


def top_risk_groups(report: AuditReport, limit: int = 3) -> list[list[FailureFact]]:
    """The few places a reader must see first, each with every fact found there."""
    return same_place(open_facts(report))[:limit]


def top_risks(report: AuditReport, limit: int = 3) -> list[FailureFact]:
    """The few failure facts a reader must see first (the most serious of each place)."""
    return [group[0] for group in top_risk_groups(report, limit)]


def limitations(report: AuditReport) -> list[str]:
    """Tool limitations, each stated once, with how many facts they left unestablished."""
    names = {c.dimension_id: c.dimension_name for c in report.criteria}
    grouped: dict[str, tuple[set[tuple[str, str]], set[str]]] = {}
    for item in all_evidence(report):
        reason = limitation_of(item)
        if reason and item.supports_failure:
            facts, criteria = grouped.setdefault(reason, (set(), set()))
            facts.add((item.facet, item.location))
            criteria.add(names.get(item.dimension, item.dimension))
    return [f"{reason} ({len(facts)} fact(s) not established; bears on "
            f"{', '.join(sorted(criteria))})"
            for reason, (facts, criteria) in sorted(grouped.items())]
