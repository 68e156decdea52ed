"""The report's picture of the code graph marks what LangGraph will do wrong: nodes that never
run, routes never taken, joins that fire more than once, keys that are dropped; from facts
shaped as the execution facts are, and from the real code forensics on a defective graph."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.output.markdown import render_markdown
from automaton_auditor.output.mermaid import code_flow, legend, mermaid_flowchart
from automaton_auditor.state import Evidence, Finding
from tests.conftest import make_evidence
from tests.unit.output_helpers import criterion, report

from .graph_defects import GRAPH, NODES, STATE
from .test_code_ast_graph import write_repo

TOPOLOGY = {
    "nodes": ["start_node", "detective_a", "detective_b", "slow_step", "aggregator", "judge",
              "orphan", "stuck", "error_handler"],
    "edges": [["__start__", "start_node"], ["start_node", "detective_a"],
              ["start_node", "detective_b"], ["detective_a", "aggregator"],
              ["detective_b", "slow_step"], ["slow_step", "aggregator"],
              ["aggregator", "judge"], ["judge", "__end__"], ["orphan", "stuck"]],
    "conditional": {"aggregator": ["judge"]},
}


def _fact(facet: str, found: bool = True, **data: object) -> Evidence:
    return make_evidence(facet, facet=facet, pattern="failure", found=found,
                         dimension="graph_orchestration", location="graph.py:9", data=data)


def _evidence(*marks: Evidence) -> list[Evidence]:
    topology = make_evidence("Rebuilt graph topology", facet="graph.topology",
                             pattern="neutral", dimension="graph_orchestration",
                             location="graph.py:1", data=TOPOLOGY)
    return [topology, *marks]


RUNTIME_FACTS = (
    _fact("graph.unreachable_nodes", unreachable=["orphan"], no_end=["stuck"]),
    _fact("graph.dead_routes", edges=[["aggregator", "error_handler"]], keys=["ok"]),
    _fact("graph.join_repeats", joins={"aggregator": {"runs": 2, "late": ["slow_step"]}}),
    _fact("graph.state.dropped_keys", nodes={"detective_a": ["evidence"]}, channels=["evidences"]),
)


def test_execution_facts_mark_the_code_graph() -> None:
    flow = code_flow(_evidence(*RUNTIME_FACTS))
    assert flow is not None
    lines = mermaid_flowchart(flow)
    assert '    orphan["orphan (never runs)"]' in lines
    assert '    stuck["stuck (never reaches END)"]' in lines
    assert '    aggregator["aggregator ×2"]' in lines
    assert '    detective_a["detective_a (drops evidence)"]' in lines
    assert "    class orphan unreachable" in lines and "    class stuck stuck" in lines
    assert "    class aggregator twice" in lines and "    class detective_a drops" in lines
    # the dead route is not among the topology's edges: it is drawn, dashed and red
    edges = [line for line in lines if " --> " in line or " -." in line]
    dead = "    aggregator -. never taken .-> error_handler"
    assert dead in edges
    assert f"    linkStyle {edges.index(dead)} stroke:#b00020,stroke-dasharray:5 3" in lines
    text = legend(flow)
    for part in ("never taken: aggregator → error_handler", "never runs: orphan",
                 "never reaches END: stuck", "detective_a (evidence)", "aggregator ×2"):
        assert part in text


def test_facts_that_found_nothing_or_have_other_shapes_mark_nothing() -> None:
    quiet = [_fact(f.facet, found=False, **f.data) for f in RUNTIME_FACTS]
    odd = [_fact("graph.unreachable_nodes", unreachable="orphan"),
           _fact("graph.dead_routes", edges=[["aggregator"]], keys=None),
           _fact("graph.join_repeats", joins=["aggregator", 3]),
           _fact("graph.fan_in", edges=[["aggregator", "judge"]])]
    for items in (quiet, odd):
        flow = code_flow(_evidence(*items))
        assert flow is not None and not flow.unreachable and not flow.dead
        assert not flow.no_end and not flow.dropped
    flow = code_flow(_evidence(*odd))
    assert flow is not None and flow.twice == {"aggregator": 2, "3": 2}
    assert "classDef twice" in "\n".join(mermaid_flowchart(flow))  # only aggregator is drawn
    assert "class aggregator twice" in "\n".join(mermaid_flowchart(flow))


def _graph_evidence(tmp_path: Path, graph: str) -> list[Evidence]:
    files = write_repo(tmp_path, {"state.py": STATE, "nodes.py": NODES, "graph.py": graph})
    findings: list[Finding] = code_findings(tmp_path, files)[0]
    return [Evidence(source="repo", dimension="graph_orchestration", **f.model_dump())
            for f in findings if f.facet.startswith("graph.")]


def test_the_report_marks_a_node_that_never_runs_and_a_join_that_fires_twice(
        tmp_path: Path) -> None:
    # vision_inspector now follows doc_analyst, one step behind repo_investigator: the
    # aggregator (separate add_edge calls) runs once per arriving branch
    graph = GRAPH.replace('builder.add_edge("context_builder", "vision_inspector")',
                          'builder.add_edge("doc_analyst", "vision_inspector")')
    graph = graph.replace('builder.add_edge("doc_analyst", "evidence_aggregator")\n', "")
    graph = graph.replace('builder.add_node("error_handler", error_handler)',
                          'builder.add_node("error_handler", error_handler)\n'
                          'builder.add_node("orphan", error_handler)\n'
                          'builder.add_edge("orphan", END)')
    evidence = _graph_evidence(tmp_path, graph)
    text = render_markdown(report([criterion("graph_orchestration", 2, evidence)], evidence))
    picture = text[text.index("```mermaid"):text.index("```", text.index("```mermaid") + 3)]
    assert 'orphan["orphan (never runs)"]' in picture and "class orphan unreachable" in picture
    assert 'evidence_aggregator["evidence_aggregator ×2"]' in picture
    assert "class evidence_aggregator twice" in picture
    assert "never runs: orphan" in text and "evidence_aggregator ×2" in text


def test_the_strong_graph_is_drawn_without_marks(tmp_path: Path) -> None:
    evidence = _graph_evidence(tmp_path, GRAPH)
    flow = code_flow(evidence)
    assert flow is not None and "judge" in flow.nodes
    text = "\n".join(mermaid_flowchart(flow))
    assert "classDef" not in text and "never" not in text and "×" not in text


def test_a_hostile_node_name_cannot_close_the_fence_or_break_a_line() -> None:
    hostile = "x\n```\n# Injected | heading" + "y" * 200
    flow = code_flow([make_evidence("t", facet="graph.topology", pattern="neutral", data={
        "nodes": [hostile], "edges": [["__start__", hostile]], "conditional": {}}),
        _fact("graph.unreachable_nodes", unreachable=[hostile])])
    assert flow is not None
    lines = mermaid_flowchart(flow)
    assert [line for line in lines if "```" in line] == ["```mermaid", "```"]
    assert not any(line.startswith("#") for line in lines)
    assert max(map(len, lines)) < 200
    assert "\n" not in legend(flow) and "|" not in legend(flow) and "`" not in legend(flow)
