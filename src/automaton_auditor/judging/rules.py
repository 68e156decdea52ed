"""The Chief Justice's named synthesis rules: small, deterministic, separately tested.

A rule runs only when the rubric's `synthesis_rules` names it (the rubric is the source of
truth); `decide` applies them in a fixed order and records which one decided the score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from automaton_auditor.judging.caps import confirmed_caps, describe_cap, weighed
from automaton_auditor.judging.offline import evidence_score
from automaton_auditor.rubric import Dimension, Rubric
from automaton_auditor.state import CriterionResult, Evidence, JudicialOpinion, RuleApplication
from automaton_auditor.text import clip

KNOWN_RULES = (
    "security_override", "fact_supremacy", "functionality_weight", "dissent_requirement",
    "variance_re_evaluation", "missing_vision_cap", "high_variance_missing_evidence",
    "failure_pattern_cap",
)
SECURITY_CAP = 3
VISION_CAP = 4
HIGH_VARIANCE_CAP = 3


def round_half_up(value: float) -> int:
    """Round .5 up (Python's round() rounds half to even)."""
    return int(Decimal(str(value)).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def score_spread(opinions: Sequence[JudicialOpinion]) -> int:
    """Max minus min score: the rubric's 'variance'."""
    scores = [o.score for o in opinions]
    return max(scores) - min(scores) if scores else 0


def fact_supremacy(
    opinions: Sequence[JudicialOpinion], dossier: Sequence[Evidence]
) -> tuple[list[JudicialOpinion], list[tuple[JudicialOpinion, str]]]:
    """Overrule opinions that rest on no evidence, or whose score the cited facts contradict.

    A high score (4–5) must cite at least one fact supporting success; a low score (1–2) must
    cite at least one fact supporting failure; any opinion must cite a real evidence id. Facts
    about text aimed at the judges (`caps.no_credit`) support nothing.
    """
    known = {e.evidence_id: e for e in weighed(dossier)}
    kept: list[JudicialOpinion] = []
    overruled: list[tuple[JudicialOpinion, str]] = []
    for opinion in opinions:
        cited = [known[i] for i in opinion.cited_evidence if i in known]
        if not cited:
            overruled.append((opinion, "cites no evidence of this criterion"))
        elif opinion.score >= 4 and not any(e.supports_success for e in cited):
            overruled.append((opinion, "claims success but none of its cited facts show it"))
        elif opinion.score <= 2 and not any(e.supports_failure for e in cited):
            overruled.append((opinion, "claims failure but none of its cited facts show it"))
        else:
            kept.append(opinion)
    return kept, overruled


def is_architecture_criterion(dimension: Dimension, rule_text: str) -> bool:
    """Whether functionality_weight targets this dimension: named in the rule, else by name."""
    # a quote opens after whitespace, so the apostrophe in "Lead's" does not start one
    named = re.findall(r"(?:^|(?<=\s))['\u2018\"]([^'\u2019\"]+)['\u2019\"]", rule_text)
    if named:
        return dimension.name in named or dimension.id in named
    words = f"{dimension.id} {dimension.name}".lower()
    return "architecture" in words or "orchestration" in words


def weighted_mean(opinions: Sequence[JudicialOpinion], techlead_weight: float = 1.0) -> float:
    """Mean score, with the TechLead's weight raised by functionality_weight."""
    weights = [techlead_weight if o.judge == "TechLead" else 1.0 for o in opinions]
    return sum(o.score * w for o, w in zip(opinions, weights, strict=True)) / sum(weights)


def re_evaluate(opinions: Sequence[JudicialOpinion], dossier: Sequence[Evidence],
                base: float) -> float:
    """variance_re_evaluation: average the judges' score with what their cited facts support."""
    cited_ids = {i for o in opinions for i in o.cited_evidence}
    cited = [e for e in dossier if e.evidence_id in cited_ids]
    return (base + evidence_score(cited)) / 2


def dissent_summary(opinions: Sequence[JudicialOpinion]) -> str:
    """Who argued what, highest score first."""
    parts = []
    for o in sorted(opinions, key=lambda o: (-o.score, o.judge)):
        argument = clip(o.argument, 240)
        parts.append(f"{o.judge} ({o.score}/5): {argument}")
    high = max(opinions, key=lambda o: o.score)
    low = min(opinions, key=lambda o: o.score)
    return (f"The {high.judge} ({high.score}) and the {low.judge} ({low.score}) disagree by "
            f"{high.score - low.score} points. " + " | ".join(parts))


def security_override(score: int, dossier: Sequence[Evidence]) -> tuple[int, list[Evidence]]:
    """Cap at 3 when the dossier holds a security flaw confirmed by code."""
    flaws = [e for e in dossier if e.confirmed_security_flaw]
    return (min(score, SECURITY_CAP) if flaws else score), flaws


@dataclass
class Ruling:
    """Working record of one criterion's synthesis."""

    score: float
    deciding: str
    applied: list[RuleApplication] = field(default_factory=list)

    def apply(self, rule: str, new_score: float, detail: str, binding: bool = False) -> None:
        """Record a rule; it becomes the deciding rule when it changes the rounded score, or
        when it is `binding` (a ceiling the score now sits on)."""
        self.applied.append(RuleApplication(rule=rule, detail=detail,
                                            score_before=self.score, score_after=new_score))
        if (binding or round_half_up(new_score) != round_half_up(self.score)
                or rule == "evidence_baseline"):
            self.deciding = rule
        self.score = new_score


def _active(rubric: Rubric, rule: str) -> bool:
    return rule in rubric.synthesis_rules


def _deliberate(dimension: Dimension, opinions: list[JudicialOpinion],
                dossier: Sequence[Evidence], rubric: Rubric,
                detective_empty: bool) -> tuple[Ruling, list[str], str | None]:
    live = [o for o in opinions if not o.degraded]
    overruled_notes = [f"{o.judge}: degraded opinion excluded" for o in opinions if o.degraded]
    if _active(rubric, "fact_supremacy"):
        live, overruled = fact_supremacy(live, dossier)
        overruled_notes += [f"{o.judge} ({o.score}/5) overruled: {why}" for o, why in overruled]
    if not live:
        ruling = Ruling(score=evidence_score(dossier), deciding="evidence_baseline")
        ruling.apply("evidence_baseline", ruling.score,
                     "no opinion survived; the score is what the evidence alone supports")
        _apply_caps(ruling, dimension, dossier, rubric, False, detective_empty)
        return ruling, overruled_notes, None
    weight = 1.0
    rule_text = rubric.synthesis_rules.get("functionality_weight", "")
    if _active(rubric, "functionality_weight") and is_architecture_criterion(dimension, rule_text):
        weight = 2.0
    ruling = Ruling(score=weighted_mean(live, weight), deciding="weighted_mean")
    if weight != 1.0:
        ruling.deciding = "functionality_weight"
        ruling.applied.append(RuleApplication(rule="functionality_weight",
                                              detail="TechLead counts double on this criterion",
                                              score_after=ruling.score))
    high_variance = score_spread(live) > 2
    dissent = dissent_summary(live) if high_variance or score_spread(opinions) > 2 else None
    if high_variance and _active(rubric, "variance_re_evaluation"):
        ruling.apply("variance_re_evaluation", re_evaluate(live, dossier, ruling.score),
                     "scores differ by more than 2: re-scored from the evidence the judges cite")
    _apply_caps(ruling, dimension, dossier, rubric, high_variance, detective_empty)
    return ruling, overruled_notes, dissent


def _apply_caps(ruling: Ruling, dimension: Dimension, dossier: Sequence[Evidence],
                rubric: Rubric, high_variance: bool, detective_empty: bool) -> None:
    if _active(rubric, "security_override"):
        capped, flaws = security_override(round_half_up(ruling.score), dossier)
        if flaws and capped < round_half_up(ruling.score):
            where = ", ".join(sorted({e.location for e in flaws})[:3])
            ruling.apply("security_override", capped, f"confirmed security flaw at {where}")
    vision_missing = any(e.facet == "vision.extract" and not e.found for e in dossier)
    if (_active(rubric, "missing_vision_cap") and dimension.target_artifact == "pdf_report"
            and vision_missing and ruling.score > VISION_CAP):
        ruling.apply("missing_vision_cap", VISION_CAP, "vision inspection failed or disabled")
    if (_active(rubric, "high_variance_missing_evidence") and high_variance
            and detective_empty and ruling.score > HIGH_VARIANCE_CAP):
        ruling.apply("high_variance_missing_evidence", HIGH_VARIANCE_CAP,
                     "judges disagree and a detective produced no evidence")
    caps = confirmed_caps(dimension.id, dossier)
    if _active(rubric, "failure_pattern_cap") and caps:
        # recorded whenever confirmed; it decides when the score ends on the ceiling (lowered
        # to it, or already there because the judges applied the same pattern)
        row, fact = caps[0]
        held = min(ruling.score, row.cap)
        ruling.apply("failure_pattern_cap", held, describe_cap(row, fact),
                     binding=round_half_up(held) == row.cap)


def verdict_cap(dimension: Dimension, dossier: Sequence[Evidence], rubric: Rubric) -> str | None:
    """Why this criterion caps the overall verdict band, if it does: a confirmed security or
    integrity failure pattern (failure_pattern_cap), or a confirmed security flaw
    (security_override). Set whether or not the judges already scored low."""
    if _active(rubric, "failure_pattern_cap"):
        for row, fact in confirmed_caps(dimension.id, dossier):
            if row.caps_verdict:
                return describe_cap(row, fact)
    flaws = [e for e in dossier if e.confirmed_security_flaw]
    if _active(rubric, "security_override") and flaws:
        return f"confirmed security flaw at {flaws[0].location} ({flaws[0].evidence_id})"
    return None


def criterion_remediation(dimension: Dimension, dossier: Sequence[Evidence]) -> str:
    """File-level remediation from the failure signals of a criterion."""
    failures = sorted((e for e in dossier if e.supports_failure),
                      key=lambda e: (-e.confidence, e.location, e.evidence_id))
    if not failures:
        return "No failure signal in the evidence; keep the artifacts as they are."
    lines = [f"- `{e.location}`: {e.goal} — {e.rationale}" for e in failures[:8]]
    if dimension.success_pattern:
        lines.append(f"- Target: {dimension.success_pattern}")
    return "\n".join(lines)


def decide(dimension: Dimension, opinions: list[JudicialOpinion],
           dossier: Sequence[Evidence], rubric: Rubric,
           detective_empty: bool = False) -> CriterionResult:
    """Apply the rubric's named rules to one criterion and record the deciding rule."""
    ruling, overruled, dissent = _deliberate(dimension, opinions, dossier, rubric,
                                             detective_empty)
    if dissent is None and score_spread([o for o in opinions if not o.degraded]) > 2:
        dissent = dissent_summary(opinions)
    if dissent and _active(rubric, "dissent_requirement"):
        ruling.applied.append(RuleApplication(rule="dissent_requirement",
                                              detail="variance > 2: dissent recorded"))
    final = max(1, min(5, round_half_up(ruling.score)))
    return CriterionResult(
        dimension_id=dimension.id, dimension_name=dimension.name,
        target_artifact=dimension.target_artifact, final_score=final,
        judge_opinions=opinions, dissent_summary=dissent,
        remediation=criterion_remediation(dimension, dossier), deciding_rule=ruling.deciding,
        rules_applied=ruling.applied, overruled=overruled,
        evidence_ids=[e.evidence_id for e in dossier],
        verdict_cap=verdict_cap(dimension, dossier, rubric),
    )


def unknown_rules(rubric: Rubric) -> list[str]:
    """Synthesis rules the rubric names that this Chief Justice does not implement."""
    return [name for name in rubric.synthesis_rules if name not in KNOWN_RULES]


def overall_score(results: Sequence[CriterionResult]) -> float:
    """Mean of the judged criteria's final scores, to two decimals (a criterion that was not
    judged counts nowhere)."""
    judged = [r for r in results if r.judged]
    if not judged:
        return 0.0
    return math.floor(sum(r.final_score for r in judged) / len(judged) * 100 + 0.5) / 100


def verdict_of(results: Sequence[CriterionResult]) -> str:
    """The report's verdict: "incomplete" when a criterion was not judged (a failure is never
    a verdict), else the profile of the overall score."""
    if not results or not any(r.judged for r in results):
        return "not judged"
    if not all(r.judged for r in results):
        return "incomplete"
    return verdict_for(overall_score(results), results)


MASTER, COMPETENT, VIBE = "Master Thinker", "Competent Orchestrator", "Vibe Coder"


def verdict_for(score: float, results: Sequence[CriterionResult] = ()) -> str:
    """The rubric's three profiles, by overall score. A criterion capped by a confirmed
    security or integrity failure (`CriterionResult.verdict_cap`) caps the band at
    "Competent Orchestrator": such a submission is never a Master Thinker, whatever its mean."""
    if score >= 4.0 and not any(r.verdict_cap for r in results):
        return MASTER
    if score >= 2.5:
        return COMPETENT
    return VIBE
