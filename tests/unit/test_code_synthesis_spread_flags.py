"""A flag set on the score spread re-evaluates nothing by itself (`spread_flags`): only a
flag the synthesis hands on (into the state or a result) is a decision on the spread; one
its own tests, or its helper's callers' tests, only turn into text is a dissent."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice

HELPER = '''
def _variance_dissent(opinions):
    scores = [o.score for o in opinions]
    variance = max(scores) - min(scores)
    if variance > 2:
        text = "DISSENT: " + "; ".join(o.argument[:80] for o in opinions)
        return True, text
    return False, None


def chief_justice_node(state):
    ops = state["opinions"]
    proposed = sorted(o.score for o in ops)[1]
    if any(not ev.found for ev in state["evidences"]):
        proposed = min(proposed, 3)
    notes = []
    has_dissent, summary = _variance_dissent(ops)
USE
'''


def test_a_spread_flag_a_helper_returns_that_only_adds_text_is_no_re_evaluation(
        tmp_path: Path) -> None:
    """``return True, dissent`` under the spread, and the caller only appends text on it
    (``final score remains``): the score never changes."""
    facts = _justice(tmp_path, HELPER.replace("USE", '''    if has_dissent and summary:
        notes.append(summary)
        notes.append(f"After variance re-evaluation, final score remains at {proposed}.")
    return {"final_score": proposed, "notes": notes,
            "dissent": summary if has_dissent else None}'''))
    variance = facts["justice.variance"]
    assert not variance.found
    assert variance.rationale == "The score spread only adds dissent text."
    assert "nodes/justice.py:5: if variance > 2:" in (variance.content or "")
    assert "variance_re_evaluation" not in facts["justice.rules"].data["rules"]


def test_a_spread_flag_a_caller_hands_on_into_the_state_is_a_decision(
        tmp_path: Path) -> None:
    """The same helper's flag, handed on as itself in the node's update (a router may send
    the judges back on it), stays a decision on the spread."""
    facts = _justice(tmp_path, HELPER.replace("USE", '''    return {"final_score": proposed,
            "re_evaluate": has_dissent, "dissent": summary}'''))
    variance = facts["justice.variance"]
    assert variance.found and variance.location == "nodes/justice.py:5"
    assert "hands on as itself" in variance.rationale


def test_a_local_spread_flag_that_only_picks_a_verdict_label_is_no_re_evaluation(
        tmp_path: Path) -> None:
    """``dissent_required = True`` under the spread, read only to pick the verdict's label
    and a summary text: a dissent, not a re-evaluation."""
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = state["opinions"]
    records = []
    dissent_required = False
    scores = [o.score for o in ops]
    final = sum(scores) / len(scores)
    if any(not ev.found for ev in state["evidences"]):
        final = min(final, 3)
    spread = max(scores) - min(scores)
    if spread > 2.5:
        dissent_required = True
        records.append(f"variance={spread:.2f}")
    verdict = "DISSENT_DETECTED" if dissent_required else ("PASS" if final >= 3.5 else "FAIL")
    summary = "; ".join(records) if dissent_required else "No dissent detected."
    return {"final_score": round(final), "verdict": verdict, "summary": summary}
''')
    variance = facts["justice.variance"]
    assert not variance.found
    assert variance.rationale == "The score spread only adds dissent text."
    assert "nodes/justice.py:11: if spread > 2.5:" in (variance.content or "")
