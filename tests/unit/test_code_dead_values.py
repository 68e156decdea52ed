"""Routes that can never be taken because of the values the nodes before the router give the
key its test reads (`dead_routes`, `sure_keys`), and a node handing back its state writing
nothing new."""

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
    assert _facts(tmp_path / "passed", {"graph.py": PASSED_ON})["graph.dead_routes"].found
    stored = PASSED_ON.replace('    """Synchronization node."""\n',
                               '    state["errors"] = ["late"]\n')
    assert not _facts(tmp_path, {"graph.py": stored})["graph.dead_routes"].found


def test_a_copy_of_the_state_may_carry_any_key(tmp_path: Path) -> None:
    assert _facts(tmp_path / "passed", {"graph.py": PASSED_ON})["graph.dead_routes"].found
    copied = PASSED_ON.replace("    return state\n", "    return {**state}\n", 1)
    assert not _facts(tmp_path, {"graph.py": copied})["graph.dead_routes"].found


CHIEF = '''
import operator
from typing import Annotated, Optional, TypedDict

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel


class Report(BaseModel):
    score: int = 3


class State(TypedDict, total=False):
    repo_url: str
    evidences: Annotated[dict, operator.ior]
    final_report: Optional[Report]


def detective(state):
    found = []
    try:
        found.append(clone(state["repo_url"]))
    except OSError as err:
        found.append(str(err))
    return {"evidences": {"repo": found}}


def check_evidence(state):
    evidences = state.get("evidences", {})
    has = any(len(v) > 0 for v in evidences.values() if v)
    if has:
        return "continue"
    return "error"


def chief(state):
    report = Report.model_validate({"score": len(state["evidences"])})
    if report.score > 5:
        raise ValueError("out of range")
    return {"final_report": report}


def check_chief(state):
    final_report = state.get("final_report")
    if final_report is None:
        return "error"
    return "end"


def no_evidence(state):
    return {"evidences": {"error": []}}


def error_handler(state):
    return {"final_report": None}


builder = StateGraph(State)
builder.add_node("detective", detective)
builder.add_node("chief", chief)
builder.add_node("no_evidence", no_evidence)
builder.add_node("error_handler", error_handler)
builder.add_edge(START, "detective")
builder.add_conditional_edges("detective", check_evidence,
                              {"continue": "chief", "error": "no_evidence"})
builder.add_conditional_edges("chief", check_chief, {"end": END, "error": "error_handler"})
builder.add_edge("no_evidence", END)
builder.add_edge("error_handler", END)
'''


def test_a_route_needing_a_key_its_own_node_always_fills_is_never_taken(
        tmp_path: Path) -> None:
    """amin3ltd and yohans-kasaw: each error route needs a key empty that the router's own
    node fills on every return (an exception aborts the run, it does not route)."""
    dead = _facts(tmp_path, {"graph.py": CHIEF})["graph.dead_routes"]
    assert dead.found and dead.data["edges"] == [["chief", "error_handler"],
                                                 ["detective", "no_evidence"]]
    assert "only when final_report is None, and chief gives final_report a " \
        "non-empty value on every return" in dead.rationale
    assert "only when evidences holds no non-empty item, and detective gives evidences a " \
        "value holding a non-empty item on every return" in dead.rationale
    content = dead.content or ""
    assert 'graph.py:44: final_report = state.get("final_report")' in content
    assert 'graph.py:40: return {"final_report": report}' in content
    assert 'graph.py:25: return {"evidences": {"repo": found}}' in content


def test_the_route_s_condition_is_told_from_the_router_s_own_test(tmp_path: Path) -> None:
    """yohans-kasaw: ``final_report is None`` is "is None"; ``not final_report`` is "empty
    or None". Both routes are never taken when the node always fills the key (a report, or
    a list holding an item)."""
    falsy = CHIEF.replace("    if final_report is None:\n", "    if not final_report:\n")
    listed = CHIEF.replace('    return {"final_report": report}\n',
                           '    return {"final_report": [report]}\n')
    for n, (case, said) in enumerate(((CHIEF, "is None"), (falsy, "is empty or None"),
                                      (listed, "is None"),
                                      (listed.replace("    if final_report is None:\n",
                                                      "    if not final_report:\n"),
                                       "is empty or None"))):
        dead = _facts(tmp_path / str(n), {"graph.py": case})["graph.dead_routes"]
        assert ["chief", "error_handler"] in dead.data["edges"]
        assert f"only when final_report {said}, and chief gives final_report a " \
            in dead.rationale


def test_a_return_that_may_give_the_empty_value_keeps_the_route(tmp_path: Path) -> None:
    cases = [
        CHIEF.replace('        found.append(str(err))\n', '        print(err)\n'),
        CHIEF.replace('        raise ValueError("out of range")\n',
                      '        return {"final_report": None}\n'),
        # an instance of a class with a length of its own may be falsy
        CHIEF.replace("    score: int = 3\n",
                      "    score: int = 3\n\n    def __len__(self):\n        return 0\n"),
    ]
    edges = [_facts(tmp_path / str(n), {"graph.py": case})["graph.dead_routes"].data["edges"]
             for n, case in enumerate(cases)]
    assert edges == [[["chief", "error_handler"]], [["detective", "no_evidence"]],
                     [["detective", "no_evidence"]]]


SPLIT = '''
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    evidences: Annotated[list, operator.add]
    report: str


def repo(state):
    return {"evidences": [{"goal": "repo"}]}


def doc(state):
    return {"evidences": [{"goal": "doc"}]}


def aggregator(state):
    return {"report": "ready"}


def route(state):
    if not state.get("evidences"):
        return "error_handler"
    return "judge"


def judge(state):
    return {"report": "judged"}


def error_handler(state):
    return {"report": "failed"}


builder = StateGraph(State)
for name, fn in (("repo", repo), ("doc", doc), ("aggregator", aggregator),
                 ("judge", judge), ("error_handler", error_handler)):
    builder.add_node(name, fn)
builder.add_edge(START, "repo")
builder.add_edge(START, "doc")
builder.add_edge("repo", "aggregator")
builder.add_edge("doc", "aggregator")
builder.add_conditional_edges("aggregator", route, ["judge", "error_handler"])
builder.add_edge("judge", END)
builder.add_edge("error_handler", END)
'''


def test_a_key_every_writer_fills_before_the_router_is_never_empty(tmp_path: Path) -> None:
    """Every path from START to the aggregator passes a detective, and each always adds an
    item: the route that needs the list empty is never taken."""
    dead = _facts(tmp_path, {"graph.py": SPLIT})["graph.dead_routes"]
    assert dead.data["edges"] == [["aggregator", "error_handler"]]
    assert "doc, repo give evidences a value holding a non-empty item on every return, and " \
        "every path to aggregator passes through one of them" in dead.rationale


def test_a_writer_that_may_add_nothing_or_a_path_past_every_writer_keeps_the_route(
        tmp_path: Path) -> None:
    assert _facts(tmp_path / "sure", {"graph.py": SPLIT})["graph.dead_routes"].found
    may_be_empty = SPLIT.replace('return {"evidences": [{"goal": "doc"}]}',
                                 'return {"evidences": [{"goal": "doc"}] if state else []}')
    bypass = SPLIT.replace('builder.add_edge(START, "doc")\n',
                           'builder.add_edge(START, "doc")\n'
                           'builder.add_edge(START, "aggregator")\n')
    for n, case in enumerate((may_be_empty, bypass)):
        assert not _facts(tmp_path / str(n), {"graph.py": case})["graph.dead_routes"].found


def test_a_router_whose_other_routes_are_never_taken_routes_nothing(tmp_path: Path) -> None:
    """yohans-kasaw: the router after the Chief Justice only ever goes to END, as amin3ltd's
    routers beside static edges only ever add branches: neither routes the flow."""
    cond = _facts(tmp_path / "dead", {"graph.py": CHIEF})["graph.conditional_edges"]
    assert not cond.found
    assert "the router at chief never takes error_handler (a route that can never be taken):" \
        " it always goes to __end__" in cond.rationale
    live = CHIEF.replace('        raise ValueError("out of range")\n',
                         '        return {"final_report": None}\n')
    assert _facts(tmp_path / "live", {"graph.py": live})["graph.conditional_edges"].found
