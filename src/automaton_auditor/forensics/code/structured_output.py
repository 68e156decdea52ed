"""Structured-output findings: which schema the models are bound to, and retries."""

from __future__ import annotations

import re
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.facts import call_finding, calls_of
from automaton_auditor.forensics.code.source import function_source
from automaton_auditor.state import Finding

OPINION = re.compile(r"opinion|verdict|judg|outcome|ruling|score", re.I)


def _judge_block(facts: dict[str, JSON], calls: list[tuple[str, JSON]],
                 repo: Path | None, finding: Finding) -> Finding:
    """Quote the whole function that queries the judge model (the rubric asks for it)."""
    if not calls or repo is None:
        return finding
    path, call = calls[0]
    info = (facts[path].get("functions") or {}).get(call["func"])
    if not info:
        return finding
    return finding.model_copy(update={
        "content": function_source(repo, path, info["line"], info["end"]),
        "location": f"{path}:{info['line']}"})


def llm_findings(facts: dict[str, JSON], repo: Path | None = None) -> list[Finding]:
    """``llm.structured_output``, ``llm.opinion_schema``, ``llm.retry``,
    ``llm.freeform_parse``."""
    structured = calls_of(facts, "structured")
    opinion = [(p, c) for p, c in structured
               if any(OPINION.search(s) for s in c["schemas"])]
    invokes = calls_of(facts, "llm_invoke")
    retry_loops = [(p, c) for p, c in invokes if c["in_try"] and c["in_attempt_loop"]]
    model_calls = invokes + structured
    retry_funcs = [(p, c) for p, c in model_calls
                   if ((facts[p].get("functions") or {}).get(c["func"]) or {}).get("retry_hint")
                   and c.get("in_try", True)]
    helpers = [(p, {"line": info["try_in_attempt_loop"]["line"], "func": q,
                    "snippet": info["try_in_attempt_loop"]["snippet"], "how": f"retry loop in {q}"})
               for p in sorted(facts) for q, info in sorted((facts[p].get("functions") or
                                                              {}).items())
               if info.get("try_in_attempt_loop") and info.get("retry_hint")]
    seen = {(p, c["func"]) for p, c in retry_funcs + retry_loops}
    retries = calls_of(facts, "retry") + retry_loops + [
        (p, {**c, "how": f"retry counter in {c['func']}"}) for p, c in retry_funcs] + [
        (p, c) for p, c in helpers if (p, c["func"]) not in seen]
    freeform = calls_of(facts, "freeform_parse")
    schemas = sorted({s for _p, c in structured for s in c["schemas"]})
    return [
        call_finding("llm.structured_output", "LLM calls are bound to a schema "
           "(with_structured_output / bind_tools)", bool(structured), "success", structured,
           f"{len(structured)} binding(s) to: {', '.join(schemas) or 'nothing'}.",
           schemas=schemas),
        _judge_block(facts, opinion, repo, call_finding(
            "llm.opinion_schema", "Judges are bound to a JudicialOpinion-like schema",
            bool(opinion), "success", opinion or structured,
           "A model is bound to an opinion schema." if opinion else
            "No binding to a schema named like an opinion or verdict.", confidence=0.8)),
        call_finding("llm.retry", "Retry logic around model calls", bool(retries), "success",
           sorted(retries, key=lambda pc: (pc[0], pc[1]["line"])),
           f"{len(retries)} retry mechanism(s): "
           f"{', '.join(sorted({str(c.get('how', 'try/except in a loop')) for _p, c in retries}))}."
           if retries else "No with_retry, max_retries, retry decorator or retry loop "
           "around a model call.", confidence=0.75),
        call_finding("llm.freeform_parse",
                     "Model output parsed as free text (json.loads on .content)",
           bool(freeform), "failure", freeform,
           f"{len(freeform)} json.loads call(s) on a message's content." if freeform else
           "No json.loads on model message content.", confidence=0.7),
    ]
