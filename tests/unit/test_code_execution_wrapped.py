"""The execution model through decorators, decorators applied by hand, bound methods of a
local instance and async nodes. The sync shapes are differential (`test_code_execution`): the
same graph also runs on the installed LangGraph; the async ones are read statically."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.forensics.code.analyze import collect_facts
from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.execution import Model, build_model, simulate
from automaton_auditor.forensics.code.topology import rebuild

from .test_code_ast_graph import write_repo
from .test_code_execution import HEAD, RAISED, Shape, _both, _same

# the wrapper adds a key of its own to what the node returns
STAMPED = '''
import functools

def stamped(fn):
    @functools.wraps(fn)
    def wrapper(state):
        out = fn(state)
        out["verdict"] = "seen"
        return out
    return wrapper

@stamped
def repo(state):
    return {"evidences": ["repo"]}

@stamped
def doc(state):
    return {"evidences": ["doc"]}

def agg(state):
    return {"opinions": ["agg"]}

builder = StateGraph(State)
builder.add_node("repo", repo)
builder.add_node("agg", agg)
builder.add_edge(START, "repo")
builder.add_edge("repo", "agg")
'''
# a decorator factory applied by hand: ``timed = limited(5)(node)``
BY_HAND = '''
import functools

def limited(seconds):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper
    return decorator

def judge(state):
    return {"verdict": "ok", "opinions": ["j"]}

timed_judge = limited(5)(judge)

builder = StateGraph(State)
builder.add_node("judge", timed_judge)
builder.add_edge(START, "judge")
builder.add_edge("judge", END)
'''
# a bound method of an instance made in the same scope
BOUND = '''
class Detective:
    def __init__(self, label):
        self.label = label

    def run(self, state):
        return {"evidences": [self.label], "verdict": "found"}


def build():
    graph = StateGraph(State)
    agent = Detective("repo")
    graph.add_node("detective", agent.run)
    graph.add_edge(START, "detective")
    graph.add_edge("detective", END)
    return graph

builder = build()
'''

SHAPES = [
    pytest.param(Shape(STAMPED, lambda run, ran: run.arrived.get("verdict") == "seen"),
                 id="decorator-wrapper-adds-a-key"),
    pytest.param(Shape(STAMPED.replace('builder.add_edge("repo", "agg")', '''
builder.add_node("doc", doc)
builder.add_edge(START, "doc")
builder.add_edge(["repo", "doc"], "agg")'''),
                       lambda run, ran: [(k, sorted(w)) for _s, k, w in run.parallel]
                       == [("verdict", ["doc", "repo"])], raises=True),
                 id="two-decorated-nodes-write-the-wrapper-key-at-once"),
    pytest.param(Shape(BY_HAND, lambda run, ran: run.arrived.get("verdict") == "ok"
                       and not run.undetermined), id="decorator-factory-applied-by-hand"),
    pytest.param(Shape(BOUND, lambda run, ran: run.arrived.get("verdict") == "found"
                       and not run.undetermined), id="bound-method-of-a-local-instance"),
]


@pytest.mark.parametrize("shape", SHAPES)
def test_the_model_follows_wrapped_nodes_as_langgraph_runs_them(tmp_path: Path,
                                                                shape: Shape) -> None:
    run, ran, final = _both(tmp_path, shape.body, shape.given)
    assert (final is RAISED) == shape.raises
    if not shape.raises:
        _same(run, ran, final, keys=shape.keys)
    assert shape.check(run, ran)


def _model(tmp_path: Path, body: str) -> Model:
    files = write_repo(tmp_path, {"graph.py": HEAD + body})
    facts, _ = collect_facts(tmp_path, files)
    main, _ = rebuild(facts)
    assert main is not None
    return build_model(facts, CallGraph(facts), main)


ASYNC_TIMEOUT = '''
import asyncio
import inspect
from functools import wraps

def timeout_wrapper(seconds):
    def decorator(func):
        @wraps(func)
        async def wrapper(*args, **kwargs):
            if inspect.iscoroutinefunction(func):
                coro = func(*args, **kwargs)
                return await asyncio.wait_for(coro, timeout=seconds)
            result = await asyncio.to_thread(func, *args, **kwargs)
            if inspect.isawaitable(result):
                return await asyncio.wait_for(result, timeout=seconds)
            return result
        return wrapper
    return decorator

async def helper(state):
    return {"opinions": ["o"]}

@timeout_wrapper(60)
async def judge(state):
    return await helper(state)

def detective(state):
    return {"verdict": "v"}

timed_detective = timeout_wrapper(60)(detective)

builder = StateGraph(State)
builder.add_node("judge", judge)
builder.add_node("detective", timed_detective)
builder.add_edge(START, "judge")
builder.add_edge(START, "detective")
'''


def test_async_wrappers_and_awaited_helpers_are_followed(tmp_path: Path) -> None:
    model = _model(tmp_path, ASYNC_TIMEOUT)
    judge, detective = model.nodes["judge"], model.nodes["detective"]
    assert (judge.open, set(judge.writes)) == (False, {"opinions"})
    assert (detective.open, detective.writes) == (False, {"verdict": "v"})
    assert detective.key is not None and detective.key[1] == "detective"


def test_a_wrapper_of_another_shape_leaves_the_node_open(tmp_path: Path) -> None:
    body = '''
def logged(fn):
    def wrapper(state):
        return LOG.record(fn, state)
    return wrapper

@logged
def judge(state):
    return {"verdict": "v"}

builder = StateGraph(State)
builder.add_node("judge", judge)
builder.add_edge(START, "judge")
'''
    model = _model(tmp_path, body)
    assert model.nodes["judge"].open
    assert simulate(model).undetermined == ["judge: what it returns is not determined"]


def test_a_method_of_a_name_bound_twice_is_not_guessed(tmp_path: Path) -> None:
    body = BOUND.replace('    agent = Detective("repo")\n', '''    agent = Detective("repo")
    if len(State.__annotations__) > 9:
        agent = Other()
''') + '''
class Other:
    def run(self, state):
        return {"opinions": ["x"]}
'''
    model = _model(tmp_path, body)
    assert model.nodes["detective"].key is None and model.nodes["detective"].open


def test_an_async_method_of_an_attribute_set_in_init_is_followed(tmp_path: Path) -> None:
    body = '''
class Detective:
    async def run(self, state):
        return {"verdict": "x"}

class Workflow:
    def __init__(self):
        self.detective = Detective()
        self.builder = StateGraph(State)
        self.builder.add_node("det", self.detective.run)
        self.builder.add_edge(START, "det")
        self.builder.add_edge("det", END)
'''
    node = _model(tmp_path, body).nodes["det"]
    assert node.key == ("graph.py", "Detective.run")
    assert (node.open, node.writes) == (False, {"verdict": "x"})


def test_a_key_the_wrapper_writes_is_cited_in_the_wrapper_file(tmp_path: Path) -> None:
    deco = '''
import functools

def guarded(fn):
    @functools.wraps(fn)
    def wrapper(state):
        try:
            return fn(state)
        except ValueError:
            return {"verdict": "failed"}
    return wrapper
'''
    graph = HEAD + '''
from deco import guarded

@guarded
def judge(state):
    return {"opinions": ["o"]}

builder = StateGraph(State)
builder.add_node("judge", judge)
builder.add_edge(START, "judge")
'''
    files = write_repo(tmp_path, {"deco.py": deco, "graph.py": graph})
    facts, _ = collect_facts(tmp_path, files)
    main, _ = rebuild(facts)
    assert main is not None
    node = build_model(facts, CallGraph(facts), main).nodes["judge"]
    assert set(node.writes) == {"opinions", "verdict"}
    assert (node.write_paths["verdict"], node.write_lines["verdict"]) == ("deco.py", 10)
    assert node.write_paths["opinions"] == "graph.py"


def test_a_wrapper_that_never_hands_back_the_answer_is_not_followed(tmp_path: Path) -> None:
    body = '''
import threading

def timeout_wrapper(seconds):
    def decorator(func):
        def wrapper(state):
            results = []
            thread = threading.Thread(target=lambda: results.append(func(state)))
            thread.start()
            thread.join(timeout=seconds)
            if thread.is_alive():
                return {**state, "verdict": "timeout"}
            return results[0]
        return wrapper
    return decorator

def repo(state):
    return {"evidences": ["repo"]}

def doc(state):
    return {"evidences": ["doc"]}

builder = StateGraph(State)
builder.add_node("doc", doc)
timed = timeout_wrapper(5)(repo)
builder.add_node("timed", timed)
builder.add_edge(START, "timed")
builder.add_edge(START, "doc")
'''
    model = _model(tmp_path, body)
    node = model.nodes["timed"]
    # its answer is what the thread stored, or the whole state on a timeout: not followed
    assert node.open and not node.whole and not node.writes
    assert simulate(model).parallel == []


# a node factory given the judge function (redecon: ``make_judge_node(judges.prosecutor,
# "Prosecutor", pid)``); its closure calls the judge but returns a value of its own
FACTORY = '''
def prosecutor(evidence, dim):
    return {"score": 1, "argument": "a", "verdict": "v"}

def make_judge_node(judge_func, name):
    def judge_node(state):
        try:
            raw = judge_func(state, name)
            opinions = [dict(raw, judge=name)]
            return {"opinions": opinions}
        except Exception as e:
            return {"errors": [f"{name} failed: {e}"]}
    return judge_node

def make_wrapper(fn):
    async def inner(state):
        return await fn(state)
    return inner

async def defense(state):
    return {"opinions": ["d"]}

builder = StateGraph(State)
builder.add_node("prosecutor", make_judge_node(prosecutor, "Prosecutor"))
builder.add_node("defense", make_wrapper(defense))
builder.add_edge(START, "prosecutor")
builder.add_edge(START, "defense")
'''


def test_a_factory_whose_closure_builds_its_own_answer_is_the_node(tmp_path: Path) -> None:
    nodes = _model(tmp_path, FACTORY).nodes
    # the closure only calls the judge: what LangGraph gets is the closure's own dict
    assert nodes["prosecutor"].key == ("graph.py", "make_judge_node.judge_node")
    assert set(nodes["prosecutor"].writes) == {"opinions", "errors"}
    # ``return await fn(state)`` hands the judge's answer back: the node is the judge
    assert nodes["defense"].key == ("graph.py", "defense")


def test_a_wrapper_handing_back_a_cast_answer_runs_the_given_node(tmp_path: Path) -> None:
    # yohans-kasaw: ``result = cast(dict[str, object], node(state)); return result`` inside
    # a closure the factory hands LangGraph as ``RunnableLambda(wrapped)``
    body = '''
from typing import cast
from langchain_core.runnables import RunnableLambda

def as_node(name, node):
    def wrapped(state):
        result = cast(dict[str, object], node(state))
        return result
    return RunnableLambda(wrapped)

def repo(state):
    return {"evidences": ["repo"]}

builder = StateGraph(State)
builder.add_node("repo", as_node("repo", repo))
builder.add_edge(START, "repo")
'''
    node = _model(tmp_path, body).nodes["repo"]
    assert node.key == ("graph.py", "repo") and set(node.writes) == {"evidences"}


def test_a_factory_handing_back_another_factory_s_node_is_followed(tmp_path: Path) -> None:
    # yohans-kasaw: ``make_prosecutor_node(llm)`` returns ``make_judge_node_with_retry(llm,
    # "Prosecutor")``, whose closure is what LangGraph runs
    body = '''
def make_judge(llm, judge):
    def judge_node(state):
        return {"opinions": [judge]}
    return judge_node

def make_prosecutor(llm):
    return make_judge(llm, "Prosecutor")

builder = StateGraph(State)
builder.add_node("prosecutor", make_prosecutor(None))
builder.add_edge(START, "prosecutor")
'''
    node = _model(tmp_path, body).nodes["prosecutor"]
    assert node.key == ("graph.py", "make_judge.judge_node") and set(node.writes) == {
        "opinions"}
