"""The judicial layer: one `Send` per (criterion × persona), so the three judges of a criterion
see exactly the same dossier and run in parallel."""

from __future__ import annotations

import logging
from typing import Any

from langgraph.types import Send

from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.rubric import Dimension, Rubric
from automaton_auditor.settings import Settings
from automaton_auditor.state import (
    JUDGES,
    AgentState,
    Judge,
    JudgeTask,
    JudicialOpinion,
    resolved_dossiers,
)

log = logging.getLogger(__name__)


def dispatch_judges(state: AgentState) -> list[Send]:
    """Fan out: one judge task per criterion and persona, in rubric order."""
    rubric = Rubric.model_validate(state["rubric"])
    dossiers = resolved_dossiers(state)
    return [
        Send("judge", JudgeTask(judge=persona, dimension=dimension.model_dump(),
                                dossier=dossiers.get(dimension.id, []),
                                settings=state.get("settings") or {}))
        for dimension in rubric.dimensions
        for persona in JUDGES
    ]


def degraded_opinion(judge: Judge, criterion_id: str, reason: str) -> JudicialOpinion:
    """A placeholder for an opinion that could not be obtained; the Chief Justice excludes it."""
    return JudicialOpinion(judge=judge, criterion_id=criterion_id, score=1,
                           argument=f"Degraded: {reason}"[:2000], degraded=True)


def judge(state: JudgeTask) -> dict[str, Any]:
    """One judge's opinion on one criterion: the offline bench, or an LLM when configured."""
    settings = Settings.from_state(state["settings"])
    dimension = Dimension.model_validate(state["dimension"])
    try:
        if settings.offline:
            opinion = offline_opinion(state["judge"], dimension, state["dossier"])
        else:
            from automaton_auditor.judging.llm import llm_opinion

            opinion = llm_opinion(state["judge"], dimension, state["dossier"], settings)
    except Exception as exc:  # one failed judge must not take the bench down
        log.exception("judge %s on %s failed", state["judge"], dimension.id)
        opinion = degraded_opinion(state["judge"], dimension.id, f"{type(exc).__name__}: {exc}")
    return {"opinions": [opinion]}
