"""Acceptance for the execution facts, end to end offline through the CLI: a strong auditor
graph (written in the tests, never run by the auditor) and copies of it with one LangGraph
defect each. Each copy gets a failure fact naming the key or node; the copy whose detectives'
evidence is dropped scores 2 or less on graph orchestration; the original gets none of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import _git
from tests.integration.test_verdicts import _audit, _criterion
from tests.unit import graph_defects as copies

EXECUTION_FAILURES = ("graph.state.evidence_lost", "graph.state.dropped_keys",
                      "graph.dead_routes", "graph.unreachable_nodes", "graph.join_repeats",
                      "graph.state.parallel_writes", "graph.state.unwritten_reads")


def _repo(root: Path, files: dict[str, str]) -> Path:
    """A repository built a file a day (the history is not what is tested here)."""
    repo = root / "auditee"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    steps = {"pyproject.toml": "[project]\nname='auditee'\n", "README.md": "# auditee\n",
             **files}
    for day, (path, text) in enumerate(steps.items(), start=1):
        (repo / path).write_text(text, encoding="utf-8")
        _git(repo, "add", path)
        _git(repo, "commit", "-q", "-m", f"Add {path}", date=f"2026-02-{day:02d}T10:00:00")
    return repo


def _failures(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The execution failure facts found in the report's evidence, by facet."""
    return {e["facet"]: e for items in report["evidence"].values() for e in items
            if e["facet"] in EXECUTION_FAILURES and e["found"]}


def test_the_strong_graph_gets_no_execution_failure(tmp_path: Path, report_pdf: Path) -> None:
    report = _audit(_repo(tmp_path, copies.strong()), report_pdf, tmp_path / "out")
    assert _failures(report) == {}
    assert _criterion(report, "graph_orchestration")["final_score"] >= 3


DEFECTS: list[Any] = [
    pytest.param(copies.undeclared_evidence, "graph.state.evidence_lost", "evidence",
                 id="undeclared-detective-keys"),
    pytest.param(copies.route_on_undeclared_flag, "graph.dead_routes", "evidence_ok",
                 id="route-on-undeclared-flag"),
    pytest.param(copies.node_without_incoming_edge, "graph.unreachable_nodes",
                 "vision_inspector", id="node-without-incoming-edge"),
    pytest.param(copies.unequal_branches_separate_edges, "graph.join_repeats",
                 "evidence_aggregator", id="unequal-branches-separate-edges"),
]


@pytest.mark.parametrize(("defect", "facet", "named"), DEFECTS)
def test_a_copy_with_one_defect_gets_the_fact_naming_it(
        tmp_path: Path, report_pdf: Path, defect: Callable[[], dict[str, str]], facet: str,
        named: str) -> None:
    report = _audit(_repo(tmp_path, defect()), report_pdf, tmp_path / "out")
    fact = _failures(report).get(facet)
    assert fact is not None, sorted(_failures(report))
    assert named in fact["rationale"]
    if facet == "graph.state.evidence_lost":
        graph = _criterion(report, "graph_orchestration")
        assert (graph["final_score"], graph["deciding_rule"]) == (2, "failure_pattern_cap")
        assert _criterion(report, "state_management_rigor")["final_score"] <= 3
