"""A branch on the score spread that scores as the path without it re-evaluates nothing."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice


def test_a_spread_branch_that_scores_as_the_default_path_only_adds_dissent(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def resolve(ops):
    scores = [o.score for o in ops]
    variance = max(scores) - min(scores)
    if variance > 2:
        dissent = f"Score variance > 2; re-evaluation applied: {scores}"
        final = sum(scores) // len(scores)
        return final, dissent
    final = sum(scores) // len(scores)
    dissent = ""
    if variance > 0:
        dissent = f"Scores {scores}"
    return max(1, min(5, final)), dissent


def chief_justice_node(state):
    final, dissent = resolve(state["opinions"])
    return {"final_score": final, "dissent": dissent}
''')
    variance = facts["justice.variance"]
    assert variance.found is False
    assert variance.rationale == "The score spread only adds dissent text."
    assert "variance_re_evaluation" not in facts["justice.rules"].data["rules"]


def test_a_spread_branch_that_scores_otherwise_or_changes_the_scores_re_evaluates(
        tmp_path: Path) -> None:
    base = '''
def chief_justice_node(state):
    scores = [o.score for o in state["opinions"]]
    if max(scores) - min(scores) > 2:
        BODY
        return {"final_score": sum(scores) // len(scores), "dissent": "high variance"}
    return {"final_score": sum(scores) // len(scores), "dissent": None}
'''
    other = base.replace("BODY\n        return {\"final_score\": sum(scores) // len(scores)",
                         "return {\"final_score\": max(scores)")
    mutated = base.replace("BODY", "scores.append(state[\"tech_lead\"].score)")
    same = base.replace("BODY", "print(scores)")
    assert _justice(tmp_path / "a", other)["justice.variance"].found
    assert _justice(tmp_path / "b", mutated)["justice.variance"].found
    assert not _justice(tmp_path / "c", same)["justice.variance"].found
