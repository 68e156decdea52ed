"""What nodes see of the state and hand back to it: reads that only parallel branches feed
(``graph.stale_reads``) and add-reducer lists returned to themselves (``state.doubled_lists``),
on the strong test graph and on copies with one such defect each."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.offline import evidence_balance, offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence, Finding
from tests.conftest import make_evidence

from . import graph_defects as copies
from .graph_defects import GRAPH, NODES, STATE
from .test_code_ast_graph import write_repo

FACETS = ("graph.stale_reads", "state.doubled_lists", "graph.router_writes")


def _facts(tmp_path: Path, nodes: str = NODES, graph: str = GRAPH,
           state: str = STATE) -> dict[str, Finding]:
    files = {"state.py": state, "nodes.py": nodes, "graph.py": graph}
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, files))
    return {f.facet: f for f in findings if f.facet in FACETS}


def _doc_analyst(*body: str) -> str:
    """The nodes with doc_analyst's body replaced by `body`'s lines."""
    return copies.edit(NODES, (
        'def doc_analyst(state):\n    return {"evidences": [{"goal": "report", "found": True}]}',
        "def doc_analyst(state):\n" + "\n".join(f"    {line}" for line in body)))


def test_the_strong_graph_reads_nothing_stale_and_doubles_nothing(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    assert [f for f in FACETS if facts[f].found] == []


def test_a_detective_reading_what_its_parallel_sibling_writes_never_sees_it(
        tmp_path: Path) -> None:
    nodes = _doc_analyst('files = state.get("evidences", [])',
                         'return {"evidences": [{"goal": "report", "found": bool(files)}]}')
    stale = _facts(tmp_path, nodes)["graph.stale_reads"]
    assert stale.found and stale.data["reads"] == [["doc_analyst", "evidences"]]
    assert stale.data["writers"] == {"doc_analyst.evidences": ["repo_investigator",
                                                               "vision_inspector"]}
    assert "same superstep (parallel branch)" in stale.rationale
    assert 'nodes.py:14: files = state.get("evidences", [])' in (stale.content or "")
    # read after the fan-in, the same key is seen
    assert not _facts(tmp_path / "after")["graph.stale_reads"].found


def test_a_helper_handed_the_state_reads_for_the_node(tmp_path: Path) -> None:
    """Heban-7: doc_analyst hands its state to a helper that reads what the parallel
    repo_investigator writes; the read is the node's, quoted at the call."""
    nodes = _doc_analyst("return {\"evidences\": [{\"goal\": \"report\", "
                         "\"found\": _cross_check(\"report\", state)}]}") + \
        "\n\ndef _cross_check(goal, graph_state):\n" \
        "    return bool(graph_state.get(\"evidences\", []))\n"
    stale = _facts(tmp_path, nodes)["graph.stale_reads"]
    assert stale.found and stale.data["reads"] == [["doc_analyst", "evidences"]]
    assert "nodes.py:14: return {\"evidences\"" in (stale.content or "")
    # a helper handed one value of the state reads nothing more
    valued = nodes.replace("_cross_check(\"report\", state)", "_cross_check(\"report\", {})")
    assert not _facts(tmp_path / "valued", valued)["graph.stale_reads"].found


def test_a_node_reading_its_own_slot_of_a_shared_key_reads_nothing_stale(
        tmp_path: Path) -> None:
    own = _doc_analyst('mine = state.get("evidences") or {}',
                       'return {"evidences": [{"goal": "report", "found": bool(mine.get("doc"))}]}')
    assert not _facts(tmp_path, own)["graph.stale_reads"].found
    # the entry it reads is one a parallel sibling writes: the read never sees it
    theirs = copies.edit(own, ('{"goal": "graph", "found": True}',
                               '{"goal": "doc", "found": True}'))
    stale = _facts(tmp_path / "theirs", theirs)["graph.stale_reads"]
    assert stale.found and stale.data["writers"] == {"doc_analyst.evidences": [
        "repo_investigator", "vision_inspector"]}


def test_a_key_only_later_nodes_write_is_the_input_s_when_the_input_may_carry_it(
        tmp_path: Path) -> None:
    nodes = copies.edit(NODES, ('def context_builder(state):\n    return {}',
                                'def context_builder(state):\n'
                                '    return {"opinions": [state.get("final_report")]}'))
    assert not _facts(tmp_path, nodes)["graph.stale_reads"].found


def test_a_read_after_a_router_whose_way_depends_on_the_run_is_not_established(
        tmp_path: Path) -> None:
    # the router's test is no simple guard: both ways are simulated, so the error handler
    # and the judges only may run in one step
    nodes = copies.edit(NODES, ('if not state.get("evidences"):',
                                'if len(state["evidences"]) < 2:'),
                        ('return {"opinions": [], "final_report"', 'return {"final_report"'),
                        ('return {"final_report": "no evidence"}',
                         'return {"final_report": str(state.get("opinions"))}'))
    stale = _facts(tmp_path, nodes)["graph.stale_reads"]
    assert not stale.found
    assert stale.data["limitation"].startswith("error_handler run(s) after a router")


def test_a_node_returning_the_list_it_read_doubles_it(tmp_path: Path) -> None:
    nodes = copies.edit(NODES, (
        'def chief_justice(state):\n    return {"final_report": str(len(state["opinions"]))}',
        'def chief_justice(state):\n    opinions = state.get("opinions", [])\n'
        '    opinions.append("fallback")\n'
        '    return {"final_report": "done", "opinions": opinions}'))
    doubled = _facts(tmp_path, nodes)["state.doubled_lists"]
    assert doubled.found and doubled.data["nodes"] == {"chief_justice": ["opinions"]}
    assert 'nodes.py:38: return {"final_report": "done", "opinions": opinions}' in (
        doubled.content or "")
    assert "state.py:9: opinions: Annotated[list, operator.add]" in (doubled.content or "")
    # a sum with the state's list carries its items too; a fresh list does not
    summed = copies.edit(NODES, ('return {"opinions": [state["repo_url"]]}',
                                 'return {"opinions": state["opinions"] + [state["repo_url"]]}'))
    assert _facts(tmp_path / "sum", summed)["state.doubled_lists"].data["nodes"] == {
        "judge": ["opinions"]}
    fresh = copies.edit(nodes, ('opinions = state.get("opinions", [])', 'opinions = []'))
    assert not _facts(tmp_path / "fresh", fresh)["state.doubled_lists"].found


def test_a_key_stored_with_a_fresh_list_then_returned_doubles_nothing(tmp_path: Path) -> None:
    # Azazh's judges: ``state["opinions"] = opinions`` (a fresh list), then ``return
    # {"opinions": state["opinions"]}``: what is returned is the fresh list
    fresh = copies.edit(NODES, (
        'def chief_justice(state):\n    return {"final_report": str(len(state["opinions"]))}',
        'def chief_justice(state):\n    opinions = ["fallback"]\n'
        '    state["opinions"] = opinions\n'
        '    return {"final_report": "done", "opinions": state["opinions"]}'))
    assert not _facts(tmp_path, fresh)["state.doubled_lists"].found
    # stored back with the state's own items in it, the list is still doubled
    grown = copies.edit(fresh, ('opinions = ["fallback"]',
                                'opinions = state["opinions"] + ["fallback"]'))
    doubled = _facts(tmp_path / "grown", grown)["state.doubled_lists"]
    assert doubled.found and doubled.data["nodes"] == {"chief_justice": ["opinions"]}


def test_a_copy_of_the_state_returned_doubles_what_it_held_and_only_that(
        tmp_path: Path) -> None:
    # ermiyas111: the aggregator returns ``new_state = dict(state)`` with one key set: the
    # detectives' evidences come back doubled; the judges' list was still empty then
    copied = copies.edit(NODES, (
        '    return {"opinions": [], "final_report": str(len(state["evidences"]))}',
        '    new_state = dict(state)\n'
        '    new_state["final_report"] = str(len(state["evidences"]))\n'
        '    return new_state'),
        ('    return {"opinions": [state["repo_url"]]}',
         '    return {"opinions": state.get("opinions", []) + [state["repo_url"]]}'))
    doubled = _facts(tmp_path, copied)["state.doubled_lists"]
    assert doubled.found and doubled.data["nodes"] == {"evidence_aggregator": ["evidences"]}


def test_a_node_returning_its_state_doubles_every_add_list_it_does_not_set(
        tmp_path: Path) -> None:
    nodes = copies.edit(NODES, (
        'def chief_justice(state):\n    return {"final_report": str(len(state["opinions"]))}',
        'def chief_justice(state):\n    state["final_report"] = "done"\n    return state'))
    doubled = _facts(tmp_path, nodes)["state.doubled_lists"]
    assert doubled.found and doubled.data["keys"] == ["evidences", "opinions"]
    assert "returns the state it was given" in doubled.rationale
    # a pass-through ``lambda x: x`` node hands the state back the same way
    graph = copies.edit(GRAPH, ('builder.add_node("chief_justice", chief_justice)',
                                'builder.add_node("chief_justice", lambda s: s)'))
    passed = _facts(tmp_path / "lambda", graph=graph)["state.doubled_lists"]
    assert passed.found and passed.data["nodes"] == {"chief_justice": ["evidences",
                                                                       "opinions"]}
    assert 'graph.py:16: builder.add_node("chief_justice", lambda s: s)' in (
        passed.content or "")


def test_a_node_that_runs_before_any_writer_of_the_list_doubles_nothing(
        tmp_path: Path) -> None:
    """Melaku-GA's load_rubric returns its state at the first step, when the opinions list
    holds only the graph's input: nothing a node produced is doubled."""
    first = copies.edit(NODES, ("def context_builder(state):\n    return {}",
                                "def context_builder(state):\n    return state"))
    doubled = _facts(tmp_path, first)["state.doubled_lists"]
    assert not doubled.found, doubled.rationale
    # ... but it does hand the lists back: the fact says so, and when that bites
    assert doubled.data["early"] == {"context_builder": ["evidences", "opinions"]}
    assert "No node returns" not in doubled.rationale
    assert doubled.rationale.startswith(
        "context_builder returns the state it was given, which holds evidences, opinions "
        "(appending reducer: operator.add), and it runs before any node writes evidences, "
        "opinions: the list then holds just what the graph was invoked with")
    assert "nodes.py:6: return state" in (doubled.content or "")
    later = copies.edit(NODES, (
        'def evidence_aggregator(state):\n    return {"opinions": [], "final_report": '
        'str(len(state["evidences"]))}', "def evidence_aggregator(state):\n    return state"))
    doubled = _facts(tmp_path / "later", later)["state.doubled_lists"]
    assert doubled.found and doubled.data["nodes"] == {"evidence_aggregator": ["evidences"]}


def test_add_messages_merges_by_id_and_doubles_nothing(tmp_path: Path) -> None:
    state = copies.edit(STATE, ("import operator\n",
                                "import operator\nfrom langgraph.graph import add_messages\n"),
                        ("opinions: Annotated[list, operator.add]",
                         "opinions: Annotated[list, add_messages]"))
    nodes = copies.edit(NODES, ('return {"opinions": [state["repo_url"]]}',
                                'return {"opinions": state["opinions"] + [state["repo_url"]]}'))
    assert not _facts(tmp_path, nodes, state=state)["state.doubled_lists"].found


def test_a_reducer_the_repository_writes_that_appends_doubles_too(tmp_path: Path) -> None:
    """nuhaminae's ``(existing or []) + (new or [])`` (given as a BinaryOperatorAggregate
    channel) and temesgen5335's per-key merge of a dict of lists append what a node hands
    back; a merge that keeps only new items, or counts them, appends nothing twice."""
    nodes = copies.edit(NODES, (
        'def chief_justice(state):\n    return {"final_report": str(len(state["opinions"]))}',
        'def chief_justice(state):\n    state["final_report"] = "done"\n    return state'))
    merge = ("\n\ndef merge(existing, new):\n    return (existing or []) + (new or [])\n"
             "\n\ndef merge_map(left, right):\n    combined = dict(left)\n"
             "    for key, value in right.items():\n"
             "        combined[key] = combined.get(key, []) + value\n    return combined\n")
    state = copies.edit(STATE, ("evidences: Annotated[list, operator.add]",
                                "evidences: Annotated[dict, merge_map]"),
                        ("opinions: Annotated[list, operator.add]",
                         "opinions: Annotated[list, BinaryOperatorAggregate(list, "
                         "operator=merge)]"),
                        ("\n\nclass AgentState", merge + "\n\nclass AgentState"))
    doubled = _facts(tmp_path, nodes, state=state)["state.doubled_lists"]
    assert doubled.found and doubled.data["keys"] == ["evidences", "opinions"]
    assert "appending reducer (BinaryOperatorAggregate(list, operator=merge), merge_map)" in (
        doubled.rationale)
    kept = copies.edit(state, ("return (existing or []) + (new or [])",
                               "return (existing or []) + [x for x in new if x not in "
                               "existing]"),
                       ("combined[key] = combined.get(key, []) + value",
                        "combined[key] = len(value)"))
    assert not _facts(tmp_path / "kept", nodes, state=kept)["state.doubled_lists"].found


ABORT_GRAPH = '''
from langgraph.graph import END, START, StateGraph

from state import AgentState
from nodes import context_builder, failure_node, repo_investigator, route


builder = StateGraph(AgentState)
builder.add_node("context_builder", context_builder)
builder.add_node("repo_investigator", repo_investigator)
builder.add_node("failure_node", failure_node)
builder.add_edge(START, "context_builder")
builder.add_conditional_edges("context_builder", route, ["repo_investigator", "failure_node"])
builder.add_edge("repo_investigator", END)
builder.add_edge("failure_node", END)
graph = builder.compile()
'''

ABORT_NODES = '''
def context_builder(state):
    return {}


def route(state):
    if state.get("repo_url"):
        return ["repo_investigator"]
    return "failure_node"


def repo_investigator(state):
    return {"evidences": [state["repo_url"]]}


def failure_node(state):
    return state
'''


def test_an_error_route_taken_before_any_list_is_written_doubles_nothing(
        tmp_path: Path) -> None:
    """richh-s: a failure node that hands its state back runs only on the router's other
    way, straight after the first node: every list is still empty then, whichever way the
    run takes. Once the first node writes one, that way doubles it."""
    doubled = _facts(tmp_path, ABORT_NODES, ABORT_GRAPH)["state.doubled_lists"]
    assert not doubled.found, doubled.rationale
    assert doubled.data["early"] == {"failure_node": ["evidences", "opinions"]}
    written = ABORT_NODES.replace("def context_builder(state):\n    return {}",
                                  "def context_builder(state):\n    return {\"evidences\": [0]}")
    doubled = _facts(tmp_path / "written", written, ABORT_GRAPH)["state.doubled_lists"]
    assert doubled.found and doubled.data["nodes"] == {"failure_node": ["evidences"]}


def _dossier(facet: str, dim_id: str, successes: int) -> list[Evidence]:
    return [*(make_evidence(f"success {i}", dimension=dim_id, facet=f"state.s{i}",
                            location=f"state.py:{i}", confidence=1.0) for i in range(successes)),
            Evidence(source="repo", dimension=dim_id, facet=facet, goal="defect",
                     found=True, pattern="failure", location="nodes.py:1",
                     confidence=0.65, rationale="defect")]


def _offline(facet: str, dim_id: str) -> int:
    rubric = load_rubric()
    dim = rubric.dimension(dim_id)
    dossier = _dossier(facet, dim_id, 12)
    return decide(dim, [offline_opinion(j, dim, dossier) for j in JUDGES], dossier,
                  rubric).final_score


def test_the_facts_cap_their_criterion_at_four_and_weigh_nothing_else() -> None:
    assert _offline("state.doubled_lists", "state_management_rigor") == 4
    assert _offline("graph.stale_reads", "graph_orchestration") == 4
    # a ceiling only: the balance the rest of the dossier strikes is left as it is
    for facet, dim_id in (("state.doubled_lists", "state_management_rigor"),
                          ("graph.stale_reads", "graph_orchestration")):
        assert evidence_balance(_dossier(facet, dim_id, 2)) == (2.0, 0.0)


def test_whole_state_nodes_in_a_loop_or_a_long_chain_are_read_once_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a hostile chain of 40 nodes, each returning a copy of its state, the last one looping
    # back: every question about whether a list is still empty is answered once (asked
    # again, it was exponential in the chain's length), and the loop ends
    from automaton_auditor.forensics.code import stateflow

    asked, still_empty = [0], stateflow._still_empty

    def counted(*args: Any) -> bool:
        asked[0] += 1
        assert asked[0] <= 40 * 40 * 4, "whether a list is still empty is asked again"
        return still_empty(*args)

    monkeypatch.setattr(stateflow, "_still_empty", counted)
    names = [f"n{i}" for i in range(40)]
    nodes = "\n\n".join(f"def {n}(state):\n    return dict(state)\n" for n in names)
    graph = ("from langgraph.graph import END, START, StateGraph\n\nfrom state import AgentState\n"
             f"from nodes import {', '.join(names)}\n\n"
             "def again(state):\n    return 'n0' if state.get('repo_url') else END\n\n"
             "builder = StateGraph(AgentState)\n"
             + "".join(f"builder.add_node('{n}', {n})\n" for n in names)
             + "builder.add_edge(START, 'n0')\n"
             + "".join(f"builder.add_edge('{a}', '{b}')\n" for a, b in pairwise(names))
             + "builder.add_conditional_edges('n39', again, ['n0', END])\n"
             + "graph = builder.compile()\n")
    doubled = _facts(tmp_path, nodes, graph)["state.doubled_lists"]
    assert not doubled.found  # nothing but copies: no list ever holds a node's item


def test_a_router_storing_into_the_state_stores_nothing(tmp_path: Path) -> None:
    """TsegayIS122123: ``state["errors"] = ...`` in a router before it routes to the error
    handler; LangGraph keeps nothing a router stores, so the handler never sees it."""
    test = '    if not state.get("evidences"):\n'
    nodes = copies.edit(NODES, (test + '        return "error_handler"',
                                test + '        state["errors"] = ["no evidence"]\n'
                                '        return "error_handler"'))
    writes = _facts(tmp_path, nodes)["graph.router_writes"]
    assert writes.found and writes.data["writes"] == ["route_judges.errors"]
    assert 'nodes.py:27: state["errors"] = ["no evidence"]' in (writes.content or "")
    assert not _facts(tmp_path / "strong")["graph.router_writes"].found
