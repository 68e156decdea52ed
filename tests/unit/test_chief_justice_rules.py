"""Each named synthesis rule, separately, then `decide` end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.judging.rules import (
    decide,
    fact_supremacy,
    is_architecture_criterion,
    re_evaluate,
    round_half_up,
    score_spread,
    security_override,
    weighted_mean,
)
from automaton_auditor.rubric import Rubric, load_rubric
from automaton_auditor.state import JudicialOpinion
from tests.conftest import make_evidence


def op(judge: str, score: int, cited: list[str], criterion: str = "graph_orchestration",
       **kw: object) -> JudicialOpinion:
    return JudicialOpinion(judge=judge, criterion_id=criterion, score=score,
                           argument=f"{judge} says {score}", cited_evidence=cited, **kw)


@pytest.fixture
def rubric() -> Rubric:
    return load_rubric()


def test_round_half_up() -> None:
    assert [round_half_up(x) for x in (2.5, 3.5, 2.49, 4.5)] == [3, 4, 2, 5]


def test_security_override_caps_only_on_confirmed_code_flaw() -> None:
    confirmed = make_evidence("os.system(url)", pattern="failure", security=True, confidence=0.9)
    prose = make_evidence("os.system in docstring", pattern="failure", security=True,
                          confidence=0.3)
    assert security_override(5, [confirmed])[0] == 3
    assert security_override(5, [prose])[0] == 5
    assert security_override(2, [confirmed])[0] == 2


def test_fact_supremacy_overrules_unsupported_claims() -> None:
    good = make_evidence("fan-out", pattern="success", found=True)
    missing = make_evidence("fan-in", pattern="success", found=False)
    opinions = [op("Defense", 5, [missing.evidence_id]),      # success claimed on a missing fact
                op("Prosecutor", 1, [good.evidence_id]),      # failure claimed on a success fact
                op("TechLead", 3, ["rep-doesnotexist"]),      # cites nothing real
                op("TechLead", 4, [good.evidence_id])]        # sound
    kept, overruled = fact_supremacy(opinions, [good, missing])
    assert [o.score for o in kept] == [4]
    assert [o.judge for o, _ in overruled] == ["Defense", "Prosecutor", "TechLead"]


def test_functionality_weight_targets_the_named_criterion(rubric: Rubric) -> None:
    text = rubric.synthesis_rules["functionality_weight"]
    assert is_architecture_criterion(rubric.dimension("graph_orchestration"), text)
    assert not is_architecture_criterion(rubric.dimension("git_forensic_analysis"), text)
    opinions = [op("Prosecutor", 1, []), op("Defense", 2, []), op("TechLead", 5, [])]
    assert weighted_mean(opinions, 2.0) == pytest.approx(13 / 4)
    assert weighted_mean(opinions) == pytest.approx(8 / 3)


def test_variance_re_evaluation_pulls_towards_cited_evidence() -> None:
    strong = make_evidence("fan-out", pattern="success")
    opinions = [op("Prosecutor", 1, [strong.evidence_id]), op("Defense", 5, [strong.evidence_id])]
    assert score_spread(opinions) == 4
    # judges average 3; the only cited fact supports success fully (5): re-evaluated to 4
    assert re_evaluate(opinions, [strong], 3.0) == pytest.approx(4.0)


def _git_split(rubric: Rubric, techlead: int) -> tuple[object, list[JudicialOpinion], list]:
    """Git forensics with one success and one failure fact (same confidence, so the cited
    evidence supports 3), the Prosecutor at 1, the Defense at 5, the TechLead at `techlead`."""
    dim = rubric.dimension("git_forensic_analysis")
    ok = make_evidence("commits are iterative", dimension=dim.id)
    bad = make_evidence("bulk upload", pattern="failure", dimension=dim.id)
    opinions = [op("Prosecutor", 1, [bad.evidence_id], dim.id),
                op("Defense", 5, [ok.evidence_id], dim.id),
                op("TechLead", techlead, [ok.evidence_id, bad.evidence_id], dim.id)]
    return dim, opinions, [ok, bad]


def test_re_evaluation_that_keeps_the_rounded_score_does_not_decide(rubric: Rubric) -> None:
    dim, opinions, dossier = _git_split(rubric, techlead=3)
    result = decide(dim, opinions, dossier, rubric)  # type: ignore[arg-type]
    # mean 3.0; the cited facts support 3.0; (3 + 3) / 2 = 3: the mean decided
    assert (result.final_score, result.deciding_rule) == (3, "weighted_mean")
    applied = [(r.rule, r.score_before, r.score_after) for r in result.rules_applied]
    assert applied == [("variance_re_evaluation", 3.0, 3.0), ("dissent_requirement", None, None)]
    assert result.dissent_summary is not None
    assert result.dissent_summary.startswith("The Defense (5) and the Prosecutor (1) disagree "
                                             "by 4 points.")


def test_re_evaluation_that_moves_the_score_is_the_deciding_rule(rubric: Rubric) -> None:
    dim, opinions, dossier = _git_split(rubric, techlead=5)
    result = decide(dim, opinions, dossier, rubric)  # type: ignore[arg-type]
    # mean 11/3 rounds to 4; re-evaluated (11/3 + 3) / 2 = 3.33 rounds to 3
    assert (result.final_score, result.deciding_rule) == (3, "variance_re_evaluation")
    [re_eval] = [r for r in result.rules_applied if r.rule == "variance_re_evaluation"]
    assert re_eval.score_before == pytest.approx(11 / 3)
    assert re_eval.score_after == pytest.approx((11 / 3 + 3) / 2)


def test_decide_security_cap_is_the_deciding_rule(rubric: Rubric) -> None:
    dim = rubric.dimension("safe_tool_engineering")
    good = make_evidence("tempfile clone", dimension=dim.id)
    flaw = make_evidence("os.system(url)", pattern="failure", security=True, dimension=dim.id,
                         location="src/tools/git.py:12")
    opinions = [op(j, 5, [good.evidence_id], dim.id) for j in ("Prosecutor", "Defense",
                                                               "TechLead")]
    result = decide(dim, opinions, [good, flaw], rubric)
    assert result.final_score == 3
    assert result.deciding_rule == "security_override"
    assert "src/tools/git.py:12" in result.rules_applied[-1].detail


def test_decide_excludes_degraded_and_falls_back_to_evidence(rubric: Rubric) -> None:
    dim = rubric.dimension("state_management_rigor")
    missing = make_evidence("reducers", found=False, dimension=dim.id)
    opinions = [op(j, 5, [], dim.id, degraded=True) for j in ("Prosecutor", "Defense",
                                                              "TechLead")]
    result = decide(dim, opinions, [missing], rubric)
    assert result.deciding_rule == "evidence_baseline"
    assert result.final_score == 1
    assert len(result.overruled) == 3


def test_rules_run_only_when_the_rubric_names_them(reference_rubrics: Path) -> None:
    interim = load_rubric(reference_rubrics / "week2_rubric_interim_4dim.json")
    dim = interim.dimension("langgraph_architecture")
    fact = make_evidence("fan-out", dimension=dim.id)
    opinions = [op("Prosecutor", 3, [fact.evidence_id], dim.id),
                op("Defense", 3, [fact.evidence_id], dim.id),
                op("TechLead", 5, [fact.evidence_id], dim.id)]
    result = decide(dim, opinions, [fact], interim)
    # the interim rubric has no functionality_weight: a plain mean of 11/3 rounds to 4
    assert result.final_score == 4 and result.deciding_rule == "weighted_mean"
