"""The judges do not all rule on the same criteria (``judges.skip_criteria``): a persona's
judge that skips some items of its loop over the rubric's criteria, when the others rule on
each, leaves those criteria with fewer than three opinions."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import by_facet, write_repo

# Miked1991: each persona's node loops over the rubric's dimensions and calls the model per
# dimension; the Prosecutor's loop skips every dimension not aimed at the repository.
JUDGES = '''
from langchain_openai import ChatOpenAI

llm = ChatOpenAI(model="gpt-4o")


def _judge(system, dimension, state):
    return llm.invoke([("system", system), ("user", f"{dimension} {state['evidence']}")])


def prosecutor(state):
    opinions = []
    for dimension in state["rubric_dimensions"]:
        SKIP
        opinions.append(_judge("You are the Prosecutor. Trust no one and hunt for security "
                               "flaws, gaps and laziness in every file.", dimension, state))
    return {"opinions": opinions}


def defense(state):
    opinions = []
    for dimension in state["rubric_dimensions"]:
        opinions.append(_judge("You are the Defense. Reward effort, intent and creative "
                               "workarounds wherever the work shows them.", dimension, state))
    return {"opinions": opinions}


def tech_lead(state):
    opinions = []
    for dimension in state["rubric_dimensions"]:
        opinions.append(_judge("You are the Tech Lead. Weigh maintainability, soundness and "
                               "whether the code actually runs.", dimension, state))
    return {"opinions": opinions}
'''
SKIP = '''if dimension["target_artifact"] != "github_repo":
            continue'''


def _fact(root: Path, source: str) -> Finding:
    findings, _ = code_findings(root, write_repo(root, {"src/nodes/judges.py": source}))
    return by_facet(findings, "judges.skip_criteria")


def test_a_judge_that_skips_criteria_the_others_rule_on_is_named(tmp_path: Path) -> None:
    fact = _fact(tmp_path, JUDGES.replace("SKIP", SKIP))
    assert fact.found and fact.pattern == "failure", fact.rationale
    assert fact.data["skips"] == {"Prosecutor": ["src/nodes/judges.py:14"], "Defense": [],
                                  "TechLead": []}
    assert "Prosecutor skips the criteria where `dimension['target_artifact'] != 'github_repo'`" \
        in fact.rationale
    assert 'if dimension["target_artifact"] != "github_repo":' in (fact.content or "")


def test_judges_ruling_on_every_criterion_or_skipping_alike_skip_none(tmp_path: Path) -> None:
    assert not _fact(tmp_path / "none", JUDGES.replace("SKIP", "pass")).found
    # the same test in the helper every persona's judge runs: they all skip the same items
    shared = JUDGES.replace("SKIP", "pass").replace(
        "def _judge(system, dimension, state):\n",
        "def _judge(system, dimension, state):\n"
        "    for dim in [dimension]:\n"
        "        if dim.get(\"skip\"):\n            continue\n"
        "        return llm.invoke([(\"system\", system), (\"user\", str(dim))])\n")
    fact = _fact(tmp_path / "shared", shared)
    assert not fact.found, fact.rationale
    assert fact.data["skips"]["Prosecutor"] == fact.data["skips"]["Defense"] != []
    # a loop over evidence items is no loop over the criteria: skipping some is not charged
    evidence = JUDGES.replace("SKIP", SKIP).replace(
        'for dimension in state["rubric_dimensions"]:\n        if dimension["target_artifact"]',
        'for dimension in state["evidences"]:\n        if dimension["target_artifact"]')
    assert not _fact(tmp_path / "evidence", evidence).found
    # the same test written again in each judge (bettyabay): they skip the same criteria
    alike = JUDGES.replace("SKIP", SKIP).replace(
        '    for dimension in state["rubric_dimensions"]:\n        opinions.append',
        '    for dimension in state["rubric_dimensions"]:\n        ' + SKIP +
        '\n        opinions.append')
    fact = _fact(tmp_path / "alike", alike)
    assert not fact.found and len(fact.data["skips"]["TechLead"]) == 1, fact.rationale
