"""Judges whose model call waits on an evidence lookup that never finds anything
(`forensics.code.judge_guards`): the detectives key the evidence by their own names while the
judges look it up by the criterion id they stamp on their opinion, so every judge returns its
fixed no-evidence opinion and no persona prompt is sent. Keys the graph may write that are
criterion ids, keys computed at run time, or a lookup the call does not wait on give no fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import Evidence, Finding

from .test_code_ast_graph import by_facet, write_repo
from .test_judges_fail_before_model import PERSONA_PROMPTS

GRAPH = '''
import operator
from typing import Annotated
from typing_extensions import TypedDict
from langgraph.graph import StateGraph, START, END
from nodes import repo_detective, doc_detective, prosecutor_node, defense_node, tech_lead_node


class State(TypedDict):
    rubric_dimensions: list
    evidences: Annotated[dict, operator.ior]
    opinions: Annotated[list, operator.add]


def build():
    g = StateGraph(State)
    g.add_node("repo_detective", repo_detective)
    g.add_node("doc_detective", doc_detective)
    g.add_node("prosecutor", prosecutor_node)
    g.add_node("defense", defense_node)
    g.add_node("tech_lead", tech_lead_node)
    g.add_edge(START, "repo_detective")
    g.add_edge(START, "doc_detective")
    for judge in ("prosecutor", "defense", "tech_lead"):
        g.add_edge(["repo_detective", "doc_detective"], judge)
        g.add_edge(judge, END)
    return g.compile()


def run(dimensions):
    initial = {{"rubric_dimensions": dimensions, "evidences": {{}}, "opinions": []}}
    return build().invoke(initial)
'''
# the three persona nodes, each running the same judge function `_judge`
PERSONA_NODES = '''

def prosecutor_node(state):
    return _judge(state, "Prosecutor", PROSECUTOR)


def defense_node(state):
    return _judge(state, "Defense", DEFENSE)


def tech_lead_node(state):
    return _judge(state, "TechLead", TECH_LEAD)
'''
NODES = '''
from langchain_openai import ChatOpenAI

{personas}


def repo_detective(state):
    found = {{}}
    for dim in state["rubric_dimensions"]:
        found[dim["id"]] = ["the code"]
    return {{"evidences": {{{repo_key}: [e for v in found.values() for e in v]}}}}


def doc_detective(state):
    evidences = state.get("evidences", {{}})
    evidences["doc"] = []
    return {{"evidences": evidences}}


def _judge(state, name, system):
    evidences = state.get("evidences", {{}})
    llm = ChatOpenAI(model="gpt-4o")
    opinions = []
    for dim in state["rubric_dimensions"]:
        dim_id = dim["id"]
        relevant = evidences.get({lookup}, [])
{guard}
        opinions.append(llm.invoke([("system", system), ("user", str(relevant))]))
    return {{"opinions": opinions}}
''' + PERSONA_NODES
GUARD = '''        if not relevant:
            opinions.append({"judge": name, "criterion_id": dim_id, "score": 1})
            continue'''


def _fact(tmp_path: Path, repo_key: str = '"repo"', lookup: str = "dim_id",
          guard: str = GUARD) -> Finding:
    files = write_repo(tmp_path, {"graph.py": GRAPH.format(), "nodes.py": NODES.format(
        repo_key=repo_key, lookup=lookup, guard=guard, personas=PERSONA_PROMPTS)})
    findings, _ = code_findings(tmp_path, files)
    return by_facet(findings, "judges.model_unreached")


def test_a_lookup_by_criterion_id_of_evidence_keyed_by_detective_never_reaches_the_model(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path)
    assert fact.found, fact.rationale
    assert fact.data["judges"] == ["Defense", "Prosecutor", "TechLead"]
    assert fact.data["written_keys"] == ["doc", "repo"] and fact.data["cap"] == 3
    assert fact.location == "nodes.py:34" and "nodes.py:38" in fact.data["lines"]
    assert "nodes.py:34: relevant = evidences.get(dim_id, [])" in (fact.content or "")
    evidence = Evidence(dimension="judicial_nuance", source="repo", **{
        k: getattr(fact, k) for k in ("facet", "goal", "found", "pattern", "location",
                                      "content", "rationale", "confidence", "data")})
    assert [row.cap for row, _ in confirmed_caps("judicial_nuance", [evidence])] == [3]


@pytest.mark.parametrize(("repo_key", "lookup", "guard"), [
    ('"git_forensic_analysis"', "dim_id", GUARD),  # a key the judges may look up
    ("dim['id']", "dim_id", GUARD),  # a key computed at run time
    ('"repo"', "dim['id']", GUARD),  # the looked-up key is not what the opinion is stamped
    ('"repo"', "dim_id", "        pass"),  # the call does not wait on the lookup
    ('"repo"', '"doc"', GUARD.replace('"criterion_id": dim_id', '"criterion_id": "doc"')),
])
def test_a_lookup_that_may_find_evidence_or_is_not_read_gives_no_fact(
        tmp_path: Path, repo_key: str, lookup: str, guard: str) -> None:
    fact = _fact(tmp_path, repo_key, lookup, guard)
    assert not fact.found, fact.rationale
