"""Retry facts per call site: a model called again in its except handler, a node's
LangGraph RetryPolicy and what its retry_on reaches, how many judge calls a retry reaches,
and opinions with a hard-coded score handed on when a judge's call fails."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import by_facet, write_repo

GRAPH = '''
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

from judges import defense_node, prosecutor_node, tech_lead_node


class State(TypedDict):
    opinions: list


def build():
    g = StateGraph(State)
    policy = RetryPolicy(max_attempts=3{retry_on})
    g.add_node("prosecutor", prosecutor_node{keyword})
    g.add_edge(START, "prosecutor")
    for name, fn in [("defense", defense_node), ("tech_lead", tech_lead_node)]:
        g.add_node(name, fn)
        g.add_edge(START, name)
    g.add_edge(["prosecutor", "defense", "tech_lead"], END)
    return g.compile()
'''

JUDGE = '''
def {name}(state):
    judge_model = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    messages = [HumanMessage(content="rule")]
    try:
        opinion = judge_model.invoke(messages)
    except {caught}:
        messages.append(HumanMessage(content="Previous output was malformed."))
        opinion = judge_model.invoke(messages)
    return {{"opinions": [opinion]}}
'''

HEAD = '''
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel


class JudicialOpinion(BaseModel):
    judge: str
    score: int
'''

FALLBACK = '''

def {name}(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    try:
        return {{"opinions": [llm.invoke("prompt")]}}
    except Exception:
        return {{"opinions": [{opinion}]}}
'''


# the Prosecutor alone retries (one loop with a counter); every judge hands on an opinion
# with a fixed score when its call fails
LOOP_JUDGES = HEAD + '''

def prosecutor_node(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    try:
        max_retries = 3
        for attempt in range(max_retries):
            try:
                opinion = llm.invoke("prompt")
                break
            except Exception:
                if attempt == max_retries - 1:
                    raise
        return {"opinions": [opinion]}
    except Exception as e:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1)]}
''' + "".join(FALLBACK.format(name=n, opinion=o) for n, o in (
    ("defense_node", 'JudicialOpinion(judge="Defense", score=4)'),
    ("tech_lead_node", '{"judge": "TechLead", "score": 3}')))


def _llm(tmp_path: Path, judges: str, retry_on: str = "", keyword: str = "") -> dict[str, Finding]:
    files = write_repo(tmp_path, {"graph.py": GRAPH.format(retry_on=retry_on, keyword=keyword),
                                  "judges.py": judges})
    findings, _ = code_findings(tmp_path, files)
    return {f: by_facet(findings, f) for f in ("llm.retry", "llm.fabricated_opinion")}


def _handler_judges(caught: str) -> str:
    return HEAD + "".join(JUDGE.format(name=n, caught=caught)
                          for n in ("prosecutor_node", "defense_node", "tech_lead_node"))


def test_a_model_called_again_in_its_except_handler_is_a_retry(tmp_path: Path) -> None:
    retry = _llm(tmp_path, _handler_judges("Exception as e"))["llm.retry"]
    assert retry.found, retry.rationale
    assert "called again in its except handler (Exception)" in retry.rationale
    assert len(retry.data["locations"]) == 3
    assert retry.data["reached"] == ["judges.py:15", "judges.py:25", "judges.py:35"]
    assert "every one of the judges' model calls (3)" in retry.rationale


def test_a_handler_that_catches_only_other_errors_retries_no_malformed_reply(
        tmp_path: Path) -> None:
    retry = _llm(tmp_path, _handler_judges("RateLimitError"))["llm.retry"]
    assert not retry.found, retry.rationale


def test_a_default_retry_policy_on_a_node_does_not_retry_a_malformed_reply(
        tmp_path: Path) -> None:
    plain = HEAD + "".join(f'''
def {n}(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    return {{"opinions": [llm.invoke("prompt")]}}
''' for n in ("prosecutor_node", "defense_node", "tech_lead_node"))
    retry = _llm(tmp_path / "a", plain, keyword=", retry=policy")["llm.retry"]
    assert not retry.found
    assert "prosecutor are added with a RetryPolicy whose retry_on is LangGraph's default" \
        in retry.rationale and "never after a ValueError" in retry.rationale
    assert retry.location == "graph.py:16"
    wide = _llm(tmp_path / "b", plain, retry_on=", retry_on=(ValueError,)",
                keyword=", retry_policy=policy")["llm.retry"]
    assert wide.found and "RetryPolicy on node prosecutor (retry_on=(ValueError,))" \
        in wide.rationale


def test_one_retry_loop_counts_once_and_says_which_judge_calls_it_misses(
        tmp_path: Path) -> None:
    facts = _llm(tmp_path, LOOP_JUDGES)
    retry = facts["llm.retry"]
    assert retry.found and retry.rationale.startswith(
        "1 retry mechanism(s): retry counter in prosecutor_node."), retry.rationale
    assert retry.data["reached"] == ["judges.py:18"]
    assert retry.data["judge_calls"] == ["judges.py:18", "judges.py:31", "judges.py:39"]
    fabricated = facts["llm.fabricated_opinion"]
    assert fabricated.found and fabricated.pattern == "failure"
    assert fabricated.data["scores"] == [1.0, 3.0, 4.0]
    assert fabricated.data["locations"] == ["judges.py:25", "judges.py:33", "judges.py:41"]


def test_handlers_that_only_log_fabricate_nothing(tmp_path: Path) -> None:
    fabricated = _llm(tmp_path, _handler_judges("Exception"))["llm.fabricated_opinion"]
    assert not fabricated.found


def test_a_fixed_opinion_when_no_model_is_configured_is_not_charged(tmp_path: Path) -> None:
    """Only a handler of the model call's failure (any error, a malformed reply) fakes a
    ruling; one of a configuration error does not replace a reply."""
    judges = LOOP_JUDGES.replace("except Exception:\n        return", "except OSError:\n"
                                 "        return")
    assert judges.count("except OSError") == 2
    fabricated = _llm(tmp_path, judges)["llm.fabricated_opinion"]
    assert fabricated.data["locations"] == ["judges.py:25"]
