"""Persona prompts compared line by line (`prompt_lines`): a line two or more personas'
prompts hold is template wherever each copy is written, so a scoring guide repeated in each
persona's constant is not the persona's own text, and a scaffold of labels and placeholders
with stop-words is not collusion."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.personas import overlap

from .test_judge_prompts import _judges

# The judge nodes, each handing its persona's constant to one `_judge`.
NODES = '''

def prosecutor_node(state, llm):
    return _judge(PROSECUTOR_PROMPT, state, llm)


def defense_node(state, llm):
    return _judge(DEFENSE_PROMPT, state, llm)


def tech_lead_node(state, llm):
    return _judge(TECH_LEAD_PROMPT, state, llm)
'''

GUIDE = '''
SCORING GUIDE - you MUST follow this:
- Score 1: Evidence is missing or contradicts the requirement
- Score 2: Evidence is weak or partially meets requirement
- Score 3: Evidence meets requirement but has minor gaps
- Score 4: Evidence clearly meets requirement
- Score 5: Evidence exceeds requirement with exceptional quality

Be strict but score accurately based on evidence.
'''

# Each persona's constant repeats the same scoring guide; only three lines are its own.
REPEATED_GUIDE = '''
PROSECUTOR_PROMPT = """
You are the Prosecutor in a Digital Courtroom.
Philosophy: Assume nothing. Trust no claims without evidence.
''' + GUIDE + '''Be strict, skeptical, and cite exact evidence locations.
""".strip()

DEFENSE_PROMPT = """
You are the Defense Attorney in a Digital Courtroom.
Philosophy: Reward intent, progress, and reasonable engineering tradeoffs.
''' + GUIDE + '''Be fair, highlight strengths, and cite exact evidence locations.
""".strip()

TECH_LEAD_PROMPT = """
You are the Senior Tech Lead in a Digital Courtroom.
Philosophy: Pragmatic truth: Does it work and is it maintainable?
''' + GUIDE + '''Be the tiebreaker, be concrete, and cite exact evidence locations.
""".strip()


def _judge(system, state, llm):
    return llm.invoke([("system", system), ("user", state["evidence"])])

''' + NODES

SCAFFOLD = """
Criterion: {dimension_name}
Target Artifact: {target_artifact}
Rubric Levels: {levels}
Your Specific Logic: {judicial_logic}

Evidence Available:
{evidences}
"""

# Distinct mandates in one scaffold of labels and placeholders each constant repeats.
MANDATES = '''
PROSECUTOR_PROMPT = """You are the PROSECUTOR - your role is ADVERSARIAL SCRUTINY.

Your mandate:
- Actively search for gaps, security flaws, and lazy implementations
- Question every claim not backed by concrete evidence
- Apply the LOWEST reasonable score when evidence is ambiguous
''' + SCAFFOLD + '''
Evaluate strictly and return JudicialOpinion JSON with score, argument,
and cited_evidence_ids."""

DEFENSE_PROMPT = """You are the DEFENSE ATTORNEY - your role is to RECOGNIZE EFFORT.

Your mandate:
- Highlight creative workarounds and partial implementations
- Give credit for atomic commits and iterative development
- Apply the HIGHEST reasonable score when evidence shows genuine effort
''' + SCAFFOLD + '''
Evaluate generously and return JudicialOpinion JSON with score, argument,
and cited_evidence_ids."""

TECH_LEAD_PROMPT = """You are the TECH LEAD - your role is PRAGMATIC EVALUATION.

Your mandate:
- Focus on maintainability, scalability, and technical debt
- Evaluate if the architecture is production-viable
- Weight architectural soundness HIGHEST for architecture criteria
''' + SCAFFOLD + '''
Evaluate pragmatically and return JudicialOpinion JSON with score, argument,
and cited_evidence_ids."""


def _judge(prompt, state, llm):
    return llm.invoke(prompt.format(**state["fields"]))

''' + NODES


def test_a_scoring_guide_repeated_in_each_personas_constant_is_template(
        tmp_path: Path) -> None:
    facts = _judges(tmp_path, REPEATED_GUIDE)
    text = facts["judges.persona_text"]
    # only the three lines that differ are each persona's own: under 40 words each
    assert not text.found, text.rationale
    assert all(20 <= n < 40 for n in text.data["own_words"].values()), text.data
    assert text.data["shared_words"] >= 55
    # each own line is quoted where it sits in the constant, and so is the repeated guide
    assert "src/nodes/judges.py:4: Philosophy: Assume nothing." in (text.content or "")
    assert "src/nodes/judges.py:7: - Score 1: Evidence is missing" in (text.content or "")
    # the personas' texts are mostly one guide: collusion, not identical prompts
    pairs = facts["judges.collusion"].data["overlap"]
    assert facts["judges.collusion"].found and all(0.5 < v < 0.8 for v in pairs.values())


def test_a_scaffold_of_labels_and_placeholders_is_no_collusion(tmp_path: Path) -> None:
    facts = _judges(tmp_path, MANDATES)
    # the scaffold lines are template, the mandates each persona's own
    own = facts["judges.persona_text"].data["own_words"]
    assert all(40 <= n < 60 for n in own.values()), own
    assert facts["judges.persona_text"].data["shared_words"] >= 10
    collusion = facts["judges.collusion"]
    assert not collusion.found, collusion.rationale
    assert max(collusion.data["overlap"].values()) < 0.35


def test_overlap_counts_whole_lines_not_stop_words() -> None:
    a = ("You are the judge for the code.\nLook for the gaps in the tests of the graph.\n"
         "Criterion: {name}\nEvidence: {evidence}")
    b = ("You are a reader of the report.\nGive credit to the intent of the work in it.\n"
         "Criterion: {name}\nEvidence: {evidence}")
    assert overlap(a, b) < 0.3  # the stop-words and the two labels are not the prompt
    # quotes around a phrase, and the persona's name, do not make two lines differ
    assert overlap("Philosophy: 'Trust No One.'", "Philosophy: Trust No One.") == 1.0
    assert overlap("As the Prosecutor, cite every file.", "As the Defense, cite every file.") \
        == 1.0
