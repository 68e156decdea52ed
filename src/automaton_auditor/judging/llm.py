"""The LLM bench: one structured call per (criterion × persona), on any chat model.

`llm_opinion` returns a validated `JudicialOpinion`, or a degraded one (excluded by the Chief
Justice) when the model's answer still does not fit the schema after the retries. Every call
runs under the one retry policy (`automaton_auditor.retry`). Provider failures raise
`ProviderError`; the judge node degrades the opinion and records the failure in the state,
where the dialectics node finds the ones that stop the bench (`CircuitOpen`: a bad key, a
missing model, a provider that keeps failing), so the run stops cleanly with a partial report.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from automaton_auditor.judging.llm_prompts import build_messages, prompt_evidence
from automaton_auditor.judging.llm_schema import opinion_schema, to_opinion
from automaton_auditor.judging.llm_usage import count, usage_of
from automaton_auditor.judging.models import (
    build_chat_model,
    endpoint_of,
    model_for,
    provider_of,
    retry_policy,
    structured_method,
)
from automaton_auditor.retry import (
    Circuit,
    CircuitOpen,
    ProviderError,
    RetryPolicy,
    Unparsed,
    call,
    circuit_for,
    describe,
)
from automaton_auditor.rubric import Dimension
from automaton_auditor.settings import Settings
from automaton_auditor.state import Evidence, Judge, JudicialOpinion

log = logging.getLogger(__name__)

__all__ = ["CircuitOpen", "ProviderError", "llm_opinion"]


@dataclass
class CallOutcome:
    """What the attempts of one judge call produced."""

    parsed: BaseModel | None = None
    reason: str = ""
    usage: dict[str, int] = field(default_factory=lambda: {
        "input_tokens": 0, "output_tokens": 0, "total_tokens": 0, "calls": 0})

    def add(self, raw: Any) -> None:
        """Count one answered attempt's tokens."""
        for key, value in usage_of(raw).items():
            self.usage[key] = count(self.usage[key] + value)


def _validated(parsed: Any, schema: type[BaseModel] | None,
               error: Any) -> tuple[BaseModel | None, Any]:
    """A parsed answer as the bounded model (a dict answer is validated here)."""
    if isinstance(parsed, BaseModel):
        return parsed, error
    if isinstance(parsed, dict) and schema is not None:
        try:
            return schema.model_validate(parsed), None
        except ValidationError as exc:
            return None, exc
    return None, error


def invoke_with_retries(runnable: Runnable[Any, Any], messages: list[BaseMessage],
                        policy: RetryPolicy, circuit: Circuit,
                        config: dict[str, Any] | None = None,
                        schema: type[BaseModel] | None = None) -> CallOutcome:
    """Call a structured runnable (``include_raw=True``) under the retry policy until it
    yields an answer that fits `schema`; an answer that never fits leaves `parsed` None.
    Provider failures raise `ProviderError` / `CircuitOpen`."""
    outcome = CallOutcome()

    def attempt() -> BaseModel:
        outcome.usage["calls"] += 1
        result = runnable.invoke(messages, config=config)  # type: ignore[arg-type]
        raw = result.get("raw") if isinstance(result, dict) else None
        parsed = result.get("parsed") if isinstance(result, dict) else result
        outcome.add(raw)
        error = result.get("parsing_error") if isinstance(result, dict) else None
        parsed, error = _validated(parsed, schema, error)
        if parsed is None:
            raise Unparsed(describe(error) if error else "no object")
        return parsed

    try:
        outcome.parsed = call(attempt, policy, circuit)
    except Unparsed as exc:
        outcome.reason = f"unparseable answer ({exc})"
    return outcome


def structured_judge(judge: Judge, evidence_ids: Sequence[str],
                     settings: Settings) -> tuple[Runnable[Any, Any], type[BaseModel]]:
    """The judge's model bound to its per-criterion schema (returning raw and parsed), and
    the Pydantic model every answer is validated against."""
    name = model_for(judge, settings)
    model = build_chat_model(name, settings)
    method = structured_method(name, settings)
    schema = opinion_schema(judge, evidence_ids)
    runnable: Runnable[Any, Any] = model.with_structured_output(
        wire_schema(schema, name, method), method=method, include_raw=True)
    return runnable, schema


def wire_schema(schema: type[BaseModel], name: str, method: str) -> Any:
    """The schema as sent to the provider. OpenAI's own strict json_schema refuses string
    length keywords, so for api.openai.com they are dropped from the wire (answers are still
    validated against the bounded model); OpenAI-compatible servers get them all."""
    if method != "json_schema" or provider_of(name) != "openai" or os.environ.get(
            "OPENAI_BASE_URL"):
        return schema
    return _without_length_bounds(schema.model_json_schema())


def _without_length_bounds(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_length_bounds(v) for k, v in node.items()
                if k not in ("maxLength", "minLength")}
    if isinstance(node, list):
        return [_without_length_bounds(v) for v in node]
    return node


def _trace_config(judge: Judge, dimension: Dimension, round_: int) -> dict[str, Any]:
    return {"run_name": f"{judge} on {dimension.id} (round {round_})",
            "tags": [f"judge:{judge}", f"criterion:{dimension.id}", f"round:{round_}"],
            "metadata": {"judge": judge, "criterion": dimension.id, "round": round_}}


def llm_opinion(judge: Judge, dimension: Dimension, dossier: Sequence[Evidence],
                settings: Settings, *, own: JudicialOpinion | None = None,
                peers: Sequence[JudicialOpinion] = (), scope: str = "") -> JudicialOpinion:
    """One judge's opinion on one criterion from the configured model.

    With `own` (the judge's round-1 opinion) and `peers` (the other judges' opinions) this is
    the re-evaluation round: the result has ``round=2``. `scope` (the run id) names the run
    whose circuit this call shares. Raises `ProviderError` / `CircuitOpen` when the provider
    fails; returns a degraded opinion when the model's answer never fits the schema.
    """
    round_ = 1 if own is None else 2
    evidence = prompt_evidence(dossier)
    started = time.perf_counter()
    runnable, schema = structured_judge(judge, [e.evidence_id for e in evidence], settings)
    policy = retry_policy(settings)
    circuit = circuit_for(endpoint_of(model_for(judge, settings)), scope,
                          policy.circuit_threshold)
    messages = build_messages(judge, dimension, evidence, own, peers)
    outcome = invoke_with_retries(runnable, messages, policy, circuit,
                                  _trace_config(judge, dimension, round_), schema)
    usage = {**outcome.usage, "latency_ms": int((time.perf_counter() - started) * 1000)}
    if outcome.parsed is None:
        log.warning("%s on %s degraded: %s", judge, dimension.id, outcome.reason)
        return JudicialOpinion(judge=judge, criterion_id=dimension.id, score=1,
                               argument=f"Degraded: {outcome.reason}"[:2000], degraded=True,
                               round=round_, usage=usage)
    return to_opinion(outcome.parsed, judge, dimension.id, round_, usage)
