"""Flowcharts read from vector drawing operations: labelled outlines are nodes, stroked
connectors whose ends touch two outlines are edges (the arrow head gives the direction, a
dash pattern or a diamond source marks a conditional edge)."""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.flow import connected_pieces, terminal
from automaton_auditor.forensics.vision.vector import (
    ATTACH_TOL,
    HEAD_MAX,
    HEAD_TOL,
    MIN_GAP,
    Grid,
    PathInfo,
    Point,
    Rect,
    TextRect,
    VectorDiagram,
    VectorNode,
    area,
    bounding_rect,
    dist,
    gap,
    reading_sorted,
)

RawEdge = tuple[str, str, bool, Rect]
SIDE_TOL = 0.25  # text heights: a connector this close to an outline's side runs along it


def _is_diamond(path: PathInfo) -> bool:
    # Four corners, none of the sides axis-aligned: a decision node.
    corners = path.points[:4]
    if len(path.points) > 6 or len(corners) < 4:
        return False
    sides = zip(corners, [*corners[1:], corners[0]], strict=False)
    return all(abs(a[0] - b[0]) > 1 and abs(a[1] - b[1]) > 1 for a, b in sides)


def labelled_nodes(paths: list[PathInfo], texts: list[TextRect],
           page_size: tuple[float, float], unit: float) -> list[VectorNode]:
    """Closed outlines holding a short label; each text run goes to the smallest outline
    around it, so group frames only keep their own title."""
    width, height = page_size
    outlines = sorted((p for p in paths if (p.closed or p.filled) and
                       0.6 * unit <= p.rect[2] - p.rect[0] <= 0.75 * width and
                       0.5 * unit <= p.rect[3] - p.rect[1] <= 0.3 * height),
                      key=lambda p: area(p.rect))
    owned: dict[int, list[TextRect]] = {}
    grid = Grid([p.rect for p in outlines], cell=5 * unit)
    for text in texts:
        hits = grid.hits(text.centre)
        if hits:  # outlines are sorted by area: the first hit is the smallest
            owned.setdefault(hits[0], []).append(text)
    nodes = []
    for index, runs in sorted(owned.items()):
        label = " ".join(r.text for r in reading_sorted(runs))
        if len(label) <= 80:
            path = outlines[index]
            nodes.append(VectorNode(terminal(label), path.rect,
                                    _is_diamond(path) or label.rstrip().endswith("?")))
    return nodes


def _along_side(path: PathInfo, node: VectorNode, unit: float) -> bool:
    """A straight, axis-aligned line lying on one of the node outline's sides: the rule of a
    table cell (or a frame), which runs along the cells it touches instead of leaving them."""
    tol = SIDE_TOL * unit
    xs = [p[0] for p in path.points]
    ys = [p[1] for p in path.points]
    left, bottom, right, top = node.rect
    if max(xs) - min(xs) <= tol:  # vertical
        return min(abs(xs[0] - left), abs(xs[0] - right)) <= tol
    if max(ys) - min(ys) <= tol:  # horizontal
        return min(abs(ys[0] - bottom), abs(ys[0] - top)) <= tol
    return False


def _node_at(point: Point, nodes: list[VectorNode], grid: Grid) -> VectorNode | None:
    hits = [nodes[i] for i in grid.hits(point)]
    return min(hits, key=lambda n: area(n.rect)) if hits else None


def _edges(paths: list[PathInfo], nodes: list[VectorNode],
           unit: float) -> list[tuple[str, str, bool, Rect]]:
    """Connectors: stroked open paths whose two ends touch two different nodes, with the
    connector's bounds."""
    node_rects = {n.rect for n in nodes}
    head_paths = [p for p in paths if p.filled and p.rect not in node_rects and
                  max(p.rect[2] - p.rect[0], p.rect[3] - p.rect[1]) <= HEAD_MAX * unit]
    heads = Grid([p.rect for p in head_paths], HEAD_TOL * unit, 5 * unit)
    grid = Grid([n.rect for n in nodes], ATTACH_TOL * unit, 5 * unit)
    edges: list[tuple[str, str, bool, Rect]] = []
    for path in paths:
        if path.rect in node_rects or not path.stroked or path.closed:
            continue
        ends = []
        for point in (path.points[0], path.points[-1]):
            hit = heads.hits(point)
            # Graphviz stops the line where its arrow head starts: the head's tip, the
            # point farthest from the line's end, is what touches the node.
            tip = max(head_paths[hit[0]].points, key=lambda q: dist(q, point)) if hit else point
            ends.append((_node_at(point, nodes, grid) or _node_at(tip, nodes, grid), bool(hit)))
        (src, head_at_start), (dst, head_at_end) = ends
        # Both ends on outlines that touch (a code listing's line stripes) is not an edge.
        # Two boxes of one name (a participant drawn above and below its lifeline) are one.
        # A rule along a cell's side joins the cells of a table, not the nodes of a flow.
        if (not src or not dst or src.label == dst.label
                or gap(src.rect, dst.rect) < MIN_GAP * unit
                or _along_side(path, src, unit) or _along_side(path, dst, unit)):
            continue
        if head_at_start and not head_at_end:
            src, dst = dst, src
        edges.append((src.label, dst.label, path.dashed or src.decision, path.rect))
    return edges


def _components(raw_edges: list[RawEdge]) -> list[list[RawEdge]]:
    """Edges grouped into connected components (in order of first appearance): two
    figures on one page are two diagrams."""
    return connected_pieces(raw_edges, lambda edge: (edge[0], edge[1]))


def _diagram(raw_edges: list[RawEdge], nodes: list[VectorNode]) -> VectorDiagram | None:
    edges = list(dict.fromkeys((s, d) for s, d, _, _ in raw_edges))
    connected = {n for e in edges for n in e}
    if len(connected) < 3 or len(edges) < 2:
        return None
    used = [n for n in nodes if n.label in connected]
    region = bounding_rect([n.rect for n in used] + [r for *_, r in raw_edges])
    conditional = list(dict.fromkeys((s, d) for s, d, c, _ in raw_edges if c))
    return VectorDiagram(used, edges, conditional, region)


def read_flowcharts(paths: list[PathInfo], nodes: list[VectorNode],
                    unit: float) -> list[VectorDiagram]:
    """Every connected group of at least three labelled nodes and two edges."""
    found = [_diagram(group, nodes) for group in _components(_edges(paths, nodes, unit))]
    return [d for d in found if d is not None]
