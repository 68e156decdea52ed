"""A keyword rule searches words in the text a judge wrote, followed into helpers
(`argument_words`): never in the rubric's rule text or a config mapping, and also when a
helper's ``or`` answers on the argument's words alone."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice

RUBRIC_TEXT = '''
import re


def _extract_cap_score(rule_text, default=3):
    text = str(rule_text or "")
    m = re.search(r"\\bcap(?:ped)?\\s*(?:at|to)?\\s*(\\d+)", text)
    if m:
        return int(m.group(1))
    return default


def chief_justice_node(state):
    rules = state.get("synthesis_rules") or {}
    ops = state["opinions"]
    final = sum(o.score for o in ops) / len(ops)
    cap = _extract_cap_score(str(rules.get("security_override", "")))
    fact_supremacy_enabled = "fact_supremacy" in rules
    if fact_supremacy_enabled and any(not ev.found for ev in state["evidences"]):
        final = min(final, cap)
    return {"final_score": round(final), "fact_supremacy": fact_supremacy_enabled}
'''


def test_words_searched_in_the_rubric_s_rule_text_or_keys_are_no_keyword_rule(
        tmp_path: Path) -> None:
    """``re.search(pattern, rule_text)`` over the rubric's rule text and ``"fact_supremacy"
    in rules`` read no judge's argument."""
    facts = _justice(tmp_path, RUBRIC_TEXT)
    keyword = facts["justice.keyword_rules"]
    assert not keyword.found, keyword.content
    assert "fire on words" not in facts["justice.rules"].rationale


HELPER = '''
KEYWORDS = ("os.system", "shell=true", "injection")


def _argument_mentions(text):
    lowered = text.lower()
    return any(k in lowered for k in KEYWORDS)


def chief_justice_node(state):
    ops = state["opinions"]
    prosecutor = next(o for o in ops if o.judge == "Prosecutor")
    final = sum(o.score for o in ops) / len(ops)
    if _argument_mentions(SEARCHED):
        final = min(final, 3)
    return {"final_score": round(final)}
'''


def test_words_a_helper_searches_in_the_argument_its_caller_passes_are_a_keyword_rule(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, HELPER.replace("SEARCHED", "prosecutor.argument"))
    keyword = facts["justice.keyword_rules"]
    assert keyword.found and keyword.location == "nodes/justice.py:14"


def test_words_a_helper_searches_in_the_rubric_text_its_caller_passes_are_no_keyword_rule(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, HELPER.replace("SEARCHED", 'state["rubric_text"]'))
    assert not facts["justice.keyword_rules"].found


def test_a_helper_whose_or_answers_on_the_argument_s_words_alone_is_a_keyword_rule(
        tmp_path: Path) -> None:
    """``return (p.score <= 2 and any(t in arg ...)) or evidence_failed``: the rule caps on
    the Prosecutor's words alone as well as on the evidence."""
    facts = _justice(tmp_path, '''
def _apply_security_override(prosecutor, dim_id, dim_evidence):
    if not prosecutor:
        return False
    arg = prosecutor.argument.lower()
    security_terms = ["security", "os.system", "injection", "unsafe"]
    evid_security_fail = any("safe_tool" in dim_id and not ev.found for ev in dim_evidence)
    return (prosecutor.score <= 2 and any(t in arg for t in security_terms)) or evid_security_fail


def chief_justice_node(state):
    ops = state["opinions"]
    dim_id = state["criterion"]
    prosecutor = next((o for o in ops if o.judge == "Prosecutor"), None)
    final = round(sum(o.score for o in ops) / len(ops))
    if _apply_security_override(prosecutor, dim_id, state["evidences"].get(dim_id, [])):
        final = min(final, 3)
    return {"final_score": final}
''')
    keyword = facts["justice.keyword_rules"]
    assert keyword.found and keyword.location == "nodes/justice.py:16"
    # the evidence side is still a security override on the evidence
    assert "security_override" in facts["justice.rules"].data["rules"]


def test_words_searched_in_the_prosecutor_s_charges_are_a_keyword_rule(tmp_path: Path) -> None:
    """The charges a Prosecutor lists are words it wrote, as its argument is."""
    facts = _justice(tmp_path, '''
SEC_KEYWORDS = {"shell injection", "os.system"}


def chief_justice_node(state):
    ops = state["opinions"]
    final = sum(o.score for o in ops) / len(ops)
    violation = False
    for op in ops:
        if op.judge == "Prosecutor" and op.charges:
            for charge in op.charges:
                if any(kw in charge.lower() for kw in SEC_KEYWORDS):
                    violation = True
    if violation:
        final = min(final, 3.0)
    return {"final_score": round(final)}
''')
    assert facts["justice.keyword_rules"].found


def test_a_rule_that_needs_a_word_and_the_evidence_is_both(tmp_path: Path) -> None:
    """IbnuEyni and Gersum: ``if concern and not sandboxed`` where the concern is a word in the
    Prosecutor's argument and the other test a detected fact: it fires on words (a keyword
    rule, said gated) and only where the fact holds (a rule on the evidence too)."""
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = state["opinions"]
    prosecutor = next(o for o in ops if o.judge == "Prosecutor")
    final = round(sum(o.score for o in ops) / len(ops))
    concern = "security" in prosecutor.argument.lower()
    sandboxed = any(e.found for e in state["evidences"]["repo"])
    if concern and not sandboxed:
        final = 2
    return {"final_score": final}
''')
    keyword = facts["justice.keyword_rules"]
    assert keyword.found and keyword.location == "nodes/justice.py:8"
    assert "(1 of them only where a detected fact also holds)" in keyword.rationale
    rules = facts["justice.rules"]
    assert rules.data["rules"]["security_override"] == ["nodes/justice.py:8"]
    assert "more fire on words" not in rules.rationale


# the helper's answer is (a low score and a word) OR a failed check: the word fires alone
WORD_OR_FACT = '''
def _security_override(prosecutor, dim_id, evidence):
    arg = prosecutor.argument.lower()
    failed = any("safe_tool" in dim_id and not ev.found for ev in evidence)
    return (prosecutor.score <= 2 and any(t in arg for t in ["security", "unsafe"])) or failed


def chief_justice_node(state):
    out = []
    for dim in state["dimensions"]:
        ops = [o for o in state["opinions"] if o.criterion_id == dim]
        prosecutor = next(o for o in ops if o.judge == "Prosecutor")
        final = round(sum(o.score for o in ops) / len(ops))
        if _security_override(prosecutor, dim, state["evidences"].get(dim, [])):
            final = min(final, 3)
        out.append(final)
    return {"scores": out}
'''

# the same, an ``and``: the word counts only where the check failed too
WORD_AND_FACT = WORD_OR_FACT.replace(
    '["security", "unsafe"])) or failed', '["security", "unsafe"])) and failed')


def test_a_word_on_one_side_of_an_or_fires_alone(tmp_path: Path) -> None:
    (tmp_path / "or").mkdir()
    (tmp_path / "and").mkdir()
    either = _justice(tmp_path / "or", WORD_OR_FACT)["justice.keyword_rules"].rationale
    both = _justice(tmp_path / "and", WORD_AND_FACT)["justice.keyword_rules"].rationale
    assert "only where a detected fact also holds" not in either, either
    assert "on the word alone" in either, either
    assert "only where a detected fact also holds" in both, both
