"""report_writer: renders the ruling to Markdown, JSON and a run manifest."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from automaton_auditor.judging.llm_usage import slowest_call_s, usage_totals
from automaton_auditor.output.build import build_report
from automaton_auditor.output.files import package_versions, write_report_files
from automaton_auditor.settings import Settings
from automaton_auditor.state import AgentState


def run_manifest(state: AgentState, settings: Settings) -> dict[str, Any]:
    """Inputs, hashes, versions, judges and timings of this run."""
    rubric_json = json.dumps(state.get("rubric") or {}, sort_keys=True).encode("utf-8")
    started = state.get("started_at")
    return {
        "run_id": state.get("run_id"),
        "inputs": {"target": state.get("target"), "report": state.get("report_path"),
                   "rubric": settings.rubric_path or "embedded default"},
        "hashes": {"commit": state.get("commit"), "report_sha256": state.get("report_sha256"),
                   "rubric_sha256": hashlib.sha256(rubric_json).hexdigest()},
        "versions": package_versions(),
        "judges": settings.bench_label,
        "settings": settings.to_state(),
        "detectives": {k: str(v) for k, v in (state.get("detective_status") or {}).items()},
        "timings_s": {**(state.get("timings") or {}),
                      "total": round(time.time() - started, 3) if started else None},
        "opinions": len(state.get("opinions") or []),
        "degraded_opinions": sum(1 for o in state.get("opinions") or [] if o.degraded),
        "reevaluated_opinions": sum(1 for o in state.get("opinions") or [] if o.round == 2),
        "usage": usage_totals(state.get("opinions") or [], state.get("usage")),
        "slowest_judge_call_s": slowest_call_s(state.get("opinions") or []),
        "aborted": state.get("aborted"),
    }


def report_writer(state: AgentState) -> dict[str, Any]:
    """Write the report files; always runs, even after invalid input."""
    settings = Settings.from_state(state.get("settings"))
    report = build_report(state)
    files = write_report_files(report, Path(settings.output_dir), run_manifest(state, settings))
    # The files carry the evidence; the state keeps its one copy in the store.
    return {"final_report": report.model_copy(update={"evidence": {}}), "report_files": files}
