"""Box diagrams drawn with characters, as a PDF's text layer gives them (spaces collapsed)."""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.boxes import parse_boxes
from automaton_auditor.forensics.vision.candidates import text_candidates
from automaton_auditor.forensics.vision.findings import vision_findings
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence

COURTROOM = """Figure 2: the graph
 ┌─────────────────────┐
 │ START │
 └─────────┬──────────┘
 │
 ┌───────────────┼───────────────┐
 ▼ ▼ ▼
 ┌──────────────────┐ ┌──────────────┐ ┌──────────────────┐
 │ RepoInvestigator │ │ DocAnalyst │ │ VisionInspector │ (Detectives fan-out)
 │ clones the repo │ │ reads the PDF │ │ reads diagrams │
 └────────┬─────────┘ └──────┬───────┘ └────────┬─────────┘
 └────────────────────┼────────────────────┘
 ▼
 ┌────────────────────────┐
 │ EvidenceAggregator │ (fan-in)
 └────────────┬───────────┘
 ┌──────────────────┼──────────────────┐
 ▼ ▼ ▼
 ┌──────────────┐ ┌──────────────┐ ┌──────────────┐
 │ Prosecutor │ │ Defense │ │ Tech Lead │
 └──────┬───────┘ └──────┬───────┘ └──────┬───────┘
 └──────────────────┼──────────────────┘
 ▼
 ┌────────────────────────┐
 │ ChiefJustice │
 └────────────────────────┘
The judges then write the report."""

# ASCII boxes whose adjacent walls the text layer merged, crossing a page break (page number)
ASCII = """+------------------+
| Initial State |
+------------------+
|
+---------------+ +-------------+
| RepoInvestigator| DocAnalyst |
+---------------+ +-------------+
\\ | /
+------------------+
2
| EvidenceAggregator|
+------------------+"""

TABLE = """┌──────────┬──────────┐
│ Node │ Role │
├──────────┼──────────┤
│ Prosecutor │ finds gaps │
├──────────┼──────────┤
│ Defense │ finds effort │
└──────────┴──────────┘"""

TREE = """src/
├── graph.py
├── nodes/
│ └── judges.py
└── state.py"""


def test_rows_of_boxes_are_layers_each_flowing_into_the_next() -> None:
    (start, end, flow), = parse_boxes(COURTROOM)
    assert COURTROOM[start:end].lstrip().startswith("┌") and "judges then" not in \
        COURTROOM[start:end]
    assert flow.kind == "text_art"
    assert ("START", "DocAnalyst") in flow.edges
    assert ("VisionInspector", "EvidenceAggregator") in flow.edges
    assert ("Tech Lead", "ChiefJustice") in flow.edges
    # a box's second line describes it: no node named after it
    assert "clones the repo" not in flow.labels and len(flow.edges) == 12


def test_merged_walls_and_a_page_number_do_not_break_the_drawing() -> None:
    (_s, _e, flow), = parse_boxes(ASCII)
    assert flow.edges == [("Initial State", "RepoInvestigator"), ("Initial State", "DocAnalyst"),
                          ("RepoInvestigator", "EvidenceAggregator"),
                          ("DocAnalyst", "EvidenceAggregator")]


def test_tables_and_file_trees_are_no_flow() -> None:
    assert parse_boxes(TABLE) == []
    assert parse_boxes(TREE) == []
    assert parse_boxes("│ just one box │\n└──────┘\n┌────┐") == []


def test_a_box_drawing_is_a_drawn_diagram_showing_the_split_short_of_full_marks() -> None:
    diagrams = [facts for facts, _png in text_candidates(["Intro.", COURTROOM])]
    assert [d.kind for d in diagrams] == ["text_art"] and diagrams[0].page == 2
    facts = {f.facet: f for f in vision_findings(diagrams)}
    assert facts["vision.flow.full_split"].found
    # characters drawn as boxes are a drawing: neither "source only" nor "prose only" ...
    assert "vision.drawn" not in facts and "vision.prose_only" not in facts
    # ... but its columns are lost: a missing extra, no full marks (4, not 5)
    pictured = facts["vision.pictured"]
    assert not pictured.found and pictured.location == "report p.2"
    dim = load_rubric().dimension("swarm_visual")
    evidence = [Evidence.from_finding(f, "vision", dim.id) for f in facts.values()]
    opinions = [offline_opinion(judge, dim, evidence) for judge in JUDGES]
    assert decide(dim, opinions, evidence, load_rubric()).final_score == 4


def test_wide_or_endless_drawings_are_bounded() -> None:
    """A hostile text layer: a row of forty boxes is no architecture drawing (no flow), and
    a deep drawing of wide rows yields at most MAX_EDGES edges (each layer joined to the next
    would otherwise grow as rows times boxes squared)."""
    from automaton_auditor.forensics.diagrams.boxes import MAX_EDGES

    border = "┌" + "─" * 10 + "┐"
    wide = " ".join(f"│ N{i} │" for i in range(40))
    assert parse_boxes("\n".join([border, wide, border, "│"] * 50)) == []
    rows = [" ".join(f"│ R{r}C{i} │" for i in range(12)) for r in range(60)]
    deep = "\n".join(line for row in rows for line in (border, row, border, "│"))
    (_s, _e, flow), = parse_boxes(deep)
    assert len(flow.edges) == MAX_EDGES
