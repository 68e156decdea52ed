"""Execution facts on a strong auditor graph and on copies with one LangGraph defect each."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from . import graph_defects as copies
from .graph_defects import NODES
from .test_code_ast_graph import write_repo

DEFECTS = ("graph.state.evidence_lost", "graph.state.dropped_keys", "graph.dead_routes",
           "graph.unreachable_nodes", "graph.join_repeats", "graph.state.parallel_writes",
           "graph.state.unwritten_reads")


def _facts(tmp_path: Path, files: dict[str, str]) -> dict[str, Finding]:
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, files))
    return {f.facet: f for f in findings if f.facet.startswith("graph.")}


def _nodes_edited(tmp_path: Path, *pairs: tuple[str, str]) -> dict[str, Finding]:
    return _facts(tmp_path, {**copies.strong(), "nodes.py": copies.edit(NODES, *pairs)})


def test_the_strong_graph_has_no_execution_defect(tmp_path: Path) -> None:
    facts = _facts(tmp_path, copies.strong())
    assert [f for f in DEFECTS if facts[f].found] == []
    run = facts["graph.execution"]
    assert run.data["runs"] == {"chief_justice": 1, "context_builder": 1, "doc_analyst": 1,
                                "evidence_aggregator": 1, "judge": 3, "repo_investigator": 1,
                                "vision_inspector": 1}
    assert run.data["undetermined"] == []


def test_detectives_returning_undeclared_keys_lose_the_evidence(tmp_path: Path) -> None:
    facts = _facts(tmp_path, copies.undeclared_evidence())
    lost = facts["graph.state.evidence_lost"]
    assert lost.found and lost.confidence >= 0.9
    assert lost.data["keys"] == {"evidence": ["evidence_aggregator"]}
    assert lost.data["nodes"] == ["doc_analyst", "repo_investigator", "vision_inspector"]
    dropped = facts["graph.state.dropped_keys"]
    assert dropped.found
    # every dropped key is read later: one defect, charged once, by the evidence-lost fact
    assert dropped.data["counted_in"] == "graph.state.evidence_lost"
    assert "nodes.py:10: return {\"evidence\": [{\"goal\": \"graph\"" in (lost.content or "")
    # the detectives return nothing the state keeps: each with the lines that return it
    assert sorted(dropped.data["whole"]) == ["doc_analyst", "repo_investigator",
                                             "vision_inspector"]
    assert "nodes.py:10" in dropped.data["whole"]["repo_investigator"]


def test_a_node_returning_its_state_returns_the_keys_it_stored_in_it(tmp_path: Path) -> None:
    stored = _nodes_edited(tmp_path, ("def context_builder(state):\n    return {}",
                                      "def context_builder(state):\n"
                                      "    state[\"dimensions\"] = []\n    return state"))
    dropped = stored["graph.state.dropped_keys"]
    assert dropped.found and dropped.data["nodes"] == {"context_builder": ["dimensions"]}
    assert "counted_in" not in dropped.data  # nothing reads it: this fact is its only charge
    # all it adds to the state is dropped: the state keeps nothing of its return
    assert dropped.data["whole"] == {"context_builder": ["nodes.py:6"]}
    beside = _nodes_edited(tmp_path / "beside", (
        "def context_builder(state):\n    return {}",
        "def context_builder(state):\n    return {\"final_report\": \"\", \"dimensions\": []}"))
    partly = beside["graph.state.dropped_keys"]
    assert partly.data["nodes"] == {"context_builder": ["dimensions"]}
    assert partly.data["whole"] == {}  # beside a key the state declares, and keeps
    assert 'nodes.py:6: state["dimensions"] = []' in (dropped.content or "")
    declared = _nodes_edited(tmp_path / "declared", (
        "def context_builder(state):\n    return {}",
        "def context_builder(state):\n    state[\"final_report\"] = \"\"\n    return state"))
    assert not declared["graph.state.dropped_keys"].found


def test_a_route_on_a_dropped_flag_is_dead(tmp_path: Path) -> None:
    facts = _facts(tmp_path, copies.route_on_undeclared_flag())
    dead = facts["graph.dead_routes"]
    assert dead.found and dead.data["keys"] == ["evidence_ok"]
    assert dead.data["edges"] == [["evidence_aggregator", "judge"]]
    assert "judge" not in facts["graph.execution"].data["runs"]


def test_a_node_without_incoming_edge_never_runs(tmp_path: Path) -> None:
    facts = _facts(tmp_path, copies.node_without_incoming_edge())
    unreachable = facts["graph.unreachable_nodes"]
    assert unreachable.found and unreachable.data["unreachable"] == ["vision_inspector"]
    assert unreachable.location == "graph.py:13"  # its add_node


def test_unequal_branches_joined_by_separate_edges_run_the_judges_twice(
        tmp_path: Path) -> None:
    facts = _facts(tmp_path, copies.unequal_branches_separate_edges())
    repeats = facts["graph.join_repeats"]
    assert repeats.found
    assert repeats.data["joins"] == {"evidence_aggregator": {
        "runs": 2, "late": ["vision_inspector"]}}
    assert facts["graph.execution"].data["runs"]["judge"] == 6


def test_a_router_at_the_join_leaves_the_join_s_second_run_certain(tmp_path: Path) -> None:
    """The aggregator's router cannot be decided (it reads the environment), but the late
    branch ran before it: the aggregator still runs twice."""
    files = copies.unequal_branches_separate_edges()
    files["nodes.py"] = copies.edit(files["nodes.py"], (
        '    if not state.get("evidences"):\n        return "error_handler"',
        '    import os\n    if os.environ.get("AUDIT_MODE") == "fail":\n'
        '        return "error_handler"'))
    facts = _facts(tmp_path, files)
    assert facts["graph.execution"].data["undetermined"]
    assert facts["graph.join_repeats"].data["joins"] == {"evidence_aggregator": {
        "runs": 2, "late": ["vision_inspector"]}}


def test_a_router_whose_every_way_arrives_late_makes_the_second_run_certain(
        tmp_path: Path) -> None:
    """vision_inspector routes (on the environment: not determined) to doc_analyst or
    doc_skipped, and both join the aggregator by separate edges one step after
    repo_investigator: whichever way it goes, the aggregator runs twice."""
    graph = copies.edit(copies.GRAPH, (
        'builder.add_edge("context_builder", "doc_analyst")\n', ""), (
        'builder.add_edge("vision_inspector", "evidence_aggregator")',
        'builder.add_node("doc_skipped", doc_skipped)\n'
        'builder.add_conditional_edges("vision_inspector", route_doc, '
        '["doc_analyst", "doc_skipped"])\n'
        'builder.add_edge("doc_skipped", "evidence_aggregator")'), (
        "vision_inspector)", "vision_inspector, route_doc, doc_skipped)"))
    nodes = NODES + ('\n\ndef doc_skipped(state):\n    return {}\n\n\n'
                     'def route_doc(state):\n    import os\n'
                     '    if os.environ.get("PDF"):\n        return "doc_analyst"\n'
                     '    return "doc_skipped"\n')
    facts = _facts(tmp_path, {**copies.strong(), "graph.py": graph, "nodes.py": nodes})
    assert facts["graph.join_repeats"].data["joins"] == {"evidence_aggregator": {
        "runs": 2, "late": ["doc_analyst", "doc_skipped"]}}
    # one way only reaches the join late: on that way it runs twice, on the other once, so
    # the repeat is named with its way, at a confidence that caps nothing
    one_way = graph.replace('builder.add_edge("doc_skipped", "evidence_aggregator")',
                            'builder.add_edge("doc_skipped", END)')
    facts = _facts(tmp_path / "one", {**copies.strong(), "graph.py": one_way, "nodes.py": nodes})
    joins = facts["graph.join_repeats"]
    assert joins.found and joins.confidence < 0.85
    assert joins.data["ways"] == {"vision_inspector": "doc_analyst"}
    assert joins.rationale.startswith("when vision_inspector routes to doc_analyst (not on "
                                      "every way it runs): evidence_aggregator runs 2 times")
    # both ways of an undetermined router reach a join in step: it runs once whichever is
    # taken; that it runs after a guess is said
    either = copies.edit(copies.GRAPH, (
        'builder.add_edge("error_handler", END)',
        'builder.add_edge("error_handler", "chief_justice")'), (
        "route_judges, [", "route_env, ["), ("vision_inspector)", "vision_inspector, route_env)"))
    env = NODES + ('\n\ndef route_env(state):\n    import os\n'
                   '    if os.environ.get("STRICT"):\n        return "error_handler"\n'
                   '    return "judge"\n')
    facts = _facts(tmp_path / "either", {**copies.strong(), "graph.py": either, "nodes.py": env})
    joins = facts["graph.join_repeats"]
    assert not joins.found and joins.data["guessed"] == ["chief_justice"]
    assert joins.rationale.startswith("No join is seen to run twice; chief_justice "
                                      "run(s) after a router whose way depends on the run")
    # with every way decided, the join's single run is a fact
    certain = _facts(tmp_path / "certain", copies.strong())["graph.join_repeats"]
    assert certain.data["guessed"] == [] and certain.rationale == "Every join runs once."


def test_a_parallel_node_whose_writes_are_unknown_leaves_parallel_writes_open(
        tmp_path: Path) -> None:
    """What a node writes is not determined when it returns what a callable it reads from the
    state returns (a lambda is read like a def, so its body decides). One such detective
    beside two known ones is named, the fact standing on the others; when every detective
    is one, "no key is written twice" is not established."""
    graph = copies.edit(copies.GRAPH, ('builder.add_node("doc_analyst", doc_analyst)',
                                       'builder.add_node("doc_analyst", lambda s: s["plugin"](s))'))
    writes = _facts(tmp_path, {**copies.strong(), "graph.py": graph})[
        "graph.state.parallel_writes"]
    assert not writes.found and "limitation" not in writes.data
    assert "what doc_analyst returns is not determined" in writes.rationale
    for name in ("repo_investigator", "vision_inspector"):
        graph = graph.replace(f'builder.add_node("{name}", {name})',
                              f'builder.add_node("{name}", lambda s: s["plugin"](s))')
    writes = _facts(tmp_path / "all", {**copies.strong(), "graph.py": graph})[
        "graph.state.parallel_writes"]
    assert not writes.found and writes.data["limitation"] == (
        "what doc_analyst, repo_investigator, vision_inspector return is not determined")
    assert "not established" in writes.rationale


def test_detectives_writing_one_key_without_reducer_stop_the_run(tmp_path: Path) -> None:
    facts = _nodes_edited(tmp_path, ('return {"evidences": [{"goal": "graph", "found": True}]}',
                                     'return {"final_report": "repo"}'),
                          ('return {"evidences": [{"goal": "report", "found": True}]}',
                           'return {"final_report": "doc"}'))
    conflict = facts["graph.state.parallel_writes"]
    assert conflict.found
    assert conflict.data["conflicts"] == [[2, "final_report", ["doc_analyst",
                                                               "repo_investigator"]]]
    assert 'return {"final_report": "repo"}' in (conflict.content or "")


def test_a_node_without_a_path_to_end_is_named(tmp_path: Path) -> None:
    # the error handler loops back to the aggregator's router only: once there, the run
    # can still end; sent back to itself it never can
    graph = copies.GRAPH.replace('builder.add_edge("error_handler", END)\n',
                                 'builder.add_edge("error_handler", "error_handler")\n')
    facts = _facts(tmp_path, {**copies.strong(), "graph.py": graph})
    stuck = facts["graph.unreachable_nodes"]
    assert stuck.found and stuck.data["no_end"] == ["error_handler"]
    assert stuck.data["unreachable"] == [] and "error_handler" in stuck.rationale


def test_a_node_with_no_way_out_ends_the_run_as_end_does(tmp_path: Path) -> None:
    """nuhaminae: no edge to END at all; LangGraph has no dead-end check, and a node with no
    edge, router or Command out of it ends the run (as END does)."""
    graph = copies.GRAPH.replace('builder.add_edge("error_handler", END)\n', "")
    facts = _facts(tmp_path, {**copies.strong(), "graph.py": graph})
    reach = facts["graph.unreachable_nodes"]
    assert not reach.found and reach.data["no_end"] == [], reach.rationale


def test_names_computed_at_run_time_are_not_determined_never_a_failure(tmp_path: Path) -> None:
    # judges registered under names read from a file at run time, and a detective whose
    # evidence keys are computed: nothing about them can be concluded
    graph = copies.GRAPH.replace(
        'builder.add_node("judge", judge)',
        'for name in open("judges.txt").read().split():\n    builder.add_node(name, judge)')
    nodes = copies.NODES.replace('return {"evidences": [{"goal": "graph", "found": True}]}',
                                 'return {state["repo_url"]: [{"goal": "graph"}]}')
    facts = _facts(tmp_path, {**copies.strong(), "graph.py": graph, "nodes.py": nodes})
    assert [f for f in DEFECTS if f in facts and facts[f].found] == []
    assert "not determined" in facts["graph.state.unwritten_reads"].rationale
    assert any("computed at run time" in u for u in facts["graph.execution"].data["undetermined"])


def test_a_router_reads_its_own_node_s_undeclared_key(tmp_path: Path) -> None:
    """The aggregator returns ``fatal`` (undeclared: LangGraph drops it from the state) and
    its own router tests it: the router is handed the node's return as given, so the key
    does reach it and the error route can be taken."""
    facts = _nodes_edited(tmp_path, (
        'return {"opinions": [], "final_report": str(len(state["evidences"]))}',
        'return {"opinions": [], "final_report": "", "fatal": not state["evidences"]}'), (
        '    if not state.get("evidences"):', '    if state.get("fatal"):'))
    assert facts["graph.state.dropped_keys"].found
    assert not facts["graph.state.evidence_lost"].found
    assert not facts["graph.state.unwritten_reads"].found
    assert not facts["graph.dead_routes"].found


def test_a_router_testing_a_key_the_state_does_not_declare_is_named(tmp_path: Path) -> None:
    # the test of ``error`` never holds: no node can write a key the state does not declare
    facts = _nodes_edited(tmp_path, ('    if not state.get("evidences"):',
                                     '    if state.get("error"):\n        return "error_handler"\n'
                                     '    if not state.get("evidences"):'))
    unwritten = facts["graph.state.unwritten_reads"]
    assert unwritten.found
    assert unwritten.data["reads"] == [["the router route_judges on evidence_aggregator",
                                        "error"]]
    assert 'if state.get("error"):' in (unwritten.content or "")
    # the evidence always arrives here, so the only other way to error_handler is that test
    dead = facts["graph.dead_routes"]
    assert dead.data["edges"] == [["evidence_aggregator", "error_handler"]]
    assert dead.data["keys"] == ["error"]


def test_a_state_defined_outside_the_repository_drops_nothing(tmp_path: Path) -> None:
    graph = copies.GRAPH.replace("from state import AgentState",
                                 "from somewhere_else import AgentState")
    files = {**copies.undeclared_evidence(), "graph.py": graph}
    del files["state.py"]
    facts = _facts(tmp_path, files)
    assert [f for f in DEFECTS if facts[f].found] == []
    assert facts["graph.state.unwritten_reads"].rationale.startswith("Not determined")


def test_a_send_target_reads_its_payload_not_the_state(tmp_path: Path) -> None:
    facts = _nodes_edited(tmp_path, ('{"repo_url": who}', '{"persona": who}'),
                          ('[state["repo_url"]]', '[state["persona"]]'))
    assert [f for f in DEFECTS if facts[f].found] == []


def test_a_key_lost_between_parallel_branches_is_not_lost_evidence_at_a_join(
        tmp_path: Path) -> None:
    # one detective returns a path another detective of the same step reads: dropped, but
    # the fan-in still gets every branch's evidence (no cap)
    facts = _nodes_edited(tmp_path, ('return {"evidences": [{"goal": "graph", "found": True}]}',
                                     'return {"evidences": [{"goal": "graph"}], "repo_path": "x"}'),
                          ('def doc_analyst(state):\n',
                           'def doc_analyst(state):\n    where = state.get("repo_path")\n'))
    lost = facts["graph.state.evidence_lost"]
    assert lost.found and lost.data["keys"] == {"repo_path": ["doc_analyst"]}
    assert lost.confidence == 0.7 and lost.data["joins"] == []


def test_a_side_output_beside_declared_evidence_is_lost_without_breaking_the_join(
        tmp_path: Path) -> None:
    # every detective returns its evidence under the declared key and an undeclared `errors`
    # list the aggregator reads: the errors are lost (a defect), the join still gets the
    # evidence, so the loss is not at the join (no cap)
    facts = _nodes_edited(
        tmp_path, ('return {"evidences": [{"goal"', 'return {"errors": [], "evidences": [{"goal"'),
        ('def evidence_aggregator(state):\n',
         'def evidence_aggregator(state):\n    problems = state.get("errors")\n'))
    lost = facts["graph.state.evidence_lost"]
    assert lost.found and lost.data["keys"] == {"errors": ["evidence_aggregator"]}
    assert lost.confidence == 0.7 and lost.data["joins"] == []
    assert facts["graph.state.dropped_keys"].found


MODEL_GRAPH = '''
from typing import Dict, List
from pydantic import BaseModel
from langgraph.graph import StateGraph, START, END


class Evidence(BaseModel):
    goal: str
    found: bool


class AgentState(BaseModel):
    evidences: Dict[str, List[Evidence]] = {}
    verdict: str = ""


def investigator(state: AgentState):
    return {RETURNED}


def judge(state: AgentState):
    return {"verdict": str(len(state.evidences))}


g = StateGraph(AgentState)
g.add_node("investigator", investigator)
g.add_node("judge", judge)
g.add_edge(START, "investigator")
g.add_edge("investigator", "judge")
g.add_edge("judge", END)
graph = g.compile()
'''


def test_a_node_returning_a_model_instance_writes_its_fields(tmp_path: Path) -> None:
    bare = _facts(tmp_path / "bare", {"graph.py": MODEL_GRAPH.replace(
        "{RETURNED}", 'Evidence(goal="repo", found=True)')})
    dropped = bare["graph.state.dropped_keys"]
    assert dropped.found and dropped.data["nodes"] == {"investigator": ["found", "goal"]}
    assert 'graph.py:18: return Evidence(goal="repo", found=True)' in (dropped.content or "")
    # an instance of the state model itself writes declared keys
    whole = _facts(tmp_path / "whole", {"graph.py": MODEL_GRAPH.replace(
        "{RETURNED}", 'AgentState(verdict="x")')})
    assert not whole["graph.state.dropped_keys"].found


BUILT_NODES = '''
import functools

from langchain_core.runnables import RunnableLambda


def traced(name, node, tracer=None):
    def wrapped(state):
        result = node(state)
        return result
    return RunnableLambda(wrapped)


def make_doc_analyst(llm):
    def doc_analyst_node(state):
        return {"evidence": [{"goal": "report"}]}
    return doc_analyst_node


class Vision:
    def __call__(self, state):
        return {"evidence": [{"goal": "diagram"}]}


def investigate(state, depth):
    return {"evidence": [{"goal": "graph"}]}
'''


def test_nodes_built_by_a_call_are_followed_to_the_function_they_run(tmp_path: Path) -> None:
    # a tracing wrapper that runs the function it is given, a factory's closure, an instance
    # of a class with __call__ and functools.partial: each runs a detective returning an
    # undeclared key, which LangGraph drops
    graph = copies.GRAPH.replace("from state import AgentState",
                                 "import functools\nfrom state import AgentState\n"
                                 "from built import Vision, investigate, make_doc_analyst, traced")
    for name, built in (
            ("repo_investigator", 'traced("r", functools.partial(investigate, depth=2))'),
            ("doc_analyst", 'traced("d", make_doc_analyst(None), None)'),
            ("vision_inspector", "Vision()")):
        graph = graph.replace(f'builder.add_node("{name}", {name})',
                              f'builder.add_node("{name}", {built})')
    facts = _facts(tmp_path, {**copies.strong(), "graph.py": graph, "built.py": BUILT_NODES})
    dropped = facts["graph.state.dropped_keys"]
    assert dropped.data["nodes"] == {"doc_analyst": ["evidence"],
                                     "repo_investigator": ["evidence"],
                                     "vision_inspector": ["evidence"]}
    assert "built.py:16: return {\"evidence\": [{\"goal\": \"report\"}]}" in (
        dropped.content or "")


def test_a_wrapper_that_never_runs_its_argument_is_not_taken_for_it(tmp_path: Path) -> None:
    # the call builds a node from its own closure, which ignores the function passed in
    built = BUILT_NODES + '''

def label(fn):
    def labelled(state):
        return {"final_report": "labelled"}
    return labelled
'''
    graph = copies.GRAPH.replace("from state import AgentState",
                                 "from state import AgentState\nfrom built import label")
    graph = graph.replace('builder.add_node("repo_investigator", repo_investigator)',
                          'builder.add_node("repo_investigator", label(repo_investigator))')
    facts = _facts(tmp_path, {**copies.strong(), "graph.py": graph, "built.py": built})
    run = facts["graph.execution"]
    assert run.data["undetermined"] == []
    assert not facts["graph.state.dropped_keys"].found


def test_a_wrapped_node_is_found_through_a_package_that_re_exports_it(tmp_path: Path) -> None:
    # the detective lives in detectives/impl.py and is imported from the package; a wrapped
    # callable that cannot be found is not determined, never taken for the wrapper's closure
    impl = 'def repo_investigator(state):\n    return {"evidence": [{"goal": "graph"}]}\n'
    graph = copies.GRAPH.replace(
        "from state import AgentState",
        "from state import AgentState\nfrom detectives import repo_investigator as found\n"
        "from built import traced\nfrom elsewhere import missing")
    graph = graph.replace('builder.add_node("repo_investigator", repo_investigator)',
                          'builder.add_node("repo_investigator", traced("r", found))')
    graph = graph.replace('builder.add_node("doc_analyst", doc_analyst)',
                          'builder.add_node("doc_analyst", traced("d", missing))')
    facts = _facts(tmp_path, {**copies.strong(), "graph.py": graph, "built.py": BUILT_NODES,
                              "detectives/__init__.py": "from detectives.impl import "
                                                        "repo_investigator\n",
                              "detectives/impl.py": impl})
    assert facts["graph.state.dropped_keys"].data["nodes"] == {
        "repo_investigator": ["evidence"]}
    assert any(u.startswith("doc_analyst") for u in facts["graph.execution"].data["undetermined"])


def test_detectives_returning_the_whole_state_write_back_what_the_input_carried(
        tmp_path: Path) -> None:
    """No input schema: the key the first node reads as ``state["repo_url"]`` must come with
    the input, so two detectives returning ``{**state, ...}`` in one step both write it back
    (no reducer): LangGraph stops the run. Read with ``.get`` the key may never arrive, and
    nothing is concluded."""
    whole = (('def context_builder(state):\n    return {}',
              'def context_builder(state):\n    print(state["repo_url"])\n    return {}'),
             ('return {"evidences": [{"goal": "graph", "found": True}]}',
              'return {**state, "evidences": [{"goal": "graph", "found": True}]}'),
             ('return {"evidences": [{"goal": "report", "found": True}]}',
              'return {**state, "evidences": [{"goal": "report", "found": True}]}'))
    conflict = _nodes_edited(tmp_path, *whole)["graph.state.parallel_writes"]
    assert conflict.found
    assert conflict.data["conflicts"] == [[2, "repo_url", ["doc_analyst", "repo_investigator"]]]
    assert 'return {**state, "evidences": [{"goal": "graph"' in (conflict.content or "")
    optional = (('def context_builder(state):\n    return {}',
                 'def context_builder(state):\n    print(state.get("repo_url"))\n    return {}'),
                *whole[1:])
    assert not _nodes_edited(tmp_path / "get", *optional)["graph.state.parallel_writes"].found


def test_a_key_read_with_a_fallback_is_no_read_that_never_sees_a_value(tmp_path: Path) -> None:
    # ``state.get("k", default)`` and ``state.get("k") or default`` of a key nothing writes
    # are defensive reads: only noted. A plain ``state["k"]`` of such a key is the defect.
    guarded = _nodes_edited(tmp_path, ("def context_builder(state):\n    return {}",
                                       "def context_builder(state):\n"
                                       '    trace = state.get("trace_id", "none")\n'
                                       '    run = state.get("run_id") or "local"\n'
                                       "    return {}"))
    unwritten = guarded["graph.state.unwritten_reads"]
    assert not unwritten.found and unwritten.data["reads"] == []
    assert unwritten.data["fallback"] == [["context_builder", "run_id"],
                                          ["context_builder", "trace_id"]]
    assert "Read with a fallback of its own" in unwritten.rationale
    # ``state.get("k", None)`` is ``state.get("k")``, and a plain read beside a guarded one
    # still never sees a value
    plain = _nodes_edited(tmp_path / "plain", ("def context_builder(state):\n    return {}",
                                               "def context_builder(state):\n"
                                               '    trace = state.get("trace_id", None)\n'
                                               '    run = state.get("run_id") or "local"\n'
                                               '    again = state["run_id"]\n'
                                               "    return {}"))
    unwritten = plain["graph.state.unwritten_reads"]
    assert unwritten.found and unwritten.data["reads"] == [["context_builder", "run_id"],
                                                           ["context_builder", "trace_id"]]
    assert unwritten.data["fallback"] == []


def test_lost_keys_are_listed_in_a_fixed_order(tmp_path: Path) -> None:
    keys = ["zeta", "eta", "theta", "iota", "kappa", "mu"]
    facts = _nodes_edited(tmp_path, (
        "def context_builder(state):\n    return {}",
        "def context_builder(state):\n    return {" + ", ".join(f'"{k}": 1' for k in keys) + "}"),
        ('"final_report": str(len(state["evidences"]))',
         '"final_report": str(len(state["evidences"])) + str(['
         + ", ".join(f'state["{k}"]' for k in keys) + "])"))
    lost = facts["graph.state.evidence_lost"]
    assert list(lost.data["keys"]) == sorted(keys)  # not the order of a set of strings
    said = [lost.rationale.index(f"{k} (returned by") for k in sorted(keys)]
    assert said == sorted(said)


def test_a_join_that_repeats_on_every_way_it_runs_is_a_confirmed_repeat(
        tmp_path: Path) -> None:
    """temesgen5335's shape: a router at the start goes to the audit or straight to the
    end; on the audit way the detectives run one after another and each has its own edge
    into the aggregator, so the aggregator runs twice wherever it runs at all."""
    graph = copies.edit(
        copies.GRAPH,
        ('builder.add_edge("context_builder", "repo_investigator")\n',
         'builder.add_conditional_edges("context_builder", route_env, '
         '["repo_investigator", "chief_justice"])\n'),
        ('builder.add_edge("context_builder", "doc_analyst")\n',
         'builder.add_edge("repo_investigator", "doc_analyst")\n'),
        ('builder.add_edge("context_builder", "vision_inspector")\n',
         'builder.add_edge("repo_investigator", "vision_inspector")\n'),
        ("vision_inspector)", "vision_inspector, route_env)"))
    nodes = NODES + ('\n\ndef route_env(state):\n    import os\n'
                     '    if os.environ.get("CACHED"):\n        return "chief_justice"\n'
                     '    return "repo_investigator"\n')
    joins = _facts(tmp_path, {**copies.strong(), "graph.py": graph,
                              "nodes.py": nodes})["graph.join_repeats"]
    assert joins.found and joins.confidence == 0.85
    assert joins.data["ways"] == {"context_builder": "repo_investigator"}
    assert joins.data["joins"]["evidence_aggregator"] == {
        "runs": 2, "late": ["doc_analyst", "vision_inspector"]}


HANDED_BACK = '''
from typing import TypedDict
from langgraph.graph import END, START, StateGraph


class Input(TypedDict):
    repo_url: str


class State(TypedDict, total=False):
    repo_url: str
    evidences: list
    repo_report: dict
    final: str


def investigator(state):
    state["evidences"] = [{"goal": "repo", "found": bool(state["repo_url"])}]
    return state


def aggregator(state):
    report = state["repo_report"]
    return {"final": str(report)}


builder = StateGraph(State, input=Input)
builder.add_node("investigator", investigator)
builder.add_node("aggregator", aggregator)
builder.add_edge(START, "investigator")
builder.add_edge("investigator", "aggregator")
builder.add_edge("aggregator", END)
'''


def test_a_node_handing_back_its_state_writes_only_what_it_stores(tmp_path: Path) -> None:
    """nuhaminae: nodes that ``return state`` write back only the keys they store into, so
    a declared key the input does not carry and no node stores or returns is never seen.
    A node returning a copy (``{**state}``) may have changed any key in it: not
    determined."""
    unwritten = _facts(tmp_path, {"graph.py": HANDED_BACK})["graph.state.unwritten_reads"]
    assert unwritten.found and unwritten.data["reads"] == [["aggregator", "repo_report"]]
    copied = HANDED_BACK.replace("    return state\n", "    return {**state}\n", 1)
    unwritten = _facts(tmp_path / "copy", {"graph.py": copied})["graph.state.unwritten_reads"]
    assert not unwritten.found and "not determined" in unwritten.rationale


ROUTED_JOIN = '''
import operator
import os
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    items: Annotated[list, operator.add]


def repo(state):
    return {"items": ["repo"]}


def doc(state):
    return {"items": ["doc"]}


def handler(state):
    return {"items": ["recovered"]}


def join(state):
    return {"items": ["joined"]}


def route(state):
    return "error" if os.environ.get("FAIL") else "ok"


builder = StateGraph(State)
for name, fn in (("repo", repo), ("doc", doc), ("handler", handler), ("join", join)):
    builder.add_node(name, fn)
builder.add_edge(START, "repo")
builder.add_edge(START, "doc")
builder.add_conditional_edges("repo", route, {"ok": "join", "error": "handler"})
builder.add_conditional_edges("doc", route, {"ok": "join", "error": "handler"})
builder.add_edge("handler", "join")
builder.add_edge("join", END)
graph = builder.compile()
'''


def test_a_join_reached_by_routes_and_a_later_handler_runs_twice(tmp_path: Path) -> None:
    """ephrata1888: each detective routes to the aggregator or to an error handler that
    feeds the aggregator a step later: when one errs and the other does not, the aggregator
    runs twice."""
    joins = _facts(tmp_path, {"graph.py": ROUTED_JOIN})["graph.join_repeats"]
    assert joins.found and joins.confidence < 0.85, joins.rationale
    assert joins.data["joins"] == {"join": {"runs": 2, "late": ["handler"]}}
    # a route back into the join from after it is a loop, not a second arrival
    loop = ROUTED_JOIN.replace('builder.add_edge("join", END)',
                               'builder.add_conditional_edges("join", route, '
                               '{"ok": END, "error": "handler"})').replace(
        'builder.add_conditional_edges("repo", route, {"ok": "join", "error": "handler"})',
        'builder.add_edge("repo", "join")').replace(
        'builder.add_conditional_edges("doc", route, {"ok": "join", "error": "handler"})',
        'builder.add_edge("doc", "join")')
    assert "handler" not in str(_facts(tmp_path / "loop", {"graph.py": loop})[
        "graph.join_repeats"].data.get("joins"))


DEBATE_LOOP = '''
import operator
import os
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    items: Annotated[list, operator.add]
    debated: bool


def work(state):
    return {"items": ["x"]}


def debate(state):
    return {"items": ["debated"], "debated": True}


def check_evidence(state):
    return "error" if os.environ.get("FAIL") else "ok"


def check_conflict(state):
    if os.environ.get("SPLIT") and not state.get("debated"):
        return "debate"
    return END


builder = StateGraph(State)
for name in ("repo", "doc", "agg", "start", "prosecutor", "defense", "handler", "chief"):
    builder.add_node(name, work)
builder.add_node("debate", debate)
builder.add_edge(START, "repo")
builder.add_edge(START, "doc")
builder.add_edge("repo", "agg")
builder.add_edge("doc", "agg")
builder.add_conditional_edges("agg", check_evidence, {"ok": "start", "error": "handler"})
builder.add_edge("start", "prosecutor")
builder.add_edge("start", "defense")
builder.add_edge("prosecutor", "chief")
builder.add_edge("defense", "chief")
builder.add_edge("handler", "chief")
builder.add_edge("debate", "chief")
builder.add_conditional_edges("chief", check_conflict, {"debate": "debate", END: END})
graph = builder.compile()
'''


def test_a_static_edge_back_into_the_join_from_a_node_only_it_reaches_is_a_loop(
        tmp_path: Path) -> None:
    """chacha1921: the Chief Justice's router sends a debate back into it by a static edge
    (``add_edge("Debate", "ChiefJustice")``); the debate runs only after the Chief Justice,
    so its arrival re-enters the join: a loop, not a late branch of the judges' fan-in."""
    joins = _facts(tmp_path, {"graph.py": DEBATE_LOOP})["graph.join_repeats"]
    assert "debate" not in str(joins.data.get("joins")), joins.rationale
