"""Retries the loop-based reading missed: a model called again in its except handler, and a
node's LangGraph RetryPolicy with what its retry_on reaches."""

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

HEAD = '''
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel


class JudicialOpinion(BaseModel):
    judge: str
    score: int
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

PLAIN = HEAD + "".join(f'''
def {n}(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    return {{"opinions": [llm.invoke("prompt")]}}
''' for n in ("prosecutor_node", "defense_node", "tech_lead_node"))


def _retry(tmp_path: Path, judges: str, retry_on: str = "", keyword: str = "") -> Finding:
    files = write_repo(tmp_path, {"graph.py": GRAPH.format(retry_on=retry_on, keyword=keyword),
                                  "judges.py": judges})
    findings, _ = code_findings(tmp_path, files)
    return by_facet(findings, "llm.retry")


def _handler_judges(caught: str) -> str:
    return HEAD + "".join(JUDGE.format(name=n, caught=caught)
                          for n in ("prosecutor_node", "defense_node", "tech_lead_node"))


def test_a_model_called_again_in_its_except_handler_is_a_retry(tmp_path: Path) -> None:
    retry = _retry(tmp_path, _handler_judges("Exception as e"))
    assert retry.found, retry.rationale
    assert retry.rationale.startswith("3 retry mechanism(s): judge_model.invoke called again "
                                      "in its except handler (Exception)."), retry.rationale
    assert retry.data["locations"] == ["judges.py:18", "judges.py:28", "judges.py:38"]


def test_a_handler_of_a_validation_error_retries_but_one_of_a_rate_limit_does_not(
        tmp_path: Path) -> None:
    assert _retry(tmp_path / "a", _handler_judges("(ValidationError, KeyError)")).found
    assert not _retry(tmp_path / "b", _handler_judges("RateLimitError")).found


def test_a_default_retry_policy_on_a_node_does_not_retry_a_malformed_reply(
        tmp_path: Path) -> None:
    retry = _retry(tmp_path / "a", PLAIN, keyword=", retry=policy")
    assert not retry.found
    assert "prosecutor are added with a RetryPolicy whose retry_on is LangGraph's default" \
        in retry.rationale and "never after a ValueError" in retry.rationale
    assert retry.location == "graph.py:16"
    narrow = _retry(tmp_path / "b", PLAIN, retry_on=", retry_on=(ConnectionError,)",
                    keyword=", retry_policy=policy")
    assert not narrow.found and "prosecutor (retry_on=(ConnectionError,)) retry only" \
        in narrow.rationale
    wide = _retry(tmp_path / "c", PLAIN, retry_on=", retry_on=(ValueError,)",
                  keyword=", retry_policy=policy")
    assert wide.found and "RetryPolicy on node prosecutor (retry_on=(ValueError,))" \
        in wide.rationale
    bare = _retry(tmp_path / "d", PLAIN)
    assert not bare.found and "RetryPolicy" not in bare.rationale


DECORATED = '''
from tenacity import retry, stop_after_attempt


def read_history(path):
    return open(path).read()


@retry(stop=stop_after_attempt(3))
def safe_git_forensics(state):
    return read_history(state["repo"])


@retry(stop=stop_after_attempt(3))
def ask_judge(chain, evidence):
    return chain.invoke({"evidence": evidence})
'''


def test_a_retry_decorator_counts_only_on_a_function_that_reaches_a_model_call(
        tmp_path: Path) -> None:
    """redecon: ``@retry`` wrapped detectives that read files, in a repository with no model
    call at all, and was credited as a retry around model calls."""
    detective_only = DECORATED.split("@retry(stop=stop_after_attempt(3))\ndef ask_judge")[0]
    files = write_repo(tmp_path / "a", {"detectives.py": detective_only})
    retry = by_facet(code_findings(tmp_path / "a", files)[0], "llm.retry")
    assert not retry.found
    assert ("Not counted: 1 retry decorator(s) on functions that reach no model call "
            "(detectives.py:10).") in retry.rationale
    files = write_repo(tmp_path / "b", {"detectives.py": DECORATED})
    retry = by_facet(code_findings(tmp_path / "b", files)[0], "llm.retry")
    assert retry.found and retry.location == "detectives.py:15", retry.location
