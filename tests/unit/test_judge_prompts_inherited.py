"""Persona judges that are classes with no methods of their own (``class ProsecutorNode(
_JudgeBase): prompt_file = "prosecutor.txt"``): the graph runs their base's code, which
loads the persona's prompt file through a ``@staticmethod``, picks its model with ``self.llm
or self._default_llm()`` and hands the prompt to a wrapper object of the repository whose own
``invoke`` makes the model call (`judge_prompts`, `prompt_eval`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import write_repo
from .test_judge_prompts import PHILOSOPHY

JUDGES = '''
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI


@dataclass
class ProviderJudge:
    model: Any
    bound: Any = None

    def with_structured_output(self, schema):
        self.bound = self.model.with_structured_output(schema)
        return self

    def invoke(self, payload):
        task = f"Criterion: {payload['criterion']}\\nEvidence: {payload['evidence']}"
        return self.bound.invoke([{"role": "system", "content": payload["system_prompt"]},
                                  {"role": "user", "content": task}])


class _JudgeBase:
    judge_name: str
    prompt_file: str

    def __init__(self, llm=None):
        self.llm = llm
        self.system_prompt = self._load_prompt(self.prompt_file)

    def __call__(self, state):
        llm = self.llm {pick} self._default_llm()
        structured = llm.with_structured_output(dict)
        payload = {"criterion": state["criterion"], "evidence": state["evidence"],
                   "system_prompt": self.system_prompt}
        return {"opinions": [structured.invoke(payload)]}

    def _default_llm(self):
        return ProviderJudge(model=ChatOpenAI(model="gpt-4o-mini"))

    @staticmethod
    def _load_prompt(filename):
        return (Path("src") / "prompts" / filename).read_text(encoding="utf-8").strip()


class ProsecutorNode(_JudgeBase):
    judge_name = "Prosecutor"
    prompt_file = "prosecutor.txt"


class DefenseNode(_JudgeBase):
    judge_name = "Defense"
    prompt_file = "defense.txt"


class TechLeadNode(_JudgeBase):
    judge_name = "TechLead"
    prompt_file = "techlead.txt"
'''

GRAPH = '''
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from src.judges import DefenseNode, ProsecutorNode, TechLeadNode


class State(TypedDict):
    criterion: str
    evidence: str
    opinions: list


def build():
    g = StateGraph(State)
    g.add_node("prosecutor", ProsecutorNode())
    g.add_node("defense", DefenseNode())
    g.add_node("techlead", {tech}())
    for name in ("prosecutor", "defense", "techlead"):
        g.add_edge(START, name)
        g.add_edge(name, END)
    return g.compile()


app = build()
'''


def _text(tmp_path: Path, pick: str = "or", tech: str = "TechLeadNode") -> dict[str, Finding]:
    files = write_repo(tmp_path, {
        "src/judges.py": JUDGES.replace("{pick}", pick), "src/graph.py": GRAPH.format(tech=tech),
        **{f"src/prompts/{name}.txt": f"You are the {persona}. {PHILOSOPHY[persona]}"
           for name, persona in (("prosecutor", "Prosecutor"), ("defense", "Defense"),
                                 ("techlead", "TechLead"))}})
    findings, _ = code_findings(tmp_path, files)
    return {f.facet: f for f in findings if f.facet.startswith("judges.")}


def test_method_less_persona_classes_are_followed_to_the_wrappers_model_call(
        tmp_path: Path) -> None:
    facts = _text(tmp_path)
    text = facts["judges.persona_text"]
    assert text.found, text.rationale
    # the wrapper's own invoke is read: the model call is the one inside it
    assert text.location == "src/judges.py:20", text.location
    assert "(from src/judges.py:47 class ProsecutorNode)" in (text.content or "")
    assert "src/prompts/prosecutor.txt:1: You are the Prosecutor. Trust no one" in (
        text.content or "")
    assert min(text.data["own_words"].values()) >= 40
    # one model call per judge: the wrapper's invoke is no second one
    assert "the answer of src/judges.py:20" in facts["judges.one_opinion"].rationale


def test_a_method_less_persona_class_no_code_of_the_graph_names_is_no_entry(
        tmp_path: Path) -> None:
    # the graph makes a DefenseNode under the name "techlead": no TechLead judge runs
    said = _text(tmp_path, tech="DefenseNode")["judges.one_opinion"].data["judges"]
    assert said["TechLead"]["why"] == "its model call was not followed", said
