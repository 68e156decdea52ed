"""Judges that index the Pydantic opinion their schema-bound model call returns
(`forensics.code.answers`): ``opinion["judge"] = name`` raises TypeError after the model
answers, so the judge returns no opinion. The answer is followed through a chain built by
another function, ``self`` attributes and constructors; a dict answer (``include_raw=True``, a
TypedDict schema), a guard, a rebinding or a ``try`` that catches the error gives no fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Finding
from tests.conftest import make_evidence

from .test_code_ast_graph import by_facet, write_repo

STATE = '''
from typing import List, TypedDict
from pydantic import BaseModel


class JudicialOpinion(BaseModel):
    judge: str = ""
    criterion_id: str = ""
    score: int
    argument: str
    cited_evidence: List[str]


class OpinionDict(TypedDict):
    score: int
'''

JUDGES_PY = '''
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from state import JudicialOpinion, OpinionDict

llm = ChatOpenAI(model="gpt-4o-mini")
PERSONAS = {{"Prosecutor": "Be harsh.", "Defense": "Reward effort.", "TechLead": "Be pragmatic."}}


def make_chain(judge):
    prompt = ChatPromptTemplate.from_messages([("system", PERSONAS[judge]), ("human", "{{e}}")])
    chain = prompt | {binding}
    return chain


def judge_node(state, judge):
    chain = make_chain(judge)
    opinion = chain.invoke({{"e": str(state["evidences"])}})
{after}
    return {{"opinions": [opinion]}}
'''
BOUND = "llm.with_structured_output(JudicialOpinion)"
INDEXED = '    opinion["judge"] = judge'


def _facts(tmp_path: Path, after: str = INDEXED, binding: str = BOUND,
           extra: dict[str, str] | None = None) -> tuple[Finding, Finding]:
    files = write_repo(tmp_path, {"state.py": STATE, **(extra or {}),
                                  "judges.py": JUDGES_PY.format(binding=binding, after=after)})
    findings, _ = code_findings(tmp_path, files)
    return by_facet(findings, "judges.fail_after_model"), by_facet(findings,
                                                                   "llm.fail_after_model")


def test_a_judge_that_item_assigns_into_its_structured_answer_fails_after_the_model(
        tmp_path: Path) -> None:
    judges, llm = _facts(tmp_path)
    assert judges.found and llm.found, judges.rationale
    line = next(i for i, t in enumerate((tmp_path / "judges.py").read_text().splitlines(), 1)
                if 'opinion["judge"]' in t)
    assert judges.location == f"judges.py:{line}" and judges.data["cap"] == 3
    assert 'opinion = chain.invoke({"e"' in (judges.content or "")
    assert f'judges.py:{line}: opinion["judge"] = judge' in (judges.content or "")
    assert "no judge ever returns one" in judges.rationale


@pytest.mark.parametrize("after", [
    '    score = opinion["score"]',  # a read fails too
    '    for item in opinion["cited_evidence"]:\n        print(item)',  # in a loop's header
])
def test_reads_by_subscript_fail_too(tmp_path: Path, after: str) -> None:
    judges, llm = _facts(tmp_path, after)
    assert judges.found and llm.found


@pytest.mark.parametrize(("after", "binding"), [
    ("    opinion.judge = judge", BOUND),  # attribute access is what a model supports
    ('    if isinstance(opinion, dict):\n        opinion["judge"] = judge', BOUND),  # guarded
    ('    opinion = opinion.model_dump()\n    opinion["judge"] = judge', BOUND),  # rebound
    ('    try:\n        opinion["judge"] = judge\n    except TypeError:\n        pass', BOUND),
    (INDEXED, "llm.with_structured_output(JudicialOpinion, include_raw=True)"),  # a dict
    (INDEXED, "llm.with_structured_output(OpinionDict)"),  # a TypedDict answers a dict
    (INDEXED, "llm"),  # no schema: the answer is a message, not a model
])
def test_answers_that_support_item_access_or_are_not_indexed_give_no_fact(
        tmp_path: Path, after: str, binding: str) -> None:
    judges, llm = _facts(tmp_path, after, binding)
    assert not judges.found and not llm.found, judges.rationale


CLASS_JUDGE = '''
from langchain_openai import ChatOpenAI
from state import JudicialOpinion


class Judge:
    def __init__(self):
        self.structured = ChatOpenAI().with_structured_output(JudicialOpinion)

    def __call__(self, state):
        answer = self.structured.invoke("Evidence: " + str(state))
        answer["criterion_id"] = "x"
        return {"opinions": [answer]}

    def fallback(self, state):
        made = JudicialOpinion(score=1, argument="none", cited_evidence=[])
        made["judge"] = "Prosecutor"
        return made
'''


def test_self_attributes_and_constructors_are_followed(tmp_path: Path) -> None:
    """The class's binding is followed through ``self``; the two call sites of the module's
    chain (one indexed, one not) leave one opinion call that returns: not every judge."""
    judges, llm = _facts(tmp_path, "    print(opinion.score)",
                         extra={"judge_class.py": CLASS_JUDGE})
    assert judges.found and not llm.found
    assert judges.data["locations"] == ["judge_class.py:12", "judge_class.py:17"]
    assert judges.data["cap"] == 4


def test_a_judge_that_never_returns_an_opinion_caps_nuance_and_schemas_at_three() -> None:
    rubric = load_rubric()
    for criterion, facet in (("judicial_nuance", "judges.fail_after_model"),
                             ("structured_output_enforcement", "llm.fail_after_model")):
        dim = rubric.dimension(criterion)
        good = [make_evidence(f"ok {i}", dimension=dim.id, facet=f"{facet}.s{i}",
                              confidence=1.0) for i in range(4)]
        failed = make_evidence("judges fail", dimension=dim.id, facet=facet, found=True,
                               pattern="failure", confidence=0.85, data={"cap": 3})
        for dossier, score in ((good, 5), ([*good, failed], 3)):
            opinions = [offline_opinion(j, dim, dossier) for j in JUDGES]
            assert decide(dim, opinions, dossier, rubric).final_score == score
