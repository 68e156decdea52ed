"""Planning the bench without calling it: `--dry-run`, persona-model options, trace config.

Token figures are estimates (about four characters per token) from the real prompts of each
criterion with an assumed dossier; the output side is the schema's upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from automaton_auditor.judging.llm_prompts import criterion_prompt, persona_prompt
from automaton_auditor.judging.llm_schema import (
    ARGUMENT_MAX,
    CITED_MAX,
    ITEM_MAX,
    ITEMS_MAX,
    REMEDIATION_MAX,
)
from automaton_auditor.judging.models import model_for, structured_method
from automaton_auditor.rubric import Rubric
from automaton_auditor.settings import Settings
from automaton_auditor.state import JUDGES, Judge

CHARS_PER_TOKEN = 4
ASSUMED_EVIDENCE = 8  # evidence items per criterion in a typical dossier
EVIDENCE_LINE_CHARS = 600  # one JSON evidence line with a snippet
PERSONA_ALIASES = {"prosecutor": "Prosecutor", "defense": "Defense", "defence": "Defense",
                   "techlead": "TechLead", "tech_lead": "TechLead", "tech-lead": "TechLead"}


@dataclass(frozen=True)
class PlannedCall:
    """One judge call the bench would make in round 1."""

    criterion_id: str
    judge: Judge
    model: str
    method: str
    input_tokens: int
    max_output_tokens: int


def parse_persona_models(values: list[str]) -> dict[str, str]:
    """``Prosecutor=openai:gpt-4o`` options as a persona → model map (ValueError if bad)."""
    models: dict[str, str] = {}
    for value in values:
        persona, sep, model = value.partition("=")
        judge = PERSONA_ALIASES.get(persona.strip().lower())
        if not sep or judge is None or not model.strip():
            raise ValueError(f"--persona-model {value!r}: expected PERSONA=MODEL with PERSONA "
                             "one of Prosecutor, Defense, TechLead")
        models[judge] = model.strip()
    return models


def missing_models(settings: Settings) -> list[str]:
    """Personas left without a model when only some have one (and no bench model is set)."""
    if settings.offline or settings.model:
        return []
    return [j for j in JUDGES if j not in settings.persona_models]


def _tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def output_bound(judge: Judge) -> int:
    """Upper bound of a judge's answer in tokens, from the schema's string bounds."""
    chars = ARGUMENT_MAX + CITED_MAX * 20 + 80
    if judge in ("Prosecutor", "Defense"):
        chars += ITEMS_MAX * ITEM_MAX
    if judge in ("Prosecutor", "TechLead"):
        chars += REMEDIATION_MAX
    return _tokens(chars)


def plan_calls(rubric: Rubric, settings: Settings) -> list[PlannedCall]:
    """Round 1 of the bench: one call per criterion and persona, in dispatch order."""
    calls = []
    for dimension in rubric.dimensions:
        for judge in JUDGES:
            model = model_for(judge, settings)
            chars = (len(persona_prompt(judge)) + len(criterion_prompt(judge, dimension, []))
                     + ASSUMED_EVIDENCE * EVIDENCE_LINE_CHARS)
            calls.append(PlannedCall(dimension.id, judge, model,
                                     structured_method(model, settings), _tokens(chars),
                                     min(output_bound(judge), settings.max_output_tokens)))
    return calls


def render_plan(rubric: Rubric, settings: Settings) -> str:
    """The `--dry-run` text: planned calls and token estimates."""
    if settings.offline:
        return (f"{settings.bench_label}: {3 * len(rubric.dimensions)} opinions, no model "
                "calls, no tokens.")
    calls = plan_calls(rubric, settings)
    lines = [f"{settings.bench_label}: {len(calls)} calls in round 1 "
             f"(max concurrency {settings.max_concurrency}, timeout {settings.call_timeout_s}s, "
             f"{settings.max_retries} retries)"]
    lines += [f"  {c.criterion_id:<32} {c.judge:<10} {c.model} [{c.method}] "
              f"~{c.input_tokens} in, ≤{c.max_output_tokens} out" for c in calls]
    tokens_in = sum(c.input_tokens for c in calls)
    tokens_out = sum(c.max_output_tokens for c in calls)
    lines.append(f"round 1 estimate: ~{tokens_in:,} input + ≤{tokens_out:,} output tokens")
    lines.append(f"worst case with a re-evaluation round on every criterion: {2 * len(calls)} "
                 f"calls, ~{2 * tokens_in + len(calls) * 300:,} input + "
                 f"≤{2 * tokens_out:,} output tokens")
    return "\n".join(lines)


def trace_config(target: str, report: str, settings: Settings,
                 commit: str | None = None) -> dict[str, Any]:
    """run_name, tags and metadata of the audit's root run (LangSmith, when tracing is on).
    `commit`: the local target's HEAD, as the one HEAD reader (`forensics.git.head`) told it
    (never read here: a hostile HEAD must not reach the trace)."""
    name = target.rstrip("/").rsplit("/", 1)[-1] or target
    tags = ["automaton-auditor", f"target:{target}",
            "bench:offline" if settings.offline else "bench:llm"]
    if commit:
        tags.append(f"commit:{commit}")
    return {"run_name": f"audit {name}", "tags": tags,
            "metadata": {"target": target, "report": report, "commit": commit,
                         "bench": settings.bench_label}}
