"""Differential tests: the static execution model against the real LangGraph engine.

Every graph here is written in this file (never audited code). Each is read statically
(`execution.simulate`) and also compiled and run with the installed LangGraph; which nodes
ran, how many times, and which keys arrived must be the same.
"""

from __future__ import annotations

import sys
import types
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langgraph.errors import InvalidUpdateError

from automaton_auditor.forensics.code.analyze import collect_facts
from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.execution import Run, build_model, simulate
from automaton_auditor.forensics.code.topology import rebuild

from .test_code_ast_graph import write_repo

HEAD = '''
import operator
from typing import Annotated, TypedDict

from pydantic import BaseModel
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send


class State(TypedDict, total=False):
    repo_url: str
    evidences: Annotated[list, operator.add]
    opinions: Annotated[list, operator.add]
    verdict: str
'''


def _both(tmp_path: Path, body: str, given: dict[str, Any]) -> tuple[Run, Counter[str],
                                                                      dict[str, Any] | None]:
    source = HEAD + body
    files = write_repo(tmp_path, {"graph.py": source})
    facts, _ = collect_facts(tmp_path, files)
    main, _ = rebuild(facts)
    assert main is not None
    run = simulate(build_model(facts, CallGraph(facts), main), set(given))
    # our own test graph, not audited code; a real module so type hints resolve
    module = types.ModuleType(f"differential_{tmp_path.name}")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "graph.py", "exec"), module.__dict__)
    finally:
        sys.modules.pop(module.__name__, None)
    app = module.__dict__["builder"].compile()
    ran: Counter[str] = Counter()
    try:
        for chunk in app.stream(dict(given), stream_mode="updates"):
            ran.update(list(chunk))
        final = app.invoke(dict(given))
    except InvalidUpdateError:
        final = None
    return run, ran, final


def _arrived(final: dict[str, Any] | Any) -> set[str]:
    data = final.model_dump() if hasattr(final, "model_dump") else dict(final)
    return {k for k, v in data.items() if v not in (None, [], "", {})}


def _same(run: Run, ran: Counter[str], final: Any, keys: bool = True) -> None:
    assert dict(run.runs) == dict(ran)
    if final is not None and keys:
        assert set(run.arrived) == _arrived(final)


def test_linear_chain(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
def a(state):
    return {"evidences": ["a"]}

def b(state):
    return {"verdict": "ok"}

builder = StateGraph(State)
builder.add_node("a", a)
builder.add_node("b", b)
builder.add_edge(START, "a")
builder.add_edge("a", "b")
builder.add_edge("b", END)
''', {"repo_url": "u"})
    _same(run, ran, final)
    assert run.steps == [["a"], ["b"]]


def test_fan_out_joined_by_separate_edges_of_equal_length(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
def ctx(state):
    return {}

def repo(state):
    return {"evidences": ["repo"]}

def doc(state):
    return {"evidences": ["doc"]}

def agg(state):
    return {"verdict": str(len(state["evidences"]))}

builder = StateGraph(State)
for name, fn in [("ctx", ctx), ("repo", repo), ("doc", doc), ("agg", agg)]:
    builder.add_node(name, fn)
builder.add_edge(START, "ctx")
builder.add_edge("ctx", "repo")
builder.add_edge("ctx", "doc")
builder.add_edge("repo", "agg")
builder.add_edge("doc", "agg")
builder.add_edge("agg", END)
''', {})
    _same(run, ran, final)
    assert run.runs["agg"] == 1


UNEQUAL = '''
def ctx(state):
    return {}

def repo(state):
    return {"evidences": ["repo"]}

def doc(state):
    return {"evidences": ["doc"]}

def vision(state):
    return {"evidences": ["vision"]}

def agg(state):
    return {"opinions": ["agg"]}

def judge(state):
    return {"verdict": "v"}

builder = StateGraph(State)
for name, fn in [("ctx", ctx), ("repo", repo), ("doc", doc), ("vision", vision),
                 ("agg", agg), ("judge", judge)]:
    builder.add_node(name, fn)
builder.add_edge(START, "ctx")
builder.add_edge("ctx", "repo")
builder.add_edge("ctx", "doc")
builder.add_edge("doc", "vision")
'''


def test_unequal_branches_joined_by_separate_edges_run_the_join_twice(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, UNEQUAL + '''
builder.add_edge("repo", "agg")
builder.add_edge("vision", "agg")
builder.add_edge("agg", "judge")
builder.add_edge("judge", END)
''', {})
    _same(run, ran, final)
    assert run.runs["agg"] == 2 and run.runs["judge"] == 2
    assert run.ran_at["repo"] == [2] and run.ran_at["vision"] == [3]


def test_unequal_branches_joined_by_a_list_edge_run_the_join_once(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, UNEQUAL + '''
builder.add_edge(["repo", "vision"], "agg")
builder.add_edge("agg", "judge")
builder.add_edge("judge", END)
''', {})
    _same(run, ran, final)
    assert run.runs["agg"] == 1 and run.runs["judge"] == 1


def test_undeclared_keys_are_dropped(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
def detective(state):
    out = {"evidence_list": ["x"]}
    out["verdict"] = "seen"
    return out

def judge(state):
    return {"opinions": [len(state.get("evidence_list") or [])]}

builder = StateGraph(State)
builder.add_node("detective", detective)
builder.add_node("judge", judge)
builder.add_edge(START, "detective")
builder.add_edge("detective", "judge")
builder.add_edge("judge", END)
''', {})
    _same(run, ran, final)
    assert run.dropped == {"detective": {"evidence_list"}}


ROUTED = '''
def check(state):
    return {"evidence_ok": True, "evidences": ["e"]}

def relay(state):
    return {}

def route(state):
    if state.get("evidence_ok"):
        return "judges"
    return "error"

def judges(state):
    return {"verdict": "judged"}

def error(state):
    return {"verdict": "error"}

builder = StateGraph(State)
for name, fn in [("check", check), ("relay", relay), ("judges", judges), ("error", error)]:
    builder.add_node(name, fn)
builder.add_edge(START, "check")
builder.add_edge("judges", END)
builder.add_edge("error", END)
'''


def test_a_router_on_the_node_that_returns_an_undeclared_key_sees_it(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, ROUTED + '''
builder.add_edge("relay", END)
builder.add_conditional_edges("check", route, {"judges": "judges", "error": "error"})
''', {})
    _same(run, ran, final)
    assert run.routes["check"] == {"judges"}


def test_a_router_on_a_later_node_never_sees_the_dropped_key(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, ROUTED + '''
builder.add_edge("check", "relay")
builder.add_conditional_edges("relay", route, ["judges", "error"])
''', {})
    _same(run, ran, final)
    assert run.routes["relay"] == {"error"} and "judges" not in run.runs


def test_send_fan_out_over_a_literal_list(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
def agg(state):
    return {"evidences": ["e"]}

def dispatch(state):
    return [Send("judge", {"verdict": who}) for who in ["Prosecutor", "Defense", "TechLead"]]

def judge(state):
    return {"opinions": [state["verdict"]]}

def chief(state):
    return {"verdict": "final"}

builder = StateGraph(State)
builder.add_node("agg", agg)
builder.add_node("judge", judge)
builder.add_node("chief", chief)
builder.add_edge(START, "agg")
builder.add_conditional_edges("agg", dispatch, ["judge"])
builder.add_edge("judge", "chief")
builder.add_edge("chief", END)
''', {})
    _same(run, ran, final)
    assert run.runs["judge"] == 3 and run.runs["chief"] == 1


def test_parallel_writes_to_a_key_without_reducer_fail(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
def start(state):
    return {}

def left(state):
    return {"verdict": "left"}

def right(state):
    return {"verdict": "right"}

builder = StateGraph(State)
builder.add_node("start", start)
builder.add_node("left", left)
builder.add_node("right", right)
builder.add_edge(START, "start")
builder.add_edge("start", "left")
builder.add_edge("start", "right")
builder.add_edge("left", END)
builder.add_edge("right", END)
''', {})
    assert final is None  # LangGraph raised InvalidUpdateError
    assert run.parallel == [(2, "verdict", ["left", "right"])]
    assert ran["start"] == run.runs["start"] == 1 and "after" not in ran


def test_reducers_on_a_pydantic_state(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
class PState(BaseModel):
    evidences: Annotated[list, operator.add] = []
    verdict: str = ""

def fork(state: PState):
    return {"verdict": "forked"}

def one(state: PState):
    return {"evidences": ["one"]}

def two(state: PState):
    return {"evidences": ["two"]}

def join(state: PState):
    return {"verdict": str(len(state.evidences))}

builder = StateGraph(PState)
for name, fn in [("fork", fork), ("one", one), ("two", two), ("join", join)]:
    builder.add_node(name, fn)
builder.add_edge(START, "fork")
builder.add_edge("fork", "one")
builder.add_edge("fork", "two")
builder.add_edge(["one", "two"], "join")
builder.add_edge("join", END)
''', {})
    _same(run, ran, final)
    assert run.parallel == [] and run.runs["join"] == 1


def test_a_subgraph_node_runs_once_and_its_writes_are_not_determined(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
def inner(state):
    return {"evidences": ["inner"]}

def after(state):
    return {"verdict": "done"}

sub = StateGraph(State)
sub.add_node("inner", inner)
sub.add_edge(START, "inner")
sub.add_edge("inner", END)
detectives = sub.compile()

builder = StateGraph(State)
builder.add_node("detectives", detectives)
builder.add_node("after", after)
builder.add_node("helper_a", inner)
builder.add_node("helper_b", after)
builder.add_node("helper_c", after)
builder.add_edge(START, "detectives")
builder.add_edge("detectives", "after")
builder.add_edge("after", END)
''', {})
    _same(run, ran, final, keys=False)
    assert "detectives: what it returns is not determined" in run.undetermined


def test_an_orphan_node_never_runs_and_command_goto_routes(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
def first(state):
    return Command(update={"evidences": ["first"]}, goto="second")

def second(state):
    return {"verdict": "second"}

def orphan(state):
    return {"verdict": "orphan"}

builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("second", second)
builder.add_node("orphan", orphan)
builder.add_edge(START, "first")
builder.add_edge("second", END)
builder.add_edge("orphan", END)
''', {})
    _same(run, ran, final)
    assert "orphan" not in run.runs


def test_a_helper_builds_the_update_and_a_path_map_renames_the_route(tmp_path: Path) -> None:
    run, ran, final = _both(tmp_path, '''
def _collect(found):
    return {"evidences": [found], "verdict": "pending"}

def detective(state):
    return _collect(state.get("repo_url"))

def decide(state):
    if state.get("repo_url") is None:
        return "missing"
    return "present"

def judge(state):
    return {"opinions": ["j"]}

def abort(state):
    return {"opinions": ["abort"]}

builder = StateGraph(State)
builder.add_node("detective", detective)
builder.add_node("judge", judge)
builder.add_node("abort", abort)
builder.add_edge(START, "detective")
builder.add_conditional_edges("detective", decide, {"present": "judge", "missing": "abort"})
builder.add_edge("judge", END)
builder.add_edge("abort", END)
''', {})
    _same(run, ran, final)
    assert run.routes["detective"] == {"abort"}


@pytest.mark.parametrize("given", [{}, {"repo_url": "https://x"}])
def test_the_input_decides_the_route(tmp_path: Path, given: dict[str, Any]) -> None:
    run, ran, final = _both(tmp_path, '''
def gate(state):
    return {}

def route(state):
    return "work" if state.get("repo_url") else END

def work(state):
    return {"evidences": ["w"]}

builder = StateGraph(State)
builder.add_node("gate", gate)
builder.add_node("work", work)
builder.add_edge(START, "gate")
builder.add_conditional_edges("gate", route, ["work", END])
builder.add_edge("work", END)
''', given)
    _same(run, ran, final)
