"""chief_justice: the judges' fan-in. Pure Python rules, no model."""

from __future__ import annotations

import time
from typing import Any

from automaton_auditor.judging.rules import decide, unknown_rules
from automaton_auditor.nodes.detectives import INPUT_FACETS
from automaton_auditor.nodes.judges import degraded_opinion
from automaton_auditor.rubric import Dimension, Rubric
from automaton_auditor.state import (
    JUDGES,
    AgentState,
    CriterionResult,
    Evidence,
    JudicialOpinion,
    resolved_dossiers,
)


def _opinions_for(dimension: Dimension, opinions: list[JudicialOpinion]) -> list[JudicialOpinion]:
    """The latest opinion of each judge on this criterion (a missing one is degraded)."""
    latest: dict[str, JudicialOpinion] = {}
    for opinion in opinions:
        if opinion.criterion_id == dimension.id:
            current = latest.get(opinion.judge)
            if current is None or opinion.round >= current.round:
                latest[opinion.judge] = opinion
    return [latest.get(j) or degraded_opinion(j, dimension.id, "no opinion was returned")
            for j in JUDGES]


# The aggregator's note that a detective produced nothing carries that detective's input facet.
SILENT_FACETS = {INPUT_FACETS[s] for s in ("repo", "doc", "vision")}


def _detective_empty(dossier: list[Evidence]) -> bool:
    return any(e.facet == "dossier.empty" or (e.source == "aggregator" and not e.found
                                              and e.facet in SILENT_FACETS) for e in dossier)


def chief_justice(state: AgentState) -> dict[str, Any]:
    """Rule on every criterion with the rubric's named synthesis rules."""
    started = time.perf_counter()
    rubric = Rubric.from_state(state["rubric"])
    dossiers = resolved_dossiers(state)
    opinions = state.get("opinions") or []
    results: list[CriterionResult] = []
    for dimension in rubric.dimensions:
        dossier = dossiers.get(dimension.id, [])
        results.append(decide(dimension, _opinions_for(dimension, opinions), dossier, rubric,
                              detective_empty=_detective_empty(dossier)))
    errors = [f"rubric: synthesis rule {name!r} has no implementation and was not applied"
              for name in unknown_rules(rubric)]
    return {"results": results, "errors": errors,
            "timings": {"chief_justice": round(time.perf_counter() - started, 4)}}
