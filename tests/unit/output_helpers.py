"""Constructed audit reports for the output tests: criteria, opinions and evidence built in
the test, never from a real audit."""

from __future__ import annotations

from typing import Any

from automaton_auditor.state import AuditReport, CriterionResult, Evidence, JudicialOpinion
from tests.conftest import make_evidence

GITHUB = "https://github.com/acme/courtroom"
SHA = "0123456789abcdef0123456789abcdef01234567"


def opinion(judge: str, score: int, criterion: str, cited: list[str] | None = None,
            argument: str = "argument") -> JudicialOpinion:
    """A judge's opinion."""
    return JudicialOpinion(judge=judge, criterion_id=criterion, score=score,  # type: ignore[arg-type]
                           argument=argument, cited_evidence=cited or [])


def criterion(dimension: str, score: int, evidence: list[Evidence],
              opinions: list[JudicialOpinion] | None = None, **extra: Any) -> CriterionResult:
    """A criterion result over `evidence` (its dossier)."""
    ids = [e.evidence_id for e in evidence if e.dimension == dimension]
    return CriterionResult(
        dimension_id=dimension, dimension_name=dimension.replace("_", " ").title(),
        final_score=score, remediation="", deciding_rule="weighted_mean", evidence_ids=ids,
        judge_opinions=opinions or [opinion(j, score, dimension, ids)
                                    for j in ("Prosecutor", "Defense", "TechLead")], **extra)


def report(criteria: list[CriterionResult], evidence: list[Evidence],
           repo_url: str = GITHUB, **extra: Any) -> AuditReport:
    """An audit report over constructed criteria and evidence."""
    by_source: dict[str, list[Evidence]] = {}
    for item in evidence:
        by_source.setdefault(item.source, []).append(item)
    fields: dict[str, Any] = {"repo_url": repo_url, "commit": SHA, "executive_summary": "",
                              "overall_score": 3.0, "verdict": "Competent Orchestrator",
                              "criteria": criteria, "remediation_plan": "",
                              "evidence": by_source, **extra}
    return AuditReport(**fields)


def unsafe_evidence(dimension: str = "safe_tool_engineering") -> list[Evidence]:
    """What the detectives say of a clone tool running ``os.system(f"git clone {url}")``
    and an ``eval``, without a temporary directory."""
    common = {"dimension": dimension, "confidence": 0.9}
    return [
        make_evidence("os.system / os.popen call", facet="safety.os_system", pattern="failure",
                      location="src/tools/clone.py:12", security=True,
                      data={"locations": ["src/tools/clone.py:12"], "tainted": 1}, **common),
        make_evidence("eval / exec call", facet="safety.eval_exec", pattern="failure",
                      location="src/tools/score.py:30", security=True,
                      data={"locations": ["src/tools/score.py:30"]}, **common),
        make_evidence("Clone runs inside a temporary directory", facet="safety.clone_sandbox",
                      found=False, location="src/tools/clone.py:12", **common),
        make_evidence("Subprocess calls set a timeout", facet="safety.timeouts", found=False,
                      location=".", data={"total": 0}, **common),
    ]
