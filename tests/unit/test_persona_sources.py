"""Persona prompts that reach the judges other than as constants named for a persona
(`judge_prompts`, `persona_data`, `personas`): a string handed to a node factory whose node
puts it in the model's messages, and per-persona entries the judges read from a data file
the code names. A string that only sits in a persona-named function is no prompt."""

from __future__ import annotations

import json
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


LOGIC = {
    "prosecutor": ["If tool execution relies on raw os.system without sandboxing, charge "
                   "with Security Negligence. If Pydantic is missing, score max 2.",
                   "If the graph is purely linear, charge with Orchestration Fraud."],
    "defense": ["Highlight any creative use of AST parsing despite the constraints.",
                "Support simpler graph designs if they reward effort and intent."],
    "tech_lead": ["Assess the state reducers: are they used correctly in parallel?",
                  "Determine if the fan-in aggregates evidence before the judges, a sound "
                  "architecture."],
}
RUBRIC = json.dumps({"dimensions": [
    {"id": f"d{i}", "forensic_instruction": "Trace the repository.",
     "judicial_logic": {p: texts[i] for p, texts in LOGIC.items()}} for i in range(2)]},
    indent=4)
LOADER = '''
import json
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def load_rubric(filename="rubric/rubric.json"):
    with open(BASE_DIR / filename, encoding="utf-8") as f:
        return json.load(f)
'''
# The judges read their persona's logic for one criterion and put it in the system message.
JUDGES = '''
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from utils.config_loader import load_rubric


class BaseJudge:
    def __init__(self, name="BaseJudge", persona="general"):
        self.name = name
        self.persona = persona.lower()
        self.rubric = load_rubric()
        self.llm = ChatOpenAI(model="gpt-4o")

    def evaluate_dimension(self, dimension_id, evidence):
        dim = next(d for d in self.rubric["dimensions"] if d["id"] == dimension_id)
        logic = dim["judicial_logic"].get(self.persona, "Evaluate objectively.")
        prompt = ChatPromptTemplate.from_messages([
            ("system", f"You are the {self.name}. {logic}"),
            ("user", f"Evidence gathered:\\n{evidence}")])
        return self.llm.invoke(prompt.format_messages(evidence=evidence))


class Prosecutor(BaseJudge):
    def __init__(self):
        super().__init__(name="Prosecutor", persona="prosecutor")


class Defense(BaseJudge):
    def __init__(self):
        super().__init__(name="Defense", persona="defense")


class TechLead(BaseJudge):
    def __init__(self):
        super().__init__(name="TechLead", persona="tech_lead")
'''


def test_persona_logic_read_from_the_rubric_file_is_each_personas_text(
        tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"rubric/rubric.json": RUBRIC,
                              "utils/config_loader.py": LOADER, "src/judges.py": JUDGES})
    personas = facts["judges.personas"]
    assert personas.found, personas.rationale
    content = personas.content or ""
    assert "read by persona at src/judges.py:16, reaching the prompt at src/judges.py:17" \
        in content
    assert "rubric/rubric.json:7: If tool execution relies on raw os.system" in content
    assert "rubric/rubric.json:16: If the graph is purely linear" in content
    assert not facts["judges.collusion"].found
    assert facts["judges.persona_tone"].found
    # one read gives one entry: each persona's own text per call is its longest entry,
    # under 40 words, and the entry is seen to reach the prompt
    text = facts["judges.persona_text"]
    assert text.found is False and text.data["followed"] is True and text.confidence == 0.8
    assert text.data["own_words"] == {"Prosecutor": 21, "Defense": 10, "TechLead": 13}


def test_a_rubric_the_code_does_not_read_by_persona_gives_no_prompt(tmp_path: Path) -> None:
    """The same data, but the judges hand the model the whole judicial_logic mapping (no
    read by persona), or the code never names the file: no persona prompt."""
    whole = JUDGES.replace('dim["judicial_logic"].get(self.persona, "Evaluate objectively.")',
                           'str(dim["judicial_logic"])')
    unnamed = LOADER.replace("rubric/rubric.json", "config/settings.toml")
    for name, files in (("whole", {"utils/config_loader.py": LOADER, "src/judges.py": whole}),
                        ("unnamed", {"utils/config_loader.py": unnamed,
                                     "src/judges.py": JUDGES})):
        facts = _facts(tmp_path / name, {"rubric/rubric.json": RUBRIC, **files})
        assert facts["judges.personas"].rationale == "Persona prompts found for: none.", name


def test_data_files_load_without_aliases_or_hostile_nesting() -> None:
    from automaton_auditor.forensics.code.data_files import load_data

    assert load_data("p.yaml", "prosecutor: argue low\ndefense: argue high\n") == {
        "prosecutor": "argue low", "defense": "argue high"}
    assert load_data("p.json", '{"a": [1]}') == {"a": [1]}
    # nine aliases a level: a walk over it would visit 9**levels strings
    bomb = "a: &a [x, y]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b]\n"
    assert load_data("p.yml", bomb) is None
    assert load_data("p.json", "[" * 100_000 + "]" * 100_000) is None


def test_a_prompt_file_named_for_a_persona_beats_a_longer_string_that_mentions_it(
        tmp_path: Path) -> None:
    """nebiyuephrata: the Chief Justice's remark "Defense arguments cited unverifiable
    evidence ..." was taken as the Defense prompt over src/prompts/defense.txt, and the
    Prosecutor's "Trust no one ... unsafe tooling" read as no adversarial tone."""
    facts = _facts(tmp_path, {
        "src/prompts/prosecutor.txt": "You are the Prosecutor. Trust no one. Focus on "
                                      "architectural violations and unsafe tooling.",
        "src/prompts/defense.txt": "You are the Defense. Reward effort and emerging "
                                   "structure, but cite only verified evidence.",
        "src/prompts/tech_lead.txt": "You are the Tech Lead. Weigh maintainability.",
        "src/nodes/justice.py": 'def synthesize(state):\n    note = ("Defense arguments cited '
                                'unverifiable evidence. Add strict evidence cross-checks to '
                                'block hallucinated acceptance paths in every future run.")\n'
                                '    return {"note": note}\n'})
    personas = facts["judges.personas"]
    assert personas.data["locations"]["Defense"] == "src/prompts/defense.txt:1"
    assert facts["judges.persona_tone"].data["tone"] == {
        "Prosecutor": True, "Defense": True, "TechLead": True}


# YohannesDereje: one prompt built for all three judges, whose persona part is the rubric's
# ``judicial_logic[judge_key]`` entry, loaded with ``json.load`` from a path built off
# ``__file__`` (``parents[2]``); each node passes its own key.
LOADED = '''
import json
from pathlib import Path
from langchain_openai import ChatOpenAI

RUBRIC_PATH = Path(__file__).resolve().parents[2] / "rubric.json"


def load_rubric():
    with RUBRIC_PATH.open("r", encoding="utf-8") as file:
        return json.load(file)


def run_judge(state, *, judge_key, judge_label):
    logic = load_rubric().get("judicial_logic", {}).get(judge_key, {})
    prompt = (f"You are the {judge_label} in a Digital Courtroom.\\n"
              f"Core Philosophy: {logic.get('core_philosophy', '')}\\n"
              f"Focus Areas: {json.dumps(logic.get('focus', []))}\\n"
              f"Evidence: {state['evidence']}")
    return {"opinions": [ChatOpenAI(model="gpt-4o").invoke(prompt)]}


def prosecutor_node(state):
    return run_judge(state, judge_key="prosecutor", judge_label="Prosecutor")


def defense_node(state):
    return run_judge(state, judge_key="defense", judge_label="Defense")


def tech_lead_node(state):
    return run_judge(state, judge_key="tech_lead", judge_label="TechLead")
'''
LOGIC_BY_PERSONA = json.dumps({"judicial_logic": {
    "prosecutor": {"core_philosophy": "Trust No One. Assume Vibe Coding.",
                   "focus": ["security flaws", "missing artifacts"]},
    "defense": {"core_philosophy": "Reward Effort and Intent. Look for the Spirit of the Law.",
                "focus": ["engineering intent", "creative workarounds"]},
    "tech_lead": {"core_philosophy": "Does it actually work? Is it maintainable?",
                  "focus": ["architectural soundness", "technical debt impact"]}}}, indent=2)


def test_a_rubric_the_judges_load_puts_each_personas_entry_in_its_prompt(
        tmp_path: Path) -> None:
    """The loaded file's strings are prompt text with their lines: each persona's entry is
    its own (not 0 words beside its name), and the entries are not one shared text."""
    facts = _facts(tmp_path, {"rubric.json": LOGIC_BY_PERSONA,
                              "src/nodes/judges.py": LOADED})
    text = facts["judges.persona_text"]
    words = text.data["own_words"]
    # "Trust No One. Assume Vibe Coding." (6 words) and its two focus items (4): 10
    assert words == {"Prosecutor": 10, "Defense": 15, "TechLead": 12}, text.rationale
    assert facts["judges.persona_tone"].found
    collusion = facts["judges.collusion"]
    assert collusion.found is False, collusion.rationale
    assert "rubric.json:4" in (facts["judges.personas"].content or "")


def test_a_loaded_data_file_is_read_bounded_and_only_inside_the_repository(
        tmp_path: Path) -> None:
    """The rubric the judges load is hostile input too: a link out of the repository, a
    file past the size bound and a path above the root give no data; strings past the
    count bound give none either, and the rest keep their lines."""
    from automaton_auditor.forensics.code.data_files import MAX_DATA_BYTES, MAX_STRINGS
    from automaton_auditor.forensics.code.prompt_values import Program, RepoPath

    outside = tmp_path / "outside.json"
    outside.write_text('{"judicial_logic": {"prosecutor": "secret"}}')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "linked.json").symlink_to(outside)
    (repo / "big.json").write_text('{"a": "' + "x" * MAX_DATA_BYTES + '"}')
    (repo / "many.json").write_text(json.dumps([f"s{n}" for n in range(MAX_STRINGS + 5)],
                                               indent=1))
    program = Program(repo, [])
    assert program.data_file(RepoPath("linked.json")) is None
    assert program.data_file(RepoPath("big.json")) is None
    assert program.data_file(RepoPath("../outside.json")) is None
    many = program.data_file(RepoPath("many.json"))
    assert many[-1] is None and many[MAX_STRINGS - 1].parts == (
        (f"s{MAX_STRINGS - 1}", f"many.json:{MAX_STRINGS + 1}"),)
