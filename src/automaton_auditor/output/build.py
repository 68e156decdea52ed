"""Assemble the `AuditReport` from the final graph state."""

from __future__ import annotations

from datetime import UTC, datetime

from automaton_auditor.judging.llm_usage import usage_totals, with_earlier_rounds
from automaton_auditor.judging.rules import overall_score, verdict_for
from automaton_auditor.settings import Settings
from automaton_auditor.state import AgentState, AuditReport, CriterionResult, report_evidence


def _top_risks(results: list[CriterionResult], limit: int = 3) -> list[str]:
    weakest = sorted(results, key=lambda r: (r.final_score, r.dimension_id))[:limit]
    risks = []
    for result in weakest:
        if result.final_score >= 4:
            continue
        first = result.remediation.splitlines()[0].lstrip("- ") if result.remediation else ""
        risks.append(f"{result.dimension_name} ({result.final_score}/5): {first}")
    return risks


def executive_summary(results: list[CriterionResult], state: AgentState, bench: str) -> str:
    """A short paragraph plus the top risks, as Markdown."""
    if not state.get("input_ok", False):
        return f"The audit could not run: {state.get('input_error') or 'invalid input'}."
    score = overall_score(results)
    strong = sum(1 for r in results if r.final_score >= 4)
    weak = sum(1 for r in results if r.final_score <= 2)
    text = (f"Overall {score:.2f}/5 ({verdict_for(score)}) over {len(results)} criteria, judged "
            f"by the {bench}: {strong} strong (4–5), {weak} weak (1–2).")
    if state.get("aborted"):
        text += f" The audit was stopped early: {state['aborted']}."
    risks = _top_risks(results)
    if risks:
        text += "\n\nTop risks:\n" + "\n".join(f"- {risk}" for risk in risks)
    return text


def remediation_plan(results: list[CriterionResult]) -> str:
    """File-level remediation grouped by criterion, weakest first."""
    sections = []
    for result in sorted(results, key=lambda r: (r.final_score, r.dimension_id)):
        if result.final_score >= 5 and result.remediation.startswith("No failure signal"):
            continue
        sections.append(f"### {result.dimension_name} ({result.final_score}/5)\n\n"
                        f"{result.remediation}")
    return "\n\n".join(sections) if sections else "Nothing to remediate."


def build_report(state: AgentState) -> AuditReport:
    """The AuditReport of a finished (or stopped) run."""
    settings = Settings.from_state(state.get("settings"))
    rubric = state.get("rubric") or {}
    meta = rubric.get("rubric_metadata", {})
    opinions = state.get("opinions") or []
    results = with_earlier_rounds(state.get("results") or [], opinions)
    score = overall_score(results)
    return AuditReport(
        repo_url=state.get("target", ""), commit=state.get("commit"),
        report_path=state.get("report_path"), report_sha256=state.get("report_sha256"),
        rubric_name=meta.get("rubric_name", ""), rubric_version=meta.get("version", ""),
        bench=settings.bench_label,
        executive_summary=executive_summary(results, state, settings.bench_label),
        overall_score=score, verdict=verdict_for(score) if results else "not judged",
        criteria=results, remediation_plan=remediation_plan(results),
        errors=list(state.get("errors") or []),
        evidence=report_evidence(state.get("evidences")),
        verified_paths=state.get("verified_paths") or [],
        hallucinated_paths=state.get("hallucinated_paths") or [],
        generated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        run_id=state.get("run_id") or "",
        usage=usage_totals(opinions, state.get("usage")),
    )
