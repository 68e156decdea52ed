"""A Chief Justice rule whose test its own function's boolean flags keep false on every path
never fires; flags set on different paths, or a flag set from a call, may fire."""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.flag_paths import dead_tests

from .test_code_synthesis import _justice

# flags set together in the loop: ``all_fail`` true means nothing was found, and then an
# ``opinions`` that is not empty has already returned: line 12 is never true
RULE = '''
def fact_supremacy(opinions, evidences):
    found_any = False
    all_fail = True
    for _source, items in (evidences or {{}}).items():
        for e in items:
            if e.goal and e.found and e.confidence >= 0.6:
{found}
    if not found_any and opinions:
        return None
    if all_fail and opinions:
        return {{"score": 1, "note": "Rule of Evidence: the evidence does not hold"}}
    return None


def chief_justice_node(state):
    ops = state["opinions"]
    capped = fact_supremacy(ops, state["evidences"])
    if capped is not None:
        return {{"final_score": capped["score"]}}
    return {{"final_score": round(sum(o.score for o in ops) / len(ops))}}
'''
TOGETHER = "                found_any = True\n                all_fail = False"
APART = "                found_any = True\n            else:\n                all_fail = False"
CALLED = "                found_any = True\n                all_fail = e.failed()"


def test_a_rule_its_own_flags_keep_false_never_fires(tmp_path: Path) -> None:
    facts = _justice(tmp_path / "a", RULE.format(found=TOGETHER))
    rules = facts["justice.rules"]
    assert rules.data["dead"] == ["nodes/justice.py:12"]
    # its cap on the evidence was the only security override
    assert rules.data["rules"] == {"fact_supremacy": ["nodes/justice.py:7",
                                                      "nodes/justice.py:20"]}
    assert "flags their code keeps false): `if all_fail and opinions:` (nodes/justice.py:12) " \
        "is false on every path, given its function's flags (lines 3, 4, 8, 9, 10)" in \
        rules.rationale
    # the quote shows why: the flags set together, the early return, the test
    for line in ("nodes/justice.py:4: all_fail = True", "nodes/justice.py:9: all_fail = False",
                 "nodes/justice.py:10: if not found_any and opinions:",
                 "nodes/justice.py:12: if all_fail and opinions:"):
        assert line in (rules.content or "")
    # set on different paths: a run may find evidence and keep ``all_fail``
    apart = _justice(tmp_path / "b", RULE.format(found=APART))["justice.rules"]
    assert apart.data["dead"] == [] and apart.data["rules"]["security_override"] == [
        "nodes/justice.py:13"]
    # a flag set from a call is not followed: unknown, so it may fire
    called = _justice(tmp_path / "c", RULE.format(found=CALLED))["justice.rules"]
    assert called.data["dead"] == [] and called.data["rules"]["security_override"] == [
        "nodes/justice.py:12"]


def _dead(code: str) -> dict[int, list[int]]:
    node = ast.parse(code).body[0]
    assert isinstance(node, ast.FunctionDef)
    return dead_tests(node)


def test_flag_paths_follow_every_path_and_give_up_on_what_they_do_not_model() -> None:
    assert _dead(RULE.format(found=TOGETHER)) == {
        12: [3, 4, 8, 9, 10, 12]}
    assert _dead(RULE.format(found=APART)) == {}
    assert _dead(RULE.format(found=CALLED)) == {}
    # ``while`` and ``break``: the flag is true once the loop is left
    assert _dead("def f(xs):\n    done = False\n    while not done:\n        if xs:\n"
                 "            done = True\n            break\n        done = True\n"
                 "    if not done:\n        return 1\n    return 2\n") == {8: [2, 3, 5, 7, 8]}
    # a parameter whose truth a call may change (``g`` may hold it too) is open again after
    # it; one read otherwise (``ops.append``) is not followed at all
    for call in ("g()", "ops.append(1)"):
        assert _dead("def f(ops):\n    seen = False\n    if not seen and ops:\n        return 0\n"
                     f"    {call}\n    if not seen and ops:\n        return 1\n") == {}
    assert _dead("def f(ops):\n    seen = False\n    if not seen and ops:\n        return 0\n"
                 "    if not seen and ops:\n        return 1\n") == {5: [2, 3, 5]}
    # a ``try``, a flag a nested function names: no claim
    assert _dead("def f():\n    ok = False\n    try:\n        pass\n    except E:\n"
                 "        pass\n    if ok:\n        return 1\n") == {}
    assert _dead("def f():\n    ok = False\n    def g():\n        return ok\n"
                 "    if ok:\n        return 1\n") == {}
    # a call inside the test may empty ``ops`` between its two reads: no claim
    assert _dead("def f(ops):\n    seen = False\n    if not seen and ops and g() and not ops:\n"
                 "        return 1\n") == {}
