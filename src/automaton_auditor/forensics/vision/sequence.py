"""Sequence diagrams read from vector drawing operations.

A sequence diagram (PlantUML, Mermaid, draw.io exports) draws one box per participant, a
vertical lifeline below it, and one horizontal arrow per message between two lifelines. The
flowchart reader sees no edges there (messages end on lifelines, not on boxes), so this reader
maps each message's two ends to the lifelines they touch, and the arrow head gives the
direction. Messages become edges between participants, in drawing order.
"""

from __future__ import annotations

from dataclasses import dataclass

from automaton_auditor.forensics.vision.vector import (
    ATTACH_TOL,
    HEAD_MAX,
    HEAD_TOL,
    Grid,
    PathInfo,
    Point,
    VectorDiagram,
    VectorNode,
    bounding_rect,
)

MAX_LIFELINES = 40  # a real sequence diagram has a handful of participants


@dataclass(frozen=True)
class Lifeline:
    """A participant's vertical line: its x and the y range it spans."""

    label: str
    x: float
    low: float
    high: float


def _lifelines(paths: list[PathInfo], nodes: list[VectorNode], unit: float) -> list[Lifeline]:
    """Vertical stroked lines that leave the bottom of a participant box."""
    lines: dict[str, Lifeline] = {}
    tol = ATTACH_TOL * unit
    grid = Grid([n.rect for n in nodes], tol, 5 * unit)
    for path in paths:
        (x0, y0), (x1, y1) = path.points[0], path.points[-1]
        if path.closed or not path.stroked or abs(x0 - x1) > 1 or abs(y0 - y1) < 3 * unit:
            continue
        top = max(y0, y1)
        for index in grid.hits((x0, top)):
            node = nodes[index]
            if abs(top - node.rect[1]) <= tol and node.label not in lines:
                lines[node.label] = Lifeline(node.label, x0, min(y0, y1), top)
    return sorted(lines.values(), key=lambda line: line.x)


def _touching(point: Point, lifelines: list[Lifeline], tol: float) -> Lifeline | None:
    hits = [line for line in lifelines[:MAX_LIFELINES] if abs(point[0] - line.x) <= tol
            and line.low - tol <= point[1] <= line.high + tol]
    return min(hits, key=lambda line: abs(point[0] - line.x)) if hits else None


def read_sequence(paths: list[PathInfo], nodes: list[VectorNode],
                  unit: float) -> VectorDiagram | None:
    """The sequence diagram on a page, or None without two lifelines and two messages, one
    of them with an arrow head (rules between column lines with none are a table's grid)."""
    lifelines = _lifelines(paths, nodes, unit)
    if len(lifelines) < 2:
        return None
    heads = Grid([p.rect for p in paths if p.filled and max(
        p.rect[2] - p.rect[0], p.rect[3] - p.rect[1]) <= HEAD_MAX * unit], HEAD_TOL * unit,
        5 * unit)
    tol = HEAD_MAX * unit  # a message may stop an arrow head short of the lifeline
    messages: list[tuple[str, str]] = []
    headed = 0  # messages with an arrow head at either end
    regions = [(line.x, line.low, line.x, line.high) for line in lifelines]
    for path in paths:
        start, end = path.points[0], path.points[-1]
        if path.closed or not path.stroked or abs(start[1] - end[1]) > 1:
            continue
        src, dst = _touching(start, lifelines, tol), _touching(end, lifelines, tol)
        if src is None or dst is None or src is dst:
            continue
        if heads.hits(start) and not heads.hits(end):
            src, dst = dst, src
        headed += bool(heads.hits(start) or heads.hits(end))
        messages.append((src.label, dst.label))
        regions.append(path.rect)
    if len(messages) < 2 or not headed:
        return None  # a table: header cells, column rules below them, row rules across
    used = [n for n in nodes if n.label in {line.label for line in lifelines}]
    region = bounding_rect([n.rect for n in used] + regions)
    return VectorDiagram(used, list(dict.fromkeys(messages)), [], region,
                         [line.label for line in lifelines], diagram_type="sequence")
