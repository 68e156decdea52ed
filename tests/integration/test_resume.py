"""Checkpointed runs: a run that crashes mid-graph resumes from its last completed step, and a
finished run is replayed (re-ruled and re-rendered) without running any node again."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from automaton_auditor import graph
from automaton_auditor.cli import app
from automaton_auditor.rubric import load_rubric


def _dir(out: Path) -> Path:
    """The one report folder under `out` (folders are named per target, with a hash)."""
    found = sorted(out.glob("**/report.json"))
    return found[0].parent if found else out / "no-report"


def _invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


def _report(out: Path) -> dict[str, Any]:
    data = json.loads((_dir(out) / "report.json").read_text(encoding="utf-8"))
    for volatile in ("generated_at", "run_id"):
        data.pop(volatile)
    return data


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the calls of the detectives and judges the compiled graph makes."""
    calls: dict[str, int] = {}
    for name in ("repo_investigator", "doc_analyst", "vision_inspector", "judge"):
        real = getattr(graph, name)

        def spy(state: Any, _real: Any = real, _name: str = name) -> Any:
            calls[_name] = calls.get(_name, 0) + 1
            return _real(state)

        monkeypatch.setattr(graph, name, spy)
    return calls


def test_crashed_run_resumes_from_its_last_step(auditee_repo: Path, report_pdf: Path,
                                                tmp_path: Path, counted: dict[str, int],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    real_justice = graph.chief_justice

    def crash(state: Any) -> Any:
        raise RuntimeError("simulated crash in chief_justice")

    monkeypatch.setattr(graph, "chief_justice", crash)
    out = tmp_path / "out"
    first = _invoke([str(auditee_repo), str(report_pdf), "--output-dir", str(out), "-q",
                     "--no-cache"])
    assert first.exit_code == 3
    match = re.search(r"audit resume (\S+)\)", first.output)
    assert match, first.output
    assert "partial report written" in first.output
    partial = json.loads((_dir(out) / "report.json").read_text(encoding="utf-8"))
    assert "stopped early: RuntimeError: simulated crash" in partial["executive_summary"]
    before = dict(counted)
    assert before["judge"] == 30 and before["repo_investigator"] == 1

    monkeypatch.setattr(graph, "chief_justice", real_justice)
    resumed = _invoke(["resume", match.group(1), "-q"])
    assert resumed.exit_code == 0, resumed.output
    assert counted == before  # no detective and no judge ran again
    report = json.loads((_dir(out) / "report.json").read_text(encoding="utf-8"))
    assert report["run_id"] == match.group(1)
    manifest = json.loads((_dir(out) / "run_manifest.json").read_text(encoding="utf-8"))
    assert manifest["run_id"] == match.group(1)
    assert f"| Run | `{match.group(1)}` |" in (_dir(out) / "report.md").read_text()

    # The resumed report is the report an uninterrupted run gives.
    fresh = tmp_path / "fresh"
    assert _invoke([str(auditee_repo), str(report_pdf), "--output-dir", str(fresh), "-q",
                    "--no-cache"]).exit_code == 0
    assert _report(out) == _report(fresh)

    again = _invoke(["resume", match.group(1)])
    assert again.exit_code == 2 and "audit replay" in again.output


@pytest.mark.parametrize("node", ["judge", "dialectics"])
def test_a_stopped_run_leaves_a_partial_report_and_resumes(
        node: str, auditee_repo: Path, report_pdf: Path, tmp_path: Path,
        counted: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (SIGTERM and SIGHUP take its path) while the judges run, or just after: the
    partial report rules on what the last checkpoint holds, and resume finishes the run."""
    real = getattr(graph, node)

    def stop(state: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(graph, node, stop)
    out = tmp_path / "out"
    first = _invoke([str(auditee_repo), str(report_pdf), "--output-dir", str(out), "-q",
                     "--no-cache"])
    assert first.exit_code == 130, first.output
    match = re.search(r"^error: interrupted; partial report written; resume with: audit "
                      r"resume (\S+)$", first.output, re.MULTILINE)
    assert match, first.output
    partial = json.loads((_dir(out) / "report.json").read_text(encoding="utf-8"))
    assert partial["run_id"] == match.group(1)
    assert "The audit was stopped early: interrupted." in partial["executive_summary"]
    judged = [c for c in partial["criteria"] if c["judged"]]
    if node == "judge":  # no judge had ruled: every criterion says why it has no score
        assert judged == [] and len(partial["criteria"]) == 10
        assert {c["not_judged_reason"] for c in partial["criteria"]} == {
            "the audit stopped before its judges ruled"}
    else:  # the judges' opinions were checkpointed: the Chief Justice rules on them
        assert len(judged) == 10

    monkeypatch.setattr(graph, node, real)
    resumed = _invoke(["resume", match.group(1), "-q"])
    assert resumed.exit_code == 0, resumed.output
    fresh = tmp_path / "fresh"
    assert _invoke([str(auditee_repo), str(report_pdf), "--output-dir", str(fresh), "-q",
                    "--no-cache"]).exit_code == 0
    assert _report(out) == _report(fresh)  # the partial report is replaced by the whole one


def test_a_stop_mid_step_keeps_the_opinions_of_judges_that_had_ruled(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path, counted: dict[str, int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while some judges of one step have ruled and one has not: the ruled opinions
    are pending writes, which the run's live state includes; the partial report rules on
    them, says which judge had not ruled, and resume runs only the judges that had not."""
    real = graph.judge

    def stop_on_one(state: Any) -> Any:
        if state["dimension"]["id"] == "report_accuracy" and state["judge"] == "Prosecutor":
            raise KeyboardInterrupt
        return real(state)

    monkeypatch.setattr(graph, "judge", stop_on_one)
    out = tmp_path / "out"
    first = _invoke([str(auditee_repo), str(report_pdf), "--output-dir", str(out), "-q",
                     "--no-cache"])
    assert first.exit_code == 130, first.output
    match = re.search(r"audit resume (\S+)$", first.output, re.MULTILINE)
    assert match, first.output
    partial = json.loads((_dir(out) / "report.json").read_text(encoding="utf-8"))
    opinions = {(c["dimension_id"], o["judge"]): o for c in partial["criteria"]
                for o in c["judge_opinions"]}
    stopped = opinions.pop(("report_accuracy", "Prosecutor"))
    assert stopped["degraded"] and "stopped before this judge ruled" in stopped["argument"]
    ruled = [o for o in opinions.values() if not o["degraded"]]
    assert ruled  # LangGraph runs a step's other tasks to the end: in practice all 29
    assert all("stopped before" in o["argument"] for o in opinions.values() if o["degraded"])

    monkeypatch.setattr(graph, "judge", real)
    before = counted.get("judge", 0)
    assert _invoke(["resume", match.group(1), "-q"]).exit_code == 0
    assert counted.get("judge", 0) - before < 30  # the judges that had ruled did not rerun


def test_replay_rerenders_with_another_rubric_without_running_nodes(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path, counted: dict[str, int]) -> None:
    out = tmp_path / "out"
    assert _invoke([str(auditee_repo), str(report_pdf), "--output-dir", str(out), "-q",
                    "--no-cache"]).exit_code == 0
    run_id = json.loads((_dir(out) / "report.json").read_text())["run_id"]
    original = {r["rule"] for c in _report(out)["criteria"] for r in c["rules_applied"]}
    assert "functionality_weight" in original
    before = dict(counted)

    same = tmp_path / "same"
    assert _invoke(["replay", run_id, "--output-dir", str(same), "-q"]).exit_code == 0
    assert _report(same) == _report(out)

    rubric = load_rubric().model_dump()
    rubric["synthesis_rules"] = {"security_override": "Security flaws cap the score at 3.",
                                 "coin_toss": "An invented rule with no implementation."}
    rubric["dimensions"][0]["name"] = "Renamed For Replay"
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(rubric), encoding="utf-8")
    other = tmp_path / "other"
    assert _invoke(["replay", run_id, "--rubric", str(path), "--output-dir", str(other),
                    "-q"]).exit_code == 0
    replayed = _report(other)
    assert replayed["criteria"][0]["dimension_name"] == "Renamed For Replay"
    assert any("coin_toss" in e for e in replayed["errors"])
    applied = {r["rule"] for c in replayed["criteria"] for r in c["rules_applied"]}
    assert "functionality_weight" not in applied  # the run's own rule set was replaced
    assert counted == before  # replay ran no detective and no judge

    rubric["dimensions"] = rubric["dimensions"][:2]
    path.write_text(json.dumps(rubric), encoding="utf-8")
    refused = _invoke(["replay", run_id, "--rubric", str(path), "-q"])
    assert refused.exit_code == 2 and "dimensions differ" in refused.output


def test_unknown_run_id_exits_2() -> None:
    for command in ("resume", "replay"):
        result = _invoke([command, "20200101-000000-abcdef"])
        assert result.exit_code == 2
        assert "no run" in result.output
