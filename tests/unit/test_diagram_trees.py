"""Trunk drawings made of characters (names joined by ``│ ▼ ├──┬──┐``, no boxes), as a PDF's
text layer gives them (spaces collapsed), and arrows into lists of quoted strings."""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.arrows import parse_arrows
from automaton_auditor.forensics.vision.candidates import text_candidates
from automaton_auditor.forensics.vision.findings import vision_findings

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
