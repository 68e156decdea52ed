"""Routes whose test needs a state key that never has a value there: never taken, and left
out of what the graph runs, fans out to and joins (synthetic graphs of `graph_defects`)."""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.guards import possible
from automaton_auditor.forensics.code.outs import outs_of

from . import graph_defects as copies
from .graph_defects import GRAPH, NODES, STATE
from .test_code_runtime import _facts

# a pre-flight node whose router picks the detectives from a list it builds up
LIST_ROUTER = '''

def pick_detectives(state):
    runnable = ["repo_investigator"]
    if state.get("pdf_files"):
        runnable.extend(["doc_analyst", "vision_inspector"])
    return runnable
'''


def _list_routed(key_declared: bool) -> dict[str, str]:
    graph = copies.edit(
        GRAPH, ("vision_inspector)", "vision_inspector, pick_detectives)"),
        ('builder.add_edge("context_builder", "repo_investigator")\n'
         'builder.add_edge("context_builder", "doc_analyst")\n'
         'builder.add_edge("context_builder", "vision_inspector")\n',
         'builder.add_conditional_edges("context_builder", pick_detectives, '
         '["repo_investigator", "doc_analyst", "vision_inspector"])\n'))
    state = STATE + ("    pdf_files: list\n" if key_declared else "")
    return {"state.py": state, "nodes.py": NODES + LIST_ROUTER, "graph.py": graph}


def test_names_added_to_a_routed_list_under_a_key_never_written_never_run(
        tmp_path: Path) -> None:
    facts = _facts(tmp_path, _list_routed(key_declared=False))
    dead = facts["graph.dead_routes"]
    assert dead.found and dead.data["keys"] == ["pdf_files"]
    assert dead.data["edges"] == [["context_builder", "doc_analyst"],
                                  ["context_builder", "vision_inspector"]]
    assert 'if state.get("pdf_files"):' in (dead.content or "")
    assert "does not declare pdf_files and no node returns it" in dead.rationale
    runs = facts["graph.execution"].data["runs"]
    assert "repo_investigator" in runs and "doc_analyst" not in runs
    assert "context_builder" not in facts["graph.fan_out"].data["fan_out"]
    assert not facts["graph.parallel_detectives"].found
    assert "vision_inspector" in facts["graph.unreachable_nodes"].data["unreachable"]


def test_a_declared_key_the_input_may_carry_leaves_the_list_route_open(
        tmp_path: Path) -> None:
    # no input schema: the caller may pass pdf_files, so the detectives may all run
    facts = _facts(tmp_path, _list_routed(key_declared=True))
    assert not facts["graph.dead_routes"].found
    assert "doc_analyst" in facts["graph.execution"].data["runs"]
    assert facts["graph.fan_out"].data["fan_out"]["context_builder"] == [
        "doc_analyst", "repo_investigator", "vision_inspector"]
    assert facts["graph.parallel_detectives"].found


# the aggregator's own router tests a key only that node returns, undeclared
OWN_FLAG = ('return {"opinions": [], "final_report": str(len(state["evidences"]))}',
            'return {"opinions": [], "final_report": "", "fatal": not state["evidences"]}')


def _own_flag(tmp_path: Path, router: str, test: str) -> dict:
    nodes = copies.edit(NODES, OWN_FLAG, ("def route_judges(state):", router),
                        ('    if not state.get("evidences"):', test))
    return _facts(tmp_path, {**copies.strong(), "nodes.py": "from state import AgentState\n"
                             + nodes})


def test_an_annotated_router_never_sees_its_node_s_undeclared_key(tmp_path: Path) -> None:
    """LangGraph reads a router's state through the class its parameter is annotated with:
    only the declared keys, so the error route is never taken (unannotated, it is handed
    the node's return as given: `test_a_router_reads_its_own_node_s_undeclared_key`)."""
    facts = _own_flag(tmp_path, "def route_judges(state: AgentState):",
                      '    if state.get("fatal"):')
    dead = facts["graph.dead_routes"]
    assert dead.data["edges"] == [["evidence_aggregator", "error_handler"]]
    assert "annotated AgentState" in dead.rationale
    assert "fatal" in facts["graph.state.evidence_lost"].data["keys"]


def test_a_returned_test_mapped_by_true_and_false_is_evaluated(tmp_path: Path) -> None:
    nodes = copies.edit(NODES, OWN_FLAG, ("def route_judges(state):\n",
                                          "def route_judges(state: AgentState):\n"
                                          '    return not state.get("fatal", False)\n\n\n'
                                          "def unused(state):\n"))
    graph = copies.edit(GRAPH, ('route_judges, ["judge", "error_handler"])',
                                'route_judges, {True: "judge", False: "error_handler"})'))
    facts = _facts(tmp_path, {**copies.strong(), "graph.py": graph,
                              "nodes.py": "from state import AgentState\n" + nodes})
    assert facts["graph.dead_routes"].data["edges"] == [["evidence_aggregator",
                                                          "error_handler"]]
    assert "error_handler" not in facts["graph.execution"].data["runs"]


def test_a_local_compared_with_a_literal_is_evaluated(tmp_path: Path) -> None:
    facts = _own_flag(tmp_path, "def route_judges(state: AgentState):",
                      '    status = state.get("fatal", "")\n    if status == "failed":')
    assert facts["graph.dead_routes"].data["edges"] == [["evidence_aggregator",
                                                          "error_handler"]]


def test_a_read_whose_default_is_truthy_guards_nothing(tmp_path: Path) -> None:
    # an absent ``proceed`` reads True: the judges are always reached, never ruled out
    facts = _own_flag(tmp_path, "def route_judges(state: AgentState):",
                      '    if not state.get("proceed", True):\n        return "error_handler"\n'
                      '    if not state.get("evidences"):')
    assert not facts["graph.dead_routes"].found
    assert "judge" in facts["graph.execution"].data["runs"]


def test_a_key_one_return_leaves_unwritten_may_be_missing(tmp_path: Path) -> None:
    # the investigator writes ``error`` only when it fails: the judges may still be reached
    nodes = copies.edit(
        NODES, ('def repo_investigator(state):\n',
                'def repo_investigator(state):\n    if not state.get("repo_url"):\n'
                '        return {"error": "no repository"}\n'),
        ('    if not state.get("evidences"):',
         '    if state.get("error"):\n        return "error_handler"\n'
         '    if not state.get("evidences"):'))
    facts = _facts(tmp_path, {**copies.strong(), "state.py": STATE + "    error: str\n",
                              "nodes.py": nodes})
    runs = facts["graph.execution"].data["runs"]
    assert "judge" in runs and "error_handler" in runs
    assert not facts["graph.dead_routes"].found


def _outs(source: str) -> list[dict]:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return outs_of(node, {})


def test_an_else_of_an_and_with_an_unread_operand_guards_nothing() -> None:
    outs = _outs("def r(state):\n    if state.get('a') and ready():\n        return 'x'\n"
                 "    return 'y'\n")
    assert [o["guards"] for o in outs] == [[["a", True]], []]


def test_is_not_none_needs_a_value_not_a_truthy_one() -> None:
    outs = _outs("def r(state):\n    if state.get('a') is not None:\n        return 'x'\n"
                 "    return 'y'\n")
    assert [o["guards"] for o in outs] == [[["a", "set"]], [["a", "none"]]]


def test_is_none_is_told_from_falsiness_but_decided_as_it() -> None:
    """``is None`` gives the key the kind "none" (the fact says "is None", not "empty"),
    which `possible` rules out only on a truthy value, as it does a falsy guard."""
    outs = _outs("def r(state):\n    if state.get('a') is None:\n        return 'x'\n"
                 "    return 'y'\n")
    assert [o["guards"] for o in outs] == [[["a", "none"]], [["a", "set"]]]
    for value, taken in (("", True), (None, True), (0, True), ("full", False)):
        assert possible(outs[0], {"a": value}) is taken
        assert possible({"guards": [["a", False]]}, {"a": value}) is taken


def test_a_path_map_entry_the_router_never_returns_is_never_taken(tmp_path: Path) -> None:
    """tedoaba: the path map names "error_handler", but the router (through the helper it
    hands the choice to) only ever returns "judge" or "end"."""
    nodes = NODES + '''

def pick(state):
    return "judge" if state.get("evidences") else "end"


def route_mapped(state):
    return pick(state)
'''
    graph = copies.edit(
        GRAPH, ("route_judges,", "route_mapped,"),
        ('builder.add_conditional_edges("evidence_aggregator", route_mapped, '
         '["judge", "error_handler"])',
         'builder.add_conditional_edges("evidence_aggregator", route_mapped, '
         '{"judge": "judge", "end": "chief_justice", "error_handler": "error_handler"})'))
    facts = _facts(tmp_path, {"state.py": STATE, "nodes.py": nodes, "graph.py": graph})
    dead = facts["graph.dead_routes"]
    assert dead.found and dead.data["edges"] == [["evidence_aggregator", "error_handler"]]
    assert "never taken: its router never returns 'error_handler'" in dead.rationale
