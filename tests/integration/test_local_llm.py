"""Opt-in: one full audit through a real OpenAI-compatible server (e.g. ../shared/tools/local-llm).

Skipped unless AUDITOR_TEST_BASE_URL is set, e.g.::

    AUDITOR_TEST_BASE_URL=http://127.0.0.1:8766/v1 uv run pytest -s -m llm \
        tests/integration/test_local_llm.py

Optional: AUDITOR_TEST_MODEL (default ``openai:local``), AUDITOR_TEST_CONCURRENCY (default 1,
the local server's one slot), AUDITOR_TEST_OUT (a folder to keep the report and the figures),
AUDITOR_TEST_RUBRIC (a rubric file, e.g. a few criteria when the machine is slow).
The test prints calls, tokens, wall times and how many opinions validated; it asserts the
plumbing (three opinions per criterion, a report), never the small model's judgement.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.graph import compile_graph
from automaton_auditor.judging.llm_usage import slowest_call_s, usage_totals
from automaton_auditor.judging.models import clear_model_cache
from automaton_auditor.retry import reset_circuits
from automaton_auditor.rubric import load_rubric
from automaton_auditor.settings import Settings

BASE_URL = os.environ.get("AUDITOR_TEST_BASE_URL")
pytestmark = [pytest.mark.llm,
              pytest.mark.skipif(not BASE_URL, reason="AUDITOR_TEST_BASE_URL is not set")]


def _stream(state: dict[str, Any], settings: Settings) -> tuple[dict[str, Any], dict[str, float]]:
    """Run the graph, timestamping the judge phase: from the aggregator's end to the last
    judge (round 1) and to the last re-evaluation (round 2)."""
    marks: dict[str, float] = {"start": time.perf_counter()}
    final: dict[str, Any] = {}
    config = {"max_concurrency": settings.max_concurrency, "recursion_limit": 50}
    for mode, chunk in compile_graph().stream(state, config, stream_mode=["updates", "values"]):
        if mode == "values":
            final = chunk
            continue
        now = time.perf_counter()
        for node in chunk:
            if node in ("evidence_aggregator", "judge", "reevaluate", "chief_justice"):
                marks.setdefault(f"{node}_first", now)
                marks[f"{node}_last"] = now
    return final, marks


def test_full_audit_through_a_real_model(auditee_repo: Path, report_pdf: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", str(BASE_URL))
    monkeypatch.setenv("OPENAI_API_KEY", os.environ.get("OPENAI_API_KEY", "local"))
    reset_circuits()
    clear_model_cache()
    out = Path(os.environ.get("AUDITOR_TEST_OUT", str(tmp_path / "out")))
    settings = Settings(output_dir=str(out),
                        model=os.environ.get("AUDITOR_TEST_MODEL", "openai:local"),
                        max_concurrency=int(os.environ.get("AUDITOR_TEST_CONCURRENCY", "1")),
                        call_timeout_s=900.0, max_retries=1)
    rubric_file = os.environ.get("AUDITOR_TEST_RUBRIC")
    rubric = load_rubric(Path(rubric_file) if rubric_file else None)
    state = {"target": str(auditee_repo), "report_path": str(report_pdf),
             "rubric": rubric.model_dump(), "settings": settings.to_state()}
    final, marks = _stream(state, settings)
    opinions = final.get("opinions") or []
    round1 = [o for o in opinions if o.round == 1]
    figures = {
        "calls": usage_totals(opinions, final.get("usage")).get("calls", 0),
        "usage": usage_totals(opinions, final.get("usage")),
        "opinions_round1": len(round1),
        "validated_round1": sum(1 for o in round1 if not o.degraded),
        "opinions_round2": sum(1 for o in opinions if o.round == 2),
        "wall_total_s": round(marks["chief_justice_last"] - marks["start"], 1),
        "llm_round1_phase_s": round(marks["judge_last"] - marks["evidence_aggregator_last"], 1),
        "llm_round2_phase_s": round(marks["reevaluate_last"] - marks["judge_last"], 1)
        if "reevaluate_last" in marks else None,
        "slowest_round1_call_s": slowest_call_s(round1),
        "slowest_call_s": slowest_call_s(opinions),
        "concurrency": settings.max_concurrency,
        "aborted": final.get("aborted"),
        "errors": [e for e in final.get("errors") or [] if "judge" in e or "re-eval" in e],
    }
    print(json.dumps(figures, indent=2))
    out.mkdir(parents=True, exist_ok=True)
    (out / "llm_figures.json").write_text(json.dumps(figures, indent=2), encoding="utf-8")
    report = final["final_report"]
    assert Path(final["report_files"]["markdown"]).is_file()
    assert all(len({o.judge for o in c.judge_opinions}) == 3 for c in report.criteria)
    assert len(round1) == 3 * len(rubric.dimensions)
    assert report.usage.get("total_tokens", 0) > 0
