"""One reading of the state schema for every check: the keys of a graph whose builder a
repository function makes (``def StateGraph(name): return _StateGraph(AgentState)``), and a
reducer the repository writes as a small function of ``a + b`` / ``operator.add(a, b)`` /
``a | b`` / ``{**a, **b}`` (`reducers.operator_of`, `execution.Model.ops`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings, collect_facts
from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.execution import build_model
from automaton_auditor.forensics.code.reducers import ADD, OR, appending, operator_of
from automaton_auditor.forensics.code.sure_keys import keeps
from automaton_auditor.forensics.code.topology import rebuild

from . import graph_defects as copies
from .graph_defects import GRAPH, NODES, STATE
from .test_code_ast_graph import write_repo

REDUCERS = '''

def added(a, b):
    return operator.add(a, b)


def summed(a, b):
    if not b:
        return a
    return a + b


def joined(a, b):
    return a | b


def extend(a, b):
    merged = dict(a or {})
    for k, v in (b or {}).items():
        merged.setdefault(k, []).extend(v)
    return merged


def spread(a, b):
    return {**(a or {}), **(b or {})}


def last(a, b):
    return b if b is not None else a


def reset(a, b):
    if b == []:
        return []
    return a + b
'''
# chief_justice hands the state it was given back: every add-reducer list it holds doubles
RETURNS_STATE = copies.edit(NODES, (
    'def chief_justice(state):\n    return {"final_report": str(len(state["opinions"]))}',
    'def chief_justice(state):\n    state["final_report"] = "done"\n    return state'))


def _facets(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, files))
    return {f.facet: f"{f.found} {f.rationale}" for f in findings}


def test_a_repository_reducer_function_is_read_as_the_operator_it_applies(
        tmp_path: Path) -> None:
    state = copies.edit(STATE, ("\n\nclass AgentState", REDUCERS + "\n\nclass AgentState"))
    facts, _ = collect_facts(tmp_path, write_repo(tmp_path, {"state.py": state}))
    graph = CallGraph(facts)
    got = {name: operator_of(name, graph, tmp_path, "state.py", 1)
           for name in ("added", "summed", "joined", "spread", "last", "reset",
                        "operator.ior", "lambda a, b: a + b")}
    assert got == {"added": ADD, "summed": ADD, "joined": OR, "spread": OR, "last": "last",
                   "reset": "reset", "operator.ior": OR, "lambda a, b: a + b": ADD}
    # a list handed back that is not empty is appended by a reducer that resets only on an
    # empty update, and by a per-key extend given as a channel's operator
    assert [appending(name, graph, tmp_path, "state.py", 1) for name in (
        "reset", "BinaryOperatorAggregate(dict, operator=extend)", "last", "joined")] == [
        True, True, False, False]


def test_a_named_add_wrapper_is_an_add_reducer_for_every_check(tmp_path: Path) -> None:
    """gemechisworku's ``merge_opinions`` returning ``operator.add(current, update)``: the
    doubled-list check sees the add reducer the reducer fact lists, and a router's keys
    under an ``a | b`` merge are kept as under ``operator.or_``."""
    state = copies.edit(STATE, ("opinions: Annotated[list, operator.add]",
                                "opinions: Annotated[list, added]"),
                        ("evidences: Annotated[list, operator.add]",
                         "evidences: Annotated[dict, joined]"),
                        ("\n\nclass AgentState", REDUCERS + "\n\nclass AgentState"))
    facts = _facets(tmp_path, {"state.py": state, "nodes.py": RETURNS_STATE, "graph.py": GRAPH})
    assert facts["state.doubled_lists"].startswith("True chief_justice returns the state")
    assert "opinions has an appending reducer" in facts["state.doubled_lists"]
    raw, _ = collect_facts(tmp_path, ["graph.py", "nodes.py", "state.py"])
    main, _others = rebuild(raw)
    assert main is not None
    model = build_model(raw, CallGraph(raw), main, tmp_path)
    assert model.ops["evidences"] == OR and keeps(model, "evidences")
    assert not keeps(build_model(raw, CallGraph(raw), main), "evidences")  # not read


def test_a_builder_made_by_a_repository_function_has_that_function_s_state(
        tmp_path: Path) -> None:
    """ephrata1888's ``StateGraph(name=...)`` of its own, returning LangGraph's
    ``StateGraph(AgentState)``: the graph's keys are AgentState's, for every check."""
    state = STATE.replace("import operator\n", "import operator\nfrom langgraph.graph "
                          "import StateGraph as _StateGraph\n") + (
        "\n\ndef StateGraph(name: str = 'audit'):\n    return _StateGraph(AgentState)\n")
    graph = GRAPH.replace("from langgraph.graph import END, START, StateGraph",
                          "from langgraph.graph import END, START\nfrom state import "
                          "StateGraph").replace("StateGraph(AgentState)",
                                                'StateGraph(name="audit")')
    facts = _facets(tmp_path, {"state.py": state, "nodes.py": RETURNS_STATE, "graph.py": graph})
    assert facts["state.doubled_lists"].startswith("True chief_justice returns the state")
    assert "not all known" not in facts["graph.state.unwritten_reads"]
