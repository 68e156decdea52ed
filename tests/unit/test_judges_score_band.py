"""Persona prompts that fix their judge's score band (`forensics.code.score_bands`):
``judges.score_band`` quotes the decrees (``Never 4-5.``, ``4 = Strictly prohibited``); a
condition (``unless``) leaves the evidence to decide; a band caps judicial nuance only when
every persona has one; and ``justice.rules`` says a rule whose test a judge's own prompt
always satisfies fires whatever the evidence."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.score_bands import forbidden_by
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.judging.offline import evidence_balance, offline_opinion
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import Finding
from tests.conftest import make_evidence

from .test_code_ast_graph import by_facet, write_repo

JUDGES = '''
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

llm = ChatOpenAI(model="gpt-4o-mini")


class Opinion(BaseModel):
    judge: str
    criterion_id: str
    score: int
    argument: str


PROSECUTOR = """You are the Prosecutor: trust no one, hunt for gaps, security flaws and laziness.
Flag missing sandboxing and untyped state.
{low}
1 = Deceptive claims. 3 = Competent work."""
DEFENSE = """You are the Defense: reward effort and intent, credit creative workarounds.
Look for growth in the history.
{high}
3 = Minimum effort. 5 = Master thinker intent."""
TECH_LEAD = """You are the Tech Lead: weigh architecture, maintainability and viability.
{tech}"""


def run_judge(persona, state):
    prompt = ChatPromptTemplate.from_messages([("system", persona), ("human", "{{e}}")])
    chain = prompt | llm.with_structured_output(Opinion)
    return {{"opinions": [chain.invoke({{"e": str(state["evidences"])}})]}}


def prosecutor_node(state):
    opinion = run_judge(PROSECUTOR, state)
    return opinion


def defense_node(state):
    opinion = run_judge(DEFENSE, state)
    return opinion


def tech_lead_node(state):
    opinion = run_judge(TECH_LEAD, state)
    return opinion
'''

JUSTICE = '''
def chief_justice(state):
    out = {}
    for cid in state["criteria"]:
        scores = {o.judge: o.score for o in state["opinions"] if o.criterion_id == cid}
        final = round(sum(scores.values()) / len(scores))
        if "safe" in cid:
            if scores["Prosecutor"] <= 3:
                final = min(scores["TechLead"], 3)
        if scores["TechLead"] >= 4 and cid == "graph_orchestration":
            final = scores["TechLead"]
        out[cid] = final
    return {"final": out}
'''

GRAPH = '''
from typing import TypedDict
from langgraph.graph import END, START, StateGraph
from judges import defense_node, prosecutor_node, tech_lead_node
from justice import chief_justice


class AgentState(TypedDict):
    evidences: dict
    criteria: list
    opinions: list
    final: dict


def collect(state):
    return {}


g = StateGraph(AgentState)
g.add_node("collect", collect)
g.add_node("prosecutor", prosecutor_node)
g.add_node("defense", defense_node)
g.add_node("tech_lead", tech_lead_node)
g.add_node("chief_justice", chief_justice)
g.add_edge(START, "collect")
g.add_edge("collect", "prosecutor")
g.add_edge("collect", "defense")
g.add_edge("collect", "tech_lead")
g.add_edge(["prosecutor", "defense", "tech_lead"], "chief_justice")
g.add_edge("chief_justice", END)
app = g.compile()
'''

LOW = "Provide scores 1-2 for most items. Never 4-5.\n4 = Strictly prohibited for your persona."
HIGH = "Provide scores 4-5 for any reasonable effort. Never 1-2."
FREE = "Provide realistic 1, 3 or 5 scores."


def _findings(tmp_path: Path, low: str = LOW, high: str = HIGH,
              tech: str = FREE) -> dict[str, Finding]:
    files = write_repo(tmp_path, {
        "judges.py": JUDGES.format(low=low, high=high, tech=tech), "justice.py": JUSTICE,
        "graph.py": GRAPH})
    findings, _ = code_findings(tmp_path, files)
    return {f: by_facet(findings, f) for f in ("judges.score_band", "justice.rules")}


def test_a_prompt_that_forbids_scores_outright_fixes_its_band(tmp_path: Path) -> None:
    fact = _findings(tmp_path)["judges.score_band"]
    assert fact.found and fact.pattern == "neutral", fact.rationale  # some banded: context
    assert fact.data["bands"] == {"Prosecutor": [1, 3], "Defense": [3, 5]}
    assert fact.data["free"] == ["TechLead"] and fact.data["cap"] is None
    assert "judges.py:18: Provide scores 1-2 for most items. Never 4-5." in (fact.content or "")
    assert "judges.py:19: 4 = Strictly prohibited" in (fact.content or "")
    assert "'Never 1-2.'" in fact.rationale and "TechLead prompt(s) fix no band" in \
        fact.rationale


def test_a_band_on_some_personas_caps_nothing_and_weighs_nothing(tmp_path: Path) -> None:
    fact = _findings(tmp_path)["judges.score_band"]
    evidence = make_evidence(facet=fact.facet, goal=fact.goal, found=True,
                             pattern=fact.pattern, confidence=fact.confidence,
                             dimension="judicial_nuance", data=fact.data)
    assert not confirmed_caps("judicial_nuance", [evidence])
    assert evidence_balance([evidence]) == (0, 0)  # context only, never weighed
    assert not offline_opinion("Prosecutor", load_rubric().dimension("judicial_nuance"),
                               [evidence]).charges


def test_every_persona_banded_is_no_full_marks(tmp_path: Path) -> None:
    fact = _findings(tmp_path, tech="Never score above 4.")["judges.score_band"]
    assert fact.data["bands"]["TechLead"] == [1, 4] and fact.data["cap"] == 4, fact.rationale
    assert "disagree by decree" in fact.rationale and fact.pattern == "failure"
    evidence = make_evidence(facet=fact.facet, goal=fact.goal, found=True, pattern="failure",
                             confidence=fact.confidence, dimension="judicial_nuance",
                             data=fact.data)
    assert confirmed_caps("judicial_nuance", [evidence])[0][0].cap == 4


def test_a_conditional_or_a_gapped_decree_fixes_no_band(tmp_path: Path) -> None:
    fact = _findings(tmp_path, low="NEVER give a 5 unless the evidence is overwhelming.",
                     high="Only give 1-2 if there is truly zero effort.",
                     tech="Produce scores 1, 3, or 5 ONLY (never 2 or 4).")["judges.score_band"]
    assert not fact.found and fact.data["bands"] == {}, fact.rationale


def test_the_decrees_read() -> None:
    assert forbidden_by("Never 4-5.") == {4, 5}
    assert forbidden_by("never 2 or 4") == {2, 4}
    assert forbidden_by("5 = Stricly prohibited for your persona.") == {5}
    assert forbidden_by("Do not give scores below 3.") == {1, 2}
    assert forbidden_by("Never score above 3/5.") == {4, 5}
    assert forbidden_by("Never give 5 without tests.") == set()
    assert forbidden_by("Never 3 commits in a row.") == set()


def test_a_rule_a_judge_s_prompt_always_triggers_is_told_unconditional(
        tmp_path: Path) -> None:
    rules = _findings(tmp_path)["justice.rules"]
    assert "`if scores[\"Prosecutor\"] <= 3:`, justice.py:8 holds on every score the " \
        "Prosecutor's own prompt lets it give (1-3: 'Never 4-5.', judges.py:18)" in \
        rules.rationale, rules.rationale
    assert "(unconditional)" in rules.rationale
    # a test the band does not decide (the TechLead's prompt fixes none) is not told so
    assert "justice.py:10" not in rules.rationale


def test_a_rule_the_band_does_not_decide_is_not_told_unconditional(tmp_path: Path) -> None:
    rules = _findings(tmp_path, low="Never 5.")["justice.rules"]
    assert "unconditional" not in rules.rationale, rules.rationale
