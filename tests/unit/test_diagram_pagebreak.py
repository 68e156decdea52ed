"""Box drawings crossing a page break, boxes drawn inside boxes, and the labels and unnamed
rows between a drawing's lines: each drawing is read whole."""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.boxes import parse_boxes
from automaton_auditor.forensics.diagrams.pagebreak import join_broken_drawings, running_keys
from automaton_auditor.forensics.vision.candidates import text_candidates

HEADER = "2/25/26, 7:06 PM The Auditor - Architecture Report"
FOOTER = "file:///Users/me/report.html {n}/9"

TOP = """Part 3: Architecture
┌──────────────────────┐
│ START │
└──────────┬───────────┘
 │
 ▼
┌──────────────────────┐
│ ContextBuilder │
└──────────┬───────────┘
 │
 ▼
┌──────────────┐ ┌──────────────┐
│ RepoInvestigator │ │ DocAnalyst │
│ • Git forensics │ │ • PDF parsing │"""

BOTTOM = """│ • AST analysis │ │ • Claims │
└──────┬───────┘ └──────┬───────┘
 │ │
 └────────┬────────┘
 ▼
┌──────────────────────┐
│ EvidenceAggregator │
└──────────────────────┘
The aggregator waits for both."""


def _page(body: str, number: int) -> str:
    return f"{body}\n{HEADER}\n{FOOTER.format(n=number)}"


def _pages() -> list[str]:
    prose = "Some prose on this page.\nMore prose."
    return [_page(prose, 1), _page(TOP, 2), _page(BOTTOM, 3), _page(prose, 4)]


def test_running_lines_are_found_on_the_pages_edges() -> None:
    keys = running_keys(_pages())
    assert "#/#/#, #:# pm the auditor - architecture report" in keys
    assert "file:///users/me/report.html #/#" in keys
    assert not any("│" in key for key in keys)


def test_a_drawing_crossing_a_page_break_is_read_whole() -> None:
    found = [facts for facts, _png in text_candidates(_pages())]
    assert len(found) == 1 and found[0].page == 2
    edges = set(found[0].edges)
    assert {("ContextBuilder", "RepoInvestigator"), ("ContextBuilder", "DocAnalyst"),
            ("RepoInvestigator", "EvidenceAggregator"),
            ("DocAnalyst", "EvidenceAggregator")} <= edges


def test_pages_without_a_drawing_across_the_break_keep_their_text() -> None:
    pages = _pages()
    joined = join_broken_drawings(pages)
    assert joined[0] == pages[0] and joined[3] == pages[3]
    assert HEADER in joined[2] and HEADER not in joined[1]  # the break 2 -> 3 only


NESTED = """┌──────────────────┐ ┌──────────────────┐
│ RepoInvestigator │ │ DocAnalyst │
│ Outputs: │ │ Outputs: │
│ ┌──────────────┐ │ │ ┌──────────────┐ │
│ │ Evidence │ │ │ │ Evidence │ │
│ │ - found: bool │ │ │ │ - found: bool │ │
│ └──────────────┘ │ │ └──────────────┘ │
│ • Git forensics │ │ • PDF parsing │
└────────┬─────────┘ └────────┬─────────┘
 └───────────┬──────────┘
 ▼
┌──────────────────────┐
│ EvidenceAggregator │
└──────────────────────┘"""


def test_boxes_drawn_inside_boxes_are_their_description_not_a_table() -> None:
    [(_start, _end, flow)] = parse_boxes(NESTED)
    assert flow.edges == [("RepoInvestigator", "EvidenceAggregator"),
                          ("DocAnalyst", "EvidenceAggregator")]


LABELLED = """┌──────────────────────┐
│ EvidenceAggregator │
└──────────┬───────────┘
 │
 has_fatal_error? │ │
 │ │
 YES NO │ │
 ▼
┌──────────┐ ┌──────────┐
│Prosecutor│ │ Defense │
│ (1-5) │ │ (1-5) │
│ Persona │ │ Persona │
└────┬─────┘ └────┬─────┘
 └──────┬──────┘
 ▼
┌──────────────────────┐
│ ChiefJustice │
└──────────────────────┘"""


def test_labels_beside_the_lines_and_unnamed_rows_do_not_cut_a_drawing() -> None:
    [(_start, _end, flow)] = parse_boxes(LABELLED)
    assert ("EvidenceAggregator", "Prosecutor") in flow.edges
    assert ("Defense", "ChiefJustice") in flow.edges
