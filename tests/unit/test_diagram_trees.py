"""Trunk drawings made of characters (names joined by ``│ ▼ ├──┬──┐``, no boxes), as a PDF's
text layer gives them (spaces collapsed), and arrows into lists of quoted strings."""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.arrows import parse_arrows
from automaton_auditor.forensics.diagrams.trees import parse_char_drawings, parse_trees
from automaton_auditor.forensics.vision.candidates import text_candidates
from automaton_auditor.forensics.vision.findings import vision_findings
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence

# The text layer of a report's "Figure 1: Complete StateGraph topology" (a code block)
TOPOLOGY = """The system is built as a LangGraph StateGraph with 9 nodes.
START
│
▼
context_builder (Superstep 1)
│
├──────────────┬──────────────┐
▼ ▼ ▼
repo_invest. doc_analyst vision_insp. (Superstep 2 — PARALLEL)
│ │ │
└──────────────┴──────────────┘
│
▼
evidence_aggregator (Superstep 3)
│
├──────────────┬──────────────┐
▼ ▼ ▼
prosecutor defense tech_lead (Superstep 4 — PARALLEL)
│ │ │
└──────────────┴──────────────┘
│
▼
chief_justice (Superstep 5)
│
▼
END
Figure 1: Complete StateGraph topology."""

# Branch names of several words: how many names the row holds cannot be told
MULTI_WORD = """START
│
├──────┬──────┐
▼ ▼ ▼
Repo Investigator Doc Analyst Vision Inspector
│ │ │
└──────┴──────┘
▼
Evidence Aggregator
│
▼
END"""

# The tail of a trunk-and-branch drawing (read by `arrows`): no drawing of its own
TAIL = """+---> Prosecutor ("Trust No One")
|
+---> TechLead ("Does it work?")
|
v
ChiefJustice (deterministic conflict resolution)
|
v
ReportRenderer (serializes AuditReport to Markdown)
|
v
END"""

LANES = """ingest_a ingest_b
│ │
▼ ▼
parse_a parse_b
│ │
▼ ▼
store_a store_b"""

TABLE = """| Node | Role |
|------|------|
| prosecutor | finds gaps |
|------|------|
| defense | finds effort |"""

# (a second arrow elsewhere in the text: a single arrow is never parsed)
SYNONYMS = ("Commits went setup → tools.\nSolution: Added keyword_variants dictionary "
            "mapping each rubric keyword to 8-12 regex\nsynonyms. “Dialectical Synthesis” → "
            "[“dialectical”, “courtroom”, "
            "“thesis.*antithesis”,\n“prosecutor.*defense”]. Old: 0 hits. New: 7+ hits.")


def test_rows_of_names_between_trunk_lines_are_layers() -> None:
    (start, end, flow), = parse_trees(TOPOLOGY)
    assert TOPOLOGY[start:end].startswith("START") and TOPOLOGY[start:end].endswith("END")
    assert flow.kind == "text_art"
    assert ("context_builder", "doc_analyst") in flow.edges
    assert ("vision_insp", "evidence_aggregator") in flow.edges
    assert ("evidence_aggregator", "tech_lead") in flow.edges
    assert ("defense", "chief_justice") in flow.edges and ("chief_justice", "END") in flow.edges
    # the notes in parentheses are comments, not nodes
    assert len(flow.edges) == 14 and not any("Superstep" in n for n in flow.labels)


def test_unreadable_rows_tables_and_prose_give_no_flow() -> None:
    # a row of several-word names drops the whole drawing: its other rows alone would
    # read as a chain the picture does not draw
    assert parse_trees(MULTI_WORD) == []
    assert parse_trees(TABLE) == []
    assert parse_trees(TAIL) == []
    assert parse_trees("A sentence here.\nAnother one, with words.\nAnd a third.") == []


def test_equal_rows_joined_by_vertical_lines_are_parallel_lanes() -> None:
    (_s, _e, flow), = parse_trees(LANES)
    assert flow.edges == [("ingest_a", "parse_a"), ("ingest_b", "parse_b"),
                          ("parse_a", "store_a"), ("parse_b", "store_b")]


def test_a_trunk_drawing_shows_the_split_as_a_character_drawing() -> None:
    assert [b[2].kind for b in parse_char_drawings(TOPOLOGY)] == ["text_art"]
    diagrams = [facts for facts, _png in text_candidates(["Intro.", TOPOLOGY])]
    assert [d.kind for d in diagrams] == ["text_art"] and diagrams[0].page == 2
    facts = {f.facet: f for f in vision_findings(diagrams)}
    assert facts["vision.flow.full_split"].found
    assert facts["vision.flow.full_split"].location == "report p.2"
    assert "vision.prose_only" not in facts and not facts["vision.pictured"].found
    dim = load_rubric().dimension("swarm_visual")
    evidence = [Evidence.from_finding(f, "vision", dim.id) for f in facts.values()]
    opinions = [offline_opinion(judge, dim, evidence) for judge in JUDGES]
    assert decide(dim, opinions, evidence, load_rubric()).final_score == 4


def test_an_arrow_into_a_list_of_quoted_strings_is_a_mapping_not_a_flow() -> None:
    assert parse_arrows(SYNONYMS) == []
    # a bracket group of names still is one
    (_pos, flow), = parse_arrows("START -> [RepoInvestigator || DocAnalyst] -> Aggregator")
    assert ("START", "DocAnalyst") in flow.edges


def test_findings_say_when_a_flow_is_only_written_as_an_arrow_chain() -> None:
    text = "Flow: START -> EvidenceAggregator -> [Prosecutor || Defense || TechLead] -> Chief"
    diagrams = [facts for facts, _png in text_candidates([text])]
    facts = {f.facet: f for f in vision_findings(diagrams)}
    judges = facts["vision.flow.parallel_judges"]
    assert judges.found and "arrow chain" in judges.rationale and "not drawn" in \
        judges.rationale


def test_an_arrow_chain_beside_an_unread_image_is_not_said_to_be_undrawn() -> None:
    """MamaMoh: the flow is written as an arrow chain on p.9, and p.10 holds a drawn
    diagram (an image) that no vision model read: what the report draws is not known, so
    the facts do not say the flow is "not drawn"."""
    from automaton_auditor.state import DiagramFacts

    text = "Flow: START -> EvidenceAggregator -> [Prosecutor || Defense || TechLead] -> Chief"
    diagrams = [facts for facts, _png in text_candidates([text])]
    image = DiagramFacts(page=10, kind="raster", width=900, height=700)
    facts = {f.facet: f for f in vision_findings([*diagrams, image])}
    judges = facts["vision.flow.parallel_judges"]
    assert judges.found and "arrow chain" in judges.rationale
    assert "not drawn" not in judges.rationale, judges.rationale
    assert "could not be read without a vision model (--vision-model) (p.10)" in \
        judges.rationale
