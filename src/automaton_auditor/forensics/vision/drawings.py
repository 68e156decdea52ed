"""Vector diagrams on a PDF page: the flowchart and sequence readers composed into one entry."""

from __future__ import annotations

from automaton_auditor.forensics.vision.flowchart import labelled_nodes, read_flowcharts
from automaton_auditor.forensics.vision.sequence import read_sequence
from automaton_auditor.forensics.vision.vector import (
    MAX_DIAGRAMS_PER_PAGE,
    PathInfo,
    TextRect,
    VectorDiagram,
    inside,
    reading_sorted,
    text_unit,
)


def read_vector_diagrams(paths: list[PathInfo], texts: list[TextRect],
                         page_size: tuple[float, float]) -> list[VectorDiagram]:
    """The diagrams drawn on a page, top first: each connected group of at least three
    labelled nodes and two edges (tables, frames and rules give none), and a sequence
    diagram's lifelines and messages."""
    unit = text_unit(texts)
    nodes = labelled_nodes(paths, texts, page_size, unit)
    found: list[VectorDiagram | None] = [*read_flowcharts(paths, nodes, unit),
                                         read_sequence(paths, nodes, unit)]
    # At most a few figures per page, the largest first: each one is rendered.
    kept = sorted((d for d in found if d is not None), key=lambda d: -len(d.edges))
    kept = sorted(kept[:MAX_DIAGRAMS_PER_PAGE], key=lambda d: (-d.region[3], d.region[0]))
    ordered = reading_sorted([t for t in texts if len(t.text) <= 80])
    for diagram in kept:
        diagram.labels = [t.text for t in ordered if inside(t.centre, diagram.region, 4.0)]
    return kept
