"""A test of the scores' shape (none, how many, what type, a zero total) caps no judge's score,
and a note that only goes to a log line or to remediation text is no dissent."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice


def test_a_guard_on_the_scores_shape_is_no_cap(tmp_path: Path) -> None:
    rules = _justice(tmp_path, '''
def weighted_median(scores, weights):
    if not scores or not weights or len(scores) != len(weights):
        return 3
    items = sorted(zip(scores, weights))
    total = sum(w for _, w in items)
    if total <= 0:
        return 3
    return items[len(items) // 2][0]


def safe(op):
    score = op.score
    if not isinstance(score, (int, float)):
        score = 3
    return score


def chief_justice_node(state):
    ops = state["opinions"]
    scores = [safe(o) for o in ops]
    ordered = sorted(scores)
    if len(ordered) >= 3:
        final = ordered[1]
    elif len(ordered) == 2:
        final = round(sum(ordered) / 2)
    else:
        final = 1
    spreads = {}
    if scores:
        spread_score = max(scores) - min(scores)
    else:
        spread_score = 0
    final = weighted_median(scores, [1.0 for _ in scores]) if spread_score > 2 else final
    if not state["evidence"]["safe_tool_engineering"].found:
        final = min(final, 3)
    return {"final_score": final, "spreads": spreads}
''').get("justice.rules")
    assert rules is not None
    # only the cap on the detected fact is a security override
    assert rules.data["rules"]["security_override"] == ["nodes/justice.py:35"]


def test_a_note_for_a_log_line_or_remediation_is_no_dissent(tmp_path: Path) -> None:
    rules = _justice(tmp_path, '''
import logging

logger = logging.getLogger(__name__)


def chief_justice_node(state):
    ops = state["opinions"]
    scores = [o.score for o in ops]
    spread = max(scores) - min(scores)
    fixes = [f"raise {o.judge}" for o in ops if spread > 2]
    logger.info("verdict %s", "[DISSENT]" if spread > 2 else "")
    result = dict(final_score=round(sum(scores) / len(scores)),
                  remediation="\\n".join(fixes) if fixes else "None needed")
    result["dissent"] = "The judges disagree." if spread > 2 else None
    return result
''')["justice.rules"]
    assert rules.data["rules"]["dissent_requirement"] == ["nodes/justice.py:15"]
