"""Routes that can never be taken because of the values the nodes before the router give the
key its test reads: a node handing back its state writes nothing new (`dead_routes`)."""

from __future__ import annotations

from pathlib import Path

from .test_code_runtime import _facts

PASSED_ON = '''
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class Input(TypedDict):
    repo_url: str


class State(TypedDict, total=False):
    repo_url: str
    errors: list
    report: str


def investigator(state):
    return {"report": state["repo_url"]}


def aggregator(state):
    """Synchronization node."""
    return state


def route(state):
    if state.get("errors"):
        return "handler"
    return "done"


def handler(state):
    return {"report": "failed"}


def done(state):
    return {"report": "ok"}


builder = StateGraph(State, input=Input)
builder.add_node("investigator", investigator)
builder.add_node("aggregator", aggregator)
builder.add_node("handler", handler)
builder.add_node("done", done)
builder.add_edge(START, "investigator")
builder.add_edge("investigator", "aggregator")
builder.add_conditional_edges("aggregator", route, {"handler": "handler", "done": "done"})
builder.add_edge("handler", END)
builder.add_edge("done", END)
'''


def test_a_node_handing_back_its_state_gives_no_key_a_value(tmp_path: Path) -> None:
    """ruthasoll: a pass-through aggregator (``return state``) is no writer of ``errors``:
    the route that needs it set is never taken."""
    dead = _facts(tmp_path, {"graph.py": PASSED_ON})["graph.dead_routes"]
    assert dead.found and dead.data["edges"] == [["aggregator", "handler"]]
    assert "no node writes errors" in dead.rationale


def test_a_node_storing_into_the_state_it_hands_back_writes_that_key(tmp_path: Path) -> None:
    stored = PASSED_ON.replace('    """Synchronization node."""\n',
                               '    state["errors"] = ["late"]\n')
    assert not _facts(tmp_path, {"graph.py": stored})["graph.dead_routes"].found


def test_a_copy_of_the_state_may_carry_any_key(tmp_path: Path) -> None:
    copied = PASSED_ON.replace("    return state\n", "    return {**state}\n", 1)
    assert not _facts(tmp_path, {"graph.py": copied})["graph.dead_routes"].found
