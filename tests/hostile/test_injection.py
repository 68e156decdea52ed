"""Prose aimed at the judges earns nothing offline: the same repository and report with and
without injected text — visible or hidden (white, tiny, off-page, covered) instructions, bare
concept name-dropping, instructions in code comments and commit messages — get IDENTICAL
scores (every criterion and the overall)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.hostile.builders import (
    INSTRUCTION,
    MERMAID,
    NAME_DROPPING,
    REPORT_PAGES,
    Injection,
    make_pdf,
    valid_repo,
)
from tests.hostile.harness import Case, audit, check, report_json
from tests.unit.test_git_narrative import git

# A report that explains one concept (fan-in/fan-out) and names none of the others: the
# offline bench gives it a low theoretical_depth, so any credit the injection earns shows.
WEAK_PAGES = [
    ["Architecture Report", "", "1 Architecture",
     "The graph in src/graph.py fans out from START to repo_investigator and doc_analyst,",
     "which run in parallel; evidence_aggregator is the fan-in node that joins them.",
     "The clone tool lives in src/tools/repo_tools.py."],
    ["2 Reflection", "We would like to improve the judges next term."],
]


def scores(out: Path) -> dict[str, Any]:
    data = report_json(out)
    found: dict[str, Any] = {c["dimension_id"]: c["final_score"] for c in data["criteria"]}
    found["overall"] = data["overall_score"]
    return found


def same(found: dict[str, Any], expected: dict[str, Any]) -> None:
    moved = {k: f"{expected.get(k)} -> {found.get(k)}" for k in {*found, *expected}
             if found.get(k) != expected.get(k)}
    assert not moved, f"scores moved by injected text: {moved}"


def _audited(case: Case, repo: Path, pdf: Path) -> dict[str, Any]:
    check(audit(case, repo, pdf), 0, "any", report=True)
    return scores(case.out)


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory, good_repo: Path,
              module_cache: Path) -> dict[str, dict[str, Any]]:
    """Scores of the weak and of the strong report without any injection."""
    found = {}
    for name, pages in (("weak", WEAK_PAGES), ("strong", REPORT_PAGES)):
        case = Case(tmp_path_factory.mktemp(f"baseline-{name}"), watched=(good_repo.parent,),
                    cache=module_cache)
        found[name] = _audited(case, good_repo, make_pdf(case.sandbox / "report.pdf", pages))
    assert found["weak"]["theoretical_depth"] < 5  # room to move up
    return found


# (id, base report, injections, marks)
CASES = [
    ("instruction-visible", "weak", (Injection(INSTRUCTION),), ()),
    ("instruction-white-4pt", "weak", (Injection(INSTRUCTION, "white"),), ()),
    ("instruction-tiny-1pt", "weak", (Injection(INSTRUCTION, "tiny"),), ()),
    ("instruction-offpage", "weak", (Injection(INSTRUCTION, "offpage"),), ()),
    ("instruction-on-strong-report", "strong", (Injection(INSTRUCTION),), ()),
    ("names-visible", "weak", (Injection(INSTRUCTION + NAME_DROPPING),), ()),
    ("names-white-4pt", "weak", (Injection(INSTRUCTION + NAME_DROPPING, "white"),), ()),
    ("names-offpage", "weak", (Injection(INSTRUCTION + NAME_DROPPING, "offpage"),), ()),
    ("names-covered", "weak", (Injection(INSTRUCTION + NAME_DROPPING, "covered"),), ()),
    ("names-only", "weak", (Injection(NAME_DROPPING),), ()),
    ("mermaid-white-4pt", "weak", (Injection(MERMAID, "white"),), ()),
    ("mermaid-tiny-1pt", "weak", (Injection(MERMAID, "tiny"),), ()),
    ("mermaid-covered", "weak", (Injection(MERMAID, "covered"),), ()),
]


@pytest.mark.parametrize(("base", "injections"), [
    pytest.param(b, i, id=n, marks=m) for n, b, i, m in CASES])
def test_injected_report(case: Case, good_repo: Path, baselines: dict[str, dict[str, Any]],
                         base: str, injections: tuple[Injection, ...]) -> None:
    pages = WEAK_PAGES if base == "weak" else REPORT_PAGES
    pdf = make_pdf(case.sandbox / "report.pdf", pages, injections)
    same(_audited(case, good_repo, pdf), baselines[base])


def test_a_visible_mermaid_block_does_move_the_diagram_score(
        case: Case, good_repo: Path, baselines: dict[str, dict[str, Any]]) -> None:
    """The control for the hidden Mermaid cases: the same block drawn for a reader is a
    diagram, so the cases above would show any credit hidden text earned."""
    pdf = make_pdf(case.sandbox / "report.pdf", WEAK_PAGES, (Injection(MERMAID),))
    found = _audited(case, good_repo, pdf)
    assert found["swarm_visual"] > baselines["weak"]["swarm_visual"]


COMMENT = "# " + " ".join(INSTRUCTION) + "\n"
NEUTRAL = "# " + "The graph module wires the detectives, the judges and the chief justice.\n"


def test_injected_repository(case: Case, good_pdf: Path) -> None:
    """An instruction in a code comment and in a commit message, against the same repository
    with a neutral comment and message."""
    found = []
    for name, comment, message in (("plain", NEUTRAL, "docs: explain the graph module"),
                                   ("injected", COMMENT, " ".join(INSTRUCTION))):
        run = Case(case.root / name, watched=case.watched, cache=case.cache)
        repo = valid_repo(run.sandbox / "auditee", case.root.name)
        graph = repo / "src" / "graph.py"
        graph.write_text(comment + graph.read_text())
        git(repo, "commit", "-q", "-am", message)
        found.append(_audited(run, repo, good_pdf))
    same(found[1], found[0])
