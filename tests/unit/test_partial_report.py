"""The partial report of a stopped or crashed run: written from whatever the checkpoint holds,
with every criterion that has no ruling saying why, and never an exception of its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.nodes import justice
from automaton_auditor.rubric import load_rubric
from automaton_auditor.service.partial import NOT_RULED, partial_report
from automaton_auditor.settings import Settings


def _checkpoint(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    """A run's state as checkpointed after its input check, before any detective."""
    settings = Settings(output_dir=str(tmp_path / "out"))
    return {"target": str(tmp_path / "repo"), "report_path": str(tmp_path / "r.pdf"),
            "rubric": load_rubric().to_state(), "settings": settings.to_state(),
            "run_id": "20261129-000000-abcdef", "input_ok": True, **extra}


def _written(final: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(Path(final["report_files"]["json"]).read_text(encoding="utf-8")))


def test_a_run_stopped_before_its_judges_says_so_for_every_criterion(tmp_path: Path) -> None:
    final = partial_report(_checkpoint(tmp_path), "stopped by SIGTERM; child processes killed")
    assert final is not None
    written = _written(final)
    assert {c["not_judged_reason"] for c in written["criteria"]} == {
        justice.STOPPED_BEFORE_JUDGES}
    assert "stopped early: stopped by SIGTERM" in written["executive_summary"]
    # no criterion judged: no score band is named as if it were a verdict
    assert "No criterion was judged" in written["executive_summary"]
    assert "Vibe Coder" not in written["executive_summary"]


def test_a_crash_in_the_ruling_still_writes_every_criterion_as_not_ruled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(state: Any) -> Any:
        raise ValueError("a ruling bug")

    monkeypatch.setattr(justice, "chief_justice", crash)
    final = partial_report(_checkpoint(tmp_path), "RuntimeError: boom")
    assert final is not None
    written = _written(final)
    assert len(written["criteria"]) == 10
    assert {c["not_judged_reason"] for c in written["criteria"]} == {NOT_RULED}
    assert "chief_justice: ValueError: a ruling bug" in written["errors"]


def test_no_report_before_the_inputs_are_checked_or_when_it_cannot_be_written(
        tmp_path: Path) -> None:
    assert partial_report(_checkpoint(tmp_path, input_ok=False), "interrupted") is None
    blocker = tmp_path / "file"
    blocker.write_text("")
    unwritable = _checkpoint(tmp_path, settings=Settings(
        output_dir=str(blocker / "out")).to_state())
    assert partial_report(unwritable, "interrupted") is None


def _degraded_body(state: Any, settings: Any, rubric: Any) -> dict[str, Any]:
    """A detective whose PDF reader died (as the stop's kill makes it die)."""
    from automaton_auditor.state import DetectiveStatus

    return {"detective_status": {"doc": DetectiveStatus(state="degraded",
                                                        reason="the PDF reader crashed")}}


def _closed_body(state: Any, settings: Any, rubric: Any) -> dict[str, Any]:
    from automaton_auditor.containment import Closed

    raise Closed("the audit is stopping")


@pytest.mark.parametrize("stopping", [False, True])
def test_a_detective_failing_while_the_audit_stops_records_nothing_for_resume(
        stopping: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure seen while the audit stops is the stop's doing: the node raises (nothing is
    checkpointed, resume runs it again) instead of writing a failed input into the run."""
    from automaton_auditor.nodes import detectives

    monkeypatch.setattr(detectives, "closing", lambda: stopping)
    state: Any = _checkpoint(tmp_path)
    if stopping:
        with pytest.raises(KeyboardInterrupt):
            detectives.run_guarded(state, "doc", "doc_analyst", _degraded_body)
        with pytest.raises(RuntimeError, match="stopping"):
            detectives.run_guarded(state, "doc", "doc_analyst", _closed_body)
        return
    kept = detectives.run_guarded(state, "doc", "doc_analyst", _degraded_body)
    assert kept["detective_status"]["doc"].state == "degraded"  # the input's failure, kept
