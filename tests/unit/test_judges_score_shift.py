"""A judge's code that moves its model's score by persona before the opinion is built
(`forensics.code.score_shifts`): ``judges.score_shift`` quotes the move and the ``if`` it
sits under, in a persona's own judge (``if score > 3: score = max(1, score - 1)``) or in a
helper the answer's score is handed to that tests the persona's name; a bound at the scale's
ends only validates; any move caps judicial nuance at 4 and is never weighed."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.judging.offline import evidence_balance
from automaton_auditor.state import Finding
from tests.conftest import make_evidence

from .test_code_ast_graph import by_facet, write_repo

MODELS = '''
class JudicialOpinion(BaseModel):
    judge: str
    score: int
    argument: str


class State(TypedDict):
    opinions: list
'''

CLASSES = '''
import json
from typing import TypedDict

from groq import Groq
from langgraph.graph import StateGraph, START, END
from pydantic import BaseModel

{models}


{judges}

builder = StateGraph(State)
builder.add_node("prosecutor", Prosecutor())
builder.add_node("defense", Defense())
builder.add_edge(START, "prosecutor")
builder.add_edge(START, "defense")
builder.add_edge(["prosecutor", "defense"], END)
graph = builder.compile()
'''

JUDGE = '''
class {name}:
    def __init__(self):
        self.client = Groq()
        self.system_prompt = "{prompt}"

    def __call__(self, state):
        response = self.client.chat.completions.create(model="x", messages=[
            {{"role": "system", "content": self.system_prompt}},
            {{"role": "user", "content": str(state)}}])
        result = json.loads(response.choices[0].message.content)
        score = result.get("score", 1)
        {move}
        return {{"opinions": [JudicialOpinion(judge="{name}", score=score,
                                              argument=result.get("argument", ""))]}}
'''
PROMPTS = {"Prosecutor": "You are the Prosecutor: trust no one, hunt for security gaps.",
           "Defense": "You are the Defense: reward effort and intent generously."}


def _classes(moves: dict[str, str]) -> str:
    """Two persona classes, each moving its model's score as `moves` says."""
    return CLASSES.format(models=MODELS, judges="\n".join(
        JUDGE.format(name=n, prompt=p, move=moves[n.lower()]) for n, p in PROMPTS.items()))


SHIFTED = {"prosecutor": "if score > 3:\n            score = max(1, score - 1)",
           "defense": "if score < 3:\n            score = min(5, score + 1)"}
VALIDATED = {"prosecutor": "score = max(1, min(5, int(score)))",
             "defense": "score = max(1, min(5, int(score)))"}

FACTORY = '''
from typing import TypedDict

from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from langgraph.graph import StateGraph, START, END
from pydantic import BaseModel

llm = ChatOpenAI(model="x")

{models}


def _enforce_persona_score(judge_name, raw_score, found_ratio):
    score = raw_score
    if judge_name == "Prosecutor":
        if found_ratio < 0.5:
            score = min(score, 2)
        else:
            score = min(score, 3)
    elif judge_name == "Defense":
        score = max(score, 3)
    return max(1, min(5, score))


def get_judge_node(judge_name, system_prompt):
    def judge_node(state):
        prompt = ChatPromptTemplate.from_messages([("system", system_prompt),
                                                   ("human", "{evidence}")])
        chain = prompt | llm.with_structured_output(JudicialOpinion)
        opinion = chain.invoke({"evidence": str(state)})
        opinion.score = _enforce_persona_score(judge_name, opinion.score, 0.4)
        return {"opinions": [opinion]}
    return judge_node


builder = StateGraph(State)
builder.add_node("prosecutor", get_judge_node("Prosecutor", "You are the Prosecutor: be harsh."))
builder.add_node("defense", get_judge_node("Defense", "You are the Defense: reward effort."))
builder.add_edge(START, "prosecutor")
builder.add_edge(START, "defense")
builder.add_edge(["prosecutor", "defense"], END)
graph = builder.compile()
'''


def _fact(tmp_path: Path, source: str) -> Finding:
    files = write_repo(tmp_path, {"graph.py": source})
    return by_facet(code_findings(tmp_path, files)[0], "judges.score_shift")


def test_a_persona_s_judge_that_shifts_the_model_s_score_is_quoted(tmp_path: Path) -> None:
    fact = _fact(tmp_path, _classes(SHIFTED))
    assert fact.found and fact.pattern == "failure", fact.rationale
    assert fact.data["moves"] == {"Defense": ["graph.py:51"], "Prosecutor": ["graph.py:34"]}
    assert fact.data["cap"] == 4
    content = fact.content or ""
    assert "graph.py:33: if score > 3:" in content and \
        "graph.py:34: score = max(1, score - 1)" in content, content
    assert "graph.py:51: score = min(5, score + 1)" in content
    assert "written in code" in fact.rationale


def test_a_bound_at_the_scale_s_ends_only_validates(tmp_path: Path) -> None:
    fact = _fact(tmp_path, _classes(VALIDATED))
    assert not fact.found and fact.pattern == "failure", fact.rationale
    assert fact.data["cap"] is None


def test_a_helper_that_clamps_the_score_by_persona_name(tmp_path: Path) -> None:
    fact = _fact(tmp_path, FACTORY.replace("{models}", MODELS))
    assert fact.found, fact.rationale
    assert fact.data["moves"] == {"Defense": ["graph.py:31"],
                                  "Prosecutor": ["graph.py:27", "graph.py:29"]}, fact.data
    assert "graph.py:25: if judge_name == \"Prosecutor\":" in (fact.content or "")
    # the validation at the scale's ends (:32) is no move
    assert "graph.py:32" not in fact.rationale


def test_a_shift_caps_judicial_nuance_at_4_and_is_never_weighed(tmp_path: Path) -> None:
    fact = _fact(tmp_path, FACTORY.replace("{models}", MODELS))
    evidence = make_evidence(facet=fact.facet, goal=fact.goal, found=True, pattern="failure",
                             confidence=fact.confidence, dimension="judicial_nuance",
                             data=fact.data)
    assert [row.cap for row, _ in confirmed_caps("judicial_nuance", [evidence])] == [4]
    assert evidence_balance([evidence]) == (0, 0)
