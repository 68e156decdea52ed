"""A conditional route that comes back to its router with nothing changed that the router
reads loops forever (``graph.endless_loop``); a loop whose handler may change the router's
choice, or that counts its retries, does not."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence, Finding
from tests.conftest import make_evidence

from .test_code_ast_graph import write_repo

SOURCE = '''
import logging
import operator
from typing import Annotated, TypedDict

from pydantic import BaseModel
from langgraph.graph import END, START, StateGraph

logger = logging.getLogger(__name__)


class Evidence(BaseModel):
    goal: str
    found: bool


class State(TypedDict, total=False):
    repo_url: str
    retries: int
    evidences: Annotated[dict, operator.ior]
    final: str


def investigator(state):
    return {"evidences": {"repo": [Evidence(goal="repo", found=bool(state["repo_url"]))]}}


def aggregator(state):
    return {}


def failure_handler(state):
    evidences = state.get("evidences", {})
HANDLER


def judge(state):
    return {"final": "done"}


def quality_router(state):
ROUTER


builder = StateGraph(State)
builder.add_node("investigator", investigator)
builder.add_node("aggregator", aggregator)
builder.add_node("failure_handler", failure_handler)
builder.add_node("judge", judge)
builder.add_edge(START, "investigator")
builder.add_edge("investigator", "aggregator")
builder.add_conditional_edges("aggregator", quality_router,
                              {"judge": "judge", "failure_handler": "failure_handler"})
builder.add_edge("failure_handler", "aggregator")
builder.add_edge("judge", END)
'''

FALLBACK = '''    for key in ["repo", "docs"]:
        if key not in evidences:
            evidences[key] = [Evidence(goal=f"fallback {key}", found=False)]
    logger.error("fallback evidence")
    return {"evidences": evidences}'''

COUNT_FOUND = '''    evidences = state.get("evidences", {})
    found_items = sum(1 for vals in evidences.values() for e in vals if e.found)
    if found_items == 0:
        logger.warning("no evidence found")
        return "failure_handler"
    return "judge"'''


def _facts(tmp_path: Path, handler: str = FALLBACK, router: str = COUNT_FOUND
           ) -> dict[str, Finding]:
    source = SOURCE.replace("HANDLER", handler).replace("ROUTER", router)
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, {"graph.py": source}))
    return {f.facet: f for f in findings if f.facet.startswith("graph.")}


def test_a_handler_adding_only_unfound_evidence_loops_forever(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    loop = facts["graph.endless_loop"]
    assert loop.found
    assert loop.data["loops"] == [["failure_handler", "aggregator", "failure_handler"]]
    assert "no item of evidences has found set" in loop.rationale
    assert "if found_items == 0:" in (loop.content or "")
    assert 'builder.add_edge("failure_handler", "aggregator")' in (loop.content or "")
    reach = facts["graph.unreachable_nodes"]
    assert not reach.found and "reaches END." not in reach.rationale
    assert "loops forever" in reach.rationale


def test_a_handler_that_may_add_found_evidence_can_leave_the_loop(tmp_path: Path) -> None:
    handler = FALLBACK.replace("found=False", "found=bool(state.get(\"repo_url\"))")
    facts = _facts(tmp_path, handler=handler)
    assert not facts["graph.endless_loop"].found
    assert facts["graph.unreachable_nodes"].rationale == (
        "Every node is reachable from START and reaches END.")


def test_a_router_leaving_on_a_retry_counter_the_loop_increments_ends(tmp_path: Path) -> None:
    handler = FALLBACK.replace('    return {"evidences": evidences}',
                               '    return {"evidences": evidences,\n'
                               '            "retries": state.get("retries", 0) + 1}')
    router = ('    if state.get("retries", 0) >= 3:\n        return "judge"\n' + COUNT_FOUND)
    assert not _facts(tmp_path, handler=handler, router=router)["graph.endless_loop"].found


def test_a_router_reading_only_what_the_loop_never_writes_loops_forever(
        tmp_path: Path) -> None:
    router = '    if not state.get("final"):\n        return "failure_handler"\n    return "judge"'
    loop = _facts(tmp_path, router=router)["graph.endless_loop"]
    assert loop.found and "reads final, which nothing on the loop changes" in loop.rationale


def test_an_endless_loop_caps_the_graph_at_four() -> None:
    rubric = load_rubric()
    dim = rubric.dimension("graph_orchestration")
    dossier = [*(make_evidence(f"success {i}", dimension=dim.id, facet=f"graph.s{i}",
                               location=f"graph.py:{i}", confidence=1.0) for i in range(12)),
               Evidence(source="repo", dimension=dim.id, facet="graph.endless_loop",
                        goal="loop", found=True, pattern="failure", location="graph.py:1",
                        confidence=0.8, rationale="loop")]
    assert decide(dim, [offline_opinion(j, dim, dossier) for j in JUDGES], dossier,
                  rubric).final_score == 4


def test_a_handler_handing_back_the_state_it_was_given_changes_only_what_it_stores(
        tmp_path: Path) -> None:
    """gashawbekele06: loop nodes that ``return state`` write every key again at the value
    the state held. A router on a key none of them stores into takes the same way forever;
    one that stores the key (``state["retries"] += 1``) may leave, and a key with a reducer
    is added again by the hand-back, so it changes."""
    router = '    if state.get("retries", 0) < 3:\n        return "failure_handler"\n' \
        '    return "judge"'
    handed = '    state["final"] = ""\n    return state'
    loop = _facts(tmp_path / "a", handler=handed, router=router)["graph.endless_loop"]
    assert loop.found and "reads retries, which nothing on the loop changes" in loop.rationale
    counted = '    state["retries"] = state.get("retries", 0) + 1\n    return state'
    assert not _facts(tmp_path / "b", handler=counted, router=router)[
        "graph.endless_loop"].found
    on_reduced = '    if not state.get("evidences"):\n        return "failure_handler"\n' \
        '    return "judge"'
    assert not _facts(tmp_path / "c", handler=handed, router=on_reduced)[
        "graph.endless_loop"].found
    # a copy of the state is not read (what it changes is not followed)
    copied = '    return {**state, "final": ""}'
    assert not _facts(tmp_path / "d", handler=copied, router=router)[
        "graph.endless_loop"].found
