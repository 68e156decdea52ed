"""Persona prompts that reach the judges other than as constants named for a persona
(`judge_prompts`, `personas`): a string handed to a node factory whose node puts it in the
model's messages. A string that only sits in a persona-named function is no prompt."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import by_facet, write_repo

FACETS = ("judges.personas", "judges.collusion", "judges.persona_tone", "judges.persona_text")

# Each persona method hands its stance to a factory whose inner node builds the system
# message from it; the methods' results are the graph's judge nodes.
FACTORY = '''
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from langgraph.graph import StateGraph


class JudicialNodes:
    def __init__(self):
        self.llm = ChatOpenAI(model="gpt-4o")

    def _get_judge_node(self, persona, judge_type):
        def node(state):
            prompt = ChatPromptTemplate.from_messages(
                [("system", f"Persona: {persona}\\n\\nRules: Loading from rubric..."),
                 ("human", "Evaluate this evidence for {criterion_id}: {evidence}")])
            chain = prompt | self.llm
            opinion = chain.invoke({"criterion_id": "x", "evidence": state["evidence"]})
            return {"opinions": [{"judge": judge_type, "text": opinion}]}
        return node

    def prosecutor(self):
        return self._get_judge_node(
            "The critical lens. Focuses on identifying gaps, security flaws, and unmet "
            "requirements. Argues for low scores.", "Prosecutor")

    def defense(self):
        return self._get_judge_node(
            "The optimistic lens. Focuses on rewarding effort, intent, and clever "
            "solutions. Argues for higher scores.", "Defense")

    def tech_lead(self):
        return self._get_judge_node(
            "The pragmatic lens. Focuses on functionality, maintainability, and "
            "architectural soundness.", "TechLead")


def build_graph():
    workflow = StateGraph(dict)
    judges = JudicialNodes()
    workflow.add_node("prosecutor", judges.prosecutor())
    workflow.add_node("defense", judges.defense())
    workflow.add_node("tech_lead", judges.tech_lead())
    return workflow.compile()
'''


def _facts(root: Path, files: dict[str, str]) -> dict[str, Finding]:
    """The persona facts (``judges.persona_text`` only when there are prompts to weigh)."""
    findings, _ = code_findings(root, write_repo(root, files))
    return {facet: by_facet(findings, facet) for facet in FACETS
            if facet != "judges.persona_text" or any(f.facet == facet for f in findings)}


def test_a_prompt_handed_to_a_node_factory_is_the_personas_prompt(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"src/agent.py": FACTORY})
    personas = facts["judges.personas"]
    assert personas.found, personas.rationale
    assert personas.rationale == "Persona prompts found for: Prosecutor, Defense, TechLead."
    words = personas.data["prompt_words"]
    # each persona's own text is the string its method hands the factory, nothing else
    assert {p: c["own_lines"] for p, c in words.items()} == {
        "Prosecutor": ["src/agent.py:23"], "Defense": ["src/agent.py:28"],
        "TechLead": ["src/agent.py:33"]}
    assert "(from src/agent.py:22 self._get_judge_node(...))" in (personas.content or "")
    assert facts["judges.persona_tone"].found
    # one sentence each beside a shared template: thin, as the call is followed
    text = facts["judges.persona_text"]
    assert text.found is False and text.confidence == 0.8
    assert text.data["thin"] == ["Defense", "Prosecutor", "TechLead"]


def test_a_string_handed_to_a_function_that_makes_no_node_is_no_prompt(tmp_path: Path) -> None:
    """The same calls, but the callee returns a dict, not a function it defines: the
    strings never reach a model, so no persona has a prompt."""
    source = FACTORY.replace("        return node\n", "        return {'persona': persona}\n")
    facts = _facts(tmp_path, {"src/agent.py": source})
    assert facts["judges.personas"].found is False
    assert facts["judges.personas"].rationale == "Persona prompts found for: none."


def test_a_bare_string_in_a_persona_named_function_is_no_prompt(tmp_path: Path) -> None:
    """A string that sits in a persona-named function and is handed nowhere (the model is
    sent only the evidence) is not that persona's prompt."""
    source = '''
from langchain_openai import ChatOpenAI

llm = ChatOpenAI(model="gpt-4o")


def prosecutor(state):
    stance = "The critical lens. Focuses on identifying gaps and security flaws."
    return {"opinions": [llm.invoke(state["evidence"])]}


def defense(state):
    stance = "The optimistic lens. Focuses on rewarding effort and intent."
    return {"opinions": [llm.invoke(state["evidence"])]}


def tech_lead(state):
    stance = "The pragmatic lens. Focuses on maintainability and soundness."
    return {"opinions": [llm.invoke(state["evidence"])]}
'''
    facts = _facts(tmp_path, {"src/judges.py": source})
    assert facts["judges.personas"].rationale == "Persona prompts found for: none."
    assert facts["judges.persona_tone"].found is False
