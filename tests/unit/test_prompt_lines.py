"""Persona prompts read line by line (`prompt_lines`): a line two or more personas' prompts
hold is template wherever each copy is written, so a scoring guide repeated in each persona's
constant is not the persona's own text; it is still text the prompts share (collusion)."""

from __future__ import annotations

from pathlib import Path

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


def test_a_scoring_guide_repeated_in_each_personas_constant_is_not_own_text(
        tmp_path: Path) -> None:
    """nebiyou27: own words 79/81/85 counted the scoring guide each persona's constant
    repeats; only the three lines that differ are each persona's own (24/26/30)."""
    facts = _judges(tmp_path, REPEATED_GUIDE)
    text = facts["judges.persona_text"]
    assert not text.found, text.rationale
    assert all(15 <= n < 40 for n in text.data["own_words"].values()), text.data
    assert text.data["shared_words"] >= 55
    # the personas' texts are mostly one guide: still collusion
    collusion = facts["judges.collusion"]
    assert collusion.found and all(v > 0.5 for v in collusion.data["overlap"].values())

