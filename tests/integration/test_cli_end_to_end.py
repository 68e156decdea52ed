"""The CLI end to end: a real audit offline, and bad inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from automaton_auditor.cli import app

SECTIONS = ["## Executive Summary", "## Criterion Breakdown", "## Remediation Plan",
            "## Errors and Warnings"]


def _dir(out: Path) -> Path:
    """The one report folder under `out` (folders are named per target, with a hash)."""
    found = sorted(out.glob("**/report.json"))
    return found[0].parent if found else out / "no-report"


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "automaton_auditor", *args],
                          capture_output=True, text=True, timeout=300)


def test_offline_audit_writes_a_full_report(auditee_repo: Path, report_pdf: Path,
                                            tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, [str(auditee_repo), str(report_pdf), "--output-dir",
                                      str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    markdown = (_dir(out) / "report.md").read_text(encoding="utf-8")
    for section in SECTIONS:
        assert section in markdown
    assert "offline bench (rule-based judges)" in markdown
    data = json.loads((_dir(out) / "report.json").read_text(encoding="utf-8"))
    assert len(data["criteria"]) == 10
    for criterion in data["criteria"]:
        assert 1 <= criterion["final_score"] <= 5
        assert len(criterion["judge_opinions"]) == 3
        assert criterion["deciding_rule"]
    assert "src/graph.py" in data["verified_paths"]
    assert "src/nodes/judges.py" in data["hallucinated_paths"]
    manifest = json.loads((_dir(out) / "run_manifest.json").read_text(encoding="utf-8"))
    assert manifest["hashes"]["commit"] == data["commit"]


def test_offline_audit_is_deterministic(auditee_repo: Path, report_pdf: Path,
                                        tmp_path: Path) -> None:
    def run(out: Path) -> dict:
        # --no-cache: both runs compute everything (cached re-runs: test_cache_hits.py).
        result = CliRunner().invoke(app, [str(auditee_repo), str(report_pdf), "--output-dir",
                                          str(out), "--quiet", "--no-cache"])
        assert result.exit_code == 0, result.output
        data = json.loads((_dir(out) / "report.json").read_text(encoding="utf-8"))
        data.pop("generated_at")
        data.pop("run_id")  # every run has its own id
        return data

    assert run(tmp_path / "a") == run(tmp_path / "b")


def test_json_flag_prints_only_json(auditee_repo: Path, report_pdf: Path,
                                    tmp_path: Path) -> None:
    result = _run([str(auditee_repo), str(report_pdf), "--output-dir", str(tmp_path), "--json"])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["overall_score"] > 0


def test_fail_under_exits_1(auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    result = _run([str(auditee_repo), str(report_pdf), "--output-dir", str(tmp_path),
                   "--quiet", "--fail-under", "5"])
    assert result.returncode == 1
    assert "below --fail-under" in result.stderr


def _assert_one_line_error(result: subprocess.CompletedProcess[str], needle: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and needle in lines[0]
    assert "Traceback" not in result.stderr


def test_missing_pdf_exits_2(auditee_repo: Path, tmp_path: Path) -> None:
    result = _run([str(auditee_repo), str(tmp_path / "nope.pdf"), "--output-dir",
                   str(tmp_path / "out")])
    _assert_one_line_error(result, "report not found")
    assert not (tmp_path / "out").exists()  # nothing is written for an input error


def test_folder_that_is_not_a_git_repository_exits_2(tmp_path: Path, report_pdf: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    result = _run([str(folder), str(report_pdf), "--output-dir", str(tmp_path / "out")])
    _assert_one_line_error(result, "not a git repository")


def test_url_with_shell_metacharacters_exits_2(tmp_path: Path, report_pdf: Path) -> None:
    canary = tmp_path / "canary"
    result = _run([f"https://github.com/a/b;touch {canary}", str(report_pdf), "--output-dir",
                   str(tmp_path / "out")])
    _assert_one_line_error(result, "shell metacharacters")
    assert not canary.exists()


def test_bad_rubric_exits_2_naming_the_path(auditee_repo: Path, report_pdf: Path,
                                            tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"rubric_metadata": {"rubric_name": "x"},
                                  "dimensions": [{"id": "a"}]}), encoding="utf-8")
    result = _run([str(auditee_repo), str(report_pdf), "--rubric", str(rubric),
                   "--output-dir", str(tmp_path / "out")])
    _assert_one_line_error(result, "$.dimensions[0].name")
