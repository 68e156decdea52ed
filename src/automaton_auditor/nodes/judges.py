"""The judicial layer: one `Send` per (criterion × persona), so the three judges of a criterion
see exactly the same dossier and run in parallel."""

from __future__ import annotations

import logging
from typing import Any

from langgraph.types import Send

from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.retry import CircuitOpen, ProviderError
from automaton_auditor.rubric import Dimension, Rubric
from automaton_auditor.settings import Settings
from automaton_auditor.state import (
    JUDGES,
    AgentState,
    CallFailure,
    CallFailureKind,
    Judge,
    JudgeTask,
    JudicialOpinion,
    resolved_dossiers,
)

log = logging.getLogger(__name__)


def dispatch_judges(state: AgentState) -> list[Send]:
    """Fan out: one judge task per criterion and persona, in rubric order."""
    rubric = Rubric.from_state(state["rubric"])
    dossiers = resolved_dossiers(state)
    return [
        Send("judge", JudgeTask(judge=persona, dimension=dimension.model_dump(),
                                dossier=dossiers.get(dimension.id, []),
                                settings=state.get("settings") or {},
                                run_id=state.get("run_id") or ""))
        for dimension in rubric.dimensions
        for persona in JUDGES
    ]


def degraded_opinion(judge: Judge, criterion_id: str, reason: str) -> JudicialOpinion:
    """A placeholder for an opinion that could not be obtained; the Chief Justice excludes it."""
    return JudicialOpinion(judge=judge, criterion_id=criterion_id, score=1,
                           argument=f"Degraded: {reason}"[:2000], degraded=True)


def call_failure(exc: ProviderError, judge: Judge, criterion_id: str,
                 round_: int = 1) -> CallFailure:
    """The state's record of a judge call the provider failed."""
    if isinstance(exc, CircuitOpen):
        kind: CallFailureKind = ("circuit_open" if exc.refused else
                                 "rejected" if exc.kind == "fatal" else "unavailable")
    else:
        kind = "client" if exc.kind == "client" else "unavailable"
    return CallFailure(judge=judge, criterion_id=criterion_id, round=round_, kind=kind,
                       reason=str(exc), stops_bench=exc.stops_bench)


def judge(state: JudgeTask) -> dict[str, Any]:
    """One judge's opinion on one criterion: the offline bench, or an LLM when configured.
    A failed call degrades the opinion and travels in the state as a `CallFailure`."""
    settings = Settings.from_state(state["settings"])
    dimension = Dimension.model_validate(state["dimension"])
    persona = state["judge"]
    update: dict[str, Any] = {}
    try:
        if settings.offline:
            opinion = offline_opinion(persona, dimension, state["dossier"])
        else:
            from automaton_auditor.judging.llm import llm_opinion

            opinion = llm_opinion(persona, dimension, state["dossier"], settings,
                                  scope=state.get("run_id", ""))
    except ProviderError as exc:
        opinion = degraded_opinion(persona, dimension.id, f"{type(exc).__name__}: {exc}")
        update["call_failures"] = [call_failure(exc, persona, dimension.id)]
    except Exception as exc:  # one failed judge must not take the bench down
        log.exception("judge %s on %s failed", persona, dimension.id)
        opinion = degraded_opinion(persona, dimension.id, f"{type(exc).__name__}: {exc}")
    update["opinions"] = [opinion]
    return update
