"""Diagram source parsing (Mermaid, DOT, arrow chains) and flow-shape analysis."""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.arrows import (
    parse_arrows,
    strip_listing_numbers,
    text_art,
)
from automaton_auditor.forensics.diagrams.flow import (
    courtroom_pattern,
    flow_graph,
    longest_chain,
    match_names,
    match_score,
    name_key,
    role_of,
)
from automaton_auditor.forensics.diagrams.parse import parse_dot, parse_mermaid

COURTROOM_MERMAID = """Some intro text.
graph TD
    START([Start]) --> ctx[context_builder]
    ctx --> repo[RepoInvestigator] & doc[DocAnalyst] & vis[VisionInspector]
    repo --> agg[EvidenceAggregator]
    doc --> agg
    vis --> agg
    agg --> p[Prosecutor] & d[Defense] & t[TechLead]
    p --> cj[ChiefJustice]
    d --> cj
    t --> cj
    cj --> END([End])

After the block.
"""

# The shape LangGraph's own draw_mermaid() writes: html labels, classes, dotted conditionals.
LANGGRAPH_MERMAID = """flowchart TD;
\t__start__([<p>__start__</p>]):::first
\tcontext_builder(context_builder)
\trepo_investigator(repo_investigator)
\t__start__ --> context_builder;
\tcontext_builder -.-> repo_investigator;
\tcontext_builder -.-> error_handler;
\trepo_investigator --> evidence_aggregator;
\tevidence_aggregator --> __end__;
\tclassDef default fill:#f2f0ff,line-height:1.2
"""


def test_mermaid_flowchart_reads_the_courtroom_split() -> None:
    blocks = parse_mermaid(COURTROOM_MERMAID)
    assert len(blocks) == 1
    start, end, flow = blocks[0]
    assert COURTROOM_MERMAID[start:].startswith("graph TD")
    assert "After the block" not in COURTROOM_MERMAID[start:end]
    assert ("context_builder", "DocAnalyst") in flow.edges
    assert ("START", "context_builder") in flow.edges and ("ChiefJustice", "END") in flow.edges
    graph = flow_graph(flow.edges, flow.conditional)
    assert graph.fan_out["context_builder"] == ["DocAnalyst", "RepoInvestigator",
                                                "VisionInspector"]
    pattern = courtroom_pattern(graph)
    assert pattern.complete
    assert pattern.synthesis[0] == "ChiefJustice"
    assert not graph.linear


def test_langgraph_mermaid_labels_and_dotted_conditionals() -> None:
    (_, _, flow), = parse_mermaid(LANGGRAPH_MERMAID)
    assert ("START", "context_builder") in flow.edges
    assert ("evidence_aggregator", "END") in flow.edges
    assert set(flow.conditional) == {("context_builder", "repo_investigator"),
                                     ("context_builder", "error_handler")}
    graph = flow_graph(flow.edges, flow.conditional)
    assert "context_builder" not in graph.fan_out  # a conditional branch is not parallelism
    assert graph.linear


def test_mermaid_edge_text_and_decision_nodes() -> None:
    text = "flowchart LR\n  A[Check] --> B{valid?}\n  B -- yes --> C[Judge]\n  B -->|no| D[Abort]\n"
    (_, _, flow), = parse_mermaid(text)
    assert ("valid?", "Judge") in flow.edges and ("valid?", "Abort") in flow.edges
    assert flow.decisions == ["valid?"]
    assert ("valid?", "Judge") in flow.conditional


def test_mermaid_links_written_without_spaces_split_the_ids() -> None:
    # ``A-->B`` once read as one id ``A--`` and no link: the line was no Mermaid statement,
    # so the block ended there and every edge after it was lost.
    text = "graph TD\nbegin-->fan-out\nfan-out-.->C{ok?}\nC-->|yes|D\nD==>E\nE---F\n"
    (_, _, flow), = parse_mermaid(text)
    assert flow.edges == [("begin", "fan-out"), ("fan-out", "ok?"), ("ok?", "D"),
                          ("D", "E"), ("E", "F")]


def test_a_rhombus_labelled_as_a_parallel_split_is_a_fan_out_not_a_decision() -> None:
    # Azazh: ``B{Parallel Fan-Out}`` draws the detectives' split in a decision's shape
    text = ("graph TD\n  A[START] --> B{Parallel Fan-Out}\n  B --> C[RepoInvestigator]\n"
            "  B --> D[DocAnalyst]\n  C --> E[EvidenceAggregator]\n  D --> E\n")
    (_, _, flow), = parse_mermaid(text)
    assert flow.decisions == []
    assert not flow.conditional
    assert flow_graph(flow.edges, flow.conditional).fan_out == {
        "Parallel Fan-Out": ["DocAnalyst", "RepoInvestigator"]}


def test_mermaid_state_and_sequence_diagrams() -> None:
    state = "stateDiagram-v2\n  [*] --> Detect\n  Detect --> Judge : evidence\n  Judge --> [*]\n"
    (_, _, flow), = parse_mermaid(state)
    assert flow.diagram_type == "state"
    assert flow.edges == [("START", "Detect"), ("Detect", "Judge"), ("Judge", "END")]
    seq = ("sequenceDiagram\n  participant O as Orchestrator\n  O->>Repo: clone\n"
           "  Repo-->>O: evidence\n")
    (_, _, flow), = parse_mermaid(seq)
    assert flow.diagram_type == "sequence"
    assert ("Orchestrator", "Repo") in flow.edges and ("Repo", "Orchestrator") in flow.edges


def test_mermaid_without_edges_and_prose_mentions_are_ignored() -> None:
    assert parse_mermaid("We draw the graph TD style later.\nNothing here.") == []
    assert parse_mermaid("graph TD\n  A[only a node]\n") == []


def test_dot_edges_groups_labels_and_dashed_edges() -> None:
    text = """Figure source:
digraph courtroom {
  rankdir=TB; // comment -> ignored
  node [shape=box];
  ctx [label="Context Builder"];
  ctx -> {repo doc vision};
  {repo doc vision} -> agg;
  agg -> err [style=dashed];
  "chief justice" -> END;
}
trailing prose -> not part"""
    (start, end, flow), = parse_dot(text)
    assert text[start:end].rstrip().endswith("}")
    assert ("Context Builder", "repo") in flow.edges
    assert ("vision", "agg") in flow.edges
    assert ("chief justice", "END") in flow.edges
    assert flow.conditional == [("agg", "err")]
    graph = flow_graph(flow.edges, flow.conditional)
    assert graph.fan_out["Context Builder"] == ["doc", "repo", "vision"]
    assert graph.fan_in["agg"] == ["doc", "repo", "vision"]


def test_arrow_chain_with_parallel_groups_across_lines() -> None:
    text = ("Diagram conventions. Flow: START → entry_node → [RepoInvestigator\n"
            "∥ DocAnalyst ∥ VisionInspector] → EvidenceAggregator → [Prosecutor ∥\n"
            "Defense ∥ TechLead] → ChiefJustice → END.\nNext section.")
    (offset, flow), = parse_arrows(text)
    assert text[offset:].startswith(" →")
    pattern = courtroom_pattern(flow_graph(flow.edges))
    assert pattern.complete
    assert ("ChiefJustice", "END") in flow.edges
    assert ("START", "entry_node") in flow.edges


def test_arrow_listing_with_line_numbers_comments_and_branches() -> None:
    listing = ("Pipeline Flow\n1 START\n2 -> context_builder (loads rubric.json)\n"
               "3 -> [RepoInvestigator || DocAnalyst (Hybrid: deterministic\n"
               "4 || VisionInspector] fallback)\n5 -> evidence_aggregator\n"
               "6 -> (conditional: has_evidence?)\n7 YES -> judge_dispatcher\n"
               "8 -> [Prosecutor || Defense || TechLead]\n9 -> chief_justice\n")
    assert strip_listing_numbers("1 START\n2 -> a\n") == "START\n-> a\n"
    (_, flow), = parse_arrows(listing)
    assert ("context_builder", "DocAnalyst") in flow.edges
    assert ("has_evidence?", "judge_dispatcher") in flow.conditional
    assert "2" not in flow.labels and "loads" not in flow.labels
    assert courtroom_pattern(flow_graph(flow.edges, flow.conditional)).complete


def test_text_art_branches_fan_out_from_the_trunk_node() -> None:
    """'+--->' / '├──>' lines under one '|' trunk all start at the node above the trunk
    (a wrapped label or an annotated trunk line does not change that), and meet again at
    the node the trunk's arrow head 'v' reaches below them."""
    art = ("START\r\n|\r\nv\r\nContextBuilder (loads rubric)\r\n|\r\n"
           "+---> RepoInvestigator (clones repo)\r\n|\r\n+---> DocAnalyst (parses PDF,\r\n"
           "checks depth)\r\n|\r\n+---> VisionInspector\r\n|\r\nv\r\n"
           "EvidenceAggregator (fan-in: validates)\r\n|\r\n| [conditional: none]\r\n|\r\n"
           "+---> Prosecutor\r\n|\r\n+---> Defense\r\n|\r\n+---> TechLead\r\n|\r\nv\r\n"
           "ChiefJustice (deterministic rules)\r\n")
    edges = {e for _, flow in parse_arrows(art) for e in flow.edges}
    assert {("ContextBuilder", "RepoInvestigator"), ("ContextBuilder", "DocAnalyst"),
            ("ContextBuilder", "VisionInspector"), ("EvidenceAggregator", "Prosecutor"),
            ("EvidenceAggregator", "Defense"), ("EvidenceAggregator", "TechLead")} <= edges
    assert ("RepoInvestigator", "DocAnalyst") not in edges
    assert ("Prosecutor", "Defense") not in edges
    first = parse_arrows(art)[0][1]
    assert courtroom_pattern(flow_graph(first.edges)).aggregation == [
        "EvidenceAggregator", "DocAnalyst", "RepoInvestigator", "VisionInspector"]
    assert ("TechLead", "ChiefJustice") in edges
    unicode_tree = "graph_builder\n│\n├──> RepoInvestigator\n├──> DocAnalyst\n└──> Vision\n"
    (_, flow), = parse_arrows(unicode_tree)
    assert flow_graph(flow.edges).fan_out == {
        "graph_builder": ["DocAnalyst", "RepoInvestigator", "Vision"]}


def test_a_trunk_under_a_heading_hangs_its_branches_off_the_node_above_it() -> None:
    """A heading and prose above the trunk node are no part of its label (the branches hang
    off START, not off the paragraph), and only a line's first arrow is the branch: in
    '|---> DocAnalyst ---+---> EvidenceAggregator' the aggregator follows DocAnalyst."""
    art = ("the results reproducible and auditable.\n2.4 StateGraph Architecture Diagram\n"
           "START\n|\n|---> RepoInvestigator ----\\\n"
           "|---> DocAnalyst -----+---> EvidenceAggregator --\\\n"
           "|---> VisionInspector ----/ | |\nv |\n")
    edges = {e for _, flow in parse_arrows(art) for e in flow.edges}
    assert edges == {("START", "RepoInvestigator"), ("START", "DocAnalyst"),
                     ("START", "VisionInspector"), ("DocAnalyst", "EvidenceAggregator")}


def test_an_edge_list_closed_by_each_joins_the_fan_out_it_just_listed() -> None:
    """'S → a, S → b, S → c; each Judge plus Fallback → Chief' is a fan-in of a, b, c (the
    targets just listed) and Fallback into Chief, not an edge from a node named 'Judge'."""
    text = ("– Edges: Entry → Prosecutor, Entry → Defense, Entry → \r\nTechLead; each Judge "
            "plus Fallback → ChiefJustice; ChiefJustice → \r\nEND.\r\nThis structure ...")
    (_, flow), = parse_arrows(text)
    assert flow.edges == [("Entry", "Prosecutor"), ("Entry", "Defense"), ("Entry", "TechLead"),
                          ("Prosecutor", "ChiefJustice"), ("Defense", "ChiefJustice"),
                          ("TechLead", "ChiefJustice"), ("Fallback", "ChiefJustice"),
                          ("ChiefJustice", "END")]
    assert courtroom_pattern(flow_graph(flow.edges)).synthesis
    (_, chain), = parse_arrows("Flow: Ingest → Parse → Store; each Row → Index → Sort → END")
    assert ("Row", "Index") in chain.edges  # no fan-out before it: the noun stays a node


def test_prose_arrows_are_not_diagrams() -> None:
    assert parse_arrows("Imports always flow downwards (graph -> nodes -> tools).") == []
    assert parse_arrows("Scores moved 3 → 4 or 5 and 1 → 3 after fixes.") == []
    assert parse_arrows("A list x[0] -> y") == []


def test_a_sentence_saying_what_a_diagram_should_show_is_no_diagram() -> None:
    # a caption left as an instruction is no drawing, even spread over lines; the flow a
    # sentence states as the code's stays one
    text = ("the variance rule.\nThe diagram should show: Evidence → [Prosecutor, Defense,\n"
            "Tech Lead] (parallel) → Chief Justice → Final score + dissent.\n")
    assert parse_arrows(text) == []
    (_, flow), = parse_arrows(text.replace("The diagram should show:", "The judges run:"))
    assert ("Prosecutor", "Chief Justice") in flow.edges


def test_arrows_in_a_sentence_or_a_list_of_pairs_are_not_a_diagram() -> None:
    """A chain counts by its connected nodes, and two words between arrows name one node:
    three names in a sentence, or unrelated 'x -> y' pairs, draw no flow."""
    sentence = ("each returns opinions.\n4. Judges → Judge Collector → Chief Justice: "
                "Collector is pass-through. Chief\nJustice groups opinions by criterion.")
    assert parse_arrows(sentence) == []
    pairs = ("the mapping:\nsecurity_override → _has_security_issue + cap at 3;\n"
             "fact_supremacy → _supports_claim; functionality_weight →\n"
             "Tech Lead for architecture/graph;\nnext line of prose here.")
    assert parse_arrows(pairs) == []
    (_, flow), = parse_arrows("Full chain: stale\nlock → scope enforcement →\n"
                              "authorization → trace\nserialization")
    assert flow.edges == [("lock", "scope enforcement"), ("scope enforcement", "authorization"),
                          ("authorization", "trace")]


def test_name_matching_is_fuzzy_but_not_loose() -> None:
    assert name_key("EvidenceAggregatorNode") == name_key("evidence_aggregator")
    assert match_score("Tech Lead", "tech_lead") == 1.0
    assert match_score("Defense", "defense_attorney") == 0.8
    assert match_score("Defense", "DocAnalyst") == 0.0
    mapping = match_names(["RepoInvestigator", "ChiefJustice", "Mystery"],
                          ["repo_investigator", "chief_justice", "report_writer"])
    assert mapping == {"ChiefJustice": "chief_justice", "RepoInvestigator": "repo_investigator"}


def test_roles_exclude_dispatchers() -> None:
    assert role_of("judge_dispatcher") is None
    assert role_of("DetectiveFanOut") is None
    assert role_of("evidence_aggregator") == "aggregator"
    assert role_of("Chief Justice") == "synthesis"
    assert role_of("tech_lead") == "judge"
    assert role_of("vision_inspector") == "detective"


def test_linear_pipeline_and_cycles() -> None:
    edges = [("a", "b"), ("b", "c"), ("c", "d")]
    graph = flow_graph(edges)
    assert graph.linear and not graph.fan_out
    assert longest_chain(edges) == ["a", "b", "c", "d"]
    cyclic = [("a", "b"), ("b", "a"), ("b", "c")]
    assert longest_chain(cyclic) == ["a", "b", "c"]


def test_a_name_annotated_parallel_is_a_group_running_in_parallel() -> None:
    """"Detectives(Parallel)" in an arrow chain is one name for nodes that run in parallel:
    the chain fans out to it and fans in from it; the same chain without the note is linear."""
    from automaton_auditor.forensics.vision.candidates import text_candidates
    from automaton_auditor.forensics.vision.findings import vision_findings

    text = ("Rationale: START -> Detectives(Parallel) -> Aggregator ->\n"
            "Judges (in parallel) -> Justice -> END.")
    [(_, flow)] = parse_arrows(text)
    assert flow.parallel == ["Detectives", "Judges"]
    graph = flow_graph(flow.edges, flow.conditional, flow.parallel)
    assert not graph.linear and courtroom_pattern(graph, flow.parallel).complete
    [(facts, _render)] = text_candidates([text])
    found = {f.facet: f for f in vision_findings([facts])}
    assert found["vision.flow.full_split"].found and not found["vision.flow.linear"].found
    plain = text.replace("(Parallel)", "").replace("(in parallel)", "(the panel)")
    [(_, flow)] = parse_arrows(plain)
    assert flow.parallel == [] and flow_graph(flow.edges).linear


def test_a_drawing_made_of_characters_is_told_from_prose_and_file_trees() -> None:
    boxes = "┌─────────┐\n│ START   │\n└────┬────┘\n     │\n     ▼\n┌─────────┐\n│ Repo    │"
    trunk = "START\n|\n|---> RepoInvestigator\n|---> DocAnalyst\nv\nEvidenceAggregator"
    tree = "src/\n├── graph.py\n│   └── nodes/\n└── state.py"
    prose = "START → [RepoInvestigator || DocAnalyst] → EvidenceAggregator | then judges"
    assert text_art(boxes) and text_art(trunk)
    assert not text_art(tree) and not text_art(prose)


def _printed_page(number: int, body: str) -> str:
    """A page as a printed Markdown export's text layer: running header, page number, then
    the body with no blank line anywhere (the text layer keeps none)."""
    return f"final_report.md 2026-02-28\n{number} / 4\n{body}"


def test_each_mermaid_block_is_one_diagram_on_the_page_where_it_starts() -> None:
    """The text layer keeps no blank line after a block: a block ends at its first line that
    is no Mermaid statement, or at the next header. A lone "graph" table cell opens no
    diagram, and a block cut by a page break (running header and page number between its
    parts) is one diagram placed on its first page."""
    from automaton_auditor.forensics.vision.candidates import text_candidates

    pages = [
        _printed_page(1, "Area Interim Final\nError handling in\ngraph\nHigh-level intent\n"
                         "Concrete conditional routes"),
        _printed_page(2, "3.1 Interim Flow\nflowchart TD\n S[\"START\"] --> R[\"Repo\"]\n"
                         " R --> A[\"Aggregator\"]\n A --> M[\"MissingHandler\"]\n"
                         " M --> E[\"END\"]\n3.2 Final Flow (End-to-End)"),
        _printed_page(3, "flowchart TD\n S[\"START\"] --> R[\"Repo\"]\n R --> A[\"Aggregator\"]\n"
                         " A -->|missing| M[\"MissingHandler\"]\n M --> J[\"JudicialFanout\"]"),
        _printed_page(4, " J --> P[\"Prosecutor\"]\n P --> E[\"END\"]\n"
                         "4) Criterion Breakdown (Latest Self-Audit)\nSource snapshot: a.json\n"
                         "The judges then --> argue."),
    ]
    diagrams = [facts for facts, _png in text_candidates(pages) if facts.kind == "mermaid"]
    assert [(d.page, len(d.edges)) for d in diagrams] == [(2, 4), (3, 6)]
    interim, final = ({tuple(edge) for edge in d.edges} for d in diagrams)
    assert ("MissingHandler", "END") in interim and ("MissingHandler", "JudicialFanout") \
        not in interim
    assert ("MissingHandler", "JudicialFanout") in final and ("Prosecutor", "END") in final
    assert ("MissingHandler", "END") not in final


def test_a_wrapped_mermaid_label_keeps_its_block_going() -> None:
    """A long label wrapped by the page leaves a bracket open: its next line carries on the
    statement, and the block goes on after it."""
    text = "flowchart LR\n A[\"Evidence\nAggregator\"] --> B[\"Judges\"]\n B --> C\nAfter it."
    [(_, _, flow)] = parse_mermaid(text)
    assert flow.edges == [("Evidence Aggregator", "Judges"), ("Judges", "C")]
