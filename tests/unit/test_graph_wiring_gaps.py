"""Wiring the graph does not hold: a builder given no node (its wiring is invalid, not
partial), and node functions of the node modules that nothing wires or runs."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding
from tests.unit.test_code_ast_graph import by_facet, write_repo

FAN_FACTS = ("graph.fan_out", "graph.fan_in", "graph.parallel_detectives",
             "graph.parallel_judges")

OBJECT_WIRING = """
    from langgraph.graph import StateGraph
    from src.nodes import Prosecutor, Defense, ChiefJustice

    graph = StateGraph(dict)
    prosecutor = Prosecutor()
    defense = Defense()
    chief_justice = ChiefJustice()
    judges = [prosecutor, defense]
    graph.add_fan_out("START", judges)
    graph.add_fan_in(judges, chief_justice)
    graph.add_edge(chief_justice, defense)
"""


def test_a_builder_given_no_node_has_invalid_wiring_not_partial(tmp_path: Path) -> None:
    # objects as edge endpoints and no add_node: nothing is computed at run time, no node
    # exists, so nothing fans out, joins or runs in parallel (not "not established")
    files = write_repo(tmp_path, {"src/graph.py": OBJECT_WIRING, "src/nodes.py": """
    class Prosecutor: ...
    class Defense: ...
    class ChiefJustice: ...
    """})
    findings, _ = code_findings(tmp_path, files)
    for facet in (*FAN_FACTS, "graph.linear"):
        fact = by_facet(findings, facet)
        assert not fact.found and "limitation" not in fact.data, facet
        assert "computed at run time" not in fact.rationale
        assert fact.rationale.startswith("No graph can be built: the StateGraph at "
                                         "src/graph.py:5 is given no node"), facet
        assert "Its edges (src/graph.py:12) join nodes never added: LangGraph rejects them " \
            "when the graph compiles." in fact.rationale
        assert "src/graph.py:12: graph.add_edge(chief_justice, defense)" in str(fact.content)
    assert "none fans out, joins or runs in parallel" in by_facet(
        findings, "graph.fan_in").rationale


def test_edges_between_nodes_never_added_fan_out_in_name_only(tmp_path: Path) -> None:
    # string edges draw a fan-out and a join, but no add_node adds any of their nodes
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph

    builder = StateGraph(dict)
    builder.add_edge("start", "repo_investigator")
    builder.add_edge("start", "doc_analyst")
    builder.add_edge("repo_investigator", "aggregator")
    builder.add_edge("doc_analyst", "aggregator")
    """})
    findings, _ = code_findings(tmp_path, files)
    for facet in ("graph.fan_out", "graph.fan_in", "graph.parallel_detectives"):
        fact = by_facet(findings, facet)
        assert not fact.found, facet
        assert "No node exists, so none fans out, joins or runs in parallel. The edges " \
            "alone would draw: " in fact.rationale
        assert "drawn" in fact.data
    assert by_facet(findings, "graph.fan_out").data["drawn"]["fan_out"] == {
        "start": ["doc_analyst", "repo_investigator"]}


def test_names_computed_at_run_time_still_leave_the_wiring_partial(tmp_path: Path) -> None:
    # node names read from a configuration: the wiring read is partial, as before
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph, START, END
    from src.config import CONFIG

    def build():
        g = StateGraph(dict)
        g.add_node("a", print)
        g.add_node(CONFIG["judge"], print)
        g.add_edge(START, "a")
        g.add_edge("a", CONFIG["judge"])
        g.add_edge(CONFIG["judge"], END)
        return g.compile()
    """, "src/config.py": "CONFIG = load()\n"})
    findings, _ = code_findings(tmp_path, files)
    fan_out = by_facet(findings, "graph.fan_out")
    assert "limitation" in fan_out.data
    assert fan_out.rationale.startswith("Not established: node names computed at run time")


NODE_GRAPH = """
    from langgraph.graph import StateGraph, START, END
    from src.state import State
    from src.nodes.judges import judge_node
    from src.nodes.detectives import repo_node

    def build():
        g = StateGraph(State)
        g.add_node("repo", repo_node)
        g.add_node("judge", judge_node)
        g.add_edge(START, "repo")
        g.add_edge("repo", "judge")
        g.add_edge("judge", END)
        return g.compile()
"""
STATE = """
    from typing import TypedDict

    class State(TypedDict):
        evidence: dict
        opinions: list
        final_report: str
"""


def _unwired(findings: list[Finding]) -> list[str]:
    facts = [f for f in findings if f.facet == "graph.unwired_nodes"]
    assert len(facts) <= 1
    return list(facts[0].data["unwired"]) if facts else []


def test_node_functions_nothing_wires_or_runs_are_listed(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {
        "src/graph.py": NODE_GRAPH, "src/state.py": STATE,
        "src/nodes/__init__.py": "",
        "src/nodes/detectives.py": """
    def repo_node(state):
        return {"evidence": _collect(state.get("repo_url"))}

    def _collect(url):
        return {"url": url}

    def panel_node(state):
        return {"evidence": dict(state["evidence"])}
    """,
        "src/nodes/judges.py": """
    def judge_node(state):
        return {"opinions": score(state)}

    def score(state):
        # a helper only a wired node calls: it runs
        return {"opinions": [1]}

    def summarise(report):
        # not a node: its update is no key of the state
        return {"text": report}
    """,
        # a module nothing imports: its node function never runs
        "src/nodes/supreme_court.py": """
    def chief_justice_node(state):
        return {"final_report": str(state.get("opinions"))}
    """,
        # imported by an entry point: it may run, not listed
        "src/nodes/extra.py": """
    def extra_node(state):
        return {"final_report": ""}
    """,
        "main.py": "from src.nodes.extra import extra_node\nprint(extra_node)\n",
        # only the tests call it: still never wired
        "tests/test_panel.py": "from src.nodes.detectives import panel_node\n"
                               "panel_node({})\n",
    })
    findings, _ = code_findings(tmp_path, files)
    assert _unwired(findings) == ["src/nodes/detectives.py:8 panel_node",
                                  "src/nodes/supreme_court.py:2 chief_justice_node"]
    fact = by_facet(findings, "graph.unwired_nodes")
    assert fact.pattern == "neutral" and fact.found
    assert fact.rationale.startswith("Defined but never wired: src/nodes/detectives.py:8 "
                                     "panel_node, src/nodes/supreme_court.py:2 "
                                     "chief_justice_node.")
    assert "src/nodes/supreme_court.py:2: def chief_justice_node(state):" in str(fact.content)


def test_no_unwired_fact_when_every_node_function_runs_or_the_wiring_is_unknown(
        tmp_path: Path) -> None:
    files = write_repo(tmp_path, {
        "src/graph.py": NODE_GRAPH.replace('g.add_node("judge", judge_node)',
                                           'g.add_node(pick(), judge_node)'),
        "src/state.py": STATE,
        "src/nodes/judges.py": "def judge_node(state):\n    return {'opinions': []}\n",
        "src/nodes/detectives.py": "def repo_node(state):\n    return {'evidence': {}}\n"
                                   "def spare_node(state):\n    return {'evidence': {}}\n"})
    findings, _ = code_findings(tmp_path, files)
    # a node name computed at run time: what runs is not known, so nothing is listed
    assert _unwired(findings) == []
