"""A graph node built from a lambda returns its expression, read like a def's return."""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.lambdas import picked_lambdas

from .test_code_ast_graph import write_repo

STATE = '''
import operator
from typing import Annotated, TypedDict


class State(TypedDict):
    repo_url: str
    evidences: Annotated[list, operator.add]
'''

GRAPH = '''
from langgraph.graph import END, START, StateGraph

from state import State


def context(state):
    return {}


def repo(state):
    return {"evidences": [state["repo_url"]]}


doc_gate = lambda s: {}


def build():
    builder = StateGraph(State)
    builder.add_node("context", context)
    builder.add_node("repo_gate", lambda s: {})
    builder.add_node("doc_gate", doc_gate)
    builder.add_node("repo", repo)
    builder.add_edge(START, "context")
    builder.add_edge("context", "repo_gate")
    builder.add_edge("context", "doc_gate")
    builder.add_edge("repo_gate", "repo")
    builder.add_edge("doc_gate", "repo")
    builder.add_edge("repo", END)
    return builder.compile()
'''


def _facts(tmp_path: Path, graph: str) -> dict[str, str]:
    files = write_repo(tmp_path, {"state.py": STATE, "graph.py": graph})
    findings, _ = code_findings(tmp_path, files)
    return {f.facet: f.rationale for f in findings}


def test_lambda_gates_return_what_their_body_says(tmp_path: Path) -> None:
    """selambeyu's ``add_node("repo_gate", lambda s: {})``: the gate returns ``{}``, so the
    parallel step's writes are known and nothing is left "not determined"."""
    facts = _facts(tmp_path, GRAPH)
    assert facts["graph.state.parallel_writes"] == (
        "No key is written twice in one superstep without a reducer.")
    assert "not determined" not in facts["graph.execution"]
    assert "not determined" not in facts["graph.state.unwritten_reads"]


def test_a_name_bound_twice_is_not_read_as_the_lambda(tmp_path: Path) -> None:
    rebound = GRAPH.replace("doc_gate = lambda s: {}",
                            "doc_gate = lambda s: {}\ndoc_gate = make_gate()")
    facts = _facts(tmp_path, rebound)
    assert "what doc_gate returns is not determined" in facts["graph.state.parallel_writes"]


def test_only_node_and_named_lambdas_are_picked() -> None:
    tree = ast.parse("g.add_node('a', lambda s: {})\nkey = lambda x: x\n"
                     "sorted(xs, key=lambda x: x)\ng.add_node(action=lambda s: s, node='b')\n")
    assert sorted(picked_lambdas(tree).values()) == ["<lambda:1:16>", "<lambda:4:18>", "key"]
