"""Render an `AuditReport` as Markdown: header, Executive Summary, Criterion Breakdown,
Remediation Plan, Errors and Warnings."""

from __future__ import annotations

from automaton_auditor.state import AuditReport, CriterionResult, Evidence, JudicialOpinion
from automaton_auditor.text import clip

EXCERPT = 400


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _excerpt(text: str | None, limit: int = EXCERPT) -> str:
    if not text:
        return ""
    return clip(text, limit)


def render_header(report: AuditReport) -> list[str]:
    """Title and the identity of every input."""
    sha = f"`{report.report_sha256}`" if report.report_sha256 else "n/a"
    return [
        f"# Audit report: {report.repo_url}", "",
        "| | |", "|---|---|",
        f"| Target | {_cell(report.repo_url)} |",
        f"| Commit | `{report.commit or 'n/a'}` |",
        f"| Report | {_cell(report.report_path or 'n/a')} (SHA-256 {sha}) |",
        f"| Rubric | {_cell(report.rubric_name)} v{report.rubric_version} |",
        f"| Judges | {_cell(report.bench)} |",
        f"| Date | {report.generated_at} |",
        *([f"| Run | `{report.run_id}` |"] if report.run_id else []), "",
    ]


def render_summary(report: AuditReport) -> list[str]:
    """The Executive Summary with the score table."""
    lines = ["## Executive Summary", "",
             f"**Overall score: {report.overall_score:.2f} / 5 — {report.verdict}**", "",
             report.executive_summary, ""]
    if report.criteria:
        lines += ["| Criterion | Score | Deciding rule |", "|---|---|---|"]
        lines += [f"| {_cell(r.dimension_name)} | {r.final_score}/5 | `{r.deciding_rule}` |"
                  for r in report.criteria]
        lines.append("")
    return lines


def _opinion_rows(opinions: list[JudicialOpinion]) -> list[str]:
    rows = ["| Judge | Score | Argument | Cited evidence |", "|---|---|---|---|"]
    for o in opinions:
        label = f"{o.judge} (round {o.round})" if o.round > 1 else o.judge
        score = f"{o.score}/5" + (" (degraded, excluded)" if o.degraded else "")
        cited = ", ".join(f"`{i}`" for i in o.cited_evidence) or "none"
        rows.append(f"| {label} | {score} | {_cell(_excerpt(o.argument, 600))} | {cited} |")
    return rows


def _evidence_lines(evidence: list[Evidence]) -> list[str]:
    lines = []
    for e in evidence:
        mark = "found" if e.found else "not found"
        lines.append(f"- `{e.evidence_id}` **{_cell(e.goal)}** — {mark}, "
                     f"`{e.location}`, confidence {e.confidence:.2f}: {_cell(e.rationale)}")
        if e.content:
            quoted = _excerpt(e.content).replace("\n", "\n  > ")
            lines.append(f"  > {quoted}")
    return lines


def render_criterion(index: int, result: CriterionResult,
                     evidence_by_id: dict[str, Evidence]) -> list[str]:
    """One criterion: score, deciding rule, the opinions, dissent, evidence."""
    lines = [f"### {index}. {result.dimension_name} — {result.final_score}/5", "",
             f"Criterion `{result.dimension_id}` ({result.target_artifact}). "
             f"Deciding rule: `{result.deciding_rule}`.", ""]
    for rule in result.rules_applied:
        lines.append(f"- Rule `{rule.rule}`: {rule.detail}")
    for note in result.overruled:
        lines.append(f"- Overruled — {note}")
    if result.rules_applied or result.overruled:
        lines.append("")
    lines += [*_opinion_rows(result.judge_opinions), ""]
    if result.earlier_opinions:
        lines += ["Round 1, before the re-evaluation (scores differed by more than 2):", "",
                  *_opinion_rows(result.earlier_opinions), ""]
    if result.dissent_summary:
        lines += [f"**Dissent.** {result.dissent_summary}", ""]
    cited = [evidence_by_id[i] for i in result.evidence_ids if i in evidence_by_id]
    if cited:
        lines += ["<details><summary>Evidence</summary>", "", *_evidence_lines(cited), "",
                  "</details>", ""]
    return lines


def render_footer(report: AuditReport) -> list[str]:
    """Which bench judged and, for a model bench, its token totals."""
    lines = ["", "---", "", f"Judged by the {_cell(report.bench)}."]
    if report.usage:
        u = report.usage
        lines[-1] += (f" Tokens: {u.get('input_tokens', 0):,} in, "
                      f"{u.get('output_tokens', 0):,} out, {u.get('total_tokens', 0):,} total, "
                      f"over {u.get('calls', 0)} model calls.")
    return lines


def render_markdown(report: AuditReport) -> str:
    """The whole report as Markdown."""
    evidence_by_id = {e.evidence_id: e for items in report.evidence.values() for e in items}
    lines = render_header(report) + render_summary(report)
    lines += ["## Criterion Breakdown", ""]
    if not report.criteria:
        lines += ["No criterion was judged.", ""]
    for index, result in enumerate(report.criteria, start=1):
        lines += render_criterion(index, result, evidence_by_id)
    if report.verified_paths or report.hallucinated_paths:
        lines += ["### Report paths cross-checked against the repository", "",
                  "Verified: " + (", ".join(f"`{p}`" for p in report.verified_paths) or "none"),
                  "",
                  "Hallucinated: " + (", ".join(f"`{p}`" for p in report.hallucinated_paths)
                                      or "none"), ""]
    lines += ["## Remediation Plan", "", report.remediation_plan, ""]
    lines += ["## Errors and Warnings", ""]
    lines += [f"- {_cell(e)}" for e in report.errors] or ["None."]
    lines += render_footer(report)
    return "\n".join(lines).rstrip() + "\n"
