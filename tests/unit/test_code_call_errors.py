"""A judge's schema-bound model call that nothing guards (`forensics.code.call_errors`): no
``try`` around it that catches a malformed reply, in its function or a caller up to the
graph node, and no ``with_retry``/``with_fallbacks``: one bad reply ends the run."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.judging.offline import evidence_balance
from automaton_auditor.state import Finding
from tests.conftest import make_evidence

from .test_code_ast_graph import by_facet, write_repo

STATE = '''
from typing import List
from pydantic import BaseModel


class JudicialOpinion(BaseModel):
    judge: str
    score: int
    argument: str
    cited_evidence: List[str]
'''

JUDGES = '''
from langchain_openai import ChatOpenAI
from state import JudicialOpinion

llm = ChatOpenAI(model="gpt-4o-mini")


def ask_judge(judge, evidence):
    structured = llm{wrap}.with_structured_output(JudicialOpinion)
    return structured.invoke(f"You are the {{judge}}. Evidence: {{evidence}}")


def judge_node(state):
    opinions = []
    for judge in ("Prosecutor", "Defense", "TechLead"):
{call}
    return {{"opinions": opinions}}
'''
PLAIN = "        opinions.append(ask_judge(judge, state['evidences']))"
CAUGHT = '''        try:
            opinions.append(ask_judge(judge, state["evidences"]))
        except Exception as error:
            print(error)'''
RATE_ONLY = '''        try:
            opinions.append(ask_judge(judge, state["evidences"]))
        except RateLimitError:
            continue'''


def _fact(tmp_path: Path, call: str, wrap: str = "") -> Finding:
    files = write_repo(tmp_path, {"state.py": STATE,
                                  "judges.py": JUDGES.format(call=call, wrap=wrap)})
    return by_facet(code_findings(tmp_path, files)[0], "llm.unhandled_errors")


def test_a_judge_call_no_try_guards_ends_the_run_on_a_malformed_reply(tmp_path: Path) -> None:
    fact = _fact(tmp_path, PLAIN)
    assert fact.found and fact.pattern == "failure", fact.rationale
    assert fact.location == "judges.py:10"
    assert fact.data["open"] == ["judges.py:10"]
    assert "ends the run" in fact.rationale


def test_a_try_in_the_node_that_calls_the_helper_guards_it(tmp_path: Path) -> None:
    fact = _fact(tmp_path, CAUGHT)
    assert not fact.found, fact.rationale
    assert fact.data["guards"] == ["judges.py:16"]


def test_a_handler_of_rate_limits_only_does_not_guard_a_malformed_reply(
        tmp_path: Path) -> None:
    assert _fact(tmp_path, RATE_ONLY).found


def test_a_retry_in_the_handler_is_the_handling_not_an_unguarded_call(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path, '''        try:
            opinions.append(ask_judge(judge, state["evidences"]))
        except ValueError:
            opinions.append(ask_judge(judge, "Your last reply did not fit the schema."))''')
    assert not fact.found, fact.rationale


def test_a_closure_handed_to_a_runner_inside_a_try_is_guarded(tmp_path: Path) -> None:
    """The call graph does not follow ``run(call)``: the closure's name read inside a try
    of the function that defines it counts as its call."""
    fact = _fact(tmp_path, '''        def call():
            return ask_judge(judge, state["evidences"])
        try:
            opinions.append(run_bounded(call))
        except Exception:
            continue''')
    assert not fact.found, fact.rationale


def test_a_model_with_fallbacks_is_guarded(tmp_path: Path) -> None:
    fact = _fact(tmp_path, PLAIN, wrap=".with_fallbacks([llm])")
    assert not fact.found, fact.rationale


def test_the_fact_only_keeps_the_criterion_from_full_marks() -> None:
    fact = make_evidence("unguarded", found=True, pattern="failure", confidence=0.6,
                         dimension="structured_output_enforcement",
                         facet="llm.unhandled_errors")
    assert [row.cap for row, _f in confirmed_caps("structured_output_enforcement",
                                                  [fact])] == [4]
    assert evidence_balance([fact]) == (0.0, 0.0)
