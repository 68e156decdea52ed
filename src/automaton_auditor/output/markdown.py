"""Render an `AuditReport` as Markdown: header, Executive Summary (score chart, top risks,
shared facts), The Graph (code and report flows as Mermaid), Criterion Breakdown,
Remediation Plan, Errors and Warnings.

The Markdown reads as plain text too: bars are Unicode, Mermaid ids are the node names,
links carry their target as text.
"""

from __future__ import annotations

from collections import defaultdict

from automaton_auditor.output.locations import markdown_location
from automaton_auditor.output.mdsafe import md_code, md_quote, md_text
from automaton_auditor.output.mermaid import (
    code_flow,
    diagram_flow,
    legend,
    mermaid_flowchart,
    plain_name,
    score_bar,
)
from automaton_auditor.output.risks import all_evidence, is_failure, limitation_of, limitations
from automaton_auditor.state import AuditReport, CriterionResult, Evidence, JudicialOpinion
from automaton_auditor.text import clip

EXCERPT = 400
SHARED_ANCHOR = "shared-facts"
# A context fact bound to this many criteria or more is stated once, above the breakdown.
SHARED_MIN = 3
# GitHub's anchor for the "## Errors and Warnings" heading.
WARNINGS_ANCHOR = "errors-and-warnings"


def _cell(text: str) -> str:
    """Text from outside the auditor on one line, fit for a table cell too."""
    return md_text(text).replace("|", "\\|")


def _excerpt(text: str | None, limit: int = EXCERPT) -> str:
    if not text:
        return ""
    return clip(text, limit)


def shared_fact_ids(report: AuditReport) -> dict[str, list[Evidence]]:
    """Context facts many criteria share (repository acquired, files parse, report read):
    one representative per fact, with the ids of all its copies, keyed by the first id."""
    copies: dict[tuple[str, str, str], list[Evidence]] = defaultdict(list)
    for item in all_evidence(report):
        if item.pattern == "neutral":
            copies[(item.facet, item.goal, item.location)].append(item)
    return {items[0].evidence_id: items for items in copies.values()
            if len({e.dimension for e in items}) >= SHARED_MIN}


def render_header(report: AuditReport) -> list[str]:
    """Title and the identity of every input."""
    sha = f"`{report.report_sha256}`" if report.report_sha256 else "n/a"
    return [
        f"# Audit report: {md_text(report.repo_url)}", "",
        "| | |", "|---|---|",
        f"| Target | {_cell(report.repo_url)} |",
        f"| Commit | `{report.commit or 'n/a'}` |",
        f"| Report | {_cell(report.report_path or 'n/a')} (SHA-256 {sha}) |",
        f"| Rubric | {_cell(report.rubric_name)} v{report.rubric_version} |",
        f"| Judges | {_cell(report.bench)} |",
        f"| Date | {report.generated_at} |",
        *([f"| Run | `{report.run_id}` |"] if report.run_id else []), "",
    ]


def _link(report: AuditReport | None, location: str) -> str:
    if report is None:
        return f"`{location}`"
    return markdown_location(location, report.repo_url, report.commit)


def render_summary(report: AuditReport, shared: dict[str, list[Evidence]]) -> list[str]:
    """The Executive Summary: verdict, top risks, the score chart and the shared facts."""
    lines = ["## Executive Summary", "",
             f"**Overall score: {report.overall_score:.2f} / 5 — {report.verdict}**", ""]
    if notes := warnings(report):
        # a shallow history or uncommitted changes change what the scores mean: say so
        # before them, and state the notes themselves once, at the end
        lines += [f"⚠ {len(notes)} warning(s) bear on this run: see "
                  f"[Errors and Warnings](#{WARNINGS_ANCHOR}).", ""]
    lines += [report.executive_summary, ""]
    if report.criteria:
        lines += ["| Criterion | Score | | Deciding rule |", "|---|---|---|---|"]
        lines += [f"| {_cell(r.dimension_name)} | {r.score_label} | "
                  + (f"`{score_bar(r.final_score)}`" if r.judged else "—")
                  + f" | `{r.deciding_rule}` |" for r in report.criteria]
        lines.append("")
    if shared:
        lines += [f'<a id="{SHARED_ANCHOR}"></a>**Shared facts** (they bear on every criterion '
                  "and are stated once here):", ""]
        for items in shared.values():
            e = items[0]
            first = (e.content or "").splitlines()[:1]
            # A one-line quote says what the fact rests on; a longer one is in report.json.
            detail = f" ({_cell(first[0])})" if first and len(first[0]) <= 80 else ""
            lines.append(f"- **{_cell(e.goal)}** — {'yes' if e.found else 'no'}, "
                         f"{_link(report, e.location)}: {_cell(e.rationale)}{detail}")
        lines.append("")
    return lines


def _names(values: object) -> list[str]:
    return [md_text(plain_name(str(v))) for v in values] if isinstance(values, list) else []


def _compare_line(report: AuditReport) -> str:
    compare = next((e for e in all_evidence(report) if e.facet == "vision.compare.nodes"
                    and "ratio" in e.data), None)
    if compare is None:
        return ""
    only_code = ", ".join(_names(compare.data.get("only_in_code"))) or "none"
    only_diagram = ", ".join(_names(compare.data.get("only_in_diagram"))) or "none"
    return (f"{_cell(compare.rationale)} Only in the code: {only_code}. "
            f"Only in the diagram: {only_diagram}.")


def render_graphs(report: AuditReport) -> list[str]:
    """The graph rebuilt from the code beside the flow read from the report's diagram."""
    flow = code_flow(all_evidence(report))
    diagram = report.report_diagram
    if flow is None and diagram is None:
        return []
    lines = ["## The Graph", ""]
    if flow is None:
        lines += ["No LangGraph graph could be rebuilt from the code.", ""]
    else:
        topology = next(e for e in all_evidence(report) if e.facet == "graph.topology")
        lines += [f"### Code graph (rebuilt from {_link(report, topology.location)})", "",
                  *mermaid_flowchart(flow), ""]
        if text := legend(flow):
            lines += [f"Marks: {text}.", ""]
    if diagram is None:
        lines += ["No diagram flow could be read from the report.", ""]
    else:
        drawn = diagram_flow(diagram)
        lines += [f"### Report diagram (p.{diagram.page}, {diagram.kind})", "",
                  *mermaid_flowchart(drawn), ""]
        if text := _compare_line(report):
            lines += [text, ""]
    return lines


def _cited(ids: list[str], listed: set[str], shared: set[str]) -> str:
    def one(i: str) -> str:
        if i in shared:
            return f"[{i}](#{SHARED_ANCHOR})"
        # a judge may cite an id no fact has: its text is the model's, shown as code
        return f"[{i}](#{i})" if i in listed else md_code(i)

    return ", ".join(one(i) for i in ids) or "none"


def _opinion_rows(opinions: list[JudicialOpinion], listed: set[str],
                  shared: set[str]) -> list[str]:
    rows = ["| Judge | Score | Argument | Cited evidence |", "|---|---|---|---|"]
    for o in opinions:
        label = f"{o.judge} (round {o.round})" if o.round > 1 else o.judge
        score = f"{o.score}/5" + (" (degraded, excluded)" if o.degraded else "")
        rows.append(f"| {label} | {score} | {_cell(_excerpt(o.argument, 600))} | "
                    f"{_cited(o.cited_evidence, listed, shared)} |")
    return rows


def dissent_line(result: CriterionResult) -> str:
    """The dissent in one sentence (the arguments are in the table above it)."""
    live = [o for o in result.judge_opinions if not o.degraded] or result.judge_opinions
    if not result.dissent_summary or not live:
        return ""
    high = max(live, key=lambda o: (o.score, o.judge))
    low = min(live, key=lambda o: (o.score, o.judge))
    return (f"**Dissent.** The {high.judge} ({high.score}/5) and the {low.judge} "
            f"({low.score}/5) are {high.score - low.score} points apart; the Chief Justice "
            f"ruled {result.score_label} by `{result.deciding_rule}`.")


def _mark(e: Evidence) -> str:
    if limitation_of(e):
        return "? not established"
    if is_failure(e):
        return "✗ failure"
    return "✓ supports" if e.supports_success else "· context"


def _state(e: Evidence) -> str:
    """found / not found; a fact the auditor could not check (a tool limitation, or
    ``data.established`` false: the code it is about was not followed) saw no absence."""
    if e.found:
        return "found"
    unknown = limitation_of(e) or e.data.get("established") is False
    return "not established" if unknown else "not found"


def evidence_lines(report: AuditReport | None, evidence: list[Evidence]) -> list[str]:
    """Each fact with its id as an anchor and its location linked."""
    lines = []
    for e in evidence:
        lines.append(f'- <a id="{e.evidence_id}"></a>`{e.evidence_id}` {_mark(e)} — '
                     f"**{_cell(e.goal)}** ({_state(e)}, "
                     f"{_link(report, e.location)}, confidence {e.confidence:.2f}): "
                     f"{_cell(e.rationale)}")
        if e.content:
            # a quote, not markup: the quoted file or report must not render as tags or links
            quoted = md_quote(_excerpt(e.content)).replace("\n", "\n  > ")
            lines.append(f"  > {quoted}")
    return lines


def render_criterion(index: int, result: CriterionResult, evidence_by_id: dict[str, Evidence],
                     report: AuditReport | None = None,
                     shared: set[str] | None = None) -> list[str]:
    """One criterion: score, deciding rule, the opinions, dissent, evidence (`report` links
    locations; `shared` facts are left out, being stated once in the summary)."""
    shared = shared or set()
    lines = [f"### {index}. {_cell(result.dimension_name)} — {result.score_label}", "",
             f"Criterion `{result.dimension_id}` ({result.target_artifact}). "
             f"Deciding rule: `{result.deciding_rule}`.", ""]
    if not result.judged:
        lines[-1:-1] = [f"**Not judged**: {_cell(result.not_judged_reason)}. This criterion counts "
                        "neither in the overall score nor as a verdict.", ""]
    for rule in result.rules_applied:
        lines.append(f"- Rule `{rule.rule}`: {_cell(rule.detail)}")
    for note in result.overruled:
        lines.append(f"- Overruled — {_cell(note)}")
    if result.rules_applied or result.overruled:
        lines.append("")
    cited = [evidence_by_id[i] for i in result.evidence_ids
             if i in evidence_by_id and i not in shared]
    listed = {e.evidence_id for e in cited}
    lines += [*_opinion_rows(result.judge_opinions, listed, shared), ""]
    if result.earlier_opinions:
        lines += ["Round 1, before the re-evaluation (scores differed by more than 2):", "",
                  *_opinion_rows(result.earlier_opinions, listed, shared), ""]
    if dissent := dissent_line(result):
        lines += [dissent, ""]
    if cited:
        lines += [f"<details><summary>Evidence ({len(cited)} facts; shared facts are in the "
                  "summary)</summary>", "", *evidence_lines(report, cited), "", "</details>", ""]
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


def render_paths(report: AuditReport) -> list[str]:
    """The report's cited paths, verified or hallucinated (and planned, if any)."""
    if not (report.verified_paths or report.hallucinated_paths or report.planned_paths):
        return []
    planned = (["Planned (future work, not yet in the repository): "
                + ", ".join(map(md_code, report.planned_paths)), ""]
               if report.planned_paths else [])
    return ["### Report paths cross-checked against the repository", "",
            "Verified: " + (", ".join(map(md_code, report.verified_paths)) or "none"), "",
            "Hallucinated: " + (", ".join(map(md_code, report.hallucinated_paths))
                                or "none"), "", *planned]


def warnings(report: AuditReport) -> list[str]:
    """Errors of the run, then the auditor's own limitations, each once."""
    return [*report.errors, *(f"auditor limitation: {text}" for text in limitations(report))]


def render_markdown(report: AuditReport) -> str:
    """The whole report as Markdown."""
    evidence_by_id = {e.evidence_id: e for e in all_evidence(report)}
    shared = shared_fact_ids(report)
    shared_ids = {e.evidence_id for items in shared.values() for e in items}
    lines = render_header(report) + render_summary(report, shared) + render_graphs(report)
    lines += ["## Criterion Breakdown", ""]
    if not report.criteria:
        lines += ["No criterion was judged.", ""]
    for index, result in enumerate(report.criteria, start=1):
        lines += render_criterion(index, result, evidence_by_id, report, shared_ids)
    lines += render_paths(report)
    lines += ["## Remediation Plan", "", report.remediation_plan, ""]
    lines += ["## Errors and Warnings", ""]
    lines += [f"- {_cell(e)}" for e in warnings(report)] or ["None."]
    lines += render_footer(report)
    return "\n".join(lines).rstrip() + "\n"
