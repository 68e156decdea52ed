"""What a score cap on the evidence reads, told in ``justice.rules``
(`forensics.code.override_reads`): a test in the loop over the criteria that reads nothing
picked per criterion; a helper that skips the low opinion scores; a cap on a word every
evidence text the code spells says is absent."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice

UNSCOPED = '''
def chief_justice_node(state):
    results = []
    for dimension in state["rubric_dimensions"]:
        dim_id = dimension["id"]
        ops = [o for o in state["opinions"] if o.criterion_id == dim_id]
        scores = [o.score for o in ops]
        final = round(sum(scores) / len(scores))
        flagged = any(e.dimension_id == "safe_tool_engineering" and not e.found
                      for e in state["evidences"].get("repo", []))
        if {test}:
            final = min(final, 3)
        results.append(final)
    return {{"final_report": results}}
'''


def test_a_cap_in_the_criteria_loop_on_one_fixed_criterion_s_evidence_is_unscoped(
        tmp_path: Path) -> None:
    rules = _justice(tmp_path, UNSCOPED.format(test="flagged"))["justice.rules"]
    assert "reads nothing that loop picks per criterion" in rules.rationale, rules.rationale
    assert "for every criterion alike" in rules.rationale
    assert "flagged = any(" in rules.rationale  # the line it reads, quoted


def test_a_cap_scoped_to_the_criterion_is_not_told_unscoped(tmp_path: Path) -> None:
    rules = _justice(tmp_path, UNSCOPED.format(
        test='flagged and dim_id == "safe_tool_engineering"'))["justice.rules"]
    assert "picks per criterion" not in rules.rationale, rules.rationale


SKIPS = '''
def _security_cap(opinions, evidences):
    prosecutors = [op for op in opinions if op.judge == "Prosecutor"]
    hits = []
    for op in prosecutors:
        if op.score {op} 3:
            continue
        if "security" in op.argument.lower():
            hits.extend(ev for ev in evidences if ev.found and ev.confidence > 0.7)
    return 3 if hits else None


def chief_justice_node(state):
    out = {}
    for cid, ops in state["opinions"].items():
        score = round(sum(o.score for o in ops) / len(ops))
        cap = _security_cap(ops, state["evidences"].get(cid, []))
        if cap is not None:
            score = min(score, cap)
        out[cid] = score
    return {"final_report": out}
'''


def test_a_cap_whose_helper_skips_low_prosecutor_scores_says_so(tmp_path: Path) -> None:
    rules = _justice(tmp_path, SKIPS.replace("{op}", "<="))["justice.rules"]
    assert "skips every opinion scoring 3 or less" in rules.rationale, rules.rationale
    assert 'op.judge == "Prosecutor"' in rules.rationale
    assert "if op.score <= 3:" in rules.rationale


def test_a_helper_skipping_high_scores_is_not_told_to_skip_low_ones(tmp_path: Path) -> None:
    rules = _justice(tmp_path, SKIPS.replace("{op}", ">="))["justice.rules"]
    assert "skips every opinion" not in rules.rationale, rules.rationale


NEGATED = '''
def _has_security_issue(evidences):
    for e in evidences:
        content = (e.content or "") + (e.rationale or "")
        if "os.system" in content:
            return True
    return False


def chief_justice_node(state):
    out = {}
    for cid, ops in state["opinions"].items():
        final = sorted(o.score for o in ops)[1]
        if _has_security_issue(state["evidences"].get(cid, [])):
            final = min(final, 3)
        out[cid] = final
    return {"final_report": out}
'''
DETECTIVE = '''
def repo_node(state):
    return {{"evidences": {{"safe_tool_engineering": [Evidence(
        goal="sandboxed clone", found=True, location=".",
        content={text!r})]}}}}
'''


def test_a_cap_on_a_word_every_written_text_negates_falls_on_clean_evidence(
        tmp_path: Path) -> None:
    rules = _justice(tmp_path, NEGATED, {"nodes/detectives.py": DETECTIVE.format(
        text="Clone uses subprocess.run only; no os.system with user input.")})[
        "justice.rules"]
    assert "says it is absent" in rules.rationale, rules.rationale
    assert "no os.system with user input" in rules.rationale
    assert "nodes/detectives.py:" in rules.rationale


def test_a_cap_on_a_word_a_text_reports_found_is_not_told_negated(tmp_path: Path) -> None:
    rules = _justice(tmp_path, NEGATED, {"nodes/detectives.py": DETECTIVE.format(
        text="os.system called with user input in tools.py")})["justice.rules"]
    assert "says it is absent" not in rules.rationale, rules.rationale


def test_a_test_on_a_list_the_loop_fills_is_not_told_unscoped(tmp_path: Path) -> None:
    """``flagged.append(...)`` in the loop changes what the test reads from one criterion to
    the next."""
    code = UNSCOPED.format(test="flagged").replace(
        "        flagged = any(", "        seen.append(dim_id)\n        flagged = seen and any(")
    code = code.replace("    results = []\n", "    results = []\n    seen = []\n")
    rules = _justice(tmp_path, code)["justice.rules"]
    assert "picks per criterion" not in rules.rationale, rules.rationale


def test_a_word_tested_in_a_judge_s_argument_is_no_evidence_text(tmp_path: Path) -> None:
    code = NEGATED.replace('if "os.system" in content:',
                           'if "os.system" in state_note and e.found:').replace(
        "def _has_security_issue(evidences):", "def _has_security_issue(evidences, state_note=''):")
    rules = _justice(tmp_path, code, {"nodes/detectives.py": DETECTIVE.format(
        text="no os.system with user input.")})["justice.rules"]
    assert "says it is absent" not in rules.rationale, rules.rationale


def test_a_fixed_gate_around_a_per_criterion_cap_is_not_told_unscoped(tmp_path: Path) -> None:
    """``if rules.get("fact_supremacy"):`` holds for every criterion, but the cap it guards
    tests the criterion's own evidence."""
    code = UNSCOPED.format(test="flagged").replace(
        "        if flagged:\n            final = min(final, 3)\n",
        "        if flagged:\n            bad = state[\"evidences\"].get(dim_id)\n"
        "            if bad:\n                final = min(final, 3)\n")
    rules = _justice(tmp_path, code)["justice.rules"]
    assert "picks per criterion" not in rules.rationale, rules.rationale
