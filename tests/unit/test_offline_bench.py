"""The offline bench: three lenses on the same dossier."""

from __future__ import annotations

from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.judging.offline import evidence_balance, evidence_score, offline_opinion
from automaton_auditor.judging.rules import decide
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


TOOLS = load_rubric().dimension("safe_tool_engineering")


def _tools(timeout_found: bool) -> list:
    """A sandboxed, checked clone (no shell anywhere); URL and authentication checks missing,
    the timeout as given."""
    def fact(facet: str, found: bool, confidence: float, pattern: str = "success"):
        return make_evidence(facet, found=found, pattern=pattern,  # type: ignore[arg-type]
                             dimension=TOOLS.id, facet=facet, confidence=confidence,
                             location="src/tools/repo_tools.py:22")
    return [fact("safety.clone_sandbox", True, 0.9), fact("safety.subprocess_errors", True, 0.75),
            fact("safety.timeouts", timeout_found, 0.8), fact("safety.url_validation", False, 0.6),
            fact("safety.auth_errors", False, 0.5),
            fact("safety.os_system", False, 0.9, "failure"),
            fact("safety.shell_true", False, 0.9, "failure")]


def test_a_missing_extra_is_no_charge_and_weighs_half() -> None:
    """A clone without a timeout, URL check or authentication test is no failure pattern:
    the Prosecutor charges nothing and the balance keeps it from full marks, not below 3."""
    dossier = _tools(timeout_found=False)
    prosecutor = offline_opinion("Prosecutor", TOOLS, dossier)
    assert prosecutor.charges == [] and prosecutor.score == 3
    assert "missing extras" in prosecutor.argument
    assert 3.5 < evidence_score(dossier) < 4.0  # 1.65 against (0.8 + 0.6 + 0.5) / 2
    assert offline_opinion("TechLead", TOOLS, dossier).score == 4


def test_a_missing_core_element_is_still_charged() -> None:
    dossier = [e if e.facet != "safety.clone_sandbox" else e.model_copy(update={"found": False})
               for e in _tools(timeout_found=True)]
    prosecutor = offline_opinion("Prosecutor", TOOLS, dossier)
    assert any("safety.clone_sandbox" in charge for charge in prosecutor.charges)


def test_a_high_prosecutor_cites_the_success_it_grants() -> None:
    """A Prosecutor who grants 4 cites success facts, so fact supremacy keeps the opinion."""
    prosecutor = offline_opinion("Prosecutor", TOOLS, _tools(timeout_found=True))
    assert prosecutor.score >= 4
    cited = {e.evidence_id: e for e in _tools(timeout_found=True)}
    assert any(cited[i].supports_success for i in prosecutor.cited_evidence)


def test_the_chief_justice_rules_a_sandboxed_clone_without_timeout_4() -> None:
    dossier = _tools(timeout_found=False)
    rubric = load_rubric()
    opinions = [offline_opinion(j, TOOLS, dossier) for j in ("Prosecutor", "Defense", "TechLead")]
    result = decide(TOOLS, opinions, dossier, rubric)
    assert result.final_score == 4 and not result.overruled
    # with every extra in place it earns full marks
    full = [e.model_copy(update={"found": True}) if e.pattern == "success" else e
            for e in dossier]
    assert decide(TOOLS, [offline_opinion(j, TOOLS, full) for j in
                          ("Prosecutor", "Defense", "TechLead")], full, rubric).final_score == 5


def test_extras_count_in_full_once_a_core_element_is_missing() -> None:
    """Without error handling the failure pattern stands, so a missing timeout is no longer
    a mere extra: the balance weighs it in full."""
    dossier = [e if e.facet != "safety.subprocess_errors" else e.model_copy(update={"found": False})
               for e in _tools(timeout_found=False)]
    success, failure = evidence_balance(dossier)
    assert round(success, 2) == 0.9 and round(failure, 2) == 0.75 + 0.8 + 0.6 + 0.5


def test_a_clone_directory_left_behind_keeps_the_tools_from_full_marks() -> None:
    """mussewold/the_vibe_code_auditor@interim: a checked, timed, validated clone into a
    ``mkdtemp`` directory that no call removes: the missing cleanup is no charge, but it
    caps the criterion at 4; removed on every path, it earns full marks."""
    full = [e.model_copy(update={"found": True}) if e.pattern == "success" else e
            for e in _tools(timeout_found=True)]
    cleanup = make_evidence("safety.clone_cleanup", found=False, pattern="success",
                            dimension=TOOLS.id, facet="safety.clone_cleanup", confidence=0.7,
                            location="src/tools/repo_tools.py:261")
    rubric = load_rubric()
    for removed, want in ((False, 4), (True, 5)):
        dossier = [*full, cleanup.model_copy(update={"found": removed})]
        opinions = [offline_opinion(j, TOOLS, dossier)
                    for j in ("Prosecutor", "Defense", "TechLead")]
        assert opinions[0].charges == [], removed
        assert decide(TOOLS, opinions, dossier, rubric).final_score == want, removed
        # it caps, and weighs on neither side of the balance
        assert evidence_balance(dossier) == evidence_balance(full), removed


def test_a_clone_directory_deleted_before_use_holds_the_tools_in_the_middle() -> None:
    """amare1990@interim, bethel4@interim and six more: a TemporaryDirectory whose path the
    clone function returns is removed as it returns, so every tool reads a directory that
    is gone. Otherwise sound tools (list arguments, checked, timed, validated) are held at
    3, with the rule said; a clone used where it is made is not."""
    full = [e.model_copy(update={"found": True}) if e.pattern == "success" else e
            for e in _tools(timeout_found=True)]
    early = make_evidence("safety.clone_deleted_early", found=True, pattern="failure",
                          dimension=TOOLS.id, facet="safety.clone_deleted_early",
                          confidence=0.6, location="src/tools/repo_tools.py:16")
    rubric = load_rubric()
    for deleted, want in ((True, 3), (False, 5)):
        dossier = [*full, early.model_copy(update={"found": deleted})]
        opinions = [offline_opinion(j, TOOLS, dossier)
                    for j in ("Prosecutor", "Defense", "TechLead")]
        result = decide(TOOLS, opinions, dossier, rubric)
        assert result.final_score <= want, (deleted, result.final_score)
        if deleted:
            assert result.final_score == 3
            assert "deleted before the clone is used" in " ".join(
                r.detail for r in result.rules_applied)


def test_a_tie_break_or_an_unused_rule_holds_the_synthesis_from_full_marks_only() -> None:
    """``justice.tie_break`` (a spread that takes the Tech Lead's score) and
    ``justice.unused_rules`` (a cap a later weight always replaces) cap the Chief Justice at
    4 and weigh on neither side of the balance: the variance rule is there, the
    re-evaluation of the evidence is not; the unused rule is already not counted."""
    for facet in ("justice.tie_break", "justice.unused_rules"):
        fact = make_evidence(facet, found=True, pattern="failure",
                             dimension="chief_justice_synthesis", facet=facet,
                             confidence=0.7, location="src/nodes/judges.py:191")
        caps = confirmed_caps("chief_justice_synthesis", [fact])
        assert [row.cap for row, _fact in caps] == [4], facet
        assert evidence_balance([fact]) == (0.0, 0.0), facet
