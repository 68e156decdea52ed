"""A Chief Justice rule keyed on a criterion's id fires only for criteria that have it: when no
criterion of the repository's rubric files does (``"security" in op.criterion_id`` against the
challenge's ids), the rule never fires, whatever its name; the ids are read from the rubric
files, a helper's True answer is followed, and without a rubric file nothing is said."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from automaton_auditor.forensics.code.rubric_ids import criterion_test

from .test_code_synthesis import _justice

CHALLENGE = {"dimensions": [{"id": i, "name": n} for i, n in (
    ("git_forensic_analysis", "Git Forensic Analysis"),
    ("safe_tool_engineering", "Safe Tool Engineering"),
    ("graph_orchestration", "Graph Orchestration Architecture"))]}
SECURITY = {"dimensions": [{"id": "security_review", "name": "Security"}]}

DIRECT = '''
def chief_justice_node(state):
    out = {}
    for op in state["opinions"]:
        score = round(sum(o.score for o in state["opinions"]) / len(state["opinions"]))
        if "security" in op.criterion_id.lower() and op.score <= 2:
            score = min(score, 3)
        out[op.criterion_id] = score
    return {"final_scores": out}
'''

HELPER = '''
def is_security_flaw(opinions):
    for op in opinions:
        if "security" in op.criterion_id.lower() and op.score <= 2:
            return True
    return False


def chief_justice_node(state):
    ops = state["opinions"]
    score = round(sum(o.score for o in ops) / len(ops))
    if is_security_flaw(ops):
        score = min(score, 3)
    return {"final_score": score}
'''


def _rules(tmp_path: Path, code: str, rubric: dict[str, object] | None,
           where: str = "rubric.json"):
    extra = {where: json.dumps(rubric, indent=1)} if rubric is not None else {}
    return _justice(tmp_path, code, extra)["justice.rules"]


def test_a_rule_on_a_criterion_id_no_rubric_has_never_fires(tmp_path: Path) -> None:
    dead = _rules(tmp_path / "a", DIRECT, CHALLENGE)
    assert dead.data["dead"] == ["nodes/justice.py:6"]
    assert "security_override" not in dead.data.get("rules", {})
    assert "one tests for a criterion id holding 'security', which no criterion of " \
        "rubric.json has (nodes/justice.py:6)" in dead.rationale
    # a rubric with such a criterion: the cap may fire
    live = _rules(tmp_path / "b", DIRECT, SECURITY)
    assert live.data["dead"] == [] and live.data["rules"]["security_override"] == [
        "nodes/justice.py:6"]
    # no rubric file: nothing is known of the criteria, nothing is said
    unknown = _rules(tmp_path / "c", DIRECT, None)
    assert unknown.data["dead"] == [] and "security_override" in unknown.data["rules"]


def test_a_helper_true_only_for_an_absent_criterion_answers_false(tmp_path: Path) -> None:
    dead = _rules(tmp_path / "a", HELPER, CHALLENGE, "docs/rubric.yaml")
    assert "nodes/justice.py:12" in dead.data["dead"]
    assert "security_override" not in dead.data.get("rules", {})
    live = _rules(tmp_path / "b", HELPER, SECURITY, "docs/rubric.yaml")
    assert "nodes/justice.py:12" not in live.data["dead"]
    assert live.data["rules"]["security_override"]


def test_a_criterion_id_the_rubric_has_keeps_the_rule(tmp_path: Path) -> None:
    code = DIRECT.replace('"security" in op.criterion_id.lower()',
                          '"safe" in op.criterion_id or "security" in op.criterion_id')
    assert _rules(tmp_path, code, CHALLENGE).data["dead"] == []


def _test(source: str) -> object:
    expr = ast.parse(source, mode="eval").body
    return criterion_test(expr)


def test_what_a_test_on_the_criterion_needs() -> None:
    assert _test('"security" in op.criterion_id.lower()') == [
        [["has", "id", "security", "lower"]]]
    assert _test('dim_id == "graph_orchestration"') == [
        [["eq", "id", "graph_orchestration", ""]]]
    assert _test('criterion["id"] in ("a", "b")') == [[["among", "id", ["a", "b"], ""]]]
    assert _test('"Security" in dimension_name') == [[["has", "name", "Security", ""]]]
    # a key test on a criterion's mapping, and a side that holds whatever the criterion
    assert _test('"judicial_logic" in criterion') is None
    assert _test('"security" in criterion_id or score <= 2') is None
    assert _test('criterion_id != "x"') is None
    assert _test('"security" in criterion_id and score <= 2') == [
        [["has", "id", "security", ""]]]


def test_a_helper_s_own_helpers_and_flags_are_followed(tmp_path: Path) -> None:
    code = HELPER.replace('''def is_security_flaw(opinions):
    for op in opinions:
        if "security" in op.criterion_id.lower() and op.score <= 2:''', '''def named(op):
    cid = (op.criterion_id or "").lower()
    return any(word in cid for word in ["security", "auth"])


def is_security_flaw(opinions):
    for op in opinions:
        flagged = named(op)
        if flagged and op.score <= 2:''')
    dead = _rules(tmp_path / "a", code, CHALLENGE)
    # the helper's test, and the rule that reads its answer
    assert dead.data["dead"] == ["nodes/justice.py:10", "nodes/justice.py:18"], dead.rationale
    assert "a criterion id holding 'security' or 'auth'" in dead.rationale
    live = _rules(tmp_path / "b", code, SECURITY)
    assert live.data["dead"] == [] and live.data["rules"]["security_override"]
