"""Compare the report's diagram with the graph rebuilt from the code.

Two questions: do the diagram's node names match the code's (fuzzily: case, underscores,
a "Node" suffix, camelCase), and does the diagram show the code's parallel split, or
contradict it ("Misleading Architecture Visual": a linear pipeline drawn for code that fans
out, or parallel branches drawn that the code does not have, or runs in sequence)? A loop
drawn back that the code lacks is its own fact (`loops`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from automaton_auditor.forensics.diagrams.flow import match_names, name_key, role_of
from automaton_auditor.forensics.vision.findings import (
    MIN_FLOW_NODES,
    DiagramReading,
    read_diagram,
)
from automaton_auditor.forensics.vision.labels import LABEL_CONFIDENCE, quoted, report_labels
from automaton_auditor.forensics.vision.loops import loop_findings
from automaton_auditor.state import DiagramFacts, Finding, RebuiltGraph

_TERMINALS = {"start", "end"}
MIN_NAMED = 2  # graph parts a flow must name to be a drawing of the graph


def architectural(reading: DiagramReading, code_nodes: Iterable[str] = ()) -> bool:
    """Whether a reading is a drawing of the audited graph: at least `MIN_FLOW_NODES` nodes,
    `MIN_NAMED` of them the code's nodes or courtroom roles (a detective, an aggregator, a
    judge, the Chief Justice). A boxed list of rules read as two boxes and one arrow, or a
    chain of phases in the prose ("Observation -> Interpretation -> Action"), is no picture
    of the graph whose flow could contradict the code. A vision model's reading without a
    parsed flow stands: the model judged the picture."""
    if reading.graph is None:
        return True
    nodes = [n for n in reading.graph.nodes if name_key(n) not in _TERMINALS]
    if len(reading.graph.nodes) < MIN_FLOW_NODES:
        return False
    named = {n for n in nodes if role_of(n)} | set(match_names(
        nodes, [c for c in code_nodes if name_key(c) not in _TERMINALS]))
    return len(named) >= MIN_NAMED


def _code_matches(reading: DiagramReading, code_nodes: list[str]) -> tuple[int, int]:
    """How complete a reading is as a drawing of the code: how many of the code's nodes it
    names, and how many nodes it has (terminals left out of both)."""
    if reading.graph is None:
        return 0, 0
    nodes = [n for n in reading.graph.nodes if name_key(n) not in _TERMINALS]
    code = [c for c in code_nodes if name_key(c) not in _TERMINALS]
    return len(match_names(nodes, code)), len(nodes)


def best_reading(readings: list[DiagramReading],
                 code_nodes: Iterable[str] = ()) -> DiagramReading | None:
    """The diagram to compare: among the drawings of the graph (`architectural`, its names
    matched against `code_nodes`), a parsed flow before a model reading and a drawing before
    an arrow chain, then the most complete (most code nodes named, then most nodes), then
    the one showing most of the courtroom split, then the most edges, then the earliest
    page."""
    # A sequence diagram's messages are an interaction, not the graph's flow: not compared.
    code_nodes = list(code_nodes)
    readable = [r for r in readings if r.source != "none" and r.classification != "sequence"
                and architectural(r, code_nodes)]
    if not readable:
        return None
    # A summary line naming two of the code's nodes is not the drawing to judge when the
    # report also draws the whole graph: completeness before the courtroom split.
    complete = {id(r): _code_matches(r, code_nodes) for r in readable}
    return min(readable, key=lambda r: (r.source != "edges", r.facts.kind == "arrow",
                                        -complete[id(r)][0], -complete[id(r)][1],
                                        -r.score, -len(r.facts.edges), r.facts.page))


def _unavailable(why: str, location: str = "report") -> list[Finding]:
    common = {"location": location, "rationale": why, "confidence": 0.2,
              "data": {"compared": False}}
    return [
        Finding(facet="vision.compare.nodes", goal="Diagram node names match the code graph",
                found=False, pattern="neutral", **common),
        Finding(facet="vision.compare.parallelism",
                goal="Diagram's parallel split matches the code graph", found=False,
                pattern="neutral", **common),
    ]


def nodes_finding(reading: DiagramReading, graph: RebuiltGraph) -> Finding:
    """How many of the diagram's nodes are the code's nodes."""
    # Decisions ("evidence?") are drawn routing conditions, not nodes of the code graph.
    decisions = set(reading.facts.data.get("decisions", []))
    diagram_nodes = [n for n in (reading.graph.nodes if reading.graph else [])
                     if name_key(n) not in _TERMINALS and n not in decisions
                     and not n.rstrip().endswith("?")]
    code_nodes = [n for n in graph.nodes if name_key(n) not in _TERMINALS]
    matched = match_names(diagram_nodes, code_nodes)
    missing = sorted(set(code_nodes) - set(matched.values()))
    extra = sorted(set(diagram_nodes) - set(matched))
    ratio = len(matched) / len(diagram_nodes) if diagram_nodes else 0.0
    pairs = ", ".join(f"{d}={c}" for d, c in sorted(matched.items()))
    return Finding(
        facet="vision.compare.nodes", goal="Diagram node names match the code graph",
        found=ratio >= 0.5, pattern="success", location=reading.location,
        content=f"matched: {pairs or 'none'}; only in diagram: {', '.join(extra) or 'none'};"
                f" only in code: {', '.join(missing) or 'none'}",
        rationale=f"{len(matched)} of {len(diagram_nodes)} diagram nodes match code nodes.",
        confidence=(round(min(reading.confidence + 0.05, 0.4 + 0.5 * ratio), 2)
                    if diagram_nodes else 0.3),
        data={"matched": dict(sorted(matched.items())), "only_in_diagram": extra,
              "only_in_code": missing, "ratio": round(ratio, 3)})


def _reproduced_splits(drawn: RebuiltGraph, graph: RebuiltGraph,
                       to_code: dict[str, str]) -> list[str]:
    """Code fan-out points whose targets the diagram (`drawn`, its nodes matched to the
    code's by `to_code`) also fans out to (>= 2 of them)."""
    diagram_splits = [{to_code.get(t) for t in targets} - {None}
                      for targets in drawn.fan_out.values()]
    found = []
    for source, targets in sorted(graph.fan_out.items()):
        if any(len(split & set(targets)) >= 2 for split in diagram_splits):
            found.append(f"{source} -> {{{', '.join(targets)}}}")
    return found


def _false_splits(drawn: RebuiltGraph, graph: RebuiltGraph,
                  to_code: dict[str, str]) -> list[str]:
    """Splits the diagram draws to code nodes that the code runs one after another: two of
    the targets are joined by an edge of the code, and no fan-out of the code reaches two,
    nor a route of the code from the same node (a diagram drawing the branches of a
    conditional edge as plain arrows draws the code's edges, not a parallelism it lacks)."""
    edges = set(graph.edges)
    routes = {s: {b for a, b in edges if a == s} for s in graph.conditional_sources}
    found = []
    for source, targets in sorted(drawn.fan_out.items()):
        split = {to_code[t] for t in targets if t in to_code}
        if len(split) < 2 or any(len(split & set(t)) >= 2 for t in graph.fan_out.values()):
            continue
        if len(split & routes.get(to_code.get(source, ""), set())) >= 2:
            continue
        chained = sorted(f"{a} -> {b}" for a, b in edges if a in split and b in split)
        if chained:
            found.append(f"{source} -> {{{', '.join(sorted(targets))}}} drawn in parallel; "
                         f"the code runs {', '.join(chained)}")
    return found


def _diagram_parallel(reading: DiagramReading) -> bool:
    if reading.source == "edges" and reading.graph is not None:
        # Three boxes joined into one (a fan-in) draw branches as surely as a fan-out: a
        # flow that branches is never a linear pipeline.
        return bool(reading.graph.fan_out or reading.graph.fan_in)
    # A model's own verdict on parallelism wins over the chain it wrote.
    return bool(reading.parts.get("parallel_detectives") or reading.parts.get("parallel_judges"))


def _labelled_false_splits(labels: list[dict[str, Any]], graph: RebuiltGraph) -> list[str]:
    """Groups a drawing labels a parallel fan-out (`labels.split_labels`) whose code nodes
    the code runs one after another: two of them joined by a code edge, and no fan-out nor
    route of the code reaching two of them."""
    found = []
    for role in sorted({label["role"] for label in labels}):
        members = {n for n in graph.nodes if role_of(n) == role}
        routes = [{b for a, b in graph.edges if a == s} for s in graph.conditional_sources]
        if len(members) < 2 or any(len(members & set(t)) >= 2
                                   for t in [*graph.fan_out.values(), *routes]):
            continue
        chained = sorted(f"{a} -> {b}" for a, b in set(graph.edges)
                         if a in members and b in members)
        if chained:
            mine = [label for label in labels if label["role"] == role]
            found.append(f"{quoted(mine[:1])} drawn in parallel; the code runs "
                         f"{', '.join(chained)}")
    return found


def parallelism_findings(reading: DiagramReading | None, graph: RebuiltGraph,
                         unread: dict[str, str] | None = None,
                         labels: list[dict[str, Any]] | None = None) -> list[Finding]:
    """Does the diagram's parallel split match the code's, or contradict it? `unread`
    (``{"limitation": why}``) marks a mismatch as not established: a picture of the report
    that could not be read may draw what this reading lacks. `labels` are the fan-out
    labels of the report's character drawings: they draw a split (and may contradict the
    code) even where no flow was read (`reading` None)."""
    labels = labels or []
    code_parallel = bool(graph.fan_out)
    drawn_parallel = bool(reading and _diagram_parallel(reading)) or bool(labels)
    drawn = reading.graph if reading else None
    to_code = match_names(drawn.nodes, graph.nodes) if drawn is not None else {}
    splits = _reproduced_splits(drawn, graph, to_code) if drawn is not None else []
    code_text = "; ".join(f"{s} -> {{{', '.join(t)}}}" for s, t in sorted(graph.fan_out.items()))
    false = [*(_false_splits(drawn, graph, to_code) if drawn is not None else []),
             *_labelled_false_splits(labels, graph)] \
        if drawn_parallel and code_parallel else []
    if false:
        verdict = f"diagram shows parallel branches the code runs in sequence: {'; '.join(false)}"
    elif drawn_parallel and code_parallel:
        verdict = ("diagram and code both branch" + (f"; reproduced: {'; '.join(splits)}"
                                                       if splits else ""))
    elif not drawn_parallel and not code_parallel:
        verdict = "diagram and code are both linear"
    elif code_parallel:
        verdict = f"diagram shows a linear pipeline, code fans out ({code_text})"
    else:
        verdict = "diagram shows parallel branches, code is linear (no fan-out)"
    contradicts = drawn_parallel != code_parallel or bool(false)
    location = reading.location if reading else f"report p.{labels[0]['page']}"
    base = {"location": location, "content": verdict[:2000],
            "data": {"diagram_parallel": drawn_parallel, "code_parallel": code_parallel,
                     "reproduced_splits": splits, "false_splits": false,
                     "read_from": reading.source if reading else "labels"}}
    conf = reading.confidence if reading else LABEL_CONFIDENCE
    matched = drawn_parallel and code_parallel and not false
    return [
        Finding(facet="vision.compare.parallelism",
                goal="Diagram's parallel split matches the code graph",
                found=matched, pattern="success",
                rationale=((f"The arrow chain written in the text ({location}) branches as "
                            "the code does" + (f"; {unread['limitation']}." if unread else
                                               "; it is not drawn.") if reading and
                            reading.facts.kind == "arrow" else
                            "The diagram draws the code's parallel split.") if
                           matched else f"No match: {verdict}."),
                confidence=conf, **_limited(base, unread if not matched else None)),
        Finding(facet="vision.compare.misleading",
                goal="Misleading Architecture Visual: diagram contradicts the code's flow",
                found=contradicts, pattern="failure",
                rationale=(f"Misleading Architecture Visual: {verdict}." if contradicts
                           else "The diagram's flow does not contradict the code."),
                confidence=conf, **_limited(base, unread if contradicts else None)),
    ]


def _limited(base: dict[str, Any], unread: dict[str, str] | None) -> dict[str, Any]:
    return {**base, "data": {**base["data"], **unread}} if unread else base


def _unread_pictures(readings: list[DiagramReading]) -> list[DiagramReading]:
    """Pictures whose flow could not be read (no vision model); scans when they look graphic."""
    return [r for r in readings if r.source == "none"
            and (r.facts.kind != "scan" or r.facts.data.get("likely_diagram"))]


def compare_with_code(diagrams: list[DiagramFacts],
                      graph: RebuiltGraph | None) -> list[Finding]:
    """Findings "vision.compare.nodes", "vision.compare.parallelism" and (when a flow could
    be compared) "vision.compare.misleading", comparing the best-read diagram with the code
    graph. Without a code graph or a readable diagram the findings say so (found=False,
    neutral, low confidence)."""
    if graph is None or not graph.nodes:
        return _unavailable("No graph could be rebuilt from the code to compare with.")
    readings = [read_diagram(d) for d in diagrams]
    reading = best_reading(readings, graph.nodes)
    labels = report_labels(diagrams)
    if reading is None:
        why = ("No diagram in the report." if not diagrams else
               "No diagram flow could be read (images need a vision model; sequence "
               "diagrams are not compared; a flow of fewer than "
               f"{MIN_FLOW_NODES} nodes, or naming fewer than {MIN_NAMED} of the graph's "
               "nodes or roles, is no drawing of the graph).")
        if not labels:
            return _unavailable(why)
        nodes = _unavailable(why)[0]  # a drawing's labels give its split, not its names
    elif reading.source == "model" and reading.graph is None:
        nodes = Finding(facet="vision.compare.nodes",
                        goal="Diagram node names match the code graph", found=False,
                        pattern="neutral", location=reading.location,
                        rationale="The diagram was read by a vision model: no node names "
                                  "were parsed to compare.", confidence=0.2)
    else:
        nodes = nodes_finding(reading, graph)
    # A flow read from text (an arrow chain, text art) is a weak witness: while a picture of
    # the report could not be read, a mismatch it shows is not called misleading.
    pictures = _unread_pictures(readings) \
        if reading is None or reading.facts.kind == "arrow" else []
    unread = {"limitation": f"{len(pictures)} diagram image(s) could not be read without a "
                            "vision model (--vision-model); a flow read from text does not "
                            "settle the comparison"} if pictures else {}
    return [nodes, *parallelism_findings(reading, graph, unread, labels),
            *loop_findings(reading, graph)]
