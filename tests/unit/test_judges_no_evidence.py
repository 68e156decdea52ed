"""Judges whose model call is handed no evidence (`forensics.code.judge_evidence`): the
messages hold only fixed text and the criterion id, either with no evidence read at all or with
an evidence lookup by the criterion id into a state key the detectives write only under their
own names. Any other source (the state read otherwise, a helper of the repository, a key that
may be a criterion id) gives no fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import Evidence, Finding

from .test_code_ast_graph import by_facet, write_repo
from .test_judges_fail_before_model import PERSONA_PROMPTS
from .test_judges_model_unreached import GRAPH, PERSONA_NODES

DETECTIVES = '''

def repo_detective(state):
    return {{"evidences": {{{repo_key}: ["the code"]}}}}


def doc_detective(state):
    return {{"evidences": {{"doc": ["the report"]}}}}


def build_prompt(dim, found):
    return f"{{dim['name']}}: {{found}}"


def add_lines(lines, state):
    lines.extend(state["evidences"].values())
'''
LOOKUP = '''
from langchain_openai import ChatOpenAI

{personas}


def _judge(state, name, system):
    llm = ChatOpenAI(model="gpt-4o")
    opinions = []
    for dim in {dims}:
        dim_id = dim["id"]
        found = state["evidences"].get({lookup}, [])
        lines = []
        {fill}
        for item in found:
            lines.append(f"- {{item}}")
        text = "\\n".join(lines) if lines else "No evidence collected"
        prompt = {prompt}
        try:
            opinion = llm.invoke([("system", system), ("user", prompt)])
        except Exception:
            opinion = {{"judge": name, "criterion_id": dim_id, "score": 1}}
        opinions.append(opinion)
    return {{"opinions": opinions}}
''' + PERSONA_NODES + DETECTIVES
PROMPT = '''f"Criterion: {dim['name']} ({dim.get('success_pattern', '')})\\nEvidence:\\n{text}"'''
ASK = '''
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

{personas}


def _ids(state):
    return [d["id"] for d in state["rubric_dimensions"]]


def _ask(system, user, criterion_id, name):
    {rebind}
    llm = ChatOpenAI(model="gpt-4o")
    reply = llm.invoke([SystemMessage(content=system), HumanMessage(content=user)])
    return {{"judge": name, "criterion_id": criterion_id, "argument": reply.content}}


def _judge(state, name, system):
    opinions = []
    for criterion_id in _ids(state):
        opinions.append(_ask(system, {user}, criterion_id, name))
    return {{"opinions": opinions}}
''' + PERSONA_NODES + DETECTIVES


def _fact(tmp_path: Path, nodes: str, **fields: str) -> Finding:
    values = {"repo_key": '"repo"', "dims": 'state["rubric_dimensions"]', "fill": "pass",
              "lookup": "dim_id", "prompt": PROMPT, "user": 'f"Audit {criterion_id}"',
              "rebind": "pass", **fields}
    files = write_repo(tmp_path, {"graph.py": GRAPH.format(), "nodes.py": nodes.format(
        personas=PERSONA_PROMPTS, **values)})
    findings, _ = code_findings(tmp_path, files)
    return by_facet(findings, "judges.no_evidence")


def _caps(fact: Finding) -> list[int]:
    evidence = Evidence(dimension="judicial_nuance", source="repo", **{
        k: getattr(fact, k) for k in ("facet", "goal", "found", "pattern", "location",
                                      "content", "rationale", "confidence", "data")})
    return [row.cap for row, _ in confirmed_caps("judicial_nuance", [evidence])]


def test_a_lookup_by_criterion_id_into_evidence_keyed_by_detective_gives_no_evidence(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path, LOOKUP)
    assert fact.found, fact.rationale
    assert fact.data["judges"] == ["Defense", "Prosecutor", "TechLead"]
    assert fact.data["written_keys"] == ["doc", "repo"]
    assert fact.data["lookups"] == ["nodes.py:20"]
    assert "nodes.py:20: found = state[\"evidences\"].get(dim_id, [])" in (fact.content or "")
    assert "nodes.py:28: opinion = llm.invoke(" in (fact.content or "")
    assert _caps(fact) == [4]


def test_a_prompt_of_fixed_text_and_the_criterion_id_gives_no_evidence(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path, ASK)
    assert fact.found, fact.rationale
    assert fact.data["lookups"] == [] and fact.location == "nodes.py:23"
    assert "nodes.py:30: opinions.append(_ask(system, f\"Audit {criterion_id}\"" in (
        fact.content or "")
    assert _caps(fact) == [4]


@pytest.mark.parametrize("fields", [
    {"repo_key": '"git_forensic_analysis"'},  # a key the lookup may find
    {"repo_key": "state['rubric_dimensions'][0]['id']"},  # a key computed at run time
    {"lookup": "dim['name']"},  # not the criterion the opinion is stamped with
    {"prompt": PROMPT + " + str(state['evidences'])"},  # the evidence read otherwise
    {"prompt": "build_prompt(dim, state['evidences'])"},  # a helper of the repository
    {"dims": 'state["opinions"]'},  # items a node writes: no rubric's
    {"fill": "add_lines(lines, state)"},  # a helper of the repository fills the text
    {"fill": "found.extend(state['evidences']['repo'])"},  # the lookup's list grown in place
    {"fill": "fmt = build_prompt", "prompt": "fmt(dim, [])"},  # our helper under a local
])
def test_evidence_that_may_reach_the_lookup_judges_gives_no_fact(
        tmp_path: Path, fields: dict[str, str]) -> None:
    fact = _fact(tmp_path, LOOKUP, **fields)
    assert not fact.found and fact.rationale.startswith("Not established"), fact.rationale
    assert _caps(fact) == []


@pytest.mark.parametrize(("user", "rebind"), [
    ('f"Audit {criterion_id}: {state[\'evidences\']}"', "pass"),  # the evidence itself
    ("build_prompt({'name': criterion_id}, [])", "pass"),  # a helper of the repository
    ("str(_ids(state))", "pass"),  # the repository's code, not the criterion
    # a parameter rebound in place still holds what its callers pass
    ("build_prompt({'name': criterion_id}, [])", "user = user + ''"),
])
def test_a_prompt_with_any_other_source_gives_no_fact(tmp_path: Path, user: str,
                                                      rebind: str) -> None:
    fact = _fact(tmp_path, ASK, user=user, rebind=rebind)
    assert not fact.found, fact.rationale
