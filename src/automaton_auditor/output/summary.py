"""The report's prose that leads with what matters: the executive summary with its top risks,
and the file-level remediation plan (both stored as Markdown in the report)."""

from __future__ import annotations

from automaton_auditor.output.locations import location_url, markdown_location
from automaton_auditor.output.mdsafe import md_code, md_text
from automaton_auditor.output.risks import (
    PERFECT,
    FailureFact,
    open_facts,
    same_place,
    top_risk_groups,
)
from automaton_auditor.state import AuditReport

CONSEQUENCE_LABEL = {"security": "Security", "functional": "Functional break",
                     "integrity": "Integrity", "docs": "Documentation"}
NOTHING_TO_DO = "Nothing to remediate: every criterion scored 5/5."


def fact_headline(fact: FailureFact) -> str:
    """What a failure fact says, as a reader needs it: a flaw found, or a thing missing."""
    return f"{'Found' if fact.confirmed else 'Missing'}: {md_text(fact.goal)}"


def _headlines(group: list[FailureFact]) -> str:
    """The headline of a group's first fact, and the goals of the others at that place."""
    first = fact_headline(group[0])
    others = [h for h in dict.fromkeys(map(fact_headline, group[1:])) if h != first]
    return first + (f" (also {'; '.join(others)})" if others else "")


def _criteria_names(report: AuditReport, group: list[FailureFact]) -> str:
    named = {c.dimension_id: f"{md_text(c.dimension_name)} {c.score_label}"
             for c in report.criteria}
    criteria = dict.fromkeys(c for fact in group for c in fact.criteria)
    return "; ".join(named.get(c, c) for c in criteria)


def _place(report: AuditReport, fact: FailureFact) -> str:
    if fact.where.kind == "repository" and fact.location in ("", "."):
        return "in the repository"
    return "at " + markdown_location(fact.location, report.repo_url, report.commit)


def risk_line(report: AuditReport, group: list[FailureFact]) -> str:
    """One top risk (the facts found at one place, most serious first) as a Markdown list
    item's text."""
    fact = group[0]
    # the risk names what is as serious as its lead; the rest of the place is remediation
    group = [f for f in group if f.consequence == fact.consequence]
    return (f"**{CONSEQUENCE_LABEL[fact.consequence]}** — {_headlines(group)} "
            f"{_place(report, fact)}: "
            f"{md_text(fact.rationale)} ({_criteria_names(report, group)})")


def executive_summary(report: AuditReport, opening: str) -> str:
    """The opening paragraph, then the top risks ranked by consequence and confidence."""
    groups = top_risk_groups(report)
    if not groups:
        return opening
    items = "\n".join(f"{n}. {risk_line(report, group)}" for n, group in enumerate(groups, 1))
    return f"{opening}\n\nTop risks:\n\n{items}"


def _group_title(fact: FailureFact) -> str:
    where = fact.where
    if where.in_file and where.path:
        return md_code(where.path)
    return "The report" if where.kind == "report" else "The repository as a whole"


def _item(report: AuditReport, group: list[FailureFact]) -> str:
    fact = group[0]
    where = fact.where
    shown = (f"L{where.line}" if where.in_file and where.line else
             f"p.{where.page}" if where.page else
             "repository" if where.text in ("", ".") else where.text)
    url = location_url(where, report.repo_url, report.commit)
    place = f"[{md_code(shown)}]({url})" if url else md_code(shown)
    extra = len(fact.files) - 1
    more = f" (and {extra} more place(s))" if extra > 0 else ""
    return (f"- {place}{more} — **{_headlines(group)}** "
            f"({CONSEQUENCE_LABEL[fact.consequence].lower()}): {md_text(fact.rationale)} "
            f"*{_criteria_names(report, group)}*")


def remediation_plan(report: AuditReport, targets: dict[str, str] | None = None) -> str:
    """File-level remediation: the failure facts of criteria below 5/5, grouped by file (the
    file with the most serious fact first), each fact once; then what each weak criterion
    asks for (its rubric success pattern, from `targets`)."""
    facts = open_facts(report)
    weak = sorted((c for c in report.criteria if c.judged and c.final_score < PERFECT),
                  key=lambda c: (c.final_score, c.dimension_id))
    if not report.criteria:
        return "Nothing was judged, so there is nothing to remediate."
    if not weak:
        return NOTHING_TO_DO
    files: dict[str, list[list[FailureFact]]] = {}
    for group in same_place(facts):
        files.setdefault(_group_title(group[0]), []).append(group)
    sections = [f"### {title}\n\n" + "\n".join(_item(report, group) for group in groups)
                for title, groups in files.items()]
    asks = [f"- **{md_text(c.dimension_name)} ({c.final_score}/5)**: "
            f"{md_text((targets or {})[c.dimension_id])}"
            for c in weak if (targets or {}).get(c.dimension_id)]
    if asks:
        sections.append("### What the weak criteria ask for\n\n" + "\n".join(asks))
    if not facts:
        sections.insert(0, "No failure fact bears on the criteria below 5/5; their scores "
                           "come from the judges' weighing of the evidence.")
    return "\n\n".join(sections)
