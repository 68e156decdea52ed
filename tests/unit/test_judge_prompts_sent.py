"""Judges told their persona only by a ``Send`` payload (`sent_personas`): the fan-out loops
over a list of persona names and sends each in a payload key to one node, which picks the
persona's philosophy by that key; each persona's prompt is then read."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import write_repo
from .test_judge_prompts import PHILOSOPHY

JUDGES = '''
from typing import TypedDict

from langchain_openai import ChatOpenAI
from langgraph.types import Send

PROSECUTOR = "{prosecutor}"
DEFENSE = "{defense}"
TECH_LEAD = "{tech_lead}"


class Task(TypedDict):
    judge_name: str
    criterion: str
    evidence: str


def philosophy(name):
    if name == "Prosecutor":
        return PROSECUTOR
    if name == "Defense":
        return DEFENSE
    return TECH_LEAD


def evaluate(task):
    judge = task["judge_name"]
    system = f"You are the {{judge}}. {{philosophy(judge)}}"
    llm = ChatOpenAI(model="gpt-4o-mini")
    answer = llm.invoke([("system", system), ("human", task["evidence"])])
    return {{"opinions": [answer]}}


def fan_out(state):
    judges = {names}
    sends = []
    for criterion in state["criteria"]:
        for judge in judges:
            task = Task(judge_name=judge, criterion=criterion, evidence=state["evidence"])
            sends.append(Send("evaluate", task))
    return sends
'''

GRAPH = '''
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from judges import evaluate, fan_out


class State(TypedDict):
    criteria: list
    evidence: str
    opinions: list


g = StateGraph(State)
g.add_node("collect", lambda s: {})
g.add_node("evaluate", evaluate)
g.add_edge(START, "collect")
g.add_conditional_edges("collect", fan_out, ["evaluate"])
g.add_edge("evaluate", END)
app = g.compile()
'''


def _facts(tmp_path: Path, names: str) -> dict[str, Finding]:
    files = write_repo(tmp_path, {"graph.py": GRAPH, "judges.py": JUDGES.format(
        prosecutor=PHILOSOPHY["Prosecutor"], defense=PHILOSOPHY["Defense"],
        tech_lead=PHILOSOPHY["TechLead"], names=names)})
    findings, _ = code_findings(tmp_path, files)
    return {f.facet: f for f in findings if f.facet.startswith("judges.")}


def test_personas_named_only_in_a_send_payload_are_each_followed(tmp_path: Path) -> None:
    facts = _facts(tmp_path, '["Prosecutor", "Defense", "TechLead"]')
    text = facts["judges.persona_text"]
    assert text.found, text.rationale
    assert text.location == "judges.py:30"  # llm.invoke(...)
    assert "(from judges.py:40 Send('evaluate', {'judge_name': 'Prosecutor'}))" in (
        text.content or "")
    assert min(text.data["own_words"].values()) >= 40
    assert "sends to node evaluate with Send" in facts["judges.one_opinion"].rationale


def test_a_payload_naming_one_persona_is_no_entry(tmp_path: Path) -> None:
    facts = _facts(tmp_path, '["Prosecutor"]')
    assert "Send(" not in (facts["judges.personas"].content or ""), facts["judges.personas"]
    assert "judges.persona_text" not in facts or not facts["judges.persona_text"].found
