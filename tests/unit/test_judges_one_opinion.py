"""Judges that give one opinion per run (`forensics.code.judge_coverage`): each persona's
node makes one model call bound to a single-opinion schema, in no loop, and the graph runs
the node once, so each judge rules on one criterion, not on every criterion. A loop over the
criteria, a Send per criterion, a schema holding a list of opinions or a cycle means it may
rule on several (not confirmed); a call whose schema is not known is not established."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import Finding
from tests.conftest import make_evidence

from .test_code_ast_graph import by_facet, write_repo

STATE = '''
import operator
from typing import Annotated, Dict, List, Literal, TypedDict
from pydantic import BaseModel, Field


class JudicialOpinion(BaseModel):
    judge: Literal["Prosecutor", "Defense", "TechLead"]
    criterion_id: str
    score: int = Field(ge=1, le=5)
    argument: str
    cited_evidence: List[str]


class Verdicts(BaseModel):
    opinions: List[JudicialOpinion]


class AgentState(TypedDict):
    evidences: Dict[str, list]
    criteria: List[str]
    opinions: Annotated[List[JudicialOpinion], operator.add]
'''

JUDGES = '''
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from agents_lib import ExternalOpinion
from state import JudicialOpinion, Verdicts

llm = ChatOpenAI(model="gpt-4o-mini")
PROSECUTOR = "You are the Prosecutor: trust no one, hunt for gaps, security flaws and laziness."
DEFENSE = "You are the Defense: reward effort and intent, credit creative workarounds."
TECH_LEAD = "You are the Tech Lead: weigh architecture, maintainability and practical viability."


def run_judge(persona, state):
    prompt = ChatPromptTemplate.from_messages([("system", persona), ("human", "{{e}}")])
    chain = prompt | llm.with_structured_output({schema})
{body}


def prosecutor_node(state):
    return run_judge(PROSECUTOR, state)


def defense_node(state):
    return run_judge(DEFENSE, state)


def tech_lead_node(state):
    return run_judge(TECH_LEAD, state)
'''
ONE_CALL = '''    opinion = chain.invoke({"e": str(state["evidences"])})
    return {"opinions": [opinion]}'''
LOOP = '''    opinions = []
    for criterion in state["criteria"]:
        opinions.append(chain.invoke({"e": criterion}))
    return {"opinions": opinions}'''
RETRY = '''    for attempt in range(3):
        try:
            opinion = chain.invoke({"e": str(state["evidences"])})
            return {"opinions": [opinion]}
        except ValueError:
            continue
    return {"opinions": []}'''
HANDLER_RETRY = '''    try:
        opinion = chain.invoke({"e": str(state["evidences"])})
    except Exception:
        opinion = chain.invoke({"e": "Previous output was malformed."})
    return {"opinions": [opinion]}'''
LOOP_AND_RETRY = '''    opinions = []
    for criterion in state["criteria"]:
        for attempt in range(3):
            try:
                opinion = chain.invoke({"e": criterion})
                break
            except ValueError:
                continue
        opinions.append(opinion)
    return {"opinions": opinions}'''

GRAPH = '''
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from judges import defense_node, prosecutor_node, tech_lead_node
from state import AgentState


def chief(state):
    return {{}}


def fan_out(state):
    return [Send(name, {{"criteria": [c], "evidences": state["evidences"]}})
            for c in state["criteria"] for name in ("prosecutor", "defense", "tech_lead")]


def again(state):
    return "prosecutor" if len(state["opinions"]) < 30 else END


g = StateGraph(AgentState)
g.add_node("collect", chief)
g.add_node("prosecutor", prosecutor_node)
g.add_node("defense", defense_node)
g.add_node("tech_lead", tech_lead_node)
g.add_node("chief_justice", chief)
g.add_edge(START, "collect")
{fan}
g.add_edge(["prosecutor", "defense", "tech_lead"], "chief_justice")
{end}
app = g.compile()
'''
STATIC = '''g.add_edge("collect", "prosecutor")
g.add_edge("collect", "defense")
g.add_edge("collect", "tech_lead")'''
SEND = 'g.add_conditional_edges("collect", fan_out, ["prosecutor", "defense", "tech_lead"])'
FINISH = 'g.add_edge("chief_justice", END)'
CYCLE = 'g.add_conditional_edges("chief_justice", again, ["prosecutor", END])'


def _fact(tmp_path: Path, body: str = ONE_CALL, schema: str = "JudicialOpinion",
          fan: str = STATIC, end: str = FINISH) -> Finding:
    files = write_repo(tmp_path, {
        "state.py": STATE, "judges.py": JUDGES.format(schema=schema, body=body),
        "graph.py": GRAPH.format(fan=fan, end=end)})
    findings, _ = code_findings(tmp_path, files)
    return by_facet(findings, "judges.one_opinion")


def test_one_structured_call_per_persona_node_gives_one_opinion_per_run(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path)
    assert fact.found and fact.pattern == "failure", fact.rationale
    assert fact.location.startswith("judges.py:")
    assert "bound to JudicialOpinion" in fact.rationale
    assert "chain.invoke" in (fact.content or "") and 'add_node("prosecutor"' in (
        fact.content or "")
    assert set(fact.data["judges"]) == {"Prosecutor", "Defense", "TechLead"}
    # a failure-supporting fact of judicial_nuance: the Prosecutor charges it
    dimension = next(d for d in load_rubric().dimensions if d.id == "judicial_nuance")
    evidence = make_evidence(facet=fact.facet, goal=fact.goal, found=True,
                             pattern="failure", confidence=fact.confidence,
                             dimension="judicial_nuance")
    opinion = offline_opinion("Prosecutor", dimension, [evidence])
    assert opinion.charges


def test_a_retry_loop_left_once_the_call_succeeds_is_still_one_opinion(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path, body=RETRY)
    assert fact.found, fact.rationale


def test_a_call_made_again_in_its_except_handler_is_still_one_opinion(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path, body=HANDLER_RETRY)
    assert fact.found, fact.rationale
    assert "one model call at judges.py:17" in fact.rationale


def test_a_loop_over_the_criteria_is_not_one_opinion(tmp_path: Path) -> None:
    fact = _fact(tmp_path, body=LOOP)
    assert not fact.found and fact.rationale.startswith("Not confirmed"), fact.rationale
    assert "loop" in fact.rationale


def test_a_retry_loop_inside_a_loop_over_the_criteria_is_not_one_opinion(
        tmp_path: Path) -> None:
    # the break leaves the retry loop only: the loop over the criteria goes on
    fact = _fact(tmp_path, body=LOOP_AND_RETRY)
    assert not fact.found and "loop" in fact.rationale, fact.rationale


def test_a_schema_holding_a_list_of_opinions_is_not_one_opinion(tmp_path: Path) -> None:
    fact = _fact(tmp_path, schema="Verdicts")
    assert not fact.found and fact.rationale.startswith("Not confirmed"), fact.rationale
    assert "opinions" in fact.rationale and ")  its" not in fact.rationale


def test_a_send_per_criterion_is_not_one_opinion(tmp_path: Path) -> None:
    fact = _fact(tmp_path, fan=SEND)
    assert not fact.found and "Send" in fact.rationale, fact.rationale


def test_a_judge_node_re_entered_through_a_cycle_is_not_one_opinion(tmp_path: Path) -> None:
    fact = _fact(tmp_path, end=CYCLE)
    assert not fact.found and "cycle" in fact.rationale, fact.rationale


def test_an_unresolved_schema_leaves_the_fact_not_established(tmp_path: Path) -> None:
    # bound to a model defined outside the repository: its fields are not known
    fact = _fact(tmp_path, schema="ExternalOpinion")
    assert not fact.found and fact.rationale.startswith("Not established"), fact.rationale
    assert fact.data["established"] is False


LAMBDA_IN_LOOP = '''    opinions = []
    for criterion in state["criteria"]:
        opinions.append(with_backoff(lambda: chain.invoke({"e": criterion})))
    return {"opinions": opinions}'''
LAMBDA_ONCE = '''    return {"opinions": [with_backoff(lambda: chain.invoke({"e": "all"}))]}'''


def test_a_call_in_a_lambda_handed_to_a_helper_in_a_loop_is_followed(tmp_path: Path) -> None:
    # the lambda runs in the helper it is handed to: its model call is the judges' (it was
    # "not followed" when the evaluator did not read a lambda's body)
    fact = _fact(tmp_path, body=LAMBDA_IN_LOOP)
    assert not fact.found and fact.rationale.startswith("Not confirmed"), fact.rationale
    assert "runs in a loop (judges.py:17)" in fact.rationale


def test_a_call_in_a_lambda_outside_a_loop_may_run_more_than_once(tmp_path: Path) -> None:
    # who calls the lambda, and how often, is not read: never confirmed, never "a loop"
    fact = _fact(tmp_path, body=LAMBDA_ONCE)
    assert not fact.found and "made in a lambda" in fact.rationale, fact.rationale
    assert "runs in a loop" not in fact.rationale


CLASS_JUDGES = '''
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI

RUBRIC = load_rubric()


class BaseJudge:
    def __init__(self, name):
        self.name = name
        self.llm = ChatOpenAI(model="gpt-4o-mini")

    def evaluate(self, criterion, evidence):
        logic = criterion["judicial_logic"].get(self.name)
        prompt = ChatPromptTemplate.from_messages([("system", f"You are the {self.name}. {logic}")])
        response = self.llm.invoke(prompt.format_messages(evidence=evidence))
        return {"judge": self.name, "argument": response.content}


class Prosecutor(BaseJudge):
    def __init__(self):
        super().__init__("Prosecutor")


class Defense(BaseJudge):
    def __init__(self):
        super().__init__("Defense")


class TechLead(BaseJudge):
    def __init__(self):
        super().__init__("TechLead")


def judges_node(state):
    judges = [Prosecutor(), Defense(), TechLead()]
    opinions = []
    for criterion in state["criteria"]:
        for judge in judges:
            opinions.append(judge.evaluate(criterion, state["evidences"]))
    return {"opinions": opinions}
'''
CLASS_GRAPH = '''
from langgraph.graph import END, START, StateGraph
from judges import judges_node
from state import AgentState

g = StateGraph(AgentState)
g.add_node("judges", judges_node)
g.add_edge(START, "judges")
g.add_edge("judges", END)
app = g.compile()
'''


def test_a_model_call_handed_text_that_is_not_read_is_still_followed(tmp_path: Path) -> None:
    # ``self.llm.invoke(prompt.format_messages(...))``: the text the model is handed is not
    # read, but the call is a model call (the call facts' ``llm_invoke``): its route is read
    # (the judges' node calls every judge once per criterion), and the persona facts, which
    # need the text, do not claim the prompt holds no persona text
    files = write_repo(tmp_path, {"state.py": STATE, "judges.py": CLASS_JUDGES,
                                  "graph.py": CLASS_GRAPH})
    findings, _ = code_findings(tmp_path, files)
    fact = by_facet(findings, "judges.one_opinion")
    assert not fact.found and fact.rationale.startswith("Not confirmed"), fact.rationale
    assert "evaluate is called in a loop (judges.py:" in fact.rationale
    assert fact.data["established"] is True
    assert not any("own text 0 words" in (f.content or "") or "differ only by" in f.rationale
                   for f in findings if f.facet.startswith("judges."))


TWO_CALLS_IN_A_LOOP = '''    opinions = []
    for criterion in state["criteria"]:
        draft = chain.invoke({"e": criterion})
        opinions.append(chain.invoke({"e": str(draft)}))
    return {"opinions": opinions}'''


def test_two_model_calls_in_a_loop_are_several_opinions(tmp_path: Path) -> None:
    # how the criteria split between the calls is not read, but both run once per item
    fact = _fact(tmp_path, body=TWO_CALLS_IN_A_LOOP)
    assert not fact.found and fact.rationale.startswith("Not confirmed"), fact.rationale
    assert "runs in a loop (judges.py:17)" in fact.rationale
    assert fact.data["established"] is True


OWN_JUDGES = '''
from langchain_openai import ChatOpenAI


class BaseJudge:
    persona = ""

    def __init__(self):
        self.llm = ChatOpenAI(model="gpt-4o-mini")

    def evaluate(self, dim, evidence):
        answer = self.llm.invoke([("system", self.prompt), ("human", dim + evidence)])
        return {"judge": self.persona, "criterion": dim, "text": answer.content}


class Prosecutor(BaseJudge):
    persona = "Prosecutor"
    prompt = "You are the Prosecutor: trust no one, hunt for gaps, security flaws and laziness."

    def __init__(self):
        super().__init__()
        self.seen = []


class Defense(BaseJudge):
    persona = "Defense"
    prompt = "You are the Defense: reward effort and intent, credit creative workarounds."

    def __init__(self):
        super().__init__()
        self.seen = []


class TechLead(BaseJudge):
    persona = "TechLead"
    prompt = "You are the Tech Lead: weigh architecture, maintainability and viability."

    def __init__(self):
        super().__init__()
        self.seen = []
'''
OWN_GRAPH = '''
from judges import Defense, Prosecutor, TechLead


class StateGraph:
    """The repository's own runner."""

    def __init__(self):
        self.nodes = {}

    def add_node(self, name, fn):
        self.nodes[name] = fn

    def run(self, state):
        for fn in self.nodes.values():
            state = fn(state)
        return state


def judge_node(state):
    judges = [Prosecutor(), Defense(), TechLead()]
    for dim in state["criteria"]:
        for judge in judges:
            state["opinions"].append(judge.evaluate(dim, state["evidence"]))
    return state


builder = StateGraph()
builder.add_node("judges", judge_node)
'''


def test_a_loop_in_a_caller_gives_several_opinions_when_the_wiring_is_not_known(
        tmp_path: Path) -> None:
    # the repository's own graph class: its wiring is not read, but the node that calls the
    # judges loops over the criteria, so each judge may rule on several
    files = write_repo(tmp_path, {"judges.py": OWN_JUDGES, "graph.py": OWN_GRAPH})
    findings, _ = code_findings(tmp_path, files)
    fact = by_facet(findings, "judges.one_opinion")
    assert not fact.found and fact.rationale.startswith("Not confirmed"), fact.rationale
    assert "called in a loop (graph.py:22)" in fact.rationale
    assert fact.data["established"]


def test_a_loop_over_the_judges_themselves_calls_each_once(tmp_path: Path) -> None:
    # ``for judge in judges: judge.evaluate(...)`` calls every judge once: no several opinions
    graph = OWN_GRAPH.replace('for dim in state["criteria"]:\n        for judge in judges:\n'
                              '            state["opinions"].append(judge.evaluate(dim, ',
                              'for judge in judges:\n        if judge:\n'
                              '            state["opinions"].append(judge.evaluate("all", ')
    assert graph != OWN_GRAPH
    files = write_repo(tmp_path, {"judges.py": OWN_JUDGES, "graph.py": graph})
    findings, _ = code_findings(tmp_path, files)
    fact = by_facet(findings, "judges.one_opinion")
    assert "loop" not in fact.rationale and not fact.data["established"], fact.rationale
