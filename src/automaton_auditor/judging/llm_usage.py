"""Cost and visibility of the LLM bench: token totals and the rounds of each criterion."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from automaton_auditor.state import CriterionResult, JudicialOpinion

TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens", "calls")


def usage_of(raw: Any) -> dict[str, int]:
    """Token counts of one response (``usage_metadata`` of an AIMessage), zeros when absent."""
    meta = getattr(raw, "usage_metadata", None) or {}
    return {"input_tokens": int(meta.get("input_tokens") or 0),
            "output_tokens": int(meta.get("output_tokens") or 0),
            "total_tokens": int(meta.get("total_tokens") or 0)}


def usage_totals(opinions: Iterable[JudicialOpinion],
                 extra: Mapping[str, int] | None = None) -> dict[str, int]:
    """Token totals over every opinion (both rounds, degraded ones too) plus `extra`
    (usage no opinion carries). Empty when no model was called (the offline bench)."""
    totals = dict.fromkeys(TOKEN_KEYS, 0)
    seen = False
    for opinion in opinions:
        if opinion.usage:
            seen = True
            for key in TOKEN_KEYS:
                totals[key] += int(opinion.usage.get(key, 0))
    for key in TOKEN_KEYS:
        if extra and extra.get(key):
            seen = True
            totals[key] += int(extra[key])
    return totals if seen else {}


def slowest_call_s(opinions: Iterable[JudicialOpinion]) -> float | None:
    """Wall time of the slowest judge call (retries included), in seconds."""
    times = [o.usage["latency_ms"] for o in opinions if o.usage and "latency_ms" in o.usage]
    return round(max(times) / 1000, 3) if times else None


def with_earlier_rounds(results: Sequence[CriterionResult],
                        opinions: Sequence[JudicialOpinion]) -> list[CriterionResult]:
    """Attach to each ruling the round-1 opinions its round-2 opinions superseded."""
    out = []
    for result in results:
        revised = {o.judge for o in result.judge_opinions if o.round == 2}
        earlier = [o for o in opinions if o.criterion_id == result.dimension_id
                   and o.round == 1 and o.judge in revised]
        out.append(result.model_copy(update={"earlier_opinions": earlier}) if earlier
                   else result)
    return out
