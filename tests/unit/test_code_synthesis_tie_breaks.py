"""``justice.tie_break`` against ``justice.variance``: a spread decision that only picks
among the judges' scores (an index into the sorted scores, a mean, one judge's score, a
helper that computes a median of what it is handed) is a tie-break and no re-evaluation; one
that reads the evidence again or asks a model again is a re-evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_code_synthesis import _justice

BASE = '''
def chief_justice_node(state):
    ops = {o.judge: o for o in state["opinions"]}
    p, d, t = ops["Prosecutor"].score, ops["Defense"].score, ops["TechLead"].score
    scores = [p, d, t]
    final = round((p + d + t) / 3)
    if max(scores) - min(scores) > 2:
        BRANCH
    return {"final_score": final}
'''

MEDIAN_HELPER = '''

def _weighted_median(scores, weights):
    if not scores:
        return 3
    items = sorted(zip(scores, weights), key=lambda x: x[0])
    half, seen = sum(weights) / 2.0, 0.0
    for score, weight in items:
        seen += weight
        if seen >= half:
            return int(round(score))
    return int(round(items[-1][0]))
'''

REREAD_HELPER = '''

def _supported(evidences, scores):
    hits = [e for e in evidences if e.found]
    return max(scores) if hits else min(scores)
'''

PICKS = {
    # TsegayIS122123: ``sorted_scores = sorted(scores); final_score = sorted_scores[1]``
    "sorted_index": ("sorted_scores = sorted(scores)\n        final = sorted_scores[1]", ""),
    # ephrata1888: the spread hands the scores to a weighted median helper
    "median_helper": ("final = _weighted_median(scores, [1.0, 1.0, 2.0])", MEDIAN_HELPER),
    # Miked1991: the mean of two judges, the outlier left out
    "mean": ("final = round((d + t) / 2)", ""),
    # gemechisworku: the Tech Lead's score, the security cap applied again to it
    "judge_capped": ("final = t\n        if any(not e.found for e in state['evidences']):\n"
                     "            final = min(final, 3)", ""),
}

RE_EVALUATIONS = {
    "reread_helper": ("final = _supported(state['evidences'], scores)", REREAD_HELPER),
    "model_again": ("final = state['llm'].invoke(f'judge again: {scores}').score", ""),
    "evidence_picks": ("if state['evidences']['graph'].found:\n            final = t\n"
                       "        else:\n            final = p", ""),
}


@pytest.mark.parametrize("name", sorted(PICKS))
def test_a_spread_that_only_picks_is_a_tie_break_and_no_re_evaluation(
        tmp_path: Path, name: str) -> None:
    branch, helper = PICKS[name]
    facts = _justice(tmp_path, BASE.replace("BRANCH", branch) + helper)
    tie, variance = facts["justice.tie_break"], facts["justice.variance"]
    assert tie.found, (name, tie.rationale)
    assert not variance.found, (name, variance.rationale)
    # the variance fact still quotes the decision on the spread, denied
    assert variance.location == "nodes/justice.py:7"
    assert "only picks among the judges' scores" in variance.rationale


@pytest.mark.parametrize("name", sorted(RE_EVALUATIONS))
def test_a_spread_that_reads_evidence_or_asks_again_stays_a_re_evaluation(
        tmp_path: Path, name: str) -> None:
    branch, helper = RE_EVALUATIONS[name]
    facts = _justice(tmp_path, BASE.replace("BRANCH", branch) + helper)
    assert facts["justice.variance"].found, (name, facts["justice.variance"].rationale)
    assert not facts["justice.tie_break"].found, name


def test_the_spread_s_own_test_decides_whether_it_reads_the_evidence(tmp_path: Path) -> None:
    """ruthasoll: ``if variance > 2 and not dissent:`` (a note an earlier evidence rule
    wrote) takes the Tech Lead's score: a tie-break still; ``and not ev.found`` in the test
    reads the evidence itself: a re-evaluation."""
    flagged = BASE.replace("    if max(", "    dissent = None\n    if not state['evidences']:\n"
                           "        final, dissent = p, 'no evidence'\n    if max(").replace(
        "> 2:", "> 2 and not dissent:").replace("BRANCH", "final = t")
    facts = _justice(tmp_path / "flag", flagged)
    assert facts["justice.tie_break"].found and not facts["justice.variance"].found
    read = BASE.replace("> 2:", "> 2 and not state['evidences'][0].found:").replace(
        "BRANCH", "final = t")
    facts = _justice(tmp_path / "read", read)
    assert facts["justice.variance"].found and not facts["justice.tie_break"].found


def test_a_penalty_on_the_spread_picks_no_score(tmp_path: Path) -> None:
    """``final = round((p + d + t) / 3) - 1`` lowers the mean by a constant: no judge's
    score and no statistic of them, so no tie-break."""
    facts = _justice(tmp_path, BASE.replace("BRANCH", "final = round((p + d + t) / 3) - 1"))
    assert not facts["justice.tie_break"].found
    assert facts["justice.variance"].found


def test_a_tie_break_quotes_a_statement_that_spans_lines_whole(tmp_path: Path) -> None:
    """IbnuEyni@interim: ``weighted_score = (`` and the weights on the lines below; the
    quote showed only ``weighted_score = (``, which says nothing of what it picks."""
    branch = "final = round(\n            (p + 2 * t + d) / 4\n        )"
    tie = _justice(tmp_path, BASE.replace("BRANCH", branch))["justice.tie_break"]
    assert tie.found, tie.rationale
    assert "final = round( (p + 2 * t + d) / 4 )" in tie.rationale, tie.rationale


def test_a_tie_break_is_not_named_a_variance_re_evaluation_in_the_rules(tmp_path: Path) -> None:
    """GrimVad3r@interim, nebiyuephrata: justice.rules still listed variance_re_evaluation at
    the spread decision that justice.tie_break (and justice.variance) called a tie-break."""
    facts = _justice(tmp_path, BASE.replace("BRANCH", "final = t"))
    assert facts["justice.tie_break"].found
    assert "variance_re_evaluation" not in facts["justice.rules"].data["rules"], \
        facts["justice.rules"].data
    # a spread decision that reads the evidence again is still named one
    branch, helper = RE_EVALUATIONS["reread_helper"]
    again = _justice(tmp_path / "again", BASE.replace("BRANCH", branch) + helper)
    assert again["justice.rules"].data["rules"]["variance_re_evaluation"] == [
        "nodes/justice.py:7"]


def test_a_pick_returned_in_a_record_with_notes_is_a_tie_break(tmp_path: Path) -> None:
    """Melaku-GA: a wide spread returns ``{'final_score': scores['techlead'], 'dissent_summary':
    f"..."}``: the score field is a pick; the text beside it is a note, not a new value."""
    code = BASE.replace("BRANCH", 'final = {"p": p, "d": d, "t": t}["t"]\n        return '
                                  '{"final_score": final, "dissent_summary": '
                                  'f"Major conflict: P={p}, D={d}"}')
    facts = _justice(tmp_path, code)
    assert facts["justice.tie_break"].found, facts["justice.tie_break"].rationale
    assert not facts["justice.variance"].found
