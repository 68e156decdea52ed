"""Cited paths that claim no file: the old side of a correction is no claim that the file
exists."""

from __future__ import annotations

import pytest

from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.forensics.pdf.citations import Passage, extract_cited_paths
from automaton_auditor.state import Finding, ReportFacts

FILES = ["interim_report.pdf", "README.md", "src/graph.py", "src/tools/repo_tools.py",
         "tests/security/test_sandbox.py"]


def _cross(passages: list[Passage | tuple[int | None, str]], files: list[str] = FILES
           ) -> tuple[list[Finding], list[str], list[str]]:
    facts = ReportFacts(readable=True, page_count=4, cited_paths=extract_cited_paths(passages))
    findings, verified, hallucinated, _ = cross_check(facts, files, None)
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

