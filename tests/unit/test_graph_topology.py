"""The compiled graph's topology, read from `get_graph()`."""

from __future__ import annotations

from automaton_auditor.graph import compile_graph


def _edges() -> set[tuple[str, str]]:
    graph = compile_graph().get_graph()
    return {(e.source, e.target) for e in graph.edges}


def test_nodes_are_the_courtroom() -> None:
    nodes = set(compile_graph().get_graph().nodes)
    assert {"context_builder", "repo_investigator", "doc_analyst", "vision_inspector",
            "evidence_aggregator", "judge", "chief_justice", "report_writer"} <= nodes


def test_detectives_fan_out_and_fan_in() -> None:
    edges = _edges()
    for detective in ("repo_investigator", "doc_analyst", "vision_inspector"):
        assert ("context_builder", detective) in edges
        assert (detective, "evidence_aggregator") in edges


def test_invalid_input_has_its_own_route_to_the_report() -> None:
    assert ("context_builder", "report_writer") in _edges()


def test_judges_fan_out_from_aggregator_and_fan_in_at_chief_justice() -> None:
    edges = _edges()
    assert ("evidence_aggregator", "judge") in edges
    assert {("judge", "dialectics"), ("dialectics", "chief_justice"),
            ("dialectics", "reevaluate"), ("reevaluate", "chief_justice")} <= edges
    assert ("chief_justice", "report_writer") in edges
    assert ("report_writer", "__end__") in edges
    # judges never reach the report without the Chief Justice
    assert ("judge", "report_writer") not in edges
