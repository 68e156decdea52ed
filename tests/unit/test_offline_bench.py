"""The offline bench: three lenses on the same dossier."""

from __future__ import annotations

from automaton_auditor.judging.offline import evidence_score, offline_opinion
from automaton_auditor.rubric import load_rubric
from tests.conftest import make_evidence

DIM = load_rubric().dimension("graph_orchestration")


def _dossier():
    return [make_evidence("detectives fan out", dimension=DIM.id),
            make_evidence("aggregator fan-in", dimension=DIM.id, location="src/graph.py:40"),
            make_evidence("judges fan out", found=False, dimension=DIM.id,
                          location="src/graph.py:50")]


def test_each_persona_cites_real_evidence_of_the_criterion() -> None:
    dossier = _dossier()
    ids = {e.evidence_id for e in dossier}
    for judge in ("Prosecutor", "Defense", "TechLead"):
        opinion = offline_opinion(judge, DIM, dossier)
        assert opinion.judge == judge and opinion.criterion_id == DIM.id
        assert opinion.cited_evidence and set(opinion.cited_evidence) <= ids


def test_lenses_order_strict_to_generous() -> None:
    dossier = _dossier()
    scores = {j: offline_opinion(j, DIM, dossier).score
              for j in ("Prosecutor", "Defense", "TechLead")}
    assert scores["Prosecutor"] < scores["TechLead"] <= scores["Defense"]


def test_prosecutor_charges_the_missing_fact() -> None:
    opinion = offline_opinion("Prosecutor", DIM, _dossier())
    assert any("judges fan out" in charge for charge in opinion.charges)
    assert opinion.remediation and "src/graph.py:50" in opinion.remediation


def test_scores_follow_the_evidence() -> None:
    all_good = [make_evidence(f"fact {i}", dimension=DIM.id) for i in range(3)]
    all_bad = [make_evidence(f"fact {i}", found=False, dimension=DIM.id) for i in range(3)]
    assert evidence_score(all_good) == 5.0 and evidence_score(all_bad) == 1.0
    for judge in ("Prosecutor", "Defense", "TechLead"):
        assert offline_opinion(judge, DIM, all_good).score >= 4
        assert offline_opinion(judge, DIM, all_bad).score <= 2


def test_empty_dossier_scores_low() -> None:
    for judge in ("Prosecutor", "TechLead"):
        assert offline_opinion(judge, DIM, []).score == 1
