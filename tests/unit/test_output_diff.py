"""Comparing two audits: score changes, new and resolved failure facts, regressions."""

from __future__ import annotations

import json

from automaton_auditor.output.diff import diff_document, diff_reports, render_diff
from automaton_auditor.state import AuditReport, Evidence
from tests.conftest import make_evidence
from tests.unit.output_helpers import criterion, report, unsafe_evidence


def _audit(evidence: list[Evidence], scores: dict[str, int],
           run_id: str = "run-a") -> AuditReport:
    return report([criterion(c, s, evidence) for c, s in scores.items()], evidence,
                  run_id=run_id, overall_score=sum(scores.values()) / len(scores))


def _safe() -> list[Evidence]:
    return [make_evidence("Clone runs inside a temporary directory",
                          facet="safety.clone_sandbox", dimension="safe_tool_engineering",
                          location="src/tools/clone.py:12")]


def test_a_new_shell_injection_and_a_lower_score_are_a_regression() -> None:
    old = _audit(_safe(), {"safe_tool_engineering": 5, "graph": 4})
    new = _audit(unsafe_evidence(), {"safe_tool_engineering": 2, "graph": 4}, "run-b")
    diff = diff_reports(old, new)
    assert diff.regression
    assert [c.criterion for c in diff.changed_scores] == ["safe_tool_engineering"]
    assert [f.facet for f in diff.new_facts] == ["safety.os_system", "safety.eval_exec",
                                                 "safety.clone_sandbox"]
    assert diff.reasons[0] == "Safe Tool Engineering 5 → 2"
    assert "new failure safety.os_system at src/tools/clone.py:12" in diff.reasons
    text = render_diff(diff)
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "  Safe Tool Engineering" in text and "5 → 2  -3" in text
    assert "\nregression: Safe Tool Engineering 5 → 2; new failure safety.os_system" in text
    data = json.loads(json.dumps(diff_document(diff)))
    assert data["regression"] is True and data["scores"][0]["old"] == 5
    assert data["new_failures"][0]["path"] == "src/tools/clone.py"


def test_fixing_the_flaw_resolves_facts_and_is_no_regression() -> None:
    old = _audit(unsafe_evidence(), {"safe_tool_engineering": 2})
    new = _audit(_safe(), {"safe_tool_engineering": 5}, "run-b")
    diff = diff_reports(old, new)
    assert not diff.regression
    assert {f.facet for f in diff.resolved_facts} == {"safety.os_system", "safety.eval_exec",
                                                      "safety.clone_sandbox"}
    assert render_diff(diff).rstrip().endswith("no regression")


def test_a_moved_line_is_not_a_new_fact() -> None:
    old = unsafe_evidence()
    moved = [e.model_copy(update={"location": e.location.replace(":12", ":40")}) for e in old]
    diff = diff_reports(_audit(old, {"safe_tool_engineering": 2}),
                        _audit(moved, {"safe_tool_engineering": 2}))
    assert not diff.new_facts and not diff.resolved_facts and not diff.regression


def test_a_new_fact_below_the_baselines_confidence_is_reported_but_not_a_regression() -> None:
    sure = make_evidence("Clone handles authentication failures", facet="safety.auth_errors",
                         dimension="tools", location="src/clone.py:3", confidence=0.8)
    unsure = sure.model_copy(update={"found": False, "confidence": 0.5})
    diff = diff_reports(_audit([sure], {"tools": 4}),
                        _audit([unsure], {"tools": 4}))
    assert [f.facet for f in diff.new_facts] == ["safety.auth_errors"]
    assert not diff.regression
    as_sure = unsure.model_copy(update={"confidence": 0.8})
    diff = diff_reports(_audit([sure], {"tools": 4}),
                        _audit([as_sure], {"tools": 4}))
    assert diff.regression


def test_a_higher_score_alone_is_no_regression() -> None:
    diff = diff_reports(_audit(_safe(), {"graph": 3}),
                        _audit(_safe(), {"graph": 4}))
    assert not diff.regression and [c.new for c in diff.changed_scores] == [4]


def test_a_criterion_no_longer_judged_is_a_regression_and_not_a_score_of_one() -> None:
    old = _audit(_safe(), {"report_accuracy": 4, "graph": 4})
    new = _audit(_safe(), {"report_accuracy": 1, "graph": 4}, "run-b")
    new.criteria[0] = new.criteria[0].model_copy(update={"judged": False})
    diff = diff_reports(old, new)
    assert diff.regression and diff.reasons == ["Report Accuracy 4 → not judged"]
    assert "4 → not judged" in render_diff(diff) and " -3" not in render_diff(diff)
    assert diff_document(diff)["scores"][0]["new"] == "not judged"
    # judged again: no regression; never judged on either side: no change at all
    assert not diff_reports(new, old).regression
    assert diff_reports(new, new).changed_scores == []
