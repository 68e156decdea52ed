"""Differential tests: the static execution model against the real LangGraph engine.

Every graph here is written in this file (never audited code). Each shape is read
statically (`execution.simulate`) and also compiled and run with the installed LangGraph;
which nodes ran, how many times, and which keys arrived must be the same (or, where LangGraph
raises InvalidUpdateError, the model must predict the conflicting writes). One parametrized
test, one id per shape: ``pytest -k predicts -v`` lists them.
"""

from __future__ import annotations

import sys
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
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



@dataclass
class Shape:
    """A graph body (appended to HEAD), its input, and what must hold beyond agreement."""

    body: str
    check: Callable[[Run, Counter[str]], bool]
    given: dict[str, Any] = field(default_factory=dict)
    keys: bool = True  # compare the keys that arrived (not for a subgraph's own writes)
    raises: bool = False  # LangGraph raises InvalidUpdateError on this shape


RAISED = object()  # LangGraph raised InvalidUpdateError


def _both(tmp_path: Path, body: str, given: dict[str, Any]) -> tuple[Run, Counter[str], Any]:
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
        final = RAISED
    return run, ran, final


def _arrived(final: Any) -> set[str]:
    data = final.model_dump() if hasattr(final, "model_dump") else dict(final or {})
    return {k for k, v in data.items() if v not in (None, [], "", {})}


def _same(run: Run, ran: Counter[str], final: Any, keys: bool = True) -> None:
    assert dict(run.runs) == dict(ran)
    if keys:
        assert set(run.arrived) == _arrived(final)


DETECTIVES = '''
def repo(state):
    return {"evidences": ["repo"]}

def doc(state):
    return {"evidences": ["doc"]}
'''

UNEQUAL = DETECTIVES + '''
def ctx(state):
    return {}

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



NO_END = '''
def first(state):
    return {"evidences": ["first"]}

def stuck(state):
    return {"verdict": "stuck"}

def tail(state):
    return {"opinions": ["tail"]}

builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("stuck", stuck)
builder.add_node("tail", tail)
builder.add_edge(START, "first")
builder.add_edge("first", "stuck")
builder.add_edge("first", "tail")
builder.add_edge("tail", END)
'''

LIST_ROUTER = DETECTIVES + '''
def gate(state):
    return {"repo_url": "u"}

def fan(state):
    if state.get("repo_url"):
        return ["repo", "doc"]
    return ["doc"]

def agg(state):
    return {"verdict": "v"}

builder = StateGraph(State)
for name, fn in [("gate", gate), ("repo", repo), ("doc", doc), ("agg", agg)]:
    builder.add_node(name, fn)
builder.add_edge(START, "gate")
builder.add_conditional_edges("gate", fan, ["repo", "doc"])
builder.add_edge(["repo", "doc"], "agg")
builder.add_edge("agg", END)
'''

TWO_ROUTERS = DETECTIVES + '''
def vision(state):
    return {"evidences": ["vision"]}

def skip(state):
    return {"opinions": ["skipped"]}

def pick_doc(state):
    return "doc" if state.get("repo_url") else "skip"

def pick_vision(state):
    if state.get("verdict"):
        return "vision"
    return "skip"

def agg(state):
    return {"verdict": "v"}

builder = StateGraph(State)
for name, fn in [("repo", repo), ("doc", doc), ("vision", vision), ("skip", skip),
                 ("agg", agg)]:
    builder.add_node(name, fn)
builder.add_edge(START, "repo")
builder.add_conditional_edges(START, pick_doc, {"doc": "doc", "skip": "skip"})
builder.add_conditional_edges(START, pick_vision, ["vision", "skip"])
for name in ["repo", "doc", "vision", "skip"]:
    builder.add_edge(name, "agg")
builder.add_edge("agg", END)
'''

SHAPES = [
    pytest.param(Shape('''
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
''', lambda run, ran: run.steps == [["a"], ["b"]],
                       {"repo_url": "u"}), id="linear-chain"),
    pytest.param(Shape(DETECTIVES + '''
def ctx(state):
    return {}

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
''', lambda run, ran: run.runs["agg"] == 1),
                 id="equal-branches-separate-edges-join-once"),
    pytest.param(Shape(UNEQUAL + '''
builder.add_edge("repo", "agg")
builder.add_edge("vision", "agg")
builder.add_edge("agg", "judge")
builder.add_edge("judge", END)
''', lambda run, ran: run.runs["agg"] == run.runs["judge"] == 2
                       and run.ran_at["repo"] == [2] and run.ran_at["vision"] == [3]),
                 id="unequal-branches-separate-edges-join-twice"),
    pytest.param(Shape(UNEQUAL + '''
builder.add_edge(["repo", "vision"], "agg")
builder.add_edge("agg", "judge")
builder.add_edge("judge", END)
''', lambda run, ran: run.runs["agg"] == run.runs["judge"] == 1),
                 id="unequal-branches-list-join-once"),
    pytest.param(Shape('''
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
''', lambda run, ran: run.dropped == {"detective": {"evidence_list"}}),
                 id="undeclared-key-dropped"),
    pytest.param(Shape(ROUTED + '''
builder.add_edge("relay", END)
builder.add_conditional_edges("check", route, {"judges": "judges", "error": "error"})
''', lambda run, ran: run.routes["check"] == {"judges"}),
                 id="router-on-the-same-node-sees-the-undeclared-key"),
    pytest.param(Shape(ROUTED + '''
builder.add_edge("check", "relay")
builder.add_conditional_edges("relay", route, ["judges", "error"])
''', lambda run, ran: run.routes["relay"] == {"error"} and "judges" not in run.runs),
                 id="router-on-a-later-node-never-sees-it"),
    pytest.param(Shape('''
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
''', lambda run, ran: run.runs["judge"] == 3 and run.runs["chief"] == 1),
                 id="send-fan-out"),
    pytest.param(Shape('''
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
''', lambda run, ran: run.parallel == [(2, "verdict", ["left", "right"])]
                       and ran["start"] == run.runs["start"] == 1, raises=True),
                 id="parallel-writes-without-reducer"),
    # a lambda node is a def returning its expression: inline, or bound to a name once
    pytest.param(Shape('''
def start(state):
    return {}

right = lambda state: {"verdict": "right"}

builder = StateGraph(State)
builder.add_node("start", start)
builder.add_node("left", lambda s: {"verdict": "left"})
builder.add_node("right", right)
builder.add_node("gate", lambda s: {})
builder.add_edge(START, "start")
for name in ["left", "right", "gate"]:
    builder.add_edge("start", name)
    builder.add_edge(name, END)
''', lambda run, ran: run.parallel == [(2, "verdict", ["left", "right"])]
                       and run.undetermined == [], raises=True),
                 id="lambda-nodes-write-like-defs"),
    pytest.param(Shape('''
def judge(state, who):
    return {"opinions": [who], "verdict": state.get("repo_url", "")}

builder = StateGraph(State)
builder.add_node("gate", lambda s: {})
builder.add_node("judge", lambda s: judge(s, "P"))
builder.add_edge(START, "gate")
builder.add_edge("gate", "judge")
builder.add_edge("judge", END)
''', lambda run, ran: run.undetermined == [] and set(run.arrived) == {
        "repo_url", "opinions", "verdict"}, given={"repo_url": "u"}),
                 id="lambda-node-calling-a-helper"),
    pytest.param(Shape('''
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
''', lambda run, ran: run.parallel == [] and run.runs["join"] == 1),
                 id="reducers-on-a-pydantic-state"),
    pytest.param(Shape('''
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
''', lambda run, ran: "detectives: what it returns is not determined" in run.undetermined,
                       keys=False), id="subgraph-node"),
    pytest.param(Shape('''
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
''', lambda run, ran: "orphan" not in run.runs and run.runs["second"] == 1),
                 id="command-update-goto-and-unreachable-node"),
    pytest.param(Shape(NO_END, lambda run, ran: run.runs["stuck"] == 1 and run.steps[-1] == [
        "stuck", "tail"]), id="node-that-cannot-reach-end"),
    pytest.param(Shape('''
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
''', lambda run, ran: run.routes["detective"] == {"abort"}),
                 id="helper-builds-the-update-path-map-route"),
    pytest.param(Shape(LIST_ROUTER, lambda run, ran: run.routes["gate"] == {"repo", "doc"}
                       and run.runs["agg"] == 1), id="router-returns-a-list-of-nodes"),
    pytest.param(Shape(TWO_ROUTERS, lambda run, ran: run.steps[0] == ["doc", "repo", "skip"]
                       and run.routes["__start__"] == {"doc", "skip"}, {"repo_url": "u"}),
                 id="two-routers-on-one-node-both-run"),
]
_INPUT = '''
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
'''
SHAPES += [
    pytest.param(Shape(_INPUT, lambda run, ran: "work" not in run.runs),
                 id="input-without-key-ends"),
    pytest.param(Shape(_INPUT, lambda run, ran: run.runs["work"] == 1, {"repo_url": "https://x"}),
                 id="input-with-key-routes-on"),
]


@pytest.mark.parametrize("shape", SHAPES)
def test_the_static_model_predicts_what_langgraph_does(tmp_path: Path, shape: Shape) -> None:
    run, ran, final = _both(tmp_path, shape.body, shape.given)
    assert (final is RAISED) == shape.raises  # LangGraph raised exactly where expected
    if not shape.raises:
        _same(run, ran, final, keys=shape.keys)
    assert shape.check(run, ran)


def test_there_are_at_least_twelve_shapes() -> None:
    assert len({p.id for p in SHAPES}) == len(SHAPES) >= 12
# LangGraph reads a router's state through the class its state parameter is annotated with:
# the undeclared keys its own node returned never reach it
_TYPED = ROUTED.replace("def route(state):", "def route(state: State):")
_LIST_ADDED = LIST_ROUTER.replace('''    if state.get("repo_url"):
        return ["repo", "doc"]
    return ["doc"]''', '''    out = ["doc"]
    if state.get("pdf_files"):
        out.append("repo")
    return out''')
SHAPES += [
    pytest.param(Shape(_TYPED + '''
builder.add_conditional_edges("check", route, {"judges": "judges", "error": "error"})
''', lambda run, ran: run.routes["check"] == {"error"}),
                 id="annotated-router-never-sees-its-node-s-undeclared-key"),
    pytest.param(Shape(_TYPED.replace('''    if state.get("evidence_ok"):
        return "judges"
    return "error"''', '''    return not state.get("evidence_ok", False)''') + '''
builder.add_conditional_edges("check", route, {True: "error", False: "judges"})
''', lambda run, ran: run.routes["check"] == {"error"}), id="returned-test-mapped-by-bool"),
    pytest.param(Shape(_TYPED.replace('    if state.get("evidence_ok"):',
                                      '    status = state.get("evidence_ok", "")\n'
                                      '    if status == "yes":') + '''
builder.add_conditional_edges("check", route, {"judges": "judges", "error": "error"})
''', lambda run, ran: run.routes["check"] == {"error"}), id="local-compared-with-a-literal"),
    pytest.param(Shape(_LIST_ADDED, lambda run, ran: run.routes["gate"] == {"doc"}
                       and "agg" not in run.runs), id="list-grown-under-an-absent-key"),
]
