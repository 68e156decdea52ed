"""compare_with_code: the diagram's flow against the graph rebuilt from the code."""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.flow import flow_graph
from automaton_auditor.forensics.vision.inspector import compare_with_code
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import DiagramFacts, Evidence, RebuiltGraph

PARALLEL_EDGES = [
    ("START", "ContextBuilder"),
    ("ContextBuilder", "RepoInvestigator"), ("ContextBuilder", "DocAnalyst"),
    ("ContextBuilder", "VisionInspector"),
    ("RepoInvestigator", "EvidenceAggregator"), ("DocAnalyst", "EvidenceAggregator"),
    ("VisionInspector", "EvidenceAggregator"),
    ("EvidenceAggregator", "Prosecutor"), ("EvidenceAggregator", "Defense"),
    ("EvidenceAggregator", "TechLead"),
    ("Prosecutor", "ChiefJusticeNode"), ("Defense", "ChiefJusticeNode"),
    ("TechLead", "ChiefJusticeNode"), ("ChiefJusticeNode", "END"),
]
CODE_EDGES = [
    ("START", "context_builder"),
    ("context_builder", "repo_investigator"), ("context_builder", "doc_analyst"),
    ("context_builder", "vision_inspector"),
    ("repo_investigator", "evidence_aggregator"), ("doc_analyst", "evidence_aggregator"),
    ("vision_inspector", "evidence_aggregator"),
    ("evidence_aggregator", "prosecutor"), ("evidence_aggregator", "defense"),
    ("evidence_aggregator", "tech_lead"),
    ("prosecutor", "chief_justice"), ("defense", "chief_justice"),
    ("tech_lead", "chief_justice"), ("chief_justice", "END"),
]


def _code(edges: list[tuple[str, str]]) -> RebuiltGraph:
    graph = flow_graph(edges)
    return graph.model_copy(update={"builder": "builder", "location": "src/graph.py:10"})


def _facets(findings: list) -> dict:  # type: ignore[type-arg]
    return {f.facet: f for f in findings}


def test_matching_parallel_split_and_fuzzy_names() -> None:
    diagram = DiagramFacts(page=5, kind="vector", edges=PARALLEL_EDGES)
    found = _facets(compare_with_code([diagram], _code(CODE_EDGES)))
    nodes = found["vision.compare.nodes"]
    assert nodes.found and nodes.location == "report p.5"
    assert nodes.data["matched"]["ChiefJusticeNode"] == "chief_justice"
    assert nodes.data["only_in_code"] == [] and nodes.data["only_in_diagram"] == []
    par = found["vision.compare.parallelism"]
    assert par.found and par.pattern == "success"
    assert "evidence_aggregator -> {defense, prosecutor, tech_lead}" in par.data[
        "reproduced_splits"]
    assert not found["vision.compare.misleading"].found


def test_linear_diagram_for_fanning_code_is_misleading() -> None:
    linear = [("START", "RepoInvestigator"), ("RepoInvestigator", "DocAnalyst"),
              ("DocAnalyst", "Prosecutor"), ("Prosecutor", "ChiefJustice")]
    diagram = DiagramFacts(page=2, kind="mermaid", edges=linear)
    found = _facets(compare_with_code([diagram], _code(CODE_EDGES)))
    misleading = found["vision.compare.misleading"]
    assert misleading.found and misleading.pattern == "failure"
    assert "diagram shows a linear pipeline, code fans out" in (misleading.content or "")
    assert "Misleading Architecture Visual" in misleading.rationale
    assert not found["vision.compare.parallelism"].found


def test_parallel_diagram_for_linear_code_is_misleading() -> None:
    code = _code([("START", "a"), ("a", "b"), ("b", "END")])
    diagram = DiagramFacts(page=1, kind="vector", edges=PARALLEL_EDGES)
    found = _facets(compare_with_code([diagram], code))
    assert found["vision.compare.misleading"].found
    assert "code is linear" in (found["vision.compare.misleading"].content or "")
    assert not found["vision.compare.nodes"].found  # a, b are not the diagram's nodes


def test_best_diagram_is_the_parsed_one_with_most_of_the_split() -> None:
    raster = DiagramFacts(page=1, kind="raster", width=100, height=100)
    small = DiagramFacts(page=2, kind="arrow", edges=[("a", "b"), ("b", "c"), ("c", "d")])
    full = DiagramFacts(page=7, kind="vector", edges=PARALLEL_EDGES)
    found = _facets(compare_with_code([raster, small, full], _code(CODE_EDGES)))
    assert found["vision.compare.parallelism"].location == "report p.7"


def test_model_reading_is_compared_by_its_booleans() -> None:
    analysis = {"kind": "state_machine", "parallel_detectives": False, "aggregation": False,
                "parallel_judges": False, "synthesis": False, "described_flow": "linear",
                "degraded": False}
    diagram = DiagramFacts(page=3, kind="raster", analysis=analysis)
    found = _facets(compare_with_code([diagram], _code(CODE_EDGES)))
    assert found["vision.compare.misleading"].found
    assert found["vision.compare.misleading"].confidence < 0.85
    assert not found["vision.compare.nodes"].found


def test_nothing_to_compare() -> None:
    for diagrams, graph in (([], _code(CODE_EDGES)),
                            ([DiagramFacts(page=1, edges=PARALLEL_EDGES)], None),
                            ([DiagramFacts(page=1, kind="raster")], _code(CODE_EDGES))):
        findings = compare_with_code(diagrams, graph)
        assert [f.facet for f in findings] == ["vision.compare.nodes",
                                               "vision.compare.parallelism"]
        assert all(not f.found and f.pattern == "neutral" for f in findings)
    degraded = DiagramFacts(page=1, kind="raster", analysis={"degraded": True, "error": "x"})
    assert all(not f.found for f in compare_with_code([degraded], _code(CODE_EDGES)))


def test_model_flow_written_as_a_chain_is_compared_by_name() -> None:
    analysis = {"kind": "state_machine", "parallel_detectives": True, "aggregation": True,
                "parallel_judges": True, "synthesis": True, "degraded": False,
                "described_flow": "START -> ContextBuilder -> [RepoInvestigator | DocAnalyst "
                                  "| VisionInspector] -> EvidenceAggregator -> [Prosecutor | "
                                  "Defense | TechLead] -> ChiefJustice -> END"}
    diagram = DiagramFacts(page=8, kind="raster", analysis=analysis)
    found = _facets(compare_with_code([diagram], _code(CODE_EDGES)))
    nodes = found["vision.compare.nodes"]
    assert nodes.found and nodes.data["matched"]["EvidenceAggregator"] == "evidence_aggregator"
    assert nodes.confidence <= 0.65  # a model's reading counts less than parsed edges
    assert len(found["vision.compare.parallelism"].data["reproduced_splits"]) == 2


def test_sequence_diagram_messages_are_not_a_parallel_split() -> None:
    from automaton_auditor.forensics.vision.inspector import vision_findings

    messages = [("Orchestrator", "Prosecutor"), ("Orchestrator", "Defense"),
                ("Orchestrator", "TechLead"), ("Prosecutor", "ChiefJustice"),
                ("Defense", "ChiefJustice"), ("TechLead", "ChiefJustice")]
    seq = DiagramFacts(page=2, kind="mermaid", edges=messages,
                       data={"diagram_type": "sequence"})
    found = {f.facet: f for f in vision_findings([seq])}
    assert not found["vision.flow.parallel_judges"].found
    assert not found["vision.flow.linear"].found  # nor is it a linear pipeline
    flow = DiagramFacts(page=2, kind="mermaid", edges=messages)
    assert {f.facet: f for f in vision_findings([flow])}["vision.flow.parallel_judges"].found


def test_sequence_diagrams_are_not_compared_as_flows() -> None:
    seq = DiagramFacts(page=2, kind="vector", edges=[("A", "B"), ("A", "C")],
                       data={"diagram_type": "sequence"})
    findings = compare_with_code([seq], _code(CODE_EDGES))
    assert [f.facet for f in findings] == ["vision.compare.nodes", "vision.compare.parallelism"]
    assert all(not f.found and f.pattern == "neutral" for f in findings)


def test_text_flow_beside_an_unread_picture_is_not_called_misleading() -> None:
    """A linear flow read from text, while a picture of the report could not be read: the
    mismatch with the code is not established (a limitation, weighed by no judge); the
    same flow alone, or a drawn one, is still a Misleading Architecture Visual."""
    linear = [("START", "RepoInvestigator"), ("RepoInvestigator", "DocAnalyst"),
              ("DocAnalyst", "Prosecutor"), ("Prosecutor", "ChiefJustice")]
    text = DiagramFacts(page=5, kind="arrow", edges=linear)
    picture = DiagramFacts(page=8, kind="raster", width=900, height=600)
    found = _facets(compare_with_code([text, picture], _code(CODE_EDGES)))
    for facet in ("vision.compare.misleading", "vision.compare.parallelism"):
        assert "1 diagram image(s) could not be read" in found[facet].data["limitation"]
    for alone in ([text], [DiagramFacts(page=5, kind="vector", edges=linear), picture]):
        misleading = _facets(compare_with_code(alone, _code(CODE_EDGES)))
        assert misleading["vision.compare.misleading"].found
        assert "limitation" not in misleading["vision.compare.misleading"].data


def test_judges_drawn_in_parallel_that_the_code_chains_are_misleading() -> None:
    # the detectives fan out in both, but the code runs its judges one after another
    chained = [e for e in CODE_EDGES if e[0] != "evidence_aggregator" and e[1] != "chief_justice"]
    chained += [("evidence_aggregator", "prosecutor"), ("prosecutor", "defense"),
                ("defense", "tech_lead"), ("tech_lead", "chief_justice")]
    diagram = DiagramFacts(page=4, kind="mermaid", edges=PARALLEL_EDGES)
    found = _facets(compare_with_code([diagram], _code(chained)))
    misleading = found["vision.compare.misleading"]
    assert misleading.found and not found["vision.compare.parallelism"].found
    assert "the code runs defense -> tech_lead, prosecutor -> defense" in (
        misleading.content or "")
    dossier = [Evidence(source="aggregator", dimension="swarm_visual",
                        **misleading.model_dump())]
    assert [row.cap for row, _ in confirmed_caps("swarm_visual", dossier)] == [2]
    # the same diagram against code that fans its judges out is no contradiction
    assert not _facets(compare_with_code([diagram], _code(CODE_EDGES)))[
        "vision.compare.misleading"].found


def test_branches_of_a_code_route_drawn_as_plain_arrows_are_no_false_split() -> None:
    # the code routes postcheck -> judges | handler (a conditional edge), handler -> judges
    code_edges = [("START", "postcheck"), ("postcheck", "judicial_fanout"),
                  ("postcheck", "failure_handler"), ("failure_handler", "judicial_fanout"),
                  ("judicial_fanout", "prosecutor"), ("judicial_fanout", "defense"),
                  ("prosecutor", "chief_justice"), ("defense", "chief_justice")]
    route = [("postcheck", "judicial_fanout"), ("postcheck", "failure_handler")]
    code = flow_graph(code_edges, conditional=route).model_copy(
        update={"builder": "builder", "location": "src/graph.py:10"})
    drawn = [("START", "Postcheck"), ("Postcheck", "JudicialFanout"),
             ("Postcheck", "FailureHandler"), ("FailureHandler", "JudicialFanout"),
             ("JudicialFanout", "Prosecutor"), ("JudicialFanout", "Defense"),
             ("Prosecutor", "ChiefJustice"), ("Defense", "ChiefJustice")]
    diagram = DiagramFacts(page=4, kind="mermaid", edges=drawn)
    found = _facets(compare_with_code([diagram], code))
    assert not found["vision.compare.misleading"].found
    assert found["vision.compare.parallelism"].found
    # drawn against code that only chains postcheck -> handler -> judges it still contradicts
    plain = _code([e for e in code_edges if e != ("postcheck", "judicial_fanout")])
    assert _facets(compare_with_code([diagram], plain))["vision.compare.misleading"].found


def test_the_most_complete_drawing_of_the_code_is_the_one_compared() -> None:
    """A one-line summary naming two of the code's nodes (with a parallel group, so more of
    the courtroom split) is not judged when another flow names every node of the code."""
    code = _code([("START", "repo_investigator"), ("START", "doc_analyst"),
                  ("repo_investigator", "evidence_aggregator"),
                  ("doc_analyst", "evidence_aggregator"),
                  ("evidence_aggregator", "error_collector"), ("error_collector", "END")])
    summary = DiagramFacts(page=1, kind="arrow", edges=[
        ("START", "Detectives"), ("Detectives", "EvidenceAggregator"),
        ("EvidenceAggregator", "ErrorCollector")], data={"parallel_nodes": ["Detectives"]})
    # a flattened drawing: its rows read as one chain, but every node of the code named
    full = DiagramFacts(page=5, kind="arrow", edges=[
        ("START", "RepoInvestigator"), ("RepoInvestigator", "DocAnalyst"),
        ("DocAnalyst", "EvidenceAggregator"), ("EvidenceAggregator", "ErrorCollector"),
        ("ErrorCollector", "END")])
    nodes = _facets(compare_with_code([summary, full], code))["vision.compare.nodes"]
    assert nodes.location == "report p.5"
    assert nodes.rationale.startswith("4 of 4 diagram nodes")


def test_a_loop_back_the_code_does_not_have_caps_the_diagram_at_four() -> None:
    # yohans-kasaw: "CJ -.->|Auto-Cyclic if high variance| Detectives" in a mermaid whose
    # code runs the Chief Justice once and ends
    looped = [*PARALLEL_EDGES, ("ChiefJusticeNode", "ContextBuilder")]
    diagram = DiagramFacts(page=4, kind="mermaid", edges=looped)
    loops = _facets(compare_with_code([diagram], _code(CODE_EDGES)))["vision.compare.loops"]
    assert loops.found and loops.location == "report p.4"
    assert loops.data["drawn_loops"] == ["ChiefJusticeNode -> ContextBuilder"]
    dossier = [Evidence(source="vision", dimension="swarm_visual", **loops.model_dump())]
    assert [row.cap for row, _ in confirmed_caps("swarm_visual", dossier)] == [4]
    # the same loop in the code: the diagram draws it truly
    code = _code([*CODE_EDGES, ("chief_justice", "context_builder")])
    assert not _facets(compare_with_code([diagram], code))["vision.compare.loops"].found
    # no loop drawn: nothing to say
    plain = DiagramFacts(page=4, kind="mermaid", edges=PARALLEL_EDGES)
    assert not _facets(compare_with_code([plain], _code(CODE_EDGES)))[
        "vision.compare.loops"].found


def test_a_cycle_in_the_code_graph_is_found_in_one_pass() -> None:
    from automaton_auditor.forensics.diagrams.flow import has_cycle

    diamond = [("s", "a"), ("s", "b"), ("a", "c"), ("b", "c")]
    assert not has_cycle(diamond)  # two ways to one node is no loop
    assert has_cycle([*diamond, ("c", "s")]) and has_cycle([("a", "a")])
    chain = [(f"n{i}", f"n{i + 1}") for i in range(20_000)]  # deep: no recursion limit
    assert not has_cycle(chain) and has_cycle([*chain, ("n20000", "n0")])
