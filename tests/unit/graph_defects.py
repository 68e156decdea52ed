"""A strong auditor graph written in the tests (state, nodes, graph) and copies of it with one
LangGraph defect each, for the execution facts' unit tests and the end-to-end acceptance test.
Test data only: never audited code, never run by the auditor.

The vision inspector finds nothing without a repository: not every detective surely fills the
evidence list, so the route to the error handler is not ruled out as one never taken."""

from __future__ import annotations

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
    return {"evidences": [{"goal": "diagram", "found": True}] if state.get("repo_url") else []}


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


def edit(text: str, *pairs: tuple[str, str]) -> str:
    """`text` with each (old, new) replaced; every old must be there."""
    for old, new in pairs:
        assert old in text, old  # a copy that silently lost its defect would prove nothing
        text = text.replace(old, new)
    return text


def strong() -> dict[str, str]:
    """The unmodified graph: state.py, nodes.py, graph.py."""
    return {"state.py": STATE, "nodes.py": NODES, "graph.py": GRAPH}


def undeclared_evidence() -> dict[str, str]:
    """Detectives return their evidence under ``evidence``, which the state does not declare;
    the aggregator reads it (LangGraph drops it: the judges see no evidence)."""
    nodes = edit(NODES, ('return {"evidences": [{"goal"', 'return {"evidence": [{"goal"'),
                     ('str(len(state["evidences"]))', 'str(len(state.get("evidence") or []))'))
    return {**strong(), "nodes.py": nodes}


def route_on_undeclared_flag() -> dict[str, str]:
    """A detective returns ``evidence_ok`` (undeclared); the route after the aggregator reads
    it, so the branch to the judges is never taken."""
    nodes = edit(NODES, ('return {"evidences": [{"goal": "report", "found": True}]}',
                             'return {"evidences": [], "evidence_ok": True}'),
                     ('if not state.get("evidences"):', 'if not state.get("evidence_ok"):'))
    return {**strong(), "nodes.py": nodes}


def node_without_incoming_edge() -> dict[str, str]:
    """vision_inspector is registered but no edge leads to it."""
    graph = edit(GRAPH, ('builder.add_edge("context_builder", "vision_inspector")\n', ""))
    return {**strong(), "graph.py": graph}


def unequal_branches_separate_edges() -> dict[str, str]:
    """vision_inspector runs after doc_analyst; the aggregator is joined by separate add_edge
    calls from branches of one and two nodes, so it runs twice."""
    graph = edit(GRAPH, ('builder.add_edge("context_builder", "vision_inspector")',
                             'builder.add_edge("doc_analyst", "vision_inspector")'),
                     ('builder.add_edge("doc_analyst", "evidence_aggregator")\n', ""))
    return {**strong(), "graph.py": graph}
