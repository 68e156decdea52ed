"""A diagram that draws a loop back the code's graph does not have (``vision.compare.loops``).

A drawn edge that leads back to a node before it ("ChiefJustice -.->|Auto-Cyclic if high
variance| Detectives") says the graph runs those nodes again. When the graph rebuilt from
the code has no cycle at all, that re-run is not in the code: the diagram draws a flow the
system does not have. Only a loop through at least two of the code's nodes or courtroom
roles counts (a legend's arrows, or a note looping on itself, draw no graph).
"""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.flow import (
    has_cycle,
    match_names,
    role_of,
    successors,
)
from automaton_auditor.forensics.vision.findings import DiagramReading
from automaton_auditor.state import Finding, RebuiltGraph

MIN_LOOP_PARTS = 2  # code nodes or roles a drawn loop must pass through


def _cycle(step: dict[str, set[str]], src: str, dst: str) -> list[str] | None:
    """The nodes of a path from `dst` back to `src` (the edge src -> dst closes it)."""
    paths, seen = [[dst]], {dst}
    while paths:
        path = paths.pop(0)
        if path[-1] == src:
            return path
        for nxt in sorted(step.get(path[-1], ())):
            if nxt not in seen:
                seen.add(nxt)
                paths.append([*path, nxt])
    return None


def _depths(edges: list[tuple[str, str]]) -> dict[str, int]:
    """How many edges from a node nothing leads to (the flow's start) each node lies."""
    step, targets = successors(edges), {b for _a, b in edges}
    depth = {n: 0 for a, b in edges for n in (a, b) if n not in targets}
    todo = sorted(depth)
    while todo:
        node = todo.pop(0)
        for nxt in sorted(step.get(node, ())):
            if nxt not in depth:
                depth[nxt] = depth[node] + 1
                todo.append(nxt)
    return depth


def back_edges(edges: list[tuple[str, str]]) -> list[tuple[tuple[str, str], list[str]]]:
    """Each edge that leads back (to a node no further from the start than its source)
    and closes a cycle, with the cycle's nodes."""
    step, depth = successors(edges), _depths(edges)
    found = []
    for src, dst in sorted(set(edges)):
        if depth.get(dst, 0) > depth.get(src, 0):
            continue
        cycle = _cycle(step, src, dst)
        if cycle is not None:
            found.append(((src, dst), cycle))
    return found


def loop_findings(reading: DiagramReading | None, graph: RebuiltGraph) -> list[Finding]:
    """``vision.compare.loops`` for the compared diagram's parsed flow (none without one)."""
    drawn = reading.graph if reading is not None else None
    if reading is None or drawn is None or not drawn.edges:
        return []
    mapped = match_names(drawn.nodes, graph.nodes)
    drawn_loops = [(edge, cycle) for edge, cycle in back_edges(drawn.edges)
                   if len({mapped.get(n) or role_of(n) for n in cycle} - {None, ""})
                   >= MIN_LOOP_PARTS]
    code_loops = bool(drawn_loops) and has_cycle(graph.edges)
    found = bool(drawn_loops) and not code_loops
    (src, dst), cycle = drawn_loops[0] if drawn_loops else (("", ""), [])
    rationale = (f"The diagram draws {src} -> {dst}, a loop back through "
                 f"{', '.join(cycle[:6])}; the code's graph ({graph.location}) has no cycle: "
                 "that re-run is not in the code." if found else
                 "The diagram's loops are the code's, or it draws none." if not drawn_loops
                 else "The diagram draws a loop back, and the code's graph has one too.")
    return [Finding(facet="vision.compare.loops",
                    goal="The diagram draws a loop back the code's graph does not have",
                    found=found, pattern="failure", location=reading.location,
                    rationale=rationale, confidence=min(reading.confidence, 0.75),
                    data={"drawn_loops": [f"{a} -> {b}" for (a, b), _c in drawn_loops[:6]],
                          "code_has_loop": code_loops})]
