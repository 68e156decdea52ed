"""Dialectics: after the judges' fan-in, one bounded re-evaluation round where they disagree.

When the three first-round scores of a criterion differ by more than 2, each judge with a
valid opinion sees the other two arguments and the evidence ids they cite, and may revise
(``round=2``). There is never a third round. The offline bench skips the round: its judges
are deterministic functions of the dossier, so asking again would repeat the same opinion.

This node is also where a stopped bench becomes `aborted`: the judges record their failed
calls in the state (`call_failures`); when one of them means no later call can succeed (the
provider rejected the key, or the circuit opened after consecutive failures), the run goes
straight to the Chief Justice and the partial report.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from langgraph.types import Send
from typing_extensions import TypedDict

from automaton_auditor.judging.rules import score_spread
from automaton_auditor.nodes.judges import call_failure
from automaton_auditor.retry import ProviderError
from automaton_auditor.rubric import Dimension, Rubric
from automaton_auditor.settings import Settings
from automaton_auditor.state import (
    AgentState,
    CallFailure,
    Evidence,
    Judge,
    JudicialOpinion,
    resolved_dossiers,
)

log = logging.getLogger(__name__)
SPREAD_LIMIT = 2


class ReevaluationTask(TypedDict):
    """What one judge receives for the re-evaluation round."""

    judge: Judge
    dimension: dict[str, Any]
    dossier: list[Evidence]
    settings: dict[str, Any]
    own: JudicialOpinion
    peers: list[JudicialOpinion]
    run_id: str


def first_round(opinions: list[JudicialOpinion], criterion_id: str) -> list[JudicialOpinion]:
    """The valid (not degraded) round-1 opinions on one criterion, one per judge."""
    latest: dict[str, JudicialOpinion] = {}
    for opinion in opinions:
        if opinion.criterion_id == criterion_id and opinion.round == 1 and not opinion.degraded:
            latest[opinion.judge] = opinion
    return [latest[j] for j in sorted(latest)]


def disputed(opinions: list[JudicialOpinion], criterion_id: str) -> list[JudicialOpinion]:
    """The round-1 opinions of a criterion whose scores differ by more than 2 (else [])."""
    live = first_round(opinions, criterion_id)
    return live if len(live) >= 2 and score_spread(live) > SPREAD_LIMIT else []


def stop_reason(failures: list[CallFailure]) -> str | None:
    """Why the bench must stop, from the judges' failed calls (None: it may go on)."""
    reasons: list[str] = []
    for failure in failures:
        if failure.stops_bench and failure.reason not in reasons:
            reasons.append(failure.reason)
    return f"the judges stopped: {'; '.join(reasons)}" if reasons else None


def dialectics(state: AgentState) -> dict[str, Any]:
    """Fan-in of the judges: stop the bench if a failed call says so, else go on."""
    started = time.perf_counter()
    update: dict[str, Any] = {}
    reason = stop_reason(state.get("call_failures") or [])
    if reason:
        update["aborted"] = reason
        update["errors"] = [f"judges: {reason}; the report is partial"]
    update["timings"] = {"dialectics": round(time.perf_counter() - started, 4)}
    return update


def dispatch_reevaluation(state: AgentState) -> list[Send] | list[str]:
    """One re-evaluation task per judge of each disputed criterion, else the Chief Justice."""
    settings = Settings.from_state(state.get("settings"))
    if settings.offline or state.get("aborted"):
        return ["chief_justice"]
    rubric = Rubric.from_state(state["rubric"])
    opinions = state.get("opinions") or []
    dossiers = resolved_dossiers(state)
    sends: list[Send] = []
    for dimension in rubric.dimensions:
        live = disputed(opinions, dimension.id)
        for own in live:
            peers = [p for p in live if p.judge != own.judge]
            sends.append(Send("reevaluate", ReevaluationTask(
                judge=own.judge, dimension=dimension.model_dump(),
                dossier=dossiers.get(dimension.id, []),
                settings=state.get("settings") or {}, own=own, peers=peers,
                run_id=state.get("run_id") or "")))
    return sends or ["chief_justice"]


def reevaluate(state: ReevaluationTask) -> dict[str, Any]:
    """One judge reconsiders (round 2). If that fails, its round-1 opinion stands."""
    from automaton_auditor.judging.llm import llm_opinion

    settings = Settings.from_state(state["settings"])
    dimension = Dimension.model_validate(state["dimension"])
    judge = state["judge"]
    try:
        opinion = llm_opinion(judge, dimension, state["dossier"], settings,
                              own=state["own"], peers=state["peers"],
                              scope=state.get("run_id") or "")
    except ProviderError as exc:  # the provider failed: the round-1 opinion stands
        failure = call_failure(exc, judge, dimension.id, round_=2)
        update: dict[str, Any] = {
            "call_failures": [failure],
            "errors": [f"re-evaluation: {judge} on {dimension.id} "
                       f"{'stopped' if failure.stops_bench else 'failed'} ({exc}); "
                       "its round-1 opinion stands"]}
        if failure.stops_bench:  # the provider went away mid-round: stop like round 1 does
            update["aborted"] = f"the judges stopped: {exc}"
        return update
    except Exception as exc:  # a failed re-evaluation must not erase the first opinion
        log.warning("re-evaluation of %s on %s failed: %s", judge, dimension.id, exc)
        return {"errors": [f"re-evaluation: {judge} on {dimension.id} failed "
                           f"({type(exc).__name__}: {exc}); its round-1 opinion stands"]}
    if opinion.degraded:
        return {"errors": [f"re-evaluation: {judge} on {dimension.id} gave no valid answer; "
                           "its round-1 opinion stands"],
                "usage": opinion.usage or {}}
    return {"opinions": [opinion]}
