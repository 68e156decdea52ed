"""A gap or a denial in the report is read with the section it sits in: a gap a review
caught and the report says was since fixed is history, and a lead sentence that says the
system works without something is qualified by the text that follows it."""

from __future__ import annotations

from pathlib import Path

from docling_core.types.doc import DoclingDocument  # type: ignore[attr-defined]

from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.pdf.model import Block, IngestedReport
from automaton_auditor.forensics.pdf.reader import report_facts
from automaton_auditor.state import Finding

ROUTING = Finding(facet="graph.conditional_edges", goal="Conditional edges route the flow",
                  found=True, pattern="success", location="app/graph.py:48", confidence=0.9,
                  rationale="Conditional edges: check -> ['judges', 'missing_evidence'].",
                  data={"routing_sources": ["check"]})
PARALLEL_JUDGES = Finding(
    facet="graph.parallel_judges", goal="Judges fan out", found=True, pattern="success",
    location="app/graph.py:52", confidence=0.9,
    rationale="aggregate fans out to defense, prosecutor; joined at chief_justice.")


def _section(heading: str, page: int, *texts: str) -> list[Block]:
    return [Block("heading", heading, page, level=2),
            *(Block("paragraph", text, page, section=(heading,)) for text in texts)]


def _findings(blocks: list[Block], code: list[Finding]) -> list[tuple[str, int | None]]:
    """(facet, page) of each gap or contradiction the report's statements give."""
    report = IngestedReport(path=Path("r.pdf"), sha256="0", page_count=9, headings=[],
                            chunks=[], document=DoclingDocument(name="r"), warnings=[],
                            blocks=blocks)
    claims = report_facts(report).claims
    return [(f.facet, int(f.location.split(".")[-1]))
            for f in contradiction_findings(claims, code, None)]


def test_a_gap_a_review_caught_and_the_report_says_was_fixed_is_no_current_gap() -> None:
    caught = _section("5.1 What Peer Feedback Caught", 8,
                      "Peer feedback correctly highlighted:",
                      "Missing explicit conditional edge coverage in graph orchestration.",
                      "Need to clearly show judicial fan-out/fan-in in one compiled flow.")
    updated = _section("5.2 How the Agent Was Updated", 8,
                       "In response, the system was upgraded to:",
                       "Add explicit post-detective branches: clone_failure, missing_evidence.")
    assert _findings([*caught, *updated], [ROUTING]) == []
    # the same gap listed under the report's current gaps is a gap the code has closed
    gaps = _section("6. Known Limitations", 9, "Gaps to be addressed:",
                    "Missing explicit conditional edge coverage in graph orchestration.")
    assert _findings([*caught, *updated, *gaps], [ROUTING]) == [("claims.stale_gaps", 9)]
    # a gap the item itself marks closed is history too; one it says is open stays a gap
    assert _findings(_section("Gaps", 3, "No conditional edges for errors: DONE."),
                     [ROUTING]) == []
    assert _findings(_section("What Peer Feedback Caught", 3,
                              "No conditional edges | Identified as known gap."),
                     [ROUTING]) == [("claims.stale_gaps", 3)]


def test_a_current_gap_stays_a_gap_though_a_plan_item_after_it_says_done() -> None:
    blocks = _section("2.1 Judicial Layer", 5, "Gaps:",
                      "1. No true parallel execution of judges: Today run_judges is a single "
                      "node that loops over dimensions and judges sequentially.",
                      "Concrete plan:", "Parallelize judge invocations: DONE. Three separate "
                      "nodes wired via Send() fan-out.")
    assert _findings(blocks, [PARALLEL_JUDGES]) == [("claims.stale_gaps", 5)]
