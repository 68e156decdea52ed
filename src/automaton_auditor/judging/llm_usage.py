"""Cost and visibility of the LLM bench: token totals and the rounds of each criterion."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from automaton_auditor.state import CriterionResult, JudicialOpinion

TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens", "calls")
# The most tokens a count holds: the model server says how many it used, and a count past 64
# bits (10**30) could not be checkpointed (msgpack), which failed the whole audit. 2**53 is
# also the largest integer every JSON reader keeps exact.
MAX_COUNT = 2**53


def count(value: Any) -> int:
    """A token count as the server gave it, held to 0..MAX_COUNT (NaN, inf, text: 0)."""
    try:
        number = int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0
    return min(max(number, 0), MAX_COUNT)


def usage_of(raw: Any) -> dict[str, int]:
    """Token counts of one response (``usage_metadata`` of an AIMessage), zeros when absent."""
    meta = getattr(raw, "usage_metadata", None) or {}
    if not isinstance(meta, Mapping):
        return dict.fromkeys(TOKEN_KEYS[:3], 0)
    return {key: count(meta.get(key)) for key in TOKEN_KEYS[:3]}


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
                totals[key] = count(totals[key] + count(opinion.usage.get(key, 0)))
    for key in TOKEN_KEYS:
        if extra and extra.get(key):
            seen = True
            totals[key] = count(totals[key] + count(extra[key]))
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
