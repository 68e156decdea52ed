"""A cap on the evidence that fires when the detectives' check finds nothing
(`forensics.code.override_evidence`): the check's flag starts False and is set where it
matches; the evidence says found=not flag and names the marker in its "nothing found" text,
while the synthesis caps on found=True evidence naming the marker. Read right way round, or
with an unreadable text, there is no fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import Evidence

from .test_code_synthesis import _justice

JUSTICE = '''
SECURITY_CAP = 3


def _has_violation(evidences):
    for ev in evidences.get("safe_tool_engineering", []):
        if not ev.content:
            continue
        text = ev.content.lower()
        if {test} and any(m in text for m in ["os.system", "shell=true"]):
            return True
    return False


def _rule(crit, ops, violation):
    score = round(sum(o.score for o in ops) / len(ops))
    if violation and crit == "safe_tool_engineering":
        score = min(score, SECURITY_CAP)
    return score


def chief_justice_node(state):
    violation = _has_violation(state["evidences"])
    return {{"final": {{c: _rule(c, ops, violation) for c, ops in state["opinions"].items()}}}}
'''
TOOLS = '''
def scan(files):
    found_os_system = False
    places = []
    for text in files:
        if "os.system(" in text:
            found_os_system = True
            places.append(text)
    return Evidence(
        criterion_id="safe_tool_engineering",
        goal="No raw os.system() calls",
        found={found},
        content=(f"SECURITY VIOLATION: os.system at {{places}}" if found_os_system
                 else {clean}),
    )
'''
CLEAN = '"No os.system() calls detected"'


def _fact(tmp_path: Path, test: str = "ev.found", found: str = "not found_os_system",
          clean: str = CLEAN) -> Evidence:
    facts = _justice(tmp_path, JUSTICE.format(test=test), {
        "tools/scan.py": TOOLS.format(found=found, clean=clean)})
    fact = facts["justice.inverted_override"]
    return Evidence(dimension="chief_justice_synthesis", source="repo", **{
        k: getattr(fact, k) for k in ("facet", "goal", "found", "pattern", "location",
                                      "content", "rationale", "confidence", "data")})


def test_a_cap_on_found_evidence_naming_the_marker_of_the_clean_text_is_inverted(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path)
    assert fact.found, fact.rationale
    assert fact.location == "nodes/justice.py:5"
    assert fact.data["written"] == "tools/scan.py:9" and fact.data["flag"] == "found_os_system"
    assert fact.data["caps"] == ["nodes/justice.py:17"]
    assert "'No os.system() calls detected'" in fact.rationale
    assert "tools/scan.py:12: found=not found_os_system," in (fact.content or "")
    assert [row.cap for row, _ in confirmed_caps("chief_justice_synthesis", [fact])] == [3]


@pytest.mark.parametrize(("test", "found", "clean"), [
    ("not ev.found", "not found_os_system", CLEAN),  # the check read the right way round
    ("ev.found", "found_os_system", CLEAN),  # found means a violation: the cap is right
    ("ev.found", "not found_os_system", '"Nothing to report"'),  # the clean text is silent
    ("ev.found", "not found_os_system", 'f"{summary}"'),  # a text filled at run time
    ("ev.found or ev.confidence", "not found_os_system", CLEAN),  # a test not read
])
def test_a_cap_read_the_right_way_or_not_read_gives_no_fact(
        tmp_path: Path, test: str, found: str, clean: str) -> None:
    fact = _fact(tmp_path, test, found, clean)
    assert not fact.found, fact.rationale
