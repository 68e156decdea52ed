"""Cited paths that claim no file: the old side of a correction is no claim that the file
exists, and the report naming itself at another folder is a path mismatch, not an invented
file (no failure fact, so no hallucinated-path cap)."""

from __future__ import annotations

import pytest

from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.forensics.pdf.citations import Passage, extract_cited_paths
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.judging.extras import missing_extra
from automaton_auditor.state import Evidence, Finding, ReportFacts

FILES = ["interim_report.pdf", "README.md", "src/graph.py", "src/tools/repo_tools.py",
         "tests/security/test_sandbox.py"]


def _cross(passages: list[Passage | tuple[int | None, str]], report_name: str | None = None,
           files: list[str] = FILES) -> tuple[list[Finding], list[str], list[str]]:
    facts = ReportFacts(readable=True, page_count=4, cited_paths=extract_cited_paths(passages))
    if report_name is None:
        findings, verified, hallucinated, _ = cross_check(facts, files, None)
    else:
        findings, verified, hallucinated, _ = cross_check(facts, files, None,
                                                          report_name=report_name)
    return findings, verified, hallucinated


def _failures(findings: list[Finding]) -> list[str]:
    return [str(f.data.get("path")) for f in findings
            if f.facet == "claims.paths" and f.pattern == "failure" and f.found]


@pytest.mark.parametrize("text", [
    # the text layer of a real report (IbnuEyni/10Acweek2 p.12), the new side cut at a line end
    "Root Cause: My report referenced old file names from early development\r\n"
    "Claimed: src/tools/git_tools.py \u2192 Actual: src/tools/\r\nrepo_tools.py\r\n",
    "The clone helper, formerly src/tools/git_tools.py, now lives in src/tools/repo_tools.py.",
    "src/tools/git_tools.py (old name) holds the clone helper: see src/tools/repo_tools.py.",
    "Old path: src/tools/git_tools.py; the sandbox is in src/tools/repo_tools.py.",
    "We cited src/tools/git_tools.py -> corrected to src/tools/repo_tools.py."])
def test_the_old_side_of_a_correction_is_no_claim_that_the_file_exists(text: str) -> None:
    findings, _, hallucinated = _cross([(12, text)])
    assert hallucinated == [] and _failures(findings) == []


def test_an_arrow_between_files_is_a_flow_and_both_sides_are_claims() -> None:
    _, _, hallucinated = _cross([(3, "src/tools/git_tools.py \u2192 src/graph.py builds the "
                                     "graph; src/graph.py \u2192 src/nodes/judges.py.")])
    assert hallucinated == ["src/nodes/judges.py", "src/tools/git_tools.py"]


def test_the_report_named_at_another_folder_is_a_path_mismatch_not_an_invented_file() -> None:
    """EstifanosTeklay/automaton-auditor: the p.4 file table lists "reports/interim_report.pdf
    This document" while the audited PDF is interim_report.pdf at the root."""
    table = ("README.md Setup and run instructions\r\n"
             "reports/interim_report.pdf This document\r\n")
    for report_name, text in (("interim_report.pdf", "reports/interim_report.pdf"),
                              (None, table)):
        findings, _, hallucinated = _cross([(4, text)], report_name)
        assert hallucinated == ["reports/interim_report.pdf"]  # the path itself is not there
        assert _failures(findings) == []
        mismatch = [f for f in findings if f.data.get("committed_as")]
        assert [(f.facet, f.found, f.data["committed_as"]) for f in mismatch] == [
            ("claims.misplaced", False, ["interim_report.pdf"])]
        # as a gap the code has closed: no full marks, no failure (a cap of 4, not 2)
        dossier = [Evidence(**f.model_dump(), source="aggregator", dimension="report_accuracy")
                   for f in findings if f.facet.startswith("claims.")]
        assert [row.cap for row, _ in confirmed_caps("report_accuracy", dossier)] == [4]
        assert missing_extra(next(e for e in dossier if e.facet == "claims.misplaced"))


def test_other_missing_documents_stay_hallucinated() -> None:
    """Another file name, or the report's name committed nowhere: still an invented file."""
    findings, _, _ = _cross([(4, "reports/final_report.pdf holds the final results.")],
                            "interim_report.pdf")
    assert _failures(findings) == ["reports/final_report.pdf"]
    findings, _, _ = _cross([(4, "reports/final_report.pdf This document")],
                            files=["README.md"])
    assert _failures(findings) == ["reports/final_report.pdf"]


def test_the_aggregator_knows_the_audited_report_by_its_file_name() -> None:
    """The report's path in the state gives its file name: the report naming itself at
    another folder is the path-mismatch fact, never a hallucinated-path failure."""
    from automaton_auditor.nodes.aggregator import evidence_aggregator
    from automaton_auditor.rubric import load_rubric
    from automaton_auditor.state import AgentState

    facts = ReportFacts(readable=True, page_count=4, cited_paths=extract_cited_paths(
        [(4, "The layout: src/graph.py, reports/interim_report.pdf")]))
    state: AgentState = {"rubric": load_rubric().model_dump(), "report_facts": facts,
                         "repo_files": FILES, "target": "/tmp/repo",
                         "report_path": "/tmp/repo/interim_report.pdf"}
    facets = {(e.facet, e.pattern, e.found) for e in evidence_aggregator(state)["evidences"][
        "aggregator"] if e.facet.startswith("claims.")}
    assert ("claims.misplaced", "success", False) in facets
    assert ("claims.paths", "failure", True) not in facets
