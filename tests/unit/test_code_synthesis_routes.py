"""A score spread that re-evaluates through graph edges: a router registered with
add_conditional_edges picks a node on the spread; it re-evaluates only when the synthesis
reads what that node writes. And a branch on the spread that scores as the path without it
re-evaluates nothing (a floor mean there is still a mean)."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice

FLAG_GRAPH = '''
from typing import List, TypedDict
from langgraph.graph import StateGraph, START, END
from nodes.justice import chief_justice_node, variance_check, re_evaluation, route


class AgentState(TypedDict):
    opinions: List[dict]
    has_variance: bool
    notes: str
    final_score: int


g = StateGraph(AgentState)
g.add_node("variance_check", variance_check)
g.add_node("re_evaluation", re_evaluation)
g.add_node("chief_justice", chief_justice_node)
g.add_edge(START, "variance_check")
g.add_conditional_edges("variance_check", route,
                        {"re_evaluate": "re_evaluation", "synthesize": "chief_justice"})
g.add_edge("re_evaluation", "chief_justice")
g.add_edge("chief_justice", END)
graph = g.compile()
'''

FLAG_JUSTICE = '''
def variance_check(state):
    scores = [o["score"] for o in state["opinions"]]
    max_s = max(scores)
    min_s = min(scores)
    has_variance = False
    if max_s - min_s > 2:
        has_variance = True
    return {"has_variance": has_variance}


def re_evaluation(state):
    return {WRITES}


def route(state):
    if state.get("has_variance"):
        return "re_evaluate"
    return "synthesize"


def chief_justice_node(state):
    scores = [o["score"] for o in state["opinions"]]
    return {"final_score": round(sum(scores) / len(scores))}
'''


def test_a_router_on_a_spread_flag_whose_node_the_verdict_ignores_re_evaluates_nothing(
        tmp_path: Path) -> None:
    code = FLAG_JUSTICE.replace("{WRITES}", '{"notes": "mediated"}')
    variance = _justice(tmp_path, code, {"graph.py": FLAG_GRAPH})["justice.variance"]
    assert variance.found is False
    assert ("A score spread routes the graph to re_evaluation (nodes/justice.py:18), but the "
            "synthesis reads nothing it writes (notes)") in variance.rationale
    assert (variance.content or "").splitlines() == [
        "nodes/justice.py:7: if max_s - min_s > 2:",
        "nodes/justice.py:9: return {\"has_variance\": has_variance}",
        "nodes/justice.py:18: return \"re_evaluate\"",
        "graph.py:19: g.add_conditional_edges(\"variance_check\", route,"]


def test_a_router_on_a_spread_flag_whose_node_feeds_the_verdict_re_evaluates(
        tmp_path: Path) -> None:
    code = FLAG_JUSTICE.replace("{WRITES}", '{"opinions": [{"score": 3}]}')
    facts = _justice(tmp_path, code, {"graph.py": FLAG_GRAPH})
    variance = facts["justice.variance"]
    assert variance.found
    assert variance.rationale == ("A score spread routes the graph to re_evaluation "
                                  "(nodes/justice.py:18); the synthesis reads what it writes "
                                  "(opinions).")
    assert facts["justice.rules"].data["rules"]["variance_re_evaluation"][-1] == "graph.py:19"


LOOP_GRAPH = '''
from typing import Annotated, List, TypedDict
import operator
from langgraph.graph import StateGraph, START, END
from nodes.justice import chief_justice_node, debate


class AgentState(TypedDict):
    opinions: Annotated[List[dict], operator.add]
    debated: bool
    final_score: int


def check_conflict(state):
    scores = [o["score"] for o in state["opinions"]]
    variance = max(scores) - min(scores)
    if variance > 2 and not state.get("debated"):
        return "debate"
    return END


g = StateGraph(AgentState)
g.add_node("chief_justice", chief_justice_node)
g.add_node("debate", debate)
g.add_edge(START, "chief_justice")
g.add_conditional_edges("chief_justice", check_conflict, {"debate": "debate", END: END})
g.add_edge("debate", "chief_justice")
graph = g.compile()
'''

LOOP_JUSTICE = '''
def debate(state):
    return {"opinions": [{"judge": "Moderator", "score": 3}], "debated": True}


def chief_justice_node(state):
    scores = [o["score"] for o in state["opinions"]]
    return {"final_score": round(sum(scores) / len(scores))}
'''


def test_a_router_that_reads_the_spread_itself_and_loops_back_re_evaluates(
        tmp_path: Path) -> None:
    variance = _justice(tmp_path, LOOP_JUSTICE, {"graph.py": LOOP_GRAPH})["justice.variance"]
    assert variance.found
    assert variance.rationale.startswith(
        "A score spread routes the graph to debate (graph.py:18); the synthesis reads")
    assert "graph.py:17: if variance > 2 and not state.get(\"debated\"):" in (
        variance.content or "")


def test_a_spread_branch_that_scores_as_the_default_path_only_adds_dissent(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def resolve(ops):
    scores = [o.score for o in ops]
    variance = max(scores) - min(scores)
    if variance > 2:
        dissent = f"Score variance > 2; re-evaluation applied: {scores}"
        final = sum(scores) // len(scores)
        return final, dissent
    final = sum(scores) // len(scores)
    dissent = ""
    if variance > 0:
        dissent = f"Scores {scores}"
    return max(1, min(5, final)), dissent


def chief_justice_node(state):
    final, dissent = resolve(state["opinions"])
    return {"final_score": final, "dissent": dissent}
''')
    variance = facts["justice.variance"]
    assert variance.found is False
    assert variance.rationale == "The score spread only adds dissent text."
    assert "variance_re_evaluation" not in facts["justice.rules"].data["rules"]
    # a floor mean (``//``) is a mean: both paths score the judges' plain average
    averaging = facts["justice.averaging"]
    assert averaging.found and averaging.data["lines"] == [
        "nodes/justice.py:7", "nodes/justice.py:9"]
    assert averaging.rationale.startswith("The score is a mean of the opinions")


def test_a_spread_branch_that_scores_otherwise_or_changes_the_scores_re_evaluates(
        tmp_path: Path) -> None:
    base = '''
def chief_justice_node(state):
    scores = [o.score for o in state["opinions"]]
    if max(scores) - min(scores) > 2:
        BODY
        return {"final_score": sum(scores) // len(scores), "dissent": "high variance"}
    return {"final_score": sum(scores) // len(scores), "dissent": None}
'''
    other = base.replace("BODY\n        return {\"final_score\": sum(scores) // len(scores)",
                         "return {\"final_score\": max(scores)")
    mutated = base.replace("BODY", "scores.append(state[\"tech_lead\"].score)")
    same = base.replace("BODY", "print(scores)")
    # the branch scores otherwise, with the top score: a decision on the spread, which only
    # picks among the scores (a tie-break, never also a re-evaluation)
    picked = _justice(tmp_path / "a", other)
    assert picked["justice.tie_break"].found and not picked["justice.variance"].found
    assert _justice(tmp_path / "b", mutated)["justice.variance"].found
    unchanged = _justice(tmp_path / "c", same)
    assert not unchanged["justice.variance"].found and not unchanged["justice.tie_break"].found
