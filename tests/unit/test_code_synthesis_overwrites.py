"""The verdict is the score's last assignment on each path: a cap that a later line replaces,
without reading it, decides no verdict where that line runs."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice

# the caps run first; when the judges disagree by more than 2, the median replaces them
CAPS_THEN_MEDIAN = '''
def _security_flaw(prosecutor, evidence):
    return any(not e.found for e in evidence if e.dimension == "safe_tool_engineering")


def _weak_evidence(defense, evidence):
    return defense.score >= 4 and sum(1 for e in evidence if e.found) < len(evidence) / 2


def chief_justice_node(state):
    out = []
    for dim in state["dimensions"]:
        ops = [o for o in state["opinions"] if o.criterion_id == dim]
        evidence = state["evidences"].get(dim, [])
        prosecutor = next(o for o in ops if o.judge == "Prosecutor")
        defense = next(o for o in ops if o.judge == "Defense")
        scores = [o.score for o in ops]
        final_score = round(sum(scores) / len(scores))
        if _security_flaw(prosecutor, evidence):
            final_score = min(final_score, 3)
        if _weak_evidence(defense, evidence):
            final_score = min(final_score, 3)
        if max(scores) - min(scores) > 2:
            final_score = round(sorted(scores)[len(scores) // 2])
        final_score = max(1, min(5, final_score))
        out.append({"criterion": dim, "score": final_score})
    return {"verdicts": out}
'''

# the same caps, the spread only writing a dissent: they decide every verdict
CAPS_THEN_DISSENT = CAPS_THEN_MEDIAN.replace(
    "final_score = round(sorted(scores)[len(scores) // 2])", 'out.append("dissent")')

# the spread's median is computed first; the caps read it and hold
MEDIAN_THEN_CAPS = CAPS_THEN_MEDIAN.replace(
    "        if max(scores) - min(scores) > 2:\n"
    "            final_score = round(sorted(scores)[len(scores) // 2])\n", "").replace(
    "        if _security_flaw(", "        if max(scores) - min(scores) > 2:\n"
    "            final_score = round(sorted(scores)[len(scores) // 2])\n"
    "        if _security_flaw(")


def test_caps_a_later_median_replaces_when_judges_disagree_hold_only_where_they_agree(
        tmp_path: Path) -> None:
    """The caps stay credited (they decide the verdicts where the judges agree); the note
    says the rule holds only where the spread's test fails."""
    fact = _justice(tmp_path, CAPS_THEN_MEDIAN)["justice.rules"]
    rules = fact.data["rules"]
    assert "security_override" in rules and "fact_supremacy" in rules, rules
    assert "holds only where that test fails" in fact.rationale, fact.rationale
    # both lines quoted: the cap and the line that overwrites it, with the test it runs under
    assert "is overwritten at" in fact.rationale and "(if max(scores) - min(scores) > 2)" \
        in fact.rationale, fact.rationale
    assert "final_score = min(final_score, 3)" in (fact.content or "")
    assert "final_score = round(sorted(scores)[len(scores) // 2])" in (fact.content or "")


def test_caps_nothing_replaces_are_credited(tmp_path: Path) -> None:
    for index, source in enumerate((CAPS_THEN_DISSENT, MEDIAN_THEN_CAPS)):
        (tmp_path / str(index)).mkdir()
        fact = _justice(tmp_path / str(index), source)["justice.rules"]
        assert "security_override" in fact.data["rules"], fact.rationale
        assert "overwritten" not in fact.rationale, fact.rationale


# a weighting on one criterion replaces the cap there only: still credited, with a note
CAPS_THEN_CRITERION_WEIGHT = CAPS_THEN_DISSENT.replace(
    "        final_score = max(1, min(5, final_score))\n",
    "        if dim == \"graph_orchestration\":\n"
    "            final_score = round((sum(scores) + 2 * ops[2].score) / 5)\n"
    "        final_score = max(1, min(5, final_score))\n")


def test_a_cap_a_criterion_weight_replaces_is_credited_with_a_note(tmp_path: Path) -> None:
    fact = _justice(tmp_path, CAPS_THEN_CRITERION_WEIGHT)["justice.rules"]
    assert "security_override" in fact.data["rules"], fact.rationale
    assert "is overwritten at" in fact.rationale and "holds: there it decides no verdict" \
        in fact.rationale and "not counted" not in fact.rationale, fact.rationale


# a security cap on the Prosecutor's number alone, a fact-supremacy cap on words and the
# evidence, and a floor ``if final > limit: final = limit`` whose limit is the Prosecutor's
JUDGE_NUMBER_CAP_AND_FLOOR = '''
def _security(criterion_id, p_score, score):
    if criterion_id not in {"safe_tool_engineering"}:
        return score
    if p_score <= 2:
        return min(score, 3.0)
    return score


def _facts(d_score, score, defense, evidence):
    if d_score >= 4 and "deep" in defense.argument.lower():
        if not any(e.found for e in evidence):
            return min(score, 3.0)
    return score


def chief_justice_node(state):
    out = []
    for dim in state["dimensions"]:
        ops = [o for o in state["opinions"] if o.criterion_id == dim]
        p_score = next(o.score for o in ops if o.judge == "Prosecutor")
        defense = next(o for o in ops if o.judge == "Defense")
        score = sum(o.score for o in ops) / len(ops)
        score = _security(dim, p_score, score)
        score = _facts(defense.score, score, defense, state["evidences"].get(dim, []))
        final_score = round(score)
        if p_score <= 2:
            strict_limit = p_score + 1
            if final_score > strict_limit:
                final_score = strict_limit
        out.append(final_score)
    return {"scores": out}
'''


def test_a_floor_s_clamp_is_no_word_test(tmp_path: Path) -> None:
    keyword = _justice(tmp_path, JUDGE_NUMBER_CAP_AND_FLOOR)["justice.keyword_rules"]
    # the clamp's test compares the score with the Prosecutor's limit: not the Defense's words
    assert "final_score > strict_limit" not in (keyword.content or ""), keyword.content
    assert "if d_score >= 4" in (keyword.content or ""), keyword.content


def test_a_security_cap_on_one_judge_s_number_says_so(tmp_path: Path) -> None:
    rules = _justice(tmp_path, JUDGE_NUMBER_CAP_AND_FLOOR)["justice.rules"]
    assert "security_override" in rules.data["rules"], rules.rationale
    assert "(if p_score <= 2) reads the judges' scores and no detected fact" in \
        rules.rationale, rules.rationale


# the same cap, its test also reading a flag the caller computed from the evidence
FLAG_PASSED = JUDGE_NUMBER_CAP_AND_FLOOR.replace(
    "def _security(criterion_id, p_score, score):",
    "def _security(criterion_id, p_score, score, flaw):").replace(
    "    if p_score <= 2:\n        return min(score, 3.0)",
    "    if flaw and p_score <= 2:\n        return min(score, 3.0)").replace(
    "score = _security(dim, p_score, score)",
    "score = _security(dim, p_score, score, not state[\"evidences\"].get(dim))")


# the same cap nested in a test of the evidence a helper answers
NESTED = JUDGE_NUMBER_CAP_AND_FLOOR.replace(
    "    if p_score <= 2:\n        return min(score, 3.0)",
    "    if _flawed():\n        if p_score <= 2:\n            return min(score, 3.0)").replace(
    "def chief_justice_node(state):", "def _flawed():\n    return True\n\n\n"
    "def chief_justice_node(state):")


def test_a_security_cap_a_fact_gates_is_not_said_to_need_no_fact(tmp_path: Path) -> None:
    for index, source in enumerate((FLAG_PASSED, NESTED)):
        (tmp_path / str(index)).mkdir()
        rules = _justice(tmp_path / str(index), source)["justice.rules"]
        assert "no detected fact" not in rules.rationale, rules.rationale


# a security cap, then a line that replaces the score where the judges disagree, in shapes
# where the cap still holds on every path
KEPT = '''
SECURITY_CAP = 3


def _flaw(evidence):
    return any(not e.found for e in evidence)


def chief_justice_node(state):
    out = []
    for dim in state["dimensions"]:
        ops = [o for o in state["opinions"] if o.criterion_id == dim]
        evidence = state["evidences"].get(dim, [])
        scores = [o.score for o in ops]
        tl = ops[2].score
        note = ""
        final = round(sum(scores) / len(scores))
        if dim == "safe_tool_engineering" and _flaw(evidence):
            final = min(final, SECURITY_CAP)
            note = "security cap"
        if max(scores) - min(scores) > 2:
            REPLACE
        out.append((final, note))
    return {"verdicts": out}
'''
KEPT_SHAPES = {
    # the same test caps it again
    "recap": "final = tl\n            if dim == \"safe_tool_engineering\" and _flaw(evidence):"
             "\n                final = min(final, SECURITY_CAP)",
    # a clamp on the value itself
    "clamp": "if final > tl:\n                final = tl",
    # the scale's floor, within any cap
    "floor": "final = 1",
    # the guard negates the cap's own test
    "negated": "if not (dim == \"safe_tool_engineering\" and _flaw(evidence)):"
               "\n                final = tl",
    # the guard needs the note the cap's body wrote to be empty
    "flag": "if not note:\n                final = tl",
    # the guard keeps the criterion to one the cap's test excludes
    "criterion": "if dim in [\"graph_orchestration\"]:\n                final = tl",
}


def test_a_replacement_that_keeps_the_cap_s_bound_claims_nothing(tmp_path: Path) -> None:
    for name, replace in KEPT_SHAPES.items():
        (tmp_path / name).mkdir()
        fact = _justice(tmp_path / name, KEPT.replace("REPLACE", replace))["justice.rules"]
        assert "security_override" in fact.data["rules"], (name, fact.rationale)
        assert "overwritten" not in fact.rationale, (name, fact.rationale)
    (tmp_path / "undone").mkdir()
    undone = _justice(tmp_path / "undone", KEPT.replace("REPLACE", "final = tl"))
    assert "security_override holds only where that test fails" in \
        undone["justice.rules"].rationale, undone["justice.rules"].rationale


# the only test on the evidence picks how to read a field by its type
TYPE_PARSE = '''
def _evidence_found_score(state):
    total_count = 0
    found_count = 0
    for evidence in state.get("evidences", []):
        total_count += 1
        raw_found_value = getattr(evidence, "found", False)
        if isinstance(raw_found_value, str):
            found_value = raw_found_value.strip().lower() in {"true", "yes"}
        else:
            found_value = bool(raw_found_value)
        if found_value:
            found_count += 1
    if total_count == 0:
        return 0.0, 0, 0
    score_float = round((found_count / total_count) * 5, 2)
    return score_float, found_count, total_count


def chief_justice_node(state):
    ops = state.get("opinions", [])
    if ops:
        score_float = round(sum(o.score for o in ops) / len(ops), 2)
    else:
        score_float, found_count, total_count = _evidence_found_score(state)
    if not state.get("evidences") and ops and ops[0].score >= 4:
        score_float = float(ops[1].score)
    return {"overall_score": f"{score_float:.1f}"}
'''


def test_a_parse_by_a_value_s_type_is_no_rule(tmp_path: Path) -> None:
    rules = _justice(tmp_path, TYPE_PARSE)["justice.rules"]
    # no decision on the evidence: the test only picks how to read the field
    assert "isinstance(raw_found_value, str)" not in (rules.content or ""), rules.content
    assert "nodes/justice.py:8" not in rules.data["evidence"], rules.data


# the score set where no judge spoke, with a spread of 0; the spread's rule needs more than 2
NO_OPINIONS = '''
def chief_justice_node(state):
    out = []
    for dim in state["dimensions"]:
        ops = [o for o in state["opinions"] if o.criterion_id == dim]
        if any(o.score for o in ops):
            scores = [o.score for o in ops]
            final_score = round(sum(scores) / len(scores))
            variance = max(scores) - min(scores)
        else:
            final_score = 0
            variance = 0
        if variance > 2:
            final_score = ops[2].score
        out.append(final_score)
    return {"scores": out}
'''


def test_a_replacement_whose_guard_the_block_s_own_number_fails_claims_nothing(
        tmp_path: Path) -> None:
    rules = _justice(tmp_path, NO_OPINIONS)["justice.rules"]
    assert "final_score = 0" not in rules.rationale, rules.rationale
