"""Judges wired in parallel whose nodes do nothing (`forensics.code.node_stubs`) are no
evidence of parallel judging: the fan-out fact turns neutral and names the stubs."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# mussewold/the_vibe_code_auditor@interim src/nodes/justice.py and src/graph.py, shortened
JUSTICE = '''
def prosecutor_node(state):
    """Reviews the evidence."""
    return state


def defense_node(state):
    """Reviews the evidence."""
    return state


def tech_lead_node(state):
    """Reviews the evidence."""
    return state
'''

WORKING = '''
from llm import model


def prosecutor_node(state):
    return {"opinions": [model.invoke("prosecute " + str(state["evidence"]))]}


def defense_node(state):
    return {"opinions": [model.invoke("defend " + str(state["evidence"]))]}


def tech_lead_node(state):
    return {"opinions": [model.invoke("review " + str(state["evidence"]))]}
'''

GRAPH = '''
from langgraph.graph import StateGraph, START, END
from justice import prosecutor_node, defense_node, tech_lead_node


def aggregate(state):
    return {"evidence": state["evidence"]}


def chief(state):
    return {"verdict": len(state["opinions"])}


builder = StateGraph(dict)
builder.add_node("Aggregator", aggregate)
builder.add_node("Prosecutor", prosecutor_node)
builder.add_node("Defense", defense_node)
builder.add_node("TechLead", tech_lead_node)
builder.add_node("ChiefJustice", chief)
builder.add_edge(START, "Aggregator")
for judge in ("Prosecutor", "Defense", "TechLead"):
    builder.add_edge("Aggregator", judge)
    builder.add_edge(judge, "ChiefJustice")
builder.add_edge("ChiefJustice", END)
graph = builder.compile()
'''


def _judges(root: Path, justice: str):
    names = write_repo(root, {"justice.py": justice, "graph.py": GRAPH})
    return by_facet(code_findings(root, names)[0], "graph.parallel_judges")


def test_stub_judges_wired_in_parallel_support_nothing(tmp_path: Path) -> None:
    fact = _judges(tmp_path / "stubs", JUSTICE)
    assert fact.found and fact.pattern == "neutral"
    assert fact.data["stubs"] == ["Defense", "Prosecutor", "TechLead"]
    assert "so no judging runs in parallel" in fact.rationale
    assert "justice.py:2: def prosecutor_node(state):" in (fact.content or "")


def test_judges_that_do_work_in_parallel_are_credited(tmp_path: Path) -> None:
    fact = _judges(tmp_path / "working", WORKING)
    assert fact.found and fact.pattern == "success" and fact.data["stubs"] == []
    # one stub among three leaves two judges working in parallel
    one = _judges(tmp_path / "one", WORKING.replace(
        'return {"opinions": [model.invoke("defend " + str(state["evidence"]))]}',
        "return state"))
    assert one.pattern == "success" and one.data["stubs"] == ["Defense"]
