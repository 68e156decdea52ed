"""Whether the report speaks of the audited graph at all: a report whose whole text never
names the courtroom's parts or the graph (about another project, say) does not introduce
any of its pictures as that graph's diagram, read or not."""

from __future__ import annotations

import re

from automaton_auditor.state import DiagramFacts, Finding

# The parts the rubric's diagram must show (detectives, aggregation, judges, Chief Justice)
# and the graph itself, as any report on this system names them somewhere.
SUBJECT_TERMS = re.compile(
    r"detective|judge|judicial|prosecutor|chief[\s_-]*justice|aggregat|lang[\s_-]*graph"
    r"|state[\s_-]*graph|fan[\s_-]*(?:out|in)\b|courtroom", re.IGNORECASE)
# Less text than this may be a scan or a stub: its silence says nothing.
MIN_TEXT_CHARS = 2000
_TEXT_KINDS = ("arrow",)  # flows written in the prose: no picture


def report_subject(page_texts: list[str]) -> dict[str, int]:
    """How much text the report's text layer holds and how often it names the audited
    graph's parts (`SUBJECT_TERMS`)."""
    chars = sum(len(text.strip()) for text in page_texts)
    mentions = sum(len(SUBJECT_TERMS.findall(text)) for text in page_texts)
    return {"report_chars": chars, "subject_mentions": mentions}


def off_subject_finding(diagrams: list[DiagramFacts]) -> Finding | None:
    """The rubric's "no diagram" of the StateGraph: the report holds pictures but its text
    (at least `MIN_TEXT_CHARS` of it) never names a detective, a judge, an aggregator, the
    Chief Justice, LangGraph, a StateGraph or a fan-out, so none of its pictures is shown to
    be the audited graph's diagram. A failure-pattern fact quoting the pictures' headings;
    None when the report names the graph, holds too little text, or draws nothing."""
    pictures = [d for d in diagrams if d.kind not in _TEXT_KINDS]
    if not pictures:
        return None
    chars = pictures[0].data.get("report_chars")
    mentions = pictures[0].data.get("subject_mentions")
    if not isinstance(chars, int) or chars < MIN_TEXT_CHARS or mentions != 0:
        return None
    headings = "; ".join(f"p.{d.page} {d.kind}: {d.nearby_text[:120]}" for d in pictures[:8])
    pages = sorted({d.page for d in pictures})
    return Finding(
        facet="vision.off_subject", goal="The report's pictures sit in a report that never "
        "speaks of the audited graph", found=True, pattern="failure", content=headings[:2000],
        location=f"report p.{pictures[0].page}", confidence=0.8,
        rationale=f"In {chars} characters of text the report never names a detective, a "
                  "judge, an aggregator, the Chief Justice, LangGraph, a StateGraph or a "
                  f"fan-out/fan-in: none of its {len(pictures)} picture(s) is introduced as "
                  "the audited graph's diagram.",
        data={"report_chars": chars, "pages": pages})
