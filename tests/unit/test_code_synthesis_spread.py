"""Score-spread and keyword facts that follow the code wherever it is written: a spread held
in names unpacked from a tuple, taken over a helper's parameters, or passed to a helper as a
flag it tests; a word test in a helper, or on one side of an ``or``."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.state import Finding

from .test_code_synthesis import _justice


def _re_evaluates(tmp_path: Path, code: str, line: int) -> Finding:
    """The variance fact of `code`, quoting the decision on the spread at `line`: credited as
    a re-evaluation, unless the decision only picks among the judges' scores (then the
    tie-break fires instead, `test_code_synthesis_tie_breaks`: never both)."""
    facts = _justice(tmp_path, code)
    variance, tie = facts["justice.variance"], facts["justice.tie_break"]
    assert variance.found != tie.found, (variance.rationale, tie.rationale)
    assert variance.location == f"nodes/justice.py:{line}"
    return variance


def test_a_spread_unpacked_from_a_tuple_that_takes_the_tech_lead_s_score_re_evaluates(
        tmp_path: Path) -> None:
    variance = _re_evaluates(tmp_path, '''
def chief_justice_node(state):
    ops = state["opinions"]
    scores = [o.score for o in ops]
    tech_lead = next(o for o in ops if o.judge == "TechLead")
    score_min, score_max = min(scores), max(scores)
    variance = score_max - score_min
    if tech_lead and variance > 2:
        final = tech_lead.score
    else:
        final = round(sum(scores) / len(scores))
    return {"final_score": final}
''', 8)
    # one judge's score taken: a tie-break, quoted from the code, and no re-evaluation
    assert not variance.found
    assert "(nodes/justice.py:9)" in variance.rationale
    assert "final = tech_lead.score" in (variance.content or "")


def test_a_spread_over_a_helper_s_parameters_that_returns_one_of_them_re_evaluates(
        tmp_path: Path) -> None:
    _re_evaluates(tmp_path, '''
def _resolve(p, d, t):
    variance = max(p, d, t) - min(p, d, t)
    if variance > 2:
        return t
    return max(1, min(5, round((p + d + 2 * t) / 4)))


def chief_justice_node(state):
    ops = state["opinions"]
    p = next(o.score for o in ops if o.judge == "Prosecutor")
    d = next(o.score for o in ops if o.judge == "Defense")
    t = next(o.score for o in ops if o.judge == "TechLead")
    return {"final_score": _resolve(p, d, t)}
''', 4)


def test_a_dissent_flag_on_the_spread_that_a_helper_turns_into_the_verdict_re_evaluates(
        tmp_path: Path) -> None:
    _re_evaluates(tmp_path, '''
VERDICT_PASS, VERDICT_PARTIAL, VERDICT_FAIL = "PASS", "PARTIAL", "FAIL"
VERDICT_SCORE = {VERDICT_PASS: 8.0, VERDICT_PARTIAL: 5.0, VERDICT_FAIL: 2.0}


def dissent_requirement(opinions):
    scores = [o.score for o in opinions]
    return max(scores) - min(scores) >= 2


def re_evaluate(weighted_score, dissent):
    if dissent:
        return VERDICT_PARTIAL, "Dissent among judges; downgraded."
    if weighted_score >= 4:
        return VERDICT_PASS, "Weighted score meets pass threshold."
    return VERDICT_FAIL, "Below threshold."


def chief_justice_node(state):
    opinions = state["opinions"]
    weighted = sum(o.score for o in opinions) / len(opinions)
    dissent = dissent_requirement(opinions)
    verdict, summary = re_evaluate(weighted, dissent)
    return {"final_score": VERDICT_SCORE.get(verdict, 2.0), "summary": summary}
''', 12)


def test_a_final_score_passed_to_a_helper_is_no_spread_the_helper_decides_on(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def _resolve(p, d, t):
    if max(p, d, t) - min(p, d, t) > 2:
        return t
    return round((p + d + t) / 3)


def remediation(grade, ops):
    if grade >= 4:
        return "Nothing to fix."
    return "Fix: " + ops[0].argument


def chief_justice_node(state):
    ops = state["opinions"]
    p, d, t = (next(o.score for o in ops if o.judge == j) for j in ("P", "D", "T"))
    final_score = _resolve(p, d, t)
    return {"final_score": final_score, "remediation": remediation(final_score, ops)}
''')
    # only the helper's own test decides on the spread, not the remediation's test on the
    # score the spread may have set (no dissent text written on the spread there either)
    assert facts["justice.variance"].data["lines"] == [
        "nodes/justice.py:3", "nodes/justice.py:4"]
    assert "dissent_requirement" not in facts["justice.rules"].data["rules"]


def test_a_word_test_in_a_helper_that_names_no_score_is_a_keyword_rule(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
_INDICATORS = ("os.system", "shell injection")


def _cites_flaw(argument):
    text = (argument or "").lower()
    return any(indicator in text for indicator in _INDICATORS)


def chief_justice_node(state):
    ops = state["opinions"]
    prosecutor = [o for o in ops if o.judge == "Prosecutor"]
    final = round(sum(o.score for o in ops) / len(ops))
    if any(_cites_flaw(o.argument) for o in prosecutor):
        final = min(final, 3)
    return {"final_score": final}
''')
    keyword = facts["justice.keyword_rules"]
    assert keyword.found and keyword.location == "nodes/justice.py:14"
    assert "1 more fire on words" in facts["justice.rules"].rationale


def test_a_word_test_on_one_side_of_an_or_with_evidence_is_a_keyword_rule_too(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = state["opinions"]
    prosecutor = next((o for o in ops if o.judge == "Prosecutor"), None)
    final = sum(o.score for o in ops) / len(ops)
    tooling = next((e for e in state["evidences"]["repo"] if e.goal == "safe_tools"), None)
    violation = prosecutor and any(w in prosecutor.argument.lower() for w in ["insecure"])
    if (tooling and not tooling.found) or violation:
        final = 2.0
    return {"final_score": final}
''')
    keyword = facts["justice.keyword_rules"]
    assert keyword.found and keyword.location == "nodes/justice.py:8"
    assert facts["justice.rules"].data["rules"]["security_override"] == ["nodes/justice.py:8"]


def test_a_word_helper_and_the_tests_that_read_its_answer_are_one_keyword_rule(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def _flags_security(ops):
    text = " ".join(o.argument.lower() for o in ops if o.judge == "Prosecutor")
    if "security" in text:
        return True
    if "os.system" in text:
        return True
    return False


def _claims_metacognition(ops):
    text = " ".join(o.argument.lower() for o in ops if o.judge == "Defense")
    if "metacognition" in text:
        return True
    return False


def chief_justice_node(state):
    ops = state["opinions"]
    final = round(sum(o.score for o in ops) / len(ops))
    if _flags_security(ops):
        final = min(final, 3)
    if state["criterion"] == "safe_tool_engineering" and _flags_security(ops):
        final = min(final, 2)
    if _claims_metacognition(ops):
        final = final - 1
    return {"final_score": final}
''')
    keyword = facts["justice.keyword_rules"]
    # the helper's two tests and its two callers' tests: one rule; the other helper: one more
    assert keyword.data["lines"] == [f"nodes/justice.py:{n}" for n in (4, 6, 13, 21, 23, 25)]
    assert keyword.rationale.startswith("2 decision(s) change the score because a judge's "
                                        "argument contains a word")
    assert "tested on 6 lines" in keyword.rationale
    assert "; 2 more fire on words" in facts["justice.rules"].rationale


_CONSENSUS = '''
def chief_justice_node(state):
    final_scores = {}
    for criterion_id, ops in state["by_criterion"].items():
        scores = [o.score for o in ops]
        spread = max(scores) - min(scores)
        if TEST:
            final_scores[criterion_id] = sorted(scores)[1]
            continue
        final_scores[criterion_id] = round(sum(scores) / len(scores))
        if spread > 2:
            state["dissent"].append(f"high variance on {criterion_id}")
    return {"final_scores": final_scores}
'''


def test_a_median_taken_only_when_the_judges_agree_re_evaluates_no_disagreement(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, _CONSENSUS.replace("TEST", "spread <= 1"))
    variance, averaging = facts["justice.variance"], facts["justice.averaging"]
    assert not variance.found
    assert variance.rationale.startswith(
        "The score spread changes the score only when the judges agree (nodes/justice.py:7)")
    # the spread does change the score: the verdict is no plain average
    assert not averaging.found and averaging.rationale == "1 decision(s) change the mean."


def test_the_same_branch_taken_when_the_judges_disagree_re_evaluates(tmp_path: Path) -> None:
    for test in ("spread > 1", "not spread <= 1", "1 < spread"):
        _re_evaluates(tmp_path, _CONSENSUS.replace("TEST", test), 7)


SPREAD_NOTE = '''
import statistics


def chief_justice_node(state):
    scores = {{o.judge: o.score for o in state["opinions"]}}
    final_score = round(sum(scores.values()) / len(scores))
    note = None
    if max(scores.values()) - min(scores.values()) > 2:
        median_score = int(statistics.median(list(scores.values())))
{use}
    return {{"final_score": final_score, "note": note}}
'''


def test_a_score_named_value_read_only_in_text_is_a_note_not_a_re_evaluation(
        tmp_path: Path) -> None:
    # ``median_score`` only fills the note: the spread changes no score
    text = "        note = f\"median tiebreak: median_score={median_score}\""
    variance = _justice(tmp_path / "a", SPREAD_NOTE.format(use=text))["justice.variance"]
    assert not variance.found and "only adds dissent text" in variance.rationale
    # the same median made the verdict re-evaluates
    kept = "        final_score = median_score"
    _re_evaluates(tmp_path / "b", SPREAD_NOTE.format(use=kept), 9)
