"""The offline bench: three deterministic, rule-based judges that need no model.

Each persona reads the same dossier (the evidence of one criterion) through its own lens:
the Prosecutor is strict about every failure signal, the Defense credits partial work and
visible process, the TechLead weighs the artifacts by confidence. Each cites real evidence ids.

No lens lets success signals outvote a confirmed failure pattern (`judging.caps`): the
Prosecutor and the TechLead score at most the pattern's cap and cite the fact, the Defense at
most one point above it. Facts about text aimed at the judges weigh nothing; so do facts the
auditor could not establish (a diagram without a vision model), and while any such fact
stands no lens gives full marks. A missing extra (`judging.extras`: a success-pattern element
whose absence is not the failure pattern, such as a clone without a timeout) is never charged as
the failure pattern, and weighs half while nothing else is charged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from automaton_auditor.judging.caps import (
    NO_FULL_MARKS,
    confirmed_caps,
    describe_cap,
    unchecked,
    weighed,
)
from automaton_auditor.judging.extras import EXTRA_WEIGHT, ceiling_only, missing_extra
from automaton_auditor.rubric import Dimension
from automaton_auditor.state import Evidence, Judge, JudicialOpinion

STRONG = 0.7  # confidence from which a failure signal counts as a charge
DEFENSE_ALLOWANCE = 1  # how far above a failure cap the Defense's mitigation may argue
UNCHECKED_CEILING = 4  # the best score while some fact of the criterion could not be checked


def evidence_balance(evidence: Sequence[Evidence]) -> tuple[float, float]:
    """Confidence-weighted weight of the success and failure signals in a dossier (facts
    about text aimed at the judges weigh nothing; a missing extra half, while no charge
    stands)."""
    counted = [e for e in weighed(evidence) if not ceiling_only(e)]
    success = sum(e.confidence for e in counted if e.supports_success)
    extra = 1.0 if _charged(counted) else EXTRA_WEIGHT
    failure = sum(e.confidence * (extra if missing_extra(e) else 1.0)
                  for e in counted if e.supports_failure)
    return success, failure


def _charged(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The strong failure signals the Prosecutor charges: all but missing extras."""
    return [e for e in evidence
            if e.supports_failure and e.confidence >= STRONG and not missing_extra(e)]


def evidence_score(evidence: Sequence[Evidence]) -> float:
    """A 1–5 score that the evidence alone supports (1 when nothing supports success)."""
    success, failure = evidence_balance(evidence)
    if success + failure == 0:
        return 1.0
    return 1.0 + 4.0 * success / (success + failure)


def _clamp(value: float) -> int:
    return max(1, min(5, int(value)))


def _describe(e: Evidence) -> str:
    state = "found" if e.found else "not found"
    return f"{e.goal} ({state}, {e.location})"


def _by_strength(evidence: Sequence[Evidence]) -> list[Evidence]:
    return sorted(weighed(evidence), key=lambda e: (-e.confidence, e.evidence_id))


def _capped(score: int, dimension: Dimension, dossier: Sequence[Evidence],
            cited: list[str], allowance: int = 0) -> tuple[int, list[str], str]:
    """`score` under the lowest confirmed failure cap (plus `allowance`); the confirming fact
    is cited first, and the sentence that says so is returned ("" when nothing capped)."""
    caps = confirmed_caps(dimension.id, dossier)
    if not caps or score <= caps[0][0].cap + allowance:
        return _unchecked_ceiling(score, dossier, cited)
    row, fact = caps[0]
    cited = [fact.evidence_id, *(i for i in cited if i != fact.evidence_id)][:6]
    lead = ("The rubric's failure pattern caps this criterion" if row.cap < NO_FULL_MARKS
            else "Short of the rubric's success pattern, no full marks")
    return row.cap + allowance, cited, f" {lead}: {describe_cap(row, fact)}"


def _unchecked_ceiling(score: int, dossier: Sequence[Evidence],
                       cited: list[str]) -> tuple[int, list[str], str]:
    """`score` no higher than UNCHECKED_CEILING while a fact of the criterion is a tool
    limitation: full marks would credit what the auditor never saw."""
    missing = unchecked(dossier)
    if not missing or score <= UNCHECKED_CEILING:
        return score, cited, ""
    return (UNCHECKED_CEILING, cited,
            f" {len(missing)} fact(s) of this criterion could not be established "
            f"({missing[0].limitation}): no full marks for what the auditor could not check.")


def prosecutor(dimension: Dimension, dossier: Sequence[Evidence]) -> JudicialOpinion:
    """Trust no one: every strong failure signal costs a point (a missing extra is no charge:
    it lowers the balance, by half its weight while nothing is charged); missing evidence
    scores 1."""
    failures = _by_strength([e for e in dossier if e.supports_failure])
    successes = _by_strength([e for e in dossier if e.supports_success])
    charges = [_describe(e) for e in _charged(failures)]
    extras = [e.goal for e in failures if missing_extra(e)]
    score = _clamp(math.floor(evidence_score(dossier)) - len(charges))
    if not successes:
        score = 1
    # a score of 4 or more rests on the success facts: cite them first (fact supremacy)
    cited = [e.evidence_id for e in ([*successes, *failures] if score >= 4 and successes
                                     else failures or successes)[:6]]
    score, cited, capped = _capped(score, dimension, dossier, cited)
    if charges:
        argument = (f"The failure pattern is present: {'; '.join(charges[:4])}. "
                    f"Rubric failure pattern: {dimension.failure_pattern or 'n/a'}")
    elif successes:
        argument = ("I find no strong failure signal, but I grant no more than the evidence "
                    f"proves: {len(successes)} supporting fact(s)"
                    + (f"; missing extras: {'; '.join(extras[:4])}." if extras else "."))
    else:
        argument = "Nothing in the evidence shows the success pattern; the burden is not met."
    return JudicialOpinion(judge="Prosecutor", criterion_id=dimension.id, score=score,
                           argument=argument + capped, cited_evidence=cited, charges=charges,
                           remediation=_remediation(failures))


def defense(dimension: Dimension, dossier: Sequence[Evidence]) -> JudicialOpinion:
    """Reward effort and intent: any success signal earns credit for the work it shows."""
    successes = _by_strength([e for e in dossier if e.supports_success])
    failures = _by_strength([e for e in dossier if e.supports_failure])
    base = evidence_score(dossier)
    score = _clamp(math.ceil(base) + (1 if successes else 0)) if successes else _clamp(base)
    mitigations = [_describe(e) for e in successes[:5]]
    cited = [e.evidence_id for e in (successes or failures)[:6]]
    if successes:
        argument = (f"The work shows real intent: {'; '.join(mitigations[:4])}. "
                    f"Rubric success pattern: {dimension.success_pattern or 'n/a'}")
    else:
        argument = "I cannot point to supporting evidence; I ask that the record be read fairly."
    # the Defense concedes a confirmed failure but keeps citing the work it mitigates with
    capped_score, _, capped = _capped(score, dimension, dossier, cited, DEFENSE_ALLOWANCE)
    if capped and capped_score < score and confirmed_caps(dimension.id, dossier):
        argument += " Mitigation argues one point above the cap, no more."
    argument += capped
    return JudicialOpinion(judge="Defense", criterion_id=dimension.id, score=capped_score,
                           argument=argument, cited_evidence=cited, mitigations=mitigations)


def tech_lead(dimension: Dimension, dossier: Sequence[Evidence]) -> JudicialOpinion:
    """Does it work? Score the artifacts by the confidence-weighted balance of facts."""
    ranked = _by_strength([e for e in dossier if e.supports_success or e.supports_failure])
    score = _clamp(math.floor(evidence_score(dossier) + 0.5))
    success, failure = evidence_balance(dossier)
    cited = [e.evidence_id for e in ranked[:6]]
    argument = (f"Weighing the artifacts: success signals {success:.2f} against failure signals "
                f"{failure:.2f} (confidence-weighted) gives {score}/5.")
    score, cited, capped = _capped(score, dimension, dossier, cited)
    failures = [e for e in ranked if e.supports_failure]
    return JudicialOpinion(judge="TechLead", criterion_id=dimension.id, score=score,
                           argument=argument + capped, cited_evidence=cited,
                           remediation=_remediation(failures))


def _remediation(failures: Sequence[Evidence]) -> str | None:
    if not failures:
        return None
    return "; ".join(f"{e.location}: {e.goal}" for e in failures[:5])


PERSONAS = {"Prosecutor": prosecutor, "Defense": defense, "TechLead": tech_lead}


def offline_opinion(judge: Judge, dimension: Dimension,
                    dossier: Sequence[Evidence]) -> JudicialOpinion:
    """The offline bench's opinion of one judge on one criterion."""
    return PERSONAS[judge](dimension, dossier)
