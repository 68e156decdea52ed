"""chief_justice: the judges' fan-in. Pure Python rules, no model."""

from __future__ import annotations

import time
from typing import Any

from automaton_auditor.judging.rules import decide, unknown_rules
from automaton_auditor.nodes.detectives import INPUT_FACETS
from automaton_auditor.nodes.judges import degraded_opinion
from automaton_auditor.rubric import Dimension, Rubric, facets_for
from automaton_auditor.state import (
    JUDGES,
    AgentState,
    CriterionResult,
    DetectiveStatus,
    Evidence,
    JudicialOpinion,
    resolved_dossiers,
)

# Why a judge has no opinion on a criterion in a stopped run (its task had not finished).
NOT_RULED_BY_JUDGE = "the audit stopped before this judge ruled"


def _opinions_for(dimension: Dimension, opinions: list[JudicialOpinion],
                  missing: str = "no opinion was returned") -> list[JudicialOpinion]:
    """The latest opinion of each judge on this criterion (a missing one is degraded, with
    `missing` as the reason)."""
    latest: dict[str, JudicialOpinion] = {}
    for opinion in opinions:
        if opinion.criterion_id == dimension.id:
            current = latest.get(opinion.judge)
            if current is None or opinion.round >= current.round:
                latest[opinion.judge] = opinion
    return [latest.get(j) or degraded_opinion(j, dimension.id, missing) for j in JUDGES]


# The aggregator's note that a detective produced nothing carries that detective's input facet.
SILENT_FACETS = {INPUT_FACETS[s] for s in ("repo", "doc", "vision")}


def _detective_empty(dossier: list[Evidence]) -> bool:
    return any(e.facet == "dossier.empty" or (e.source == "aggregator" and not e.found
                                              and e.facet in SILENT_FACETS) for e in dossier)


# The detective states that mean its input could not be used: a shallow history leaves the
# repository "degraded" but usable; a "degraded" report is one that could not be read.
UNUSABLE: dict[str, tuple[str, ...]] = {"repo": ("failed",), "doc": ("degraded", "failed"),
                                        "vision": ("degraded", "failed")}
# The detectives whose input each kind of criterion reads.
ARTIFACT_SOURCES: dict[str, tuple[str, ...]] = {
    "github_repo": ("repo",), "pdf_report": ("doc",), "pdf_images": ("doc", "vision")}


NO_VALID_OPINION = "no judge gave a valid opinion"


def unjudged_reason(dimension: Dimension, statuses: dict[str, DetectiveStatus],
                    opinions: list[JudicialOpinion]) -> str:
    """Why a criterion cannot be judged ("" when it can): the input it reads was unusable,
    or no judge gave a valid opinion. A failure is never written up as a low score."""
    sources = ARTIFACT_SOURCES.get(dimension.target_artifact, ())
    if "claims" in facets_for(dimension):  # paths the report cites are checked in the repo
        sources = (*sources, "repo")
    for source in sources:
        status = statuses.get(source)
        if status is not None and status.state in UNUSABLE[source]:
            return f"{source} input unusable ({status.reason or status.state})"
    if opinions and all(o.degraded for o in opinions):
        return NO_VALID_OPINION
    return ""


# Why a criterion no judge was asked about is not judged in a stopped run's partial report.
STOPPED_BEFORE_JUDGES = "the audit stopped before its judges ruled"


def _given(dimension: Dimension, opinions: list[JudicialOpinion]) -> bool:
    """Whether any judge's opinion on `dimension` (valid or degraded) is recorded."""
    return any(o.criterion_id == dimension.id for o in opinions)


def _degraded_note(opinions: list[JudicialOpinion], results: list[CriterionResult]) -> list[str]:
    degraded = [o for o in opinions if o.degraded]
    if not degraded:
        return []
    lost = sum(1 for r in results if r.not_judged_reason == NO_VALID_OPINION)
    return [f"judges: {len(degraded)} of {len(opinions)} opinions degraded (excluded); "
            f"{lost} criteria not judged for want of a valid opinion"]


def chief_justice(state: AgentState) -> dict[str, Any]:
    """Rule on every criterion with the rubric's named synthesis rules."""
    started = time.perf_counter()
    rubric = Rubric.from_state(state["rubric"])
    dossiers = resolved_dossiers(state)
    opinions = state.get("opinions") or []
    statuses = state.get("detective_status") or {}
    results: list[CriterionResult] = []
    for dimension in rubric.dimensions:
        dossier = dossiers.get(dimension.id, [])
        theirs = (_opinions_for(dimension, opinions, NOT_RULED_BY_JUDGE) if state.get("aborted")
                  else _opinions_for(dimension, opinions))
        result = decide(dimension, theirs, dossier, rubric,
                        detective_empty=_detective_empty(dossier))
        reason = unjudged_reason(dimension, statuses, theirs)
        if reason == NO_VALID_OPINION and state.get("aborted") and not _given(dimension,
                                                                               opinions):
            reason = STOPPED_BEFORE_JUDGES  # a stopped run's partial report
        results.append(result.model_copy(update={"judged": False, "not_judged_reason": reason})
                       if reason else result)
    errors = [f"rubric: synthesis rule {name!r} has no implementation and was not applied"
              for name in unknown_rules(rubric)] + _degraded_note(opinions, results)
    return {"results": results, "errors": errors,
            "timings": {"chief_justice": round(time.perf_counter() - started, 4)}}
