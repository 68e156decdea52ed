"""context_builder: input validation and defaults for callers that send only the inputs."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.nodes.context import context_builder, route_after_context


def test_bare_input_gets_default_rubric_and_settings(tmp_path: Path) -> None:
    report = tmp_path / "r.pdf"
    report.write_bytes(b"%PDF-1.4\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    update = context_builder({"target": str(repo), "report_path": str(report)})
    assert update["rubric"]["dimensions"][0]["id"] == "git_forensic_analysis"
    assert update["settings"]["output_dir"] == "audit"
    assert update["report_sha256"] and len(update["report_sha256"]) == 64


def test_first_problem_is_the_input_error(tmp_path: Path) -> None:
    update = context_builder({"target": "ssh://git@github.com/a/b",
                              "report_path": str(tmp_path / "missing.pdf")})
    assert update["input_ok"] is False
    assert "ssh" in update["input_error"]
    assert len(update["errors"]) == 2
    assert route_after_context(update) == "report_writer"
