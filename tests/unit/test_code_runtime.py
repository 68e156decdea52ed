"""Execution facts on a strong auditor graph and on copies with one LangGraph defect each."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import write_repo

STATE = '''
import operator
from typing import Annotated, TypedDict


class AgentState(TypedDict, total=False):
    repo_url: str
    evidences: Annotated[list, operator.add]
    opinions: Annotated[list, operator.add]
    final_report: str
'''

NODES = '''
from langgraph.types import Send


def context_builder(state):
    return {}


def repo_investigator(state):
    return {"evidences": [{"goal": "graph", "found": True}]}


def doc_analyst(state):
    return {"evidences": [{"goal": "report", "found": True}]}


def vision_inspector(state):
    return {"evidences": [{"goal": "diagram", "found": True}]}


def evidence_aggregator(state):
    return {"opinions": [], "final_report": str(len(state["evidences"]))}


def route_judges(state):
    if not state.get("evidences"):
        return "error_handler"
    return [Send("judge", {"repo_url": who}) for who in ["Prosecutor", "Defense", "TechLead"]]


def judge(state):
    return {"opinions": [state["repo_url"]]}


def chief_justice(state):
    return {"final_report": str(len(state["opinions"]))}


def error_handler(state):
    return {"final_report": "no evidence"}
'''

GRAPH = '''
from langgraph.graph import END, START, StateGraph

from state import AgentState
from nodes import (chief_justice, context_builder, doc_analyst, error_handler,
                   evidence_aggregator, judge, repo_investigator, route_judges,
                   vision_inspector)

builder = StateGraph(AgentState)
builder.add_node("context_builder", context_builder)
builder.add_node("repo_investigator", repo_investigator)
builder.add_node("doc_analyst", doc_analyst)
builder.add_node("vision_inspector", vision_inspector)
builder.add_node("evidence_aggregator", evidence_aggregator)
builder.add_node("judge", judge)
builder.add_node("chief_justice", chief_justice)
builder.add_node("error_handler", error_handler)
builder.add_edge(START, "context_builder")
builder.add_edge("context_builder", "repo_investigator")
builder.add_edge("context_builder", "doc_analyst")
builder.add_edge("context_builder", "vision_inspector")
builder.add_edge("repo_investigator", "evidence_aggregator")
builder.add_edge("doc_analyst", "evidence_aggregator")
builder.add_edge("vision_inspector", "evidence_aggregator")
builder.add_conditional_edges("evidence_aggregator", route_judges, ["judge", "error_handler"])
builder.add_edge("judge", "chief_justice")
builder.add_edge("chief_justice", END)
builder.add_edge("error_handler", END)
graph = builder.compile()
'''

DEFECTS = ("graph.evidence_lost", "graph.dropped_keys", "graph.dead_routes",
           "graph.unreachable_nodes", "graph.join_repeats", "graph.parallel_writes",
           "graph.unwritten_reads")


def _facts(tmp_path: Path, nodes: str = NODES, graph: str = GRAPH) -> dict:
    files = write_repo(tmp_path, {"state.py": STATE, "nodes.py": nodes, "graph.py": graph})
    findings, _ = code_findings(tmp_path, files)
    return {f.facet: f for f in findings if f.facet.startswith("graph.")}


def test_the_strong_graph_has_no_execution_defect(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    assert [f for f in DEFECTS if facts[f].found] == []
    run = facts["graph.execution"]
    assert run.data["runs"] == {"chief_justice": 1, "context_builder": 1, "doc_analyst": 1,
                                "evidence_aggregator": 1, "judge": 3, "repo_investigator": 1,
                                "vision_inspector": 1}
    assert run.data["undetermined"] == []


def test_detectives_returning_undeclared_keys_lose_the_evidence(tmp_path: Path) -> None:
    nodes = NODES.replace('return {"evidences": [{"goal": "graph"',
                          'return {"evidence": [{"goal": "graph"')
    nodes = nodes.replace('str(len(state["evidences"]))',
                          'str(len(state.get("evidence") or []))')
    facts = _facts(tmp_path, nodes)
    lost = facts["graph.evidence_lost"]
    assert lost.found and lost.confidence >= 0.9
    assert lost.data["keys"] == {"evidence": ["evidence_aggregator"]}
    assert lost.data["nodes"] == ["repo_investigator"]
    assert "nodes.py:10: return {\"evidence\": [{\"goal\": \"graph\"" in (lost.content or "")


def test_a_route_on_a_dropped_flag_is_dead(tmp_path: Path) -> None:
    nodes = NODES.replace('return {"evidences": [{"goal": "report", "found": True}]}',
                          'return {"evidences": [], "evidence_ok": True}')
    nodes = nodes.replace('if not state.get("evidences"):', 'if not state.get("evidence_ok"):')
    facts = _facts(tmp_path, nodes)
    dead = facts["graph.dead_routes"]
    assert dead.found and dead.data["keys"] == ["evidence_ok"]
    assert dead.data["edges"] == [["evidence_aggregator", "judge"]]
    assert "judge" not in facts["graph.execution"].data["runs"]


def test_a_node_without_incoming_edge_never_runs(tmp_path: Path) -> None:
    graph = GRAPH.replace('builder.add_edge("context_builder", "vision_inspector")\n', "")
    facts = _facts(tmp_path, graph=graph)
    unreachable = facts["graph.unreachable_nodes"]
    assert unreachable.found and unreachable.data["unreachable"] == ["vision_inspector"]
    assert unreachable.location == "graph.py:13"  # its add_node


def test_unequal_branches_joined_by_separate_edges_run_the_judges_twice(
        tmp_path: Path) -> None:
    graph = GRAPH.replace('builder.add_edge("context_builder", "vision_inspector")',
                          'builder.add_edge("doc_analyst", "vision_inspector")')
    graph = graph.replace('builder.add_edge("doc_analyst", "evidence_aggregator")\n', "")
    facts = _facts(tmp_path, graph=graph)
    repeats = facts["graph.join_repeats"]
    assert repeats.found
    assert repeats.data["joins"] == {"evidence_aggregator": {
        "runs": 2, "late": ["vision_inspector"]}}
    assert facts["graph.execution"].data["runs"]["judge"] == 6
