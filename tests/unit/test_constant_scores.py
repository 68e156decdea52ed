"""A judge whose model answers but whose opinion takes a score its code writes
(``reply = llm.invoke(...)``, then ``JudicialOpinion(score=4, argument=reply.content)``):
``llm.constant_score`` (no schema holds the score) and ``judges.constant_score`` (the
personas cannot disagree in numbers). A constant on another path (no evidence, a failed call,
a fallback branch beside a score read from the reply), a default the answer replaces, a score
computed from the reply or clamped from it is no constant."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import Evidence, Finding

from .test_code_ast_graph import by_facet, write_repo

GRAPH = '''
import json
from typing import TypedDict

from langchain_openai import ChatOpenAI
from langgraph.graph import StateGraph, START, END
from state import JudicialOpinion

NEUTRAL = 3


class State(TypedDict):
    opinions: list


{judge}


builder = StateGraph(State)
builder.add_node("prosecutor", prosecutor)
builder.add_edge(START, "prosecutor")
builder.add_edge("prosecutor", END)
graph = builder.compile()
'''

FREE_TEXT = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    reply = llm.invoke("judge the evidence, give a score 1-5")
    content = reply.content
    return {"opinions": [JudicialOpinion(judge="Prosecutor",
                                         score=4,
                                         argument=content)]}'''

NAMED = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    score = NEUTRAL
    text = llm.invoke("judge").content
    return {"opinions": [{"judge": "Prosecutor", "score": score, "argument": text}]}'''

TRY_ELSE = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    try:
        reply = llm.invoke("judge")
    except Exception as error:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1, argument=str(error))]}
    else:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=4.0,
                                             argument=reply.content)]}'''

NO_EVIDENCE = '''def prosecutor(state):
    if not state["opinions"]:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1, argument="none")]}
    llm = ChatOpenAI(model="x")
    reply = llm.invoke("judge")
    if state.get("strict"):
        data = json.loads(reply.content)
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=int(data["score"]),
                                             argument=reply.content)]}
    else:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1, argument="off")]}'''

OTHER_BRANCH = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    reply = None
    if state["opinions"]:
        reply = llm.invoke("judge")
        print(reply)
    else:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1, argument=reply)]}
    return {"opinions": []}'''

REPLACED = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    parsed_score = 4
    reply = llm.invoke("judge")
    try:
        data = json.loads(reply.content)
        parsed_score = max(1, min(5, int(data.get("score", 4))))
    except ValueError:
        pass
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=parsed_score,
                                         argument=reply.content)]}'''

REPLACED_KEY = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    reply = llm.invoke("judge")
    opinion = {"judge": "Prosecutor", "score": 3, "argument": reply.content}
    opinion["score"] = int(json.loads(reply.content)["score"])
    return {"opinions": [opinion]}'''

COMPUTED = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    reply = llm.invoke("judge")
    return {"opinions": [JudicialOpinion(judge="Prosecutor",
                                         score=int(reply.content.split("/")[0]),
                                         argument=reply.content)]}'''

CLAMPED = '''def prosecutor(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    answer = llm.invoke("judge")
    return {"opinions": [JudicialOpinion(judge="Prosecutor",
                                         score=max(1, min(5, answer.score)),
                                         argument=answer.argument)]}'''

FAILED = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    try:
        reply = llm.invoke("judge")
    except Exception as error:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=3, argument=str(error))]}
    data = json.loads(reply.content)
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=data["score"],
                                         argument=reply.content)]}'''

FALLBACK_BRANCH = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    reply = llm.invoke("judge")
    if not reply.content.strip().startswith("{"):
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=3,
                                             argument=reply.content)]}
    data = json.loads(reply.content)
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=data["score"],
                                         argument=data["argument"])]}'''

# the answer itself is handed on; the constants are for an answer that is no opinion, or
# for the criteria the answer left out
HANDED_ON = '''def prosecutor(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    opinion = llm.invoke("judge")
    if isinstance(opinion, JudicialOpinion):
        return {"opinions": [opinion.model_copy(update={"judge": "Prosecutor"})]}
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=3, argument=str(opinion))]}'''

FILLED = '''def prosecutor(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    batch = llm.invoke("judge")
    result = list(batch.opinions)
    for missing in {"a", "b"} - {op.criterion_id for op in batch.opinions}:
        result.append(JudicialOpinion(judge="Prosecutor", criterion_id=missing, score=1,
                                      argument="none"))
    return {"opinions": result}'''

BOUND = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    reply = llm.invoke("judge")
    opinion = JudicialOpinion(judge="Prosecutor", score=4, argument=reply.content)
    return {"opinions": [opinion]}'''

# no LangGraph graph: the judges' code is not known, every function calling a model is read
CLASSES = '''
from langchain_openai import ChatOpenAI
from state import JudicialOpinion


class BaseJudge:
    name = "judge"

    def __init__(self):
        self.llm = ChatOpenAI(model="x")

    def evaluate(self, evidence):
        if not evidence:
            return JudicialOpinion(judge=self.name, score=1, rationale="no evidence")
        response = self.llm.invoke(f"You are the {self.name}. {evidence}")
        content = response.content
        return JudicialOpinion(
            judge=self.name,
            verdict="Audit Complete",
            score=4,
            rationale=content,
        )


class Prosecutor(BaseJudge):
    name = "Prosecutor"


class Defense(BaseJudge):
    name = "Defense"
'''

SOME = '''def prosecutor(state):
    llm = ChatOpenAI(model="x")
    reply = llm.invoke("judge")
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=4, argument=reply.content)]}


def defense(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    return {"opinions": [llm.invoke("judge")]}'''


def _facts(tmp_path: Path, judge: str | None = None,
           source: str | None = None) -> tuple[Finding, Finding]:
    text = source if source is not None else GRAPH.format(judge=judge)
    files = write_repo(tmp_path, {"graph.py": text})
    findings = code_findings(tmp_path, files)[0]
    return by_facet(findings, "llm.constant_score"), by_facet(findings, "judges.constant_score")


def _caps(fact: Finding, criterion: str) -> list[int]:
    evidence = Evidence(dimension=criterion, source="repo", **{
        k: getattr(fact, k) for k in ("facet", "goal", "found", "pattern", "location",
                                      "content", "rationale", "confidence", "data")})
    return [row.cap for row, _ in confirmed_caps(criterion, [evidence])]


def test_a_constant_score_around_the_model_s_free_text_is_the_code_s(tmp_path: Path) -> None:
    schema, nuance = _facts(tmp_path, FREE_TEXT)
    assert schema.found and nuance.found and schema.pattern == "failure", schema.rationale
    assert schema.data["places"] == ["graph.py:20"] and schema.data["calls"] == ["graph.py:18"]
    assert schema.data["scores"] == ["4"] and schema.data["every"]
    assert "graph.py:20 score 4 after the model call at :18" in schema.rationale
    # the model call, the opinion and its score line are quoted
    assert schema.content is not None and "graph.py:18: reply = llm.invoke(" in schema.content
    assert "graph.py:21: score=4," in schema.content
    assert _caps(schema, "structured_output_enforcement") == [3]
    assert _caps(nuance, "judicial_nuance") == [2]  # one number for all: agree by construction


def test_a_name_bound_only_to_a_constant_and_a_try_s_else_count_too(tmp_path: Path) -> None:
    schema, _nuance = _facts(tmp_path, NAMED)
    assert schema.found and schema.data["scores"] == ["3"], schema.rationale
    schema, _nuance = _facts(tmp_path / "else", TRY_ELSE)
    # the handler's score 1 is the failure path (llm.fallback_score), not this fact
    assert schema.found and schema.data["scores"] == ["4.0"], schema.rationale
    assert schema.data["places"] == ["graph.py:23"]


def test_an_opinion_bound_to_a_name_then_returned_counts(tmp_path: Path) -> None:
    schema, _nuance = _facts(tmp_path, BOUND)
    assert schema.data["places"] == ["graph.py:19"], schema.rationale


def test_the_answer_handed_on_makes_a_constant_beside_it_a_fallback(tmp_path: Path) -> None:
    for name, judge in (("handed_on", HANDED_ON), ("filled", FILLED)):
        schema, nuance = _facts(tmp_path / name, judge)
        assert not schema.found and not nuance.found, (name, schema.rationale)


def test_judges_not_known_every_model_calling_function_is_read(tmp_path: Path) -> None:
    schema, nuance = _facts(tmp_path, source=CLASSES)
    assert schema.found and not schema.data["judges_known"], schema.rationale
    assert schema.data["places"] == ["graph.py:17"]  # not the no-evidence opinion at :14
    assert "judges' code is not known" in schema.rationale
    assert nuance.found and nuance.data["cap"] == 2


def test_one_constant_judge_beside_a_schema_bound_one_is_some(tmp_path: Path) -> None:
    graph = GRAPH.replace('builder.add_edge(START, "prosecutor")',
                          'builder.add_node("defense", defense)\n'
                          'builder.add_edge(START, "prosecutor")\n'
                          'builder.add_edge(START, "defense")')
    schema, nuance = _facts(tmp_path, source=graph.format(judge=SOME))
    assert schema.found and not schema.data["every"], schema.rationale
    assert _caps(schema, "structured_output_enforcement") == [4]
    assert _caps(nuance, "judicial_nuance") == [4]


def test_no_evidence_and_another_branch_are_not_the_answer_s_path(tmp_path: Path) -> None:
    schema, nuance = _facts(tmp_path, NO_EVIDENCE)
    assert not schema.found and not nuance.found, schema.rationale
    assert schema.pattern == "failure"  # read, and nothing found
    # an if's else is the other branch, even with the answer's name in it
    schema, nuance = _facts(tmp_path / "other", OTHER_BRANCH)
    assert not schema.found and not nuance.found, schema.rationale


def test_a_default_the_parsed_answer_replaces_is_no_constant(tmp_path: Path) -> None:
    schema, _nuance = _facts(tmp_path, REPLACED)
    assert not schema.found, schema.rationale
    schema, _nuance = _facts(tmp_path / "key", REPLACED_KEY)
    assert not schema.found, schema.rationale


def test_a_score_computed_from_the_reply_or_clamped_is_the_model_s(tmp_path: Path) -> None:
    for name, judge in (("computed", COMPUTED), ("clamped", CLAMPED)):
        schema, _nuance = _facts(tmp_path / name, judge)
        assert not schema.found, (name, schema.rationale)


def test_a_failed_call_s_score_or_a_fallback_branch_is_not_this_fact(tmp_path: Path) -> None:
    for name, judge in (("failed", FAILED), ("branch", FALLBACK_BRANCH)):
        schema, nuance = _facts(tmp_path / name, judge)
        assert not schema.found and not nuance.found, (name, schema.rationale)


def test_no_model_call_read_is_a_neutral_fact(tmp_path: Path) -> None:
    schema, nuance = _facts(tmp_path, source="def helper():\n    return {'score': 3}\n")
    assert not schema.found and schema.pattern == "neutral" and nuance.pattern == "neutral"


SDK_CHAT = '''def prosecutor(state):
    client = Groq()
    response = client.chat.completions.create(model="x", messages=[
        {"role": "user", "content": "judge the evidence"}])
    text = response.choices[0].message.content
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=4, argument=text)]}'''

SDK_MESSAGES = '''def prosecutor(state):
    response = anthropic_client.messages.create(model="x", max_tokens=100, messages=[])
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=4,
                                         argument=response.content[0].text)]}'''


def test_a_provider_sdk_chat_call_is_a_model_call(tmp_path: Path) -> None:
    # ``client.chat.completions.create`` and ``client.messages.create`` answer as the model
    # does: a constant score after them is the code's, not the model's
    for name, judge in (("openai", SDK_CHAT), ("anthropic", SDK_MESSAGES)):
        schema, nuance = _facts(tmp_path / name, judge)
        assert schema.found and nuance.found, (name, schema.rationale)
        assert schema.data["scores"] == ["4"] and schema.data["calls"], (name, schema.data)
