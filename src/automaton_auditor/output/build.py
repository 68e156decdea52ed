"""Assemble the `AuditReport` from the final graph state."""

from __future__ import annotations

from datetime import UTC, datetime

from automaton_auditor.forensics.vision.compare import best_reading
from automaton_auditor.forensics.vision.findings import read_diagram
from automaton_auditor.judging.llm_usage import usage_totals, with_earlier_rounds
from automaton_auditor.judging.rules import (
    COMPETENT,
    MASTER,
    overall_score,
    verdict_for,
    verdict_of,
)
from automaton_auditor.output.mdsafe import md_text
from automaton_auditor.output.summary import executive_summary, remediation_plan
from automaton_auditor.settings import Settings
from automaton_auditor.state import (
    AgentState,
    AuditReport,
    CriterionResult,
    DiagramFacts,
    RebuiltGraph,
    report_evidence,
)


def opening(results: list[CriterionResult], state: AgentState, bench: str) -> str:
    """The summary's first paragraph: score, verdict, how many criteria are strong or weak."""
    if not state.get("input_ok", False):
        # the summary is Markdown and the error may quote the target or a rubric
        return f"The audit could not run: {md_text(state.get('input_error') or 'invalid input')}."
    score = overall_score(results)
    judged = [r for r in results if r.judged]
    strong = sum(1 for r in judged if r.final_score >= 4)
    weak = sum(1 for r in judged if r.final_score <= 2)
    text = (f"Overall {score:.2f}/5 ({verdict_for(score, results)}) over {len(judged)} "
            f"criteria, judged by the {bench}: {strong} strong (4–5), {weak} weak (1–2)."
            if judged else "No criterion was judged: there is no score and no verdict.")
    text += cap_sentence(results, score)
    missing = [r for r in results if not r.judged]
    if missing:
        text = (f"**Incomplete: {len(missing)} of {len(results)} criteria not judged** "
                f"({md_text(missing[0].not_judged_reason)}). " + text)
    if state.get("aborted"):
        text += f" The audit was stopped early: {md_text(str(state['aborted']))}."
    return text


def cap_sentence(results: list[CriterionResult], score: float) -> str:
    """What the verdict caps did: a capped criterion holds the band below Master Thinker,
    which changes the verdict only when the mean reaches that band (said so then; otherwise
    the cap is named as what would hold it, not as what decided it)."""
    capped = [r for r in results if r.verdict_cap and r.judged]
    if not capped:
        return ""
    where = "; ".join(f"{md_text(r.dimension_name)}: {md_text(r.verdict_cap or '')}"
                      for r in capped[:3])
    if verdict_for(score) == MASTER:  # the band the mean alone earns
        return (f" The mean reaches {MASTER}, but the verdict is held at {COMPETENT} by a "
                f"confirmed failure ({where}).")
    return f" A confirmed failure would also keep the verdict below {MASTER} ({where})."


def compared_diagram(diagrams: list[DiagramFacts] | None,
                     graph: RebuiltGraph | None = None) -> DiagramFacts | None:
    """The report diagram the code graph was compared with, trimmed to its flow."""
    reading = best_reading([read_diagram(d) for d in diagrams or []],
                           graph.nodes if graph else ())
    if reading is None or not reading.facts.edges:
        return None
    facts = reading.facts
    keep = {k: v for k, v in facts.data.items() if k in ("conditional_edges", "decisions",
                                                          "diagram_type")}
    return DiagramFacts(page=facts.page, kind=facts.kind, edges=facts.edges, data=keep)


def build_report(state: AgentState) -> AuditReport:
    """The AuditReport of a finished (or stopped) run."""
    settings = Settings.from_state(state.get("settings"))
    rubric = state.get("rubric") or {}
    meta = rubric.get("rubric_metadata", {})
    opinions = state.get("opinions") or []
    results = with_earlier_rounds(state.get("results") or [], opinions)
    score = overall_score(results)
    report = AuditReport(
        repo_url=state.get("target", ""), commit=state.get("commit"),
        report_path=state.get("report_path"), report_sha256=state.get("report_sha256"),
        rubric_name=meta.get("rubric_name", ""), rubric_version=meta.get("version", ""),
        bench=settings.bench_label,
        executive_summary=opening(results, state, settings.bench_label),
        overall_score=score, verdict=verdict_of(results),
        criteria=results, remediation_plan="",
        errors=list(state.get("errors") or []),
        evidence=report_evidence(state.get("evidences")),
        verified_paths=state.get("verified_paths") or [],
        hallucinated_paths=state.get("hallucinated_paths") or [],
        planned_paths=state.get("planned_paths") or [],
        generated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        run_id=state.get("run_id") or "",
        usage=usage_totals(opinions, state.get("usage")),
        report_diagram=compared_diagram(state.get("diagrams"), state.get("code_graph")),
    )
    targets = {d.get("id", ""): d.get("success_pattern", "") for d in rubric.get("dimensions", [])}
    return report.model_copy(update={
        "executive_summary": executive_summary(report, report.executive_summary),
        "remediation_plan": remediation_plan(report, targets)})
