"""Findings about the report's diagrams: what was found where ("vision.extract") and what
their flow shows ("vision.flow.*"): the courtroom's parallel split or a linear pipeline.

A diagram's flow is read from its parsed edges (vector drawing, Mermaid, DOT, arrow chain)
when it has some, else from a vision model's `analysis` when one ran and did not degrade.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from automaton_auditor.forensics.diagrams.arrows import parse_arrows
from automaton_auditor.forensics.diagrams.flow import (
    CourtroomPattern,
    courtroom_pattern,
    flow_graph,
    longest_chain,
)
from automaton_auditor.forensics.vision.labels import (
    LABEL_CONFIDENCE,
    labelled_part,
    quoted,
    report_labels,
)
from automaton_auditor.forensics.vision.layout import stacked_finding
from automaton_auditor.forensics.vision.subject import off_subject_finding
from automaton_auditor.state import DiagramFacts, Finding, RebuiltGraph

PARTS = ("parallel_detectives", "aggregation", "parallel_judges", "synthesis")
_PART_GOALS = {
    "parallel_detectives": "A diagram shows the detectives running in parallel (fan-out)",
    "aggregation": "A diagram shows the detectives' evidence aggregated (fan-in)",
    "parallel_judges": "A diagram shows the three judges running in parallel (fan-out)",
    "synthesis": "A diagram shows the judges' opinions synthesised (fan-in to Chief Justice)",
}
# How far a reading can be trusted, by where it came from. A character drawing's rows are
# read as layers, its columns lost in the text layer: trusted less than diagram source.
MIN_FLOW_NODES = 3  # two boxes and an arrow (a boxed list of rules) show no shape
_CONFIDENCE = {"vector": 0.85, "mermaid": 0.85, "dot": 0.85, "text_art": 0.7, "arrow": 0.6,
               "model": 0.6}


@dataclass
class DiagramReading:
    """What one diagram's flow shows, and how it was read."""

    facts: DiagramFacts
    source: str  # edges | model | none
    classification: str
    parts: dict[str, list[str]] = field(default_factory=dict)
    linear: bool | None = None
    graph: RebuiltGraph | None = None
    chain: list[str] = field(default_factory=list)

    @property
    def score(self) -> int:
        """How many parts of the courtroom split this diagram shows."""
        return sum(1 for part in PARTS if self.parts.get(part))

    @property
    def confidence(self) -> float:
        """Trust in this reading (model readings and arrow chains count less)."""
        key = "model" if self.source == "model" else self.facts.kind
        return _CONFIDENCE.get(key, 0.5)

    @property
    def location(self) -> str:
        """Where the diagram is."""
        return f"report p.{self.facts.page}"


def _classify_edges(facts: DiagramFacts, graph: RebuiltGraph,
                    pattern: CourtroomPattern) -> str:
    kind = str(facts.data.get("diagram_type", "flowchart"))
    if kind in ("sequence", "state"):
        return "sequence" if kind == "sequence" else "state_machine"
    if facts.kind == "arrow":
        return "text_flow"  # an arrow chain written in the text, not a drawing
    names = {n.upper() for n in graph.nodes}
    looks_stateful = bool({"START", "END"} & names) or pattern.parallel_detectives
    return "state_machine" if looks_stateful else "generic_boxes"


def read_diagram(facts: DiagramFacts) -> DiagramReading:
    """Read one diagram's flow from its edges, else from a non-degraded model analysis."""
    if facts.edges:
        cond = [(str(e[0]), str(e[1])) for e in facts.data.get("conditional_edges", [])
                if len(e) == 2]
        groups = [str(n) for n in facts.data.get("parallel_nodes", [])]
        graph = flow_graph(facts.edges, cond, groups)
        pattern = courtroom_pattern(graph, groups)
        sequence = facts.data.get("diagram_type") == "sequence"
        # A sequence diagram's messages run one after another: an orchestrator messaging
        # three judges is not a drawn parallel split.
        parts = {p: [] if sequence else list(getattr(pattern, p)) for p in PARTS}
        shapeless = sequence or len(graph.nodes) < MIN_FLOW_NODES
        return DiagramReading(facts, "edges", _classify_edges(facts, graph, pattern), parts,
                              None if shapeless else graph.linear, graph,
                              longest_chain(graph.edges, cond))
    analysis = facts.analysis
    if analysis and not analysis.get("degraded") and "kind" in analysis:
        return _model_reading(facts, analysis)
    return DiagramReading(facts, "none", "unknown")


def _model_reading(facts: DiagramFacts, analysis: dict[str, Any]) -> DiagramReading:
    """A vision model's answer: its booleans decide the parts; its described flow, when
    written as an arrow chain (as the prompt asks), gives edges to compare with the code."""
    kind = str(analysis["kind"])
    parts = {p: ["(read by the vision model)"] if analysis.get(p) else [] for p in PARTS}
    linear = None if kind in ("not_a_diagram", "sequence") else not (
        analysis.get("parallel_detectives") or analysis.get("parallel_judges"))
    flows = parse_arrows(str(analysis.get("described_flow", ""))[:2000])
    if not flows or kind == "not_a_diagram":
        return DiagramReading(facts, "model", kind, parts, linear)
    flow = max((f for _, f in flows), key=lambda f: len(f.edges))
    graph = flow_graph(flow.edges, flow.conditional, flow.parallel)
    return DiagramReading(facts, "model", kind, parts, linear, graph,
                          longest_chain(flow.edges, flow.conditional))


def _describe(facts: DiagramFacts) -> str:
    size = f"{facts.width}x{facts.height}px" if facts.width else "text"
    what = f"{len(facts.edges)} edges" if facts.edges else f"{len(facts.labels)} labels"
    extra = " likely diagram" if facts.data.get("likely_diagram") else ""
    return f"p.{facts.page} {facts.kind} ({size}, {what}){extra}"


def extract_finding(diagrams: list[DiagramFacts]) -> Finding:
    """How many diagram candidates were found, of which kinds, on which pages."""
    counts: dict[str, int] = {}
    pages: dict[str, list[int]] = {}
    for facts in diagrams:
        counts[facts.kind] = counts.get(facts.kind, 0) + 1
        pages.setdefault(facts.kind, []).append(facts.page)
    scans = [d for d in diagrams if d.kind == "scan"]
    # Drawn candidates count, scans when they look graphic, and not what a vision model
    # said is no diagram (a screenshot, a photo, a table).
    real = [d for d in diagrams if (d.kind not in ("scan", "arrow")
                                    or d.data.get("likely_diagram"))
            and d.analysis.get("kind") != "not_a_diagram"]
    found = bool(real) or bool(diagrams and counts.get("arrow"))
    total = diagrams[0].data.get("candidates_total", len(diagrams)) if diagrams else 0
    summary = "; ".join(_describe(d) for d in diagrams[:40]) or "no diagram candidates"
    if scans and len(scans) == len([d for d in diagrams if d.kind != "arrow"]):
        note = (f"{len(scans)} scanned page(s) without a text layer; "
                f"{sum(1 for s in scans if s.data.get('likely_diagram'))} look graphic")
    else:
        note = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"
    return Finding(
        facet="vision.extract", goal="Diagrams present in the report", found=found,
        pattern="success", content=summary,
        location=f"report p.{(real or diagrams)[0].page}" if diagrams else "report",
        rationale=f"Diagram candidates found: {note}."
        + ("" if real else " Only text flows or plain scans, no drawn diagram identified."),
        confidence=0.9 if real else 0.6 if diagrams else 0.8,
        data={"counts": dict(sorted(counts.items())),
              "pages": {k: sorted(set(v)) for k, v in sorted(pages.items())},
              "candidates_total": total, "kept": len(diagrams)})


def _part_content(reading: DiagramReading, part: str) -> str:
    nodes = reading.parts.get(part, [])
    if reading.source == "model":
        flow = str(reading.facts.analysis.get("described_flow", ""))
        return f"vision model on {reading.location}: {flow}"[:2000]
    if part in ("parallel_detectives", "parallel_judges"):
        return f"{nodes[0]} -> {{{', '.join(nodes[1:])}}}"
    return f"{{{', '.join(nodes[1:])}}} -> {nodes[0]}"


def _may_be_diagram(reading: DiagramReading) -> bool:
    """An image nothing read (no edges, no vision model) that may be a diagram: a drawn
    candidate, or a scan that looks graphic."""
    facts = reading.facts
    return reading.source == "none" and facts.kind != "arrow" and (
        facts.kind != "scan" or bool(facts.data.get("likely_diagram")))


def unread_limitation(readings: list[DiagramReading]) -> dict[str, str]:
    """``{"limitation": why}`` when a diagram could not be read (an image without a vision
    model): that no diagram shows something is then not established, since the unread image
    may show it (the auditor, not the report, fell short). Empty when every one was read."""
    unread = [r for r in readings if _may_be_diagram(r)]
    if readings and all(r.source == "none" for r in readings):
        unread = readings
    if not unread:
        return {}
    pages = ", ".join(f"p.{p}" for p in sorted({r.facts.page for r in unread})[:8])
    return {"limitation": f"{len(unread)} diagram image(s) could not be read without a "
                          f"vision model (--vision-model) ({pages})"}


def part_findings(readings: list[DiagramReading], part: str) -> Finding:
    """One finding per courtroom part: which diagrams show it (best first)."""
    showing = [r for r in readings if r.parts.get(part)]
    readable = [r for r in readings if r.source != "none"]
    goal = _PART_GOALS[part]
    if showing:
        best = max(showing, key=lambda r: (r.confidence, r.score, -r.facts.page))
        where = ", ".join(sorted({f"p.{r.facts.page} {r.facts.kind}" for r in showing})) + "."
        text = all(r.facts.kind == "arrow" for r in showing)  # written out, not drawn
        unread = unread_limitation(readings).get("limitation")  # the image may draw it
        return Finding(facet=f"vision.flow.{part}", goal=goal, found=True, pattern="success",
                       content=_part_content(best, part), location=best.location,
                       rationale=(f"Written as arrow chain(s) in the text ({unread}): "
                                  if text and unread else
                                  "Written only as arrow chain(s) in the text, not drawn: "
                                  if text else f"Shown by {len(showing)} diagram(s): ") + where,
                       confidence=best.confidence,
                       data={"diagrams": [{"page": r.facts.page, "kind": r.facts.kind,
                                           "source": r.source} for r in showing]})
    labelled = labelled_part([r.facts for r in readings], part)
    if labelled:  # a drawing whose columns were lost still says what it draws in parallel
        return Finding(facet=f"vision.flow.{part}", goal=goal, found=True, pattern="success",
                       content=quoted(labelled), location=f"report p.{labelled[0]['page']}",
                       rationale=f"Labelled in a drawing made of characters: "
                                 f"{quoted(labelled)}.",
                       confidence=LABEL_CONFIDENCE, data={"labels": labelled})
    why = ("no diagram flow could be read (no diagram, or images without a vision model)"
           if not readable else f"{len(readable)} readable diagram(s), none shows it")
    return Finding(facet=f"vision.flow.{part}", goal=goal, found=False, pattern="success",
                   location=readable[0].location if readable else "report",
                   rationale=f"Not shown: {why}.",
                   confidence=0.7 if readable else 0.3,
                   data={"readable_diagrams": len(readable), **unread_limitation(readings)})


def full_split_finding(readings: list[DiagramReading]) -> Finding:
    """Success pattern in one fact: a single diagram shows the whole courtroom split,
    detectives in parallel -> aggregation -> judges in parallel -> synthesis."""
    complete = [r for r in readings if r.score == len(PARTS)]
    goal = ("One diagram shows the full parallel split: detectives fan out, evidence is "
            "aggregated, judges fan out, the Chief Justice synthesises")
    if not complete:
        readable = [r for r in readings if r.source != "none"]
        best = max(readable, key=lambda r: (r.score, r.confidence), default=None)
        shown = [p for p in PARTS if best and best.parts.get(p)]
        unread = unread_limitation(readings)
        return Finding(facet="vision.flow.full_split", goal=goal, found=False,
                       pattern="success", location=best.location if best else "report",
                       rationale=("No " + ("readable " if unread else "") + "diagram shows "
                                  "the whole split" + (f"; the most complete shows "
                                                       f"{', '.join(shown)}" if shown else "")
                                  + (f"; not established: {unread['limitation']}."
                                     if unread else ".")),
                       confidence=0.7 if readable else 0.3,
                       data={"best_parts": shown, **unread})
    best = max(complete, key=lambda r: (r.confidence, -r.facts.page))
    content = "; ".join(_part_content(best, part) for part in PARTS)
    return Finding(facet="vision.flow.full_split", goal=goal, found=True, pattern="success",
                   content=content, location=best.location,
                   rationale=f"{best.facts.kind} diagram on {best.location} shows all four "
                             f"parts ({len(complete)} diagram(s) do).",
                   confidence=best.confidence,
                   data={"pages": sorted({r.facts.page for r in complete})})


def linear_finding(readings: list[DiagramReading]) -> Finding:
    """Failure pattern: every readable diagram is a plain linear pipeline."""
    flows = [r for r in readings if r.linear is not None]
    linear = [r for r in flows if r.linear]
    branching = [r for r in flows if not r.linear]
    # a drawing labelled a parallel fan-out is no linear pipeline, whatever rows were read
    labels = report_labels([r.facts for r in readings])
    found = bool(flows) and not branching and not labels
    best = linear[0] if found else (max(branching, key=lambda r: (r.confidence, r.score))
                                    if branching else None)
    content = None
    if best and found:
        content = " -> ".join(best.chain) or None
    elif best and best.graph is not None:  # say where it branches instead
        content = "branches: " + "; ".join(
            [*(f"{s} -> {{{', '.join(t)}}}" for s, t in best.graph.fan_out.items()),
             *(f"{{{', '.join(s)}}} -> {d}" for d, s in best.graph.fan_in.items())])
    if found:
        why = f"All {len(flows)} readable diagram flow(s) are linear: no fan-out, no fan-in."
    elif labels:
        why = f"A drawing is labelled a parallel fan-out: {quoted(labels)}."
    elif flows:
        why = f"{len(flows) - len(linear)} of {len(flows)} readable diagram(s) branch."
    else:
        why = "No diagram flow could be read."
    # an unread image may be the diagram that branches
    unread = unread_limitation(readings) if found else {}
    return Finding(facet="vision.flow.linear", goal="Diagrams show only a linear pipeline",
                   found=found, pattern="failure", content=content,
                   location=best.location if best else "report",
                   rationale=why + (f" Not established: {unread['limitation']}."
                                    if unread else ""),
                   confidence=max((r.confidence for r in flows), default=0.3),
                   data={"linear_pages": sorted({r.facts.page for r in linear}),
                         "readable": len(flows), **unread})


_SOURCE_KINDS = ("mermaid", "dot")  # diagram source a renderer would draw
_TEXT_KINDS = (*_SOURCE_KINDS, "arrow")


def drawn_finding(diagrams: list[DiagramFacts]) -> Finding | None:
    """Mermaid or DOT source printed as text in a report that draws no diagram (no picture,
    no drawing): the source describes a diagram, the reader is shown none. A success-pattern
    fact not found, the rubric's "no diagram present" (capped at 2); None when the report
    draws something or holds no such source."""
    source = [d for d in diagrams if d.kind in _SOURCE_KINDS and d.edges]
    if not source or any(d.kind not in _TEXT_KINDS or d.data.get("text_art_pages")
                         for d in diagrams):
        return None  # a picture, or a drawing made of characters, read or not
    pages = ", ".join(f"p.{d.page} {d.kind}" for d in source)
    return Finding(facet="vision.drawn", goal="A diagram is drawn, not only given as source text",
                   found=False, pattern="success", content=pages,
                   location=f"report p.{source[0].page}",
                   rationale=f"Only diagram source printed as text ({pages}); no picture or "
                             "drawing in the report.",
                   confidence=0.85, data={"source_pages": sorted({d.page for d in source})})


def pictured_finding(diagrams: list[DiagramFacts]) -> Finding | None:
    """A report whose only drawings are made of characters (box drawings read from the text
    layer): its rows are kept but not its columns, so which box joins which is inferred,
    and the fan-out and fan-in points are not drawn apart as the success pattern asks. A
    success-pattern fact not found (a missing extra, no full marks); None when the report
    holds a picture, a vector drawing or diagram source, or no character drawing."""
    art = [d for d in diagrams if d.kind == "text_art" and d.edges]
    if not art or any(d.kind not in ("text_art", "arrow") for d in diagrams):
        return None
    pages = ", ".join(f"p.{d.page}" for d in art)
    return Finding(facet="vision.pictured", goal="A diagram is drawn as a picture, not only "
                   "with characters", found=False, pattern="success", content=pages,
                   location=f"report p.{art[0].page}", confidence=0.8,
                   rationale=f"The only drawings are made of characters ({pages}): their "
                             "boxes' rows are read, their columns are not.",
                   data={"text_art_pages": sorted({d.page for d in art})})


def prose_flow_finding(diagrams: list[DiagramFacts]) -> Finding | None:
    """The rubric's "no diagram": the report's only flows are arrow chains written in its
    prose (``START → [A || B] → C`` in a sentence or a list item), with no picture, no
    drawing, no diagram source and no drawing made of characters on any page. None
    otherwise (an unread picture or a text drawing may be the diagram)."""
    if not diagrams or any(d.kind != "arrow" or d.data.get("text_art_pages")
                           for d in diagrams) or not any(d.edges for d in diagrams):
        return None
    pages = ", ".join(f"p.{p}" for p in sorted({d.page for d in diagrams}))
    return Finding(facet="vision.prose_only", goal="The report's only diagrams are arrow chains "
                   "written in its prose", found=True, pattern="failure",
                   content="\n".join(" -> ".join(e) for e in diagrams[0].edges[:8]),
                   location=f"report p.{diagrams[0].page}",
                   rationale=f"No picture, drawing or diagram source in the report; its flows "
                             f"are arrow chains in the text ({pages}).",
                   confidence=0.8, data={"pages": sorted({d.page for d in diagrams})})


def _caption(facts: DiagramFacts) -> str:
    """The heading above or the caption below a picture (``above | below`` in nearby_text):
    the "Figure ..." line when there is one, else the nearest text, cut short."""
    above, _, below = facts.nearby_text.partition(" | ")
    for part in (below, above):
        index = part.find("Figure")
        if index >= 0:
            return part[index: index + 100]
    text = (above[-100:] or below[:100]).strip()
    return "" if len(text) < 4 or text.isdigit() else text  # a page number is no caption


def classification_finding(readings: list[DiagramReading]) -> Finding:
    """Neutral context: how each diagram was classified and read."""
    rows: list[dict[str, Any]] = [
        {"page": r.facts.page, "kind": r.facts.kind, "classification": r.classification,
         "read_from": r.source, "parts": [p for p in PARTS if r.parts.get(p)],
         "caption": _caption(r.facts)}
        for r in readings]
    # An unread picture is at least placed by its heading or caption.
    text = "; ".join(f"p.{row['page']} {row['kind']}: {row['classification']}"
                     f" ({row['read_from']})"
                     + (f" [{row['caption']}]" if row["read_from"] == "none" and row["caption"]
                        else "") for row in rows)
    return Finding(facet="vision.flow.classification", goal="How each diagram was classified",
                   found=any(r.source != "none" for r in readings), pattern="neutral",
                   content=text or None, location=readings[0].location if readings else "report",
                   rationale="Classification from parsed edges, or the vision model's answer.",
                   confidence=0.6, data={"diagrams": rows})


def vision_findings(diagrams: list[DiagramFacts]) -> list[Finding]:
    """Findings about the report's diagrams, in a fixed order: vision.extract,
    vision.flow.full_split, one vision.flow.<part> per courtroom part (parallel_detectives,
    aggregation, parallel_judges, synthesis), vision.flow.linear,
    vision.flow.classification, vision.drawn when the only diagrams are source text,
    vision.pictured when they are drawn with characters, vision.prose_only when they are
    arrow chains in the prose, vision.stacked when every drawing's labels lie on one
    another, and vision.off_subject when the report never names the audited graph."""
    readings = [read_diagram(d) for d in diagrams]
    extra = [f for f in (drawn_finding(diagrams), pictured_finding(diagrams),
                         prose_flow_finding(diagrams), stacked_finding(diagrams),
                         off_subject_finding(diagrams)) if f]
    return [extract_finding(diagrams), full_split_finding(readings),
            *(part_findings(readings, part) for part in PARTS), linear_finding(readings),
            classification_finding(readings), *extra]
