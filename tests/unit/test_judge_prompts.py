"""Judicial nuance from the text each judge's model call receives (`prompt_eval`,
`judge_prompts`, `personas`): a persona field that never reaches the prompt counts for
nothing, a shared template filled with a name is one prompt, and a dict of persona configs
whose philosophies reach the prompt makes three distinct judges."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.personas import thin_cap
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence, Finding
from tests.conftest import make_evidence

from .test_code_ast_graph import by_facet, write_repo

# The persona's description and criteria are class attributes the template never reads.
NAME_ONLY = '''
class JudgeBase:
    persona_name = "Judge"
    persona_description = ""
    focus = ""

    def __init__(self, llm):
        self.llm = llm

    def _prompt(self, evidence):
        return f"""ROLE: {self.persona_name}
        The 'judge' field MUST be exactly "{self.persona_name}".
        Return JSON with judge, criterion_id, score (1-5), argument and cited_evidence.
        EVIDENCE:
        {evidence}"""

    def review(self, evidence):
        prompt = self._prompt(evidence)
        return self.llm.invoke(prompt)


class Prosecutor(JudgeBase):
    persona_name = "Prosecutor"
    persona_description = ("You are a skeptical auditor who hunts for gaps, security "
                           "flaws, lazy shortcuts and hallucinated claims in every "
                           "artifact, and who never rewards intent.")
    focus = "Look for missing schemas, shell injection and a shallow history."


class Defense(JudgeBase):
    persona_name = "Defense"
    persona_description = ("You are the developer's advocate: reward effort, intent, "
                           "creative workarounds and the spirit of the law, and argue "
                           "for the highest defensible score.")
    focus = "Look for iterative commits and partial implementations."


class TechLead(JudgeBase):
    persona_name = "TechLead"
    persona_description = ("You are a pragmatic architect who weighs maintainability, "
                           "technical debt and whether the system actually runs in production.")
    focus = "Look for fan-out, reducers and typed state."
'''

PHILOSOPHY = {
    "Prosecutor": ("Trust no one and assume vibe coding. Hunt for gaps, security flaws, lazy "
                   "shortcuts and hallucinated claims; a missing artifact scores 1, linear "
                   "flow where parallel orchestration was required scores 1, and absent "
                   "sandboxing is security negligence. Be harsh: look for what is missing, "
                   "never for what is present, and cite the evidence that proves each gap."),
    "Defense": ("Reward effort and intent and look for the spirit of the law. Credit creative "
                "workarounds, iterative commits and deep understanding despite flaws; argue "
                "for a 3 or 4 when the code shows understanding but breaks, and boost the "
                "score when the history shows an engineering process. Be generous: look for "
                "what is present and the intent behind it, citing the evidence."),
    "TechLead": ("Does it actually work and is it maintainable? Weigh architectural "
                 "soundness, modularity, technical debt and practical viability over effort "
                 "or vibe. Modular and workable architecture scores 4 or 5, working code with "
                 "debt scores 3, compromised security scores 1 or 2 whatever else holds. Be "
                 "pragmatic: judge the artifacts, not the intent, and cite the evidence."),
}

CONFIG_DICT = '''
from langchain_core.messages import HumanMessage, SystemMessage

PERSONA_CONFIG = {
''' + "".join(f'    "{p}": {{"philosophy": "{t}", "unused": "x"}},\n'
              for p, t in PHILOSOPHY.items()) + '''}


def _system_prompt(persona, criterion, evidence):
    cfg = PERSONA_CONFIG[persona]
    return (
        f"You are the {persona} in a digital courtroom.\\n"
        f"Your philosophy: {cfg['philosophy']}\\n\\n"
        f"You are evaluating {criterion}.\\nEvidence:\\n{evidence}\\n"
        "Cite file paths and line numbers; return a score from 1 to 5 with an argument."
    )


def make_judge(persona):
    def judge_node(state, llm):
        system = _system_prompt(persona, state["criterion"], state["evidence"])
        return llm.invoke([SystemMessage(content=system),
                           HumanMessage(content="Give your verdict.")])
    return judge_node


prosecutor_node = make_judge("Prosecutor")
defense_node = make_judge("Defense")
tech_lead_node = make_judge("TechLead")
'''

# One template for all three; each persona is a single sentence passed by its node.
ONE_SENTENCE = '''
def _template(description, name, evidence):
    return f"""You are the {description}.

EVIDENCE COLLECTED:
{evidence}

Provide exactly one opinion for each rubric dimension. For each opinion give the dimension
name, your name "{name}", an integer score from 1 to 5, an argument that cites specific
evidence ids, and the list of evidence ids you rely on. Do not invent evidence."""


def _call(llm, prompt):
    return llm.invoke(prompt)


def prosecutor_node(state, llm):
    prompt = _template(description="Prosecutor. Your role is strictly critical: find flaws",
                       name="Prosecutor", evidence=state["evidence"])
    return _call(llm, prompt)


def defense_node(state, llm):
    prompt = _template(description="Defense. Your role is optimistic: credit effort",
                       name="Defense", evidence=state["evidence"])
    return _call(llm, prompt)


def tech_lead_node(state, llm):
    prompt = _template(description="Tech Lead. Your role is pragmatic: weigh architecture",
                       name="TechLead", evidence=state["evidence"])
    return _call(llm, prompt)
'''

BRANCHES = '''
PROSECUTOR = """''' + PHILOSOPHY["Prosecutor"] + '''"""
DEFENSE = """''' + PHILOSOPHY["Defense"] + '''"""
TECH_LEAD = """''' + PHILOSOPHY["TechLead"] + '''"""


def render(persona, evidence, llm):
    if persona == "Prosecutor":
        template = PROSECUTOR
    elif persona == "Defense":
        template = DEFENSE
    else:
        template = TECH_LEAD
    prompt = template + "\\n\\nEvidence:\\n{evidence}"
    return llm.invoke(prompt.format(evidence=evidence))


def prosecutor_node(state, llm):
    return render("Prosecutor", state["evidence"], llm)


def defense_node(state, llm):
    return render("Defense", state["evidence"], llm)


def tech_lead_node(state, llm):
    return render("TechLead", state["evidence"], llm)
'''


def _judges(tmp_path: Path, source: str) -> dict[str, Finding]:
    files = write_repo(tmp_path, {"src/nodes/judges.py": source})
    findings, _ = code_findings(tmp_path, files)
    return {facet: by_facet(findings, facet) for facet in
            ("judges.personas", "judges.collusion", "judges.persona_tone",
             "judges.persona_text")}


def test_a_template_filled_only_with_the_persona_name_is_one_prompt(tmp_path: Path) -> None:
    facts = _judges(tmp_path, NAME_ONLY)
    text = facts["judges.persona_text"]
    # the descriptions are defined but never reach the prompt: no persona has text of its own
    assert text.found is False and text.pattern == "success"
    assert text.data["own_words"] == {"Prosecutor": 0, "Defense": 0, "TechLead": 0}
    assert text.location == "src/nodes/judges.py:19"  # the model call
    assert "only the persona's name" in (text.content or "")
    assert "src/nodes/judges.py:11: return f" in (text.content or "")  # the shared template
    assert facts["judges.personas"].found is False
    collusion = facts["judges.collusion"]
    assert collusion.found and min(collusion.data["overlap"].values()) == 1.0
    assert facts["judges.persona_tone"].found is False  # "skeptical" never reaches the model


def test_persona_configs_whose_philosophies_reach_the_prompt_are_distinct(
        tmp_path: Path) -> None:
    facts = _judges(tmp_path, CONFIG_DICT)
    text = facts["judges.persona_text"]
    assert text.found, text.rationale
    assert min(text.data["own_words"].values()) >= 40
    # the unused field adds nothing: only the philosophy lines are the personas' own
    lines = facts["judges.personas"].data["prompt_words"]["Prosecutor"]["own_lines"]
    assert lines == ["src/nodes/judges.py:5"]
    assert "Trust no one" in (text.content or "")
    assert facts["judges.personas"].found
    assert not facts["judges.collusion"].found
    assert facts["judges.persona_tone"].found


def test_one_sentence_per_persona_in_a_shared_template_is_thin(tmp_path: Path) -> None:
    facts = _judges(tmp_path, ONE_SENTENCE)
    text = facts["judges.persona_text"]
    assert not text.found
    assert text.data["thin"] == ["Defense", "Prosecutor", "TechLead"]
    assert 0 < max(text.data["own_words"].values()) < 40
    assert text.data["cap"] == 2  # a sentence each: under 30 words
    assert text.data["shared_words"] > 40
    # compared as the rubric compares prompts, template included (ramlla92: 16-23 own words
    # in a 221-word template read as 0.09-0.15 shared when only the sentences were compared)
    collusion = facts["judges.collusion"]
    assert collusion.found and min(collusion.data["overlap"].values()) > 0.6, \
        collusion.rationale
    assert "src/nodes/judges.py:18:" in (text.content or "")  # the Prosecutor's sentence


def test_a_known_branch_picks_each_personas_own_constant(tmp_path: Path) -> None:
    facts = _judges(tmp_path, BRANCHES)
    text = facts["judges.persona_text"]
    assert text.found, text.rationale
    where = {p: c["own_lines"] for p, c in
             facts["judges.personas"].data["prompt_words"].items()}
    assert where == {"Prosecutor": ["src/nodes/judges.py:2"],
                     "Defense": ["src/nodes/judges.py:3"],
                     "TechLead": ["src/nodes/judges.py:4"]}
    assert not facts["judges.collusion"].found


def test_a_thin_persona_text_caps_judicial_nuance_at_two() -> None:
    rubric = load_rubric()
    dim = rubric.dimension("judicial_nuance")
    good = [make_evidence(f"ok {i}", dimension=dim.id, facet=f"judges.s{i}", confidence=1.0)
            for i in range(4)]
    thin = make_evidence("persona text", dimension=dim.id, facet="judges.persona_text",
                         found=False, pattern="success", confidence=0.8)
    for dossier, expected in ((good, 5), ([*good, thin], 2)):
        opinions = [offline_opinion(j, dim, dossier) for j in JUDGES]
        assert decide(dim, opinions, dossier, rubric).final_score == expected


def test_a_prompt_hundreds_of_concatenations_deep_is_read_within_bounds(
        tmp_path: Path) -> None:
    chain = " + ".join(['"be strict "'] * 900)
    source = ONE_SENTENCE.replace('description="Prosecutor. Your role is strictly critical: '
                                  'find flaws"', f"description={chain}")
    facts = _judges(tmp_path, source)
    # read down to the nesting bound (the deepest pieces are left out), and nothing breaks
    assert 0 < facts["judges.persona_text"].data["own_words"]["Prosecutor"] < 2 * 900


GRAPH = '''
from langgraph.graph import END, START, StateGraph


def build(state_cls, nodes):
    g = StateGraph(state_cls)
    g.add_node("aggregator", nodes.aggregator)
    g.add_node("prosecutor", nodes.prosecutor)
    g.add_node("defense", nodes.defense)
    g.add_node("tech_lead", nodes.tech_lead)
    g.add_node("chief_justice", nodes.chief_justice)
    g.add_edge(START, "aggregator")
    {edges}
    g.add_edge(["defense", "tech_lead"], "chief_justice")
    g.add_edge("chief_justice", END)
    return g.compile()
'''


def test_judges_fanned_out_by_one_of_them_do_not_all_run_in_parallel(tmp_path: Path) -> None:
    first = ('g.add_edge("aggregator", "prosecutor")\n    g.add_edge("prosecutor", "defense")\n'
             '    g.add_edge("prosecutor", "tech_lead")')
    together = ('g.add_edge("aggregator", "prosecutor")\n    g.add_edge("aggregator", "defense")'
                '\n    g.add_edge("aggregator", "tech_lead")\n'
                '    g.add_edge("prosecutor", "chief_justice")')
    for edges, parallel in ((first, False), (together, True)):
        root = tmp_path / str(parallel)
        files = write_repo(root, {"graph.py": GRAPH.replace("{edges}", edges)})
        fact = by_facet(code_findings(root, files)[0], "graph.parallel_judges")
        assert fact.found is parallel, fact.rationale
        assert ("runs before the others" in fact.rationale) is not parallel


def test_messages_copied_and_appended_before_the_call_are_followed(tmp_path: Path) -> None:
    call = ('        return llm.invoke([SystemMessage(content=system),\n'
            '                           HumanMessage(content="Give your verdict.")])\n')
    assert call in CONFIG_DICT
    source = CONFIG_DICT.replace(call, (
        '        messages = list([SystemMessage(content=system)])\n'
        '        retry = messages.copy()\n'
        '        retry.append(HumanMessage(content="Give your verdict."))\n'
        '        return llm.invoke(retry)\n'))
    text = _judges(tmp_path, source)["judges.persona_text"]
    assert text.found and min(text.data["own_words"].values()) >= 40


# Persona constants in a module of their own, handed to a base class by super().__init__.
PROMPTS_MODULE = "".join(f'{p.upper()}_PROMPT = """{t}"""\n' for p, t in PHILOSOPHY.items())
NODE_CLASSES = '''
from langchain_core.prompts import ChatPromptTemplate
from src.prompts.judge_prompts import DEFENSE_PROMPT, PROSECUTOR_PROMPT, TECHLEAD_PROMPT


class BaseJudgeNode:
    def __init__(self, judge_name, system_prompt):
        self.judge_name = judge_name
        self.prompt = ChatPromptTemplate.from_messages([
            ("system", system_prompt),
            ("human", "Criterion: {criterion}. Evidence: {evidence}. Return your opinion."),
        ])
        self.chain = self.prompt | self.llm


class ProsecutorNode(BaseJudgeNode):
    def __init__(self):
        super().__init__("Prosecutor", PROSECUTOR_PROMPT)

    def __call__(self, state):
        return self.chain.invoke({"criterion": state["criterion"],
                                  "evidence": state["evidence"]})


class DefenseNode(BaseJudgeNode):
    def __init__(self):
        super(DefenseNode, self).__init__("Defense", DEFENSE_PROMPT)

    def __call__(self, state):
        return self.chain.invoke({"criterion": state["criterion"],
                                  "evidence": state["evidence"]})


class TechLeadNode(BaseJudgeNode):
    def __init__(self):
        super().__init__("TechLead", TECHLEAD_PROMPT)

    def __call__(self, state):
        return self.chain.invoke({"criterion": state["criterion"],
                                  "evidence": state["evidence"]})
'''


def test_prompts_handed_to_a_base_class_through_super_are_followed(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/prompts/judge_prompts.py": PROMPTS_MODULE,
                                  "src/nodes/judges.py": NODE_CLASSES})
    findings, _ = code_findings(tmp_path, files)
    text = by_facet(findings, "judges.persona_text")
    assert text.found, text.rationale
    assert min(text.data["own_words"].values()) >= 40
    where = {p: c["own_lines"] for p, c in
             by_facet(findings, "judges.personas").data["prompt_words"].items()}
    assert where == {"Prosecutor": ["src/prompts/judge_prompts.py:1"],
                     "Defense": ["src/prompts/judge_prompts.py:2"],
                     "TechLead": ["src/prompts/judge_prompts.py:3"]}
    assert not by_facet(findings, "judges.collusion").found


# A provider wrapper's ``chat(messages)`` is the model call; each persona is two sentences
# inserted into one long shared prompt.
SHORT_PERSONAS = '''
from src.utils.provider import Provider

PROSECUTOR_PROMPT = "You are the Prosecutor. Find flaws and security gaps; be adversarial."
DEFENSE_PROMPT = "You are the Defense. Reward effort and intent; score generously."
TECHLEAD_PROMPT = "You are the Tech Lead. Weigh architecture and viability; be pragmatic."


def judge_node(state, persona, prompt):
    llm = Provider("openrouter")
    user = (
        f"You are the {persona} in a digital courtroom.\\n"
        f"Persona Instructions: {prompt}\\n"
        f"Evidence:\\n{state['evidence']}\\n"
        "Apply the sentencing guidelines to every criterion of the rubric. A linear graph is "
        "orchestration fraud and caps the architecture at one; judges that return free text "
        "without validation are a hallucination liability; plain dicts instead of typed "
        "models are technical debt; an unsandboxed clone is security negligence. For each "
        "criterion return a JSON object with the criterion id, an integer score from one to "
        "five, an argument that cites the statute applied and the evidence relied on."
    )
    messages = [{"role": "system", "content": "You are a precise judge. Return JSON."},
                {"role": "user", "content": user}]
    return {"opinions": llm.chat(messages, temperature=0.2)}


def prosecutor(state):
    return judge_node(state, "Prosecutor", PROSECUTOR_PROMPT)


def defense(state):
    return judge_node(state, "Defense", DEFENSE_PROMPT)


def tech_lead(state):
    return judge_node(state, "TechLead", TECHLEAD_PROMPT)
'''
PROVIDER = '''
import requests


class Provider:
    def __init__(self, name):
        self.name = name

    def chat(self, messages, temperature=0.2):
        reply = requests.post("https://example.invalid/v1/chat", json={"messages": messages})
        return reply.json()["choices"][0]["message"]["content"]
'''


def test_a_wrappers_chat_call_is_the_model_call(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/nodes/judges.py": SHORT_PERSONAS,
                                  "src/utils/provider.py": PROVIDER})
    findings, _ = code_findings(tmp_path, files)
    text = by_facet(findings, "judges.persona_text")
    assert not text.found and text.data["thin"] == ["Defense", "Prosecutor", "TechLead"]
    assert text.location == "src/nodes/judges.py:24"  # llm.chat(messages, ...)
    assert 5 <= min(text.data["own_words"].values()) < 40 < text.data["shared_words"]
    rubric = load_rubric()
    dim = rubric.dimension("judicial_nuance")
    dossier = [Evidence.from_finding(f, "repo", dim.id) for f in findings
               if f.facet.startswith("judges.")]
    opinions = [offline_opinion(j, dim, dossier) for j in JUDGES]
    assert decide(dim, opinions, dossier, rubric).final_score == 2



LOADERS = {"path": '''
from pathlib import Path


def load_prompt(name):
    path = Path(__file__).parent.parent / "prompts" / f"{name}.txt"
    if not path.exists():
        return ""
    return path.read_text(encoding="utf-8")
''', "open": '''
import os


def load_prompt(name):
    with open(os.path.join(os.path.dirname(__file__), "..", "prompts", name + ".txt"),
              "r") as handle:
        return handle.read()
'''}

FILE_JUDGES = '''
from langchain_core.messages import HumanMessage, SystemMessage


def _judge(persona, role, state, llm):
    system = load_prompt(persona)
    user = f"Judge as {role}. Evidence: {state['evidence']}. Return JSON."
    return llm.invoke([SystemMessage(content=system), HumanMessage(content=user)])


def prosecutor(state, llm):
    return _judge("prosecutor", "Prosecutor", state, llm)


def defense(state, llm):
    return _judge("defense", "Defense", state, llm)


def tech_lead(state, llm):
    return _judge("tech_lead", "TechLead", state, llm)
'''


def test_persona_prompts_read_from_repository_files_are_their_own_text(
        tmp_path: Path) -> None:
    texts = {f"src/prompts/{name}.txt": PHILOSOPHY[persona] for name, persona in
             (("prosecutor", "Prosecutor"), ("defense", "Defense"), ("tech_lead", "TechLead"))}
    for variant, loader in LOADERS.items():
        files = write_repo(tmp_path / variant, {"src/nodes/judges.py": loader + FILE_JUDGES,
                                                **texts})
        findings, _ = code_findings(tmp_path / variant, files)
        text = by_facet(findings, "judges.persona_text")
        assert text.found, (variant, text.rationale)
        assert min(text.data["own_words"].values()) >= 40
        assert "src/prompts/prosecutor.txt:1: Trust no one" in (text.content or "")
        assert not by_facet(findings, "judges.collusion").found


LAMBDA_NODES = '''
def judge_node(state, judge_type):
    if judge_type == "Prosecutor":
        system = "You are the Prosecutor. Be harsh."
    elif judge_type == "Defense":
        system = "You are the Defense. Reward effort."
    else:
        system = "You are the Tech Lead. Be pragmatic."
    return llm.invoke([("system", system), ("human", str(state["evidence"]))])
'''
MODULE_GRAPH = '''
from langgraph.graph import StateGraph, START
from src.nodes.judges import judge_node

graph = StateGraph(dict)
graph.add_node("prosecutor", lambda s: judge_node(s, "Prosecutor"))
graph.add_node("defense", lambda s: judge_node(s, "Defense"))
graph.add_node("techlead", lambda s: judge_node(s, "TechLead"))
graph.add_edge(START, "prosecutor")
'''


def test_a_persona_named_in_module_level_graph_wiring_is_an_entry(tmp_path: Path) -> None:
    """``graph.add_node("p", lambda s: judge_node(s, "Prosecutor"))`` at module level runs
    on import: the call it wires names the persona, so each judge's prompt is read."""
    files = write_repo(tmp_path, {"src/nodes/judges.py": LAMBDA_NODES,
                                  "src/graph.py": MODULE_GRAPH})
    findings, _ = code_findings(tmp_path, files)
    text = by_facet(findings, "judges.persona_text")
    assert text.data.get("thin") == ["Defense", "Prosecutor", "TechLead"], text.rationale
    assert "(from src/graph.py:6 judge_node(...))" in (text.content or "")


def test_two_or_three_sentences_per_persona_leave_room_for_three() -> None:
    rubric = load_rubric()
    dim = rubric.dimension("judicial_nuance")
    good = [make_evidence(f"ok {i}", dimension=dim.id, facet=f"judges.s{i}", confidence=1.0)
            for i in range(4)]
    for words, expected in ((12, 2), (29, 2), (31, 3), (39, 3)):
        own = {"Prosecutor": words, "Defense": 45, "TechLead": 50}
        thin = make_evidence("persona text", dimension=dim.id, facet="judges.persona_text",
                             found=False, pattern="success", confidence=0.8,
                             data={"own_words": own, "cap": thin_cap({"Prosecutor": words})})
        opinions = [offline_opinion(j, dim, [*good, thin]) for j in JUDGES]
        assert decide(dim, opinions, [*good, thin], rubric).final_score == expected, words


# Miked1991: three system prompts written apart on one skeleton ("You are the X ...",
# "Your philosophy: ...", "Your job: ...", a list of musts, "Remember: ..."), each with its
# own philosophy, job and musts, sent with one shared user template.
PARALLEL = '''
from langchain_openai import ChatOpenAI

PROSECUTOR = """You are the PROSECUTOR in a digital courtroom for code review.
Your philosophy: Trust no one and assume vibe coding in every file you read.
Your job: find violations, security flaws and laziness in the implementation.
You must:
- Scrutinize every piece of evidence for gaps and flaws
- Assume the worst about missing requirements
- Be extremely strict in your scoring, one or two for any issue
Remember: finding flaws is the only job you have in this room."""

DEFENSE = """You are the DEFENSE in a digital courtroom for code review.
Your philosophy: reward effort and intent, and look for the spirit of the law.
Your job: highlight creative workarounds, deep thought and genuine effort.
You must:
- Look for evidence of understanding in the git history
- Reward creative solutions even when they are imperfect
- Be generous in your scoring, four or five for signs of understanding
Remember: finding the good in the work is the only job you have in this room."""

TECH_LEAD = """You are the TECH LEAD in a digital courtroom for code review.
Your philosophy: does it actually work, and is it maintainable by the next engineer?
Your job: weigh architectural soundness, code cleanliness and practical viability.
You must:
- Focus on whether the code actually runs as the report says
- Assess technical debt and the cost of maintaining it
- Be balanced in your scoring, three for functional but messy code
Remember: being pragmatic and realistic is the only job you have in this room."""

llm = ChatOpenAI(model="gpt-4o")


def _judge(system, evidence):
    return llm.invoke([("system", system), ("user", f"Evidence collected: {evidence}")])


def prosecutor(state):
    return {"opinions": [_judge(PROSECUTOR, state["evidence"])]}


def defense(state):
    return {"opinions": [_judge(DEFENSE, state["evidence"])]}


def tech_lead(state):
    return {"opinions": [_judge(TECH_LEAD, state["evidence"])]}
'''


def test_prompts_written_apart_on_one_skeleton_share_only_their_common_lines(
        tmp_path: Path) -> None:
    """The collusion share counts what the own-words count counts: the lines both prompts
    hold ("You are the X in a digital courtroom for code review.", "You must:"), not common
    words a word-by-word match lines up between different sentences."""
    facts = _judges(tmp_path, PARALLEL)
    text = facts["judges.persona_text"]
    assert text.found, text.rationale
    collusion = facts["judges.collusion"]
    assert not collusion.found, collusion.rationale
    assert max(collusion.data["overlap"].values()) < 0.25, collusion.rationale


SHARED_TASK = '''
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

PROSECUTOR = """You are the Prosecutor. Trust no one and assume vibe coding. Hunt for
security flaws, missing schemas, shell injection and lazy shortcuts, and score one or two
for any gap you can prove from the evidence."""
DEFENSE = """You are the Defense. Reward effort, intent and creative workarounds; read the
git history for signs of understanding and argue for the highest score the evidence
can defend, even where the implementation is imperfect."""
TECH_LEAD = """You are the Tech Lead. Weigh whether the code runs and can be maintained by
the next engineer: architectural soundness, technical debt and practical viability decide
your score, three for functional but messy code."""

llm = ChatOpenAI(model="gpt-4o")


def _judge(system, criterion, evidence):
    task = f"""Evaluate the submission against one rubric criterion.
Criterion: {criterion}
Read every piece of evidence below before you score. Cite the evidence ids you rely on,
quote the lines that decide your score, and keep your argument under two hundred words.
Do not invent files, commits or functions the evidence does not show.
Evidence collected:
{evidence}
Answer with a JSON object holding score (an integer from 1 to 5), argument (a string) and
cited_evidence (a list of evidence ids). No markdown and no text outside the JSON object."""
    return llm.invoke([SystemMessage(content=system), HumanMessage(content=task)])


def prosecutor(state):
    return {"opinions": [_judge(PROSECUTOR, state["criterion"], state["evidence"])]}


def defense(state):
    return {"opinions": [_judge(DEFENSE, state["criterion"], state["evidence"])]}


def tech_lead(state):
    return {"opinions": [_judge(TECH_LEAD, state["criterion"], state["evidence"])]}
'''


def test_the_shared_task_message_is_no_part_of_the_persona_comparison(tmp_path: Path) -> None:
    """The rubric compares the personas' system prompts: a task, evidence and answer-format
    message every judge receives from the same lines is left out of the share (it was
    0.6 with it), while it still counts as shared template beside the own words."""
    facts = _judges(tmp_path, SHARED_TASK)
    collusion = facts["judges.collusion"]
    assert not collusion.found, collusion.rationale
    assert max(collusion.data["overlap"].values()) < 0.3, collusion.rationale
    assert "is left out" in collusion.rationale
    text = facts["judges.persona_text"]
    assert text.data["shared_words"] > 80, text.rationale  # still the template beside them


def test_a_persona_slotted_into_a_shared_system_prompt_shares_that_prompt(
        tmp_path: Path) -> None:
    """When the persona's words sit in the same message as the template (one system prompt
    filled with each persona's lines), that message is the persona's prompt, template and
    all, and the share counts it."""
    slotted = SHARED_TASK.replace(
        "SystemMessage(content=system), HumanMessage(content=task)",
        "SystemMessage(content=system + task)")
    collusion = _judges(tmp_path, slotted)["judges.collusion"]
    assert collusion.found, collusion.rationale


def test_message_roles_as_openai_dicts_and_langchain_pairs(tmp_path: Path) -> None:
    """The same comparison when the messages are OpenAI dicts or (role, text) pairs; the
    role's name is no text of the prompt."""
    for call in ('llm.invoke([{"role": "system", "content": system}, '
                 '{"role": "user", "content": task}])',
                 'llm.invoke([("system", system), ("human", task)])'):
        source = SHARED_TASK.replace(
            "llm.invoke([SystemMessage(content=system), HumanMessage(content=task)])", call)
        assert call in source
        collusion = _judges(tmp_path, source)["judges.collusion"]
        assert max(collusion.data["overlap"].values()) < 0.3, (call, collusion.rationale)


def test_a_call_s_run_options_are_no_text_the_model_reads(tmp_path: Path) -> None:
    """bethel4: ``llm.invoke(prompt, config={"metadata": {"philosophy": PROSECUTOR if ...
    else ...}})``. The config is tracing metadata; the model reads only `prompt`. Read as
    prompt text, the Prosecutor's prompt sat in all three calls and it had no words of its
    own."""
    source = SHARED_TASK.replace(
        "llm.invoke([SystemMessage(content=system), HumanMessage(content=task)])",
        'llm.invoke([SystemMessage(content=system), HumanMessage(content=task)], '
        'config={"tags": ["judge"], "metadata": {"philosophy": PROSECUTOR if system == '
        'PROSECUTOR else DEFENSE if system == DEFENSE else TECH_LEAD}})')
    assert "config=" in source
    text = _judges(tmp_path, source)["judges.persona_text"]
    assert min(text.data["own_words"].values()) > 25, text.rationale
