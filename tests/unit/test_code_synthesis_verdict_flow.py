"""Chief Justice facts taken from what sets each criterion's verdict: a mean that only fills
a report line, a grade label or a variance is no verdict, and a fixed cap on the evidence is
one rule (the security override), not fact supremacy too."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice

# the verdict is the Tech Lead's score; the percentage over the verdicts only fills text
TECH_LEAD_WITH_REPORT = '''
def _deliberate(judgment):
    tech_lead = next(o for o in judgment.opinions if o.judge == "TechLead")
    final_score = tech_lead.score
    return {"criterion_id": judgment.criterion_id, "final_score": final_score}


def _report(verdicts):
    total_score = sum(v["final_score"] for v in verdicts)
    max_score = len(verdicts) * 5
    percentage = (total_score / max_score) * 100 if max_score > 0 else 0
    return f"Overall Score: {total_score}/{max_score} ({percentage:.1f}%)"


def chief_justice_node(state):
    verdicts = [_deliberate(j) for j in state["judgments"]]
    return {"final_verdicts": verdicts, "report": _report(verdicts)}
'''


def test_a_report_percentage_over_the_verdicts_is_no_plain_average(tmp_path: Path) -> None:
    facts = _justice(tmp_path, TECH_LEAD_WITH_REPORT)
    for facet in ("justice.averaging", "justice.unweighted_mean"):
        assert facts[facet].found is False, facts[facet].rationale
        assert "percentage" not in (facts[facet].content or "")


# the verdict is the highest score; the means only feed a variance and a grade label
HIGHEST_WITH_VARIANCE = '''
def calculate_variance(scores):
    mean = sum(scores) / len(scores)
    variance = sum((s - mean) ** 2 for s in scores) / len(scores)
    return variance


def summary(results):
    avg_score = sum(r["score"] for r in results) / len(results)
    if avg_score >= 4.5:
        grade = "MASTER THINKER"
    else:
        grade = "VIBE CODING"
    return f"Grade: {grade} ({avg_score:.2f}/5)"


def chief_justice_node(state):
    results = []
    for ops in state["by_criterion"].values():
        scores = [o.score for o in ops]
        note = "split" if calculate_variance(scores) > 2 else ""
        results.append({"score": max(scores), "note": note})
    return {"results": results, "summary": summary(results)}
'''


def test_a_mean_inside_a_variance_or_a_grade_label_is_no_plain_average(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, HIGHEST_WITH_VARIANCE)
    averaging = facts["justice.averaging"]
    assert averaging.found is False, averaging.rationale
    assert averaging.rationale == "No mean of the scores."


def test_a_mean_that_becomes_the_verdict_is_still_a_plain_average(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    results = []
    for ops in state["by_criterion"].values():
        avg = sum(o.score for o in ops) / len(ops)
        final = min(5, round(avg))
        results.append({"score": final, "text": f"mean {avg:.1f}"})
    return {"results": results}
''')
    averaging = facts["justice.averaging"]
    assert averaging.found, averaging.rationale
    assert "nodes/justice.py:5: avg = sum(o.score for o in ops) / len(ops)" in (
        averaging.content or "")


def test_a_mean_written_into_a_report_that_hands_no_score_out_is_the_verdict(
        tmp_path: Path) -> None:
    """Where no function hands a score out, the report text is the verdict: the mean it
    prints per criterion is a plain average."""
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    lines = []
    for criterion_id, ops in state["by_criterion"].items():
        avg = sum(o.score for o in ops) / len(ops)
        lines.append(f"### {criterion_id}: final score {avg:.1f}")
    state["final_report"] = "\\n".join(lines)
    return state
''')
    averaging = facts["justice.averaging"]
    assert averaging.found, averaging.rationale
    assert averaging.location == "nodes/justice.py:5"


# a fixed cap when the evidence shows a flaw: the only decision on the evidence
EVIDENCE_CAP = '''
def _flawed(evidences):
    for ev in evidences.get("safe_tool_engineering", []):
        if not ev.found:
            return True
    return False


def chief_justice_node(state):
    flawed = _flawed(state["evidences"])
    results = []
    for dim_id, ops in state["by_criterion"].items():
        scores = {{o.judge: o.score for o in ops}}
        final_score = scores.get("TechLead", 1)
        if flawed and dim_id == "safe_tool_engineering":
{body}
        results.append({{"criterion": dim_id, "final_score": final_score}})
    return {{"results": results}}
'''


def test_a_fixed_cap_on_the_evidence_is_the_security_override_not_fact_supremacy(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path / "cap", EVIDENCE_CAP.format(
        body="            final_score = min(final_score, 3)"))
    rules = facts["justice.rules"].data["rules"]
    assert rules["security_override"] == ["nodes/justice.py:15"]
    assert "fact_supremacy" not in rules, rules
    # a decision on the evidence that sets the score from a judge's overrules the judges
    facts = _justice(tmp_path / "overrule", EVIDENCE_CAP.format(
        body='            final_score = scores.get("Prosecutor", 1)'))
    assert facts["justice.rules"].data["rules"]["fact_supremacy"] == ["nodes/justice.py:15"]


def test_a_spread_a_property_computes_is_read_where_it_is_tested(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
class Judgment:
    def __init__(self, opinions):
        self.opinions = opinions

    @property
    def score_variance(self):
        scores = [o.score for o in self.opinions]
        return max(scores) - min(scores)


def chief_justice_node(state):
    parts = []
    for judgment in state["judgments"]:
        tech_lead = next(o for o in judgment.opinions if o.judge == "TechLead")
        if judgment.score_variance > 2:
            parts.append("Significant disagreement resolved by the Tech Lead.")
        parts.append(f"{judgment.criterion_id}: {tech_lead.score}")
    return {"report": "\\n".join(parts)}
''')
    variance = facts["justice.variance"]
    assert variance.found is False
    assert variance.rationale == "The score spread only adds dissent text."
    assert variance.location == "nodes/justice.py:16"


def test_a_variance_a_helper_computes_is_read_where_it_is_tested(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def calculate_variance(scores):
    mean = sum(scores) / len(scores)
    return sum((s - mean) ** 2 for s in scores) / len(scores)


def chief_justice_node(state):
    results = []
    for ops in state["by_criterion"].values():
        scores = [o.score for o in ops]
        final = max(scores)
        if calculate_variance(scores) > 2:
            final = sorted(scores)[1]
        results.append({"score": final})
    return {"results": results}
''')
    # the spread is read where the helper's answer is tested; taking the median there is a
    # tie-break (never also a re-evaluation)
    variance = facts["justice.variance"]
    assert variance.location == "nodes/justice.py:12"
    assert facts["justice.tie_break"].found and not variance.found, variance.rationale
    assert facts["justice.averaging"].found is False


def test_an_opinion_overruled_on_the_evidence_through_a_copy_is_fact_supremacy(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def _verified(evidences, location):
    return any(ev.found and ev.location == location for ev in evidences)


def chief_justice_node(state):
    kept = []
    for op in state["opinions"]:
        if op.judge == "Defense" and not _verified(state["evidences"], op.location):
            op = op.model_copy(update={"score": 1, "argument": "overruled"})
        kept.append(op)
    return {"final_score": max(o.score for o in kept)}
''')
    assert facts["justice.rules"].data["rules"]["fact_supremacy"] == ["nodes/justice.py:9"]


def test_a_cap_on_a_judge_s_claim_the_evidence_refutes_is_fact_supremacy(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def _refuted(opinion, evidences):
    return not any(ev.found for ev in evidences if ev.location in opinion.cited)


def chief_justice_node(state):
    ops = state["opinions"]
    defense = next((o for o in ops if o.judge == "Defense"), None)
    final_score = max(o.score for o in ops)
    if defense and _refuted(defense, state["evidences"]):
        final_score = min(final_score, 2)
    return {"final_score": final_score}
''')
    assert facts["justice.rules"].data["rules"]["fact_supremacy"] == ["nodes/justice.py:10"]



# one cap on the evidence that also weighs the Defense's score (``if refuted and defense >= 4``)
WEIGHED_CAP = '''
def chief_justice_node(state):
    results = []
    for dim_id, ops in state["by_criterion"].items():
        scores = {{o.judge: o.score for o in ops}}
        final_score = scores.get("TechLead", 1)
        refuted = any(not e.found for e in state["evidences"].get(dim_id, []))
        if refuted and scores.get("Defense", 1) >= 4:
            final_score = min(final_score, 3)
{more}
        results.append({{"criterion": dim_id, "final_score": final_score}})
    return {{"results": results}}
'''


def test_one_decision_credited_as_two_named_rules_counts_once(tmp_path: Path) -> None:
    """A cap the evidence fires with the Defense's score is credited as the security override
    (a cap) and as fact supremacy (it weighs a judge against the facts); it is one decision,
    so it makes one of the two rules the synthesis needs, not both."""
    one = _justice(tmp_path / "one", WEIGHED_CAP.format(more=""))["justice.rules"]
    assert one.data["rules"]["security_override"] == one.data["rules"]["fact_supremacy"] == [
        "nodes/justice.py:8"], one.data
    assert one.found is False
    assert "security_override rests only on decisions already counted as fact_supremacy " \
        "(nodes/justice.py:8 is one decision), so it counts once" in one.rationale
    # a second decision on the evidence makes the second rule
    two = _justice(tmp_path / "two", WEIGHED_CAP.format(more='''\
        if not state["evidences"]:
            final_score = min(final_score, 2)'''))["justice.rules"]
    assert two.found, two.rationale
