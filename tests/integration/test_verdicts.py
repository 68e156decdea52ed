"""Verdicts that respect the rubric's failure patterns, end to end offline: the same small
LangGraph repository three ways (built stepwise, uploaded in one commit, cloning through a
shell with an eval), audited through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from automaton_auditor.cli import app
from tests.integration.conftest import GRAPH_PY, TOOLS_PY, _git

UNSAFE_TOOLS_PY = '''
import os
import tempfile


def clone(url: str) -> str:
    tmp = tempfile.mkdtemp()
    os.system(f"git clone {url} {tmp}")
    return tmp


def load_settings(text: str) -> dict:
    return eval(text)
'''


def _repo(root: Path, tools: str, history: str = "stepwise") -> Path:
    """`history`: "stepwise" (one step a day), "bulk" (set-up commits over days, then one
    commit that brings all the code) or "single" (everything in one commit)."""
    repo = root / "auditee"
    (repo / "src" / "tools").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    files = [("pyproject.toml", "[project]\nname='auditee'\n", "Set up the environment"),
             ("README.md", "# auditee\n", "Document the project"),
             ("src/tools/repo_tools.py", tools, "Add the clone tool"),
             ("src/graph.py", GRAPH_PY, "Wire the graph with parallel detectives and judges")]
    steps = {"stepwise": [[f] for f in files], "bulk": [[files[0]], [files[1]], files[2:]],
             "single": [files]}[history]
    for day, step in enumerate(steps, start=1):
        for path, text, _ in step:
            (repo / path).write_text(text, encoding="utf-8")
            _git(repo, "add", path)
        message = step[0][2] if len(step) == 1 else "Add files via upload"
        _git(repo, "commit", "-q", "-m", message, date=f"2026-02-{day:02d}T10:00:00")
    return repo


def _audit(repo: Path, pdf: Path, out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, [str(repo), str(pdf), "--output-dir", str(out),
                                      "--quiet", "--no-cache"])
    assert result.exit_code == 0, result.output
    (report_json,) = out.glob("*/report.json")  # one folder per target, named by output.files
    data: dict[str, Any] = json.loads(report_json.read_text("utf-8"))
    return data


def _criterion(report: dict[str, Any], dimension_id: str) -> dict[str, Any]:
    return next(c for c in report["criteria"] if c["dimension_id"] == dimension_id)


def test_a_bulk_upload_scores_at_most_2_on_git_forensics_with_the_rule_named(
        tmp_path: Path, report_pdf: Path) -> None:
    stepwise = _audit(_repo(tmp_path / "a", TOOLS_PY), report_pdf, tmp_path / "oa")
    uploaded = _audit(_repo(tmp_path / "b", TOOLS_PY, "bulk"), report_pdf, tmp_path / "ob")
    assert _criterion(stepwise, "git_forensic_analysis")["final_score"] >= 4
    git = _criterion(uploaded, "git_forensic_analysis")
    assert (git["final_score"], git["deciding_rule"]) == (2, "failure_pattern_cap")
    cap = next(r for r in git["rules_applied"] if r["rule"] == "failure_pattern_cap")
    assert "Bulk upload: commit" in cap["detail"] and "of the 2 code files" in cap["detail"]
    assert "bulk upload" in (git["verdict_cap"] or "")
    assert uploaded["verdict"] != "Master Thinker"


def test_a_single_commit_history_scores_low_and_caps_the_verdict(tmp_path: Path,
                                                                 report_pdf: Path) -> None:
    single = _audit(_repo(tmp_path / "a", TOOLS_PY, "single"), report_pdf, tmp_path / "o")
    git = _criterion(single, "git_forensic_analysis")
    assert git["final_score"] <= 2 and "failure_pattern_cap" in [
        r["rule"] for r in git["rules_applied"]]
    assert "a single commit holds the whole history" in (git["verdict_cap"] or "")


def test_a_shell_clone_with_eval_is_never_a_master_thinker(tmp_path: Path,
                                                           report_pdf: Path) -> None:
    safe = _audit(_repo(tmp_path / "a", TOOLS_PY), report_pdf, tmp_path / "oa")
    unsafe = _audit(_repo(tmp_path / "b", UNSAFE_TOOLS_PY), report_pdf, tmp_path / "ob")
    tools = _criterion(unsafe, "safe_tool_engineering")
    assert (tools["final_score"], tools["deciding_rule"]) == (2, "failure_pattern_cap")
    cap = next(r for r in tools["rules_applied"] if r["rule"] == "failure_pattern_cap")
    assert "src/tools/repo_tools.py" in cap["detail"]
    assert unsafe["verdict"] in ("Competent Orchestrator", "Vibe Coder")
    assert _criterion(safe, "safe_tool_engineering")["final_score"] > tools["final_score"]
    assert unsafe["overall_score"] < safe["overall_score"]
