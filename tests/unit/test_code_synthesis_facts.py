"""Chief Justice facts that say what the code computes: a rule that returns a capped opinion,
a criterion named `crit_id`, a weighted sum and an overall over the criteria, and rationales
that say why a fact does not hold."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice


def test_a_rule_on_a_judge_s_score_that_returns_a_capped_opinion_is_a_rule(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    opinions = state["opinions"]
    min_score = min(op.score for op in opinions)
    if min_score <= 2:
        return Opinion(judge="ChiefJustice", opinion="Verdict capped.", score=2)
    avg_score = round(sum(op.score for op in opinions) / len(opinions))
    return Opinion(judge="ChiefJustice", opinion="Consensus.", score=avg_score)
''')
    assert facts["justice.rules"].data["rules"]["security_override"] == ["nodes/justice.py:5"]
    assert facts["justice.averaging"].found is False
    unweighted = facts["justice.unweighted_mean"]
    assert unweighted.found and "nodes/justice.py:7" in (unweighted.content or "")


def test_a_branch_on_a_crit_id_keyword_is_a_criterion_rule_not_a_word_in_an_argument(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    final = {}
    for crit_id, ops in state["opinions"].items():
        scores = [o.score for o in ops]
        score = sum(scores) / len(scores)
        is_arch = any(k in crit_id.lower() for k in ["architecture", "orchestration"])
        if is_arch:
            score = next(o.score for o in ops if o.judge == "TechLead")
        final[crit_id] = score
    return {"final_scores": final}
''')
    assert facts["justice.keyword_rules"].found is False
    assert facts["justice.rules"].data["rules"]["functionality_weight"] == [
        "nodes/justice.py:8"]


def test_a_weighted_sum_is_the_judges_mean_and_the_overall_is_over_the_criteria(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    dimension_scores = {}
    for dim in state["rubric_dimensions"]:
        ops = [o for o in state["opinions"] if o.criterion_id == dim["id"]]
        p = next(o.score for o in ops if o.judge == "Prosecutor")
        d = next(o.score for o in ops if o.judge == "Defense")
        t = next(o.score for o in ops if o.judge == "TechLead")
        score = (t * 0.4) + (p * 0.3) + (d * 0.3)
        dimension_scores[dim["id"]] = score
    overall = sum(dimension_scores.values()) / len(dimension_scores)
    return {"overall_score": overall, "scores": dimension_scores}
''')
    averaging = facts["justice.averaging"]
    assert averaging.found
    assert (averaging.content or "").splitlines() == [
        "nodes/justice.py:9: score = (t * 0.4) + (p * 0.3) + (d * 0.3)"]
    assert "weighted per judge" in averaging.rationale


def test_why_the_rule_bound_mean_fact_does_not_hold_is_said(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    scores = [o.score for o in state["opinions"]]
    return {"final_score": round(sum(scores) / len(scores))}
''')
    assert facts["justice.averaging"].found
    unweighted = facts["justice.unweighted_mean"]
    assert not unweighted.found
    assert "every verdict is the mean" in unweighted.rationale.lower()


def test_a_spread_that_blends_the_score_is_said_to_change_it_not_to_re_evaluate(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
from statistics import median


def chief_justice_node(state):
    scores = [o.score for o in state["opinions"]]
    final = sum(scores) / len(scores)
    if max(scores) - min(scores) > 2:
        final = (final + median(scores)) / 2
    return {"final_score": round(final)}
''')
    # the blend of the mean and the median is a statistic of the scores given: a tie-break,
    # quoted from the code, and no re-evaluation
    variance, tie = facts["justice.variance"], facts["justice.tie_break"]
    assert not variance.found and variance.location == "nodes/justice.py:8"
    assert tie.found and "final = (final + median(scores)) / 2" in tie.rationale


def test_two_judges_scores_apart_are_a_spread_and_keyword_rules_are_named(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = {o.judge: o for o in state["opinions"]}
    p, d = ops["Prosecutor"], ops["Defense"]
    final = (p.score + d.score) / 2
    dissent = None
    if abs(p.score - d.score) > 2:
        dissent = f"Prosecutor {p.score} vs Defense {d.score}"
    if "os.system" in p.argument:
        final = min(final, 3)
    return {"final_score": round(final), "dissent": dissent}
''')
    variance = facts["justice.variance"]
    assert not variance.found
    assert variance.rationale == "The score spread only adds dissent text."
    rules = facts["justice.rules"]
    assert rules.data["rules"] == {"dissent_requirement": ["nodes/justice.py:7"]}
    assert "1 more fire on words in a judge's argument" in rules.rationale


def test_a_spread_tested_for_a_helper_s_value_is_read_not_denied(tmp_path: Path) -> None:
    # Azazh: ``dissent = summarize_dissent(ops) if variance > 2 else None``: the spread is
    # tested, though what the helper returns is not known to be text
    facts = _justice(tmp_path, '''
def summarize_dissent(ops):
    return [o.argument for o in ops]


def chief_justice_node(state):
    scores = [o.score for o in state["opinions"]]
    variance = max(scores) - min(scores) if len(scores) > 1 else 0
    dissent = summarize_dissent(state["opinions"]) if variance > 2 else None
    return {"final_score": round(sum(scores) / len(scores)), "dissent": dissent}
''')
    variance = facts["justice.variance"]
    assert not variance.found
    assert variance.rationale == ("The score spread is tested (nodes/justice.py:9) but "
                                  "changes no score.")


def test_a_flag_set_on_a_spread_that_only_picks_text_is_no_re_evaluation(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = {o.judge: o for o in state["opinions"]}
    p, d = ops["Prosecutor"], ops["Defense"]
    lines = []
    dissent_found = False
    if abs(p.score - d.score) >= 2:
        dissent_found = True
        lines.append(f"Dissent: {p.score} vs {d.score}")
    if not dissent_found:
        lines.append("No significant dissent.")
    return {"final_score": round((p.score + d.score) / 2), "report": "\\n".join(lines)}
''')
    assert not facts["justice.variance"].found
    assert facts["justice.variance"].rationale == "The score spread only adds dissent text."


def test_a_gap_between_two_judges_that_sets_the_score_is_a_re_evaluation(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = {o.judge: o for o in state["opinions"]}
    p, d, t = ops["Prosecutor"], ops["Defense"], ops["TechLead"]
    if abs(p.score - d.score) > 2:
        return {"final_score": t.score}
    return {"final_score": round((p.score + d.score + t.score) / 3)}
''')
    # a spread decision (the Tech Lead's score taken): a tie-break, not a re-evaluation
    variance, tie = facts["justice.variance"], facts["justice.tie_break"]
    assert variance.location == "nodes/justice.py:5" and not variance.found
    assert tie.found and tie.location == "nodes/justice.py:6"


def test_a_helper_s_test_with_an_or_inside_an_and_fires_on_each_side_alone(
        tmp_path: Path) -> None:
    # ermiyas111: ``if a["persona"] == "prosecutor" and ("security" in a["rationale"] or
    # a["score"] <= 2): return True`` caps the mean: its score side is a rule on the score
    facts = _justice(tmp_path, '''
def security_override(assessments):
    for a in assessments:
        if a["persona"].lower() == "prosecutor" and (
                "security" in a["rationale"].lower() or a["score"] <= 2):
            return True
    return False


def chief_justice_node(state):
    assessments = state["opinions"]
    scores = [a["score"] for a in assessments]
    avg = sum(scores) / len(scores)
    final_score = min(3, avg) if security_override(assessments) else avg
    return {"final_score": round(final_score)}
''')
    assert not facts["justice.averaging"].found
    assert facts["justice.rules"].data["rules"]["security_override"] == ["nodes/justice.py:14"]


def test_the_rules_fact_lists_the_decisions_that_read_the_evidence(tmp_path: Path) -> None:
    """nuhaminae: a decision on the evidence that only writes text still reads it, so a
    report's "fact supremacy" is told against what it does (`synthesis_claims`)."""
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    scores = [op.score for op in state["opinions"]]
    notes = []
    if state["evidences"].get("repo"):
        notes.append("repository evidence found")
    return {"score": sum(scores) / len(scores), "notes": notes}
''')
    assert facts["justice.rules"].data["evidence"] == ["nodes/justice.py:5"]
    assert facts["justice.rules"].data["rules"] == {}
