"""Whether a drawn diagram can be read at all: a vector drawing whose labels lie on one
another (every node placed at one spot, as a TikZ or Graphviz export without positions
gives) shows no flow, whatever its caption says."""

from __future__ import annotations

from automaton_auditor.state import DiagramFacts, Finding

STACKED_MIN_RUNS = 4  # labels on one another before a drawing counts as stacked
STACKED_MIN_SHARE = 0.5  # share of the drawing's labels that lie on another one
_TEXT_KINDS = ("arrow",)  # flows written in the prose: no drawing, read or not


def is_stacked(facts: DiagramFacts) -> bool:
    """A vector drawing most of whose labels (at least `STACKED_MIN_SHARE`, and
    `STACKED_MIN_RUNS` of them) are drawn over another label (`candidates._stacking`)."""
    stacked = facts.data.get("stacked_runs")
    runs = facts.data.get("drawing_runs")
    if facts.kind != "vector" or not isinstance(stacked, int) or not isinstance(runs, int):
        return False
    return stacked >= STACKED_MIN_RUNS and stacked >= STACKED_MIN_SHARE * max(runs, 1)


def _quote(facts: DiagramFacts) -> str:
    pairs = facts.data.get("stacked_labels", [])[:4]
    shown = "; ".join(f"'{a}' at {box_a} over '{b}' at {box_b}" for a, box_a, b, box_b in pairs)
    return f"p.{facts.page}: {shown}"


def stacked_finding(diagrams: list[DiagramFacts]) -> Finding | None:
    """The rubric's "no diagram" in effect: every drawing of the report (all candidates but
    arrow chains in the prose) is a vector drawing whose labels are stacked on one another,
    so no node can be told apart and no edge followed. A failure-pattern fact, quoting the
    overlapping labels and their bounds (PDF points); None when any picture, diagram source
    or legible drawing remains (it may show the flow)."""
    drawn = [d for d in diagrams if d.kind not in _TEXT_KINDS]
    if not drawn or not all(is_stacked(d) for d in drawn):
        return None
    counts = ", ".join(f"p.{d.page}: {d.data['stacked_runs']} of {d.data['drawing_runs']}"
                       for d in drawn)
    return Finding(
        facet="vision.stacked", goal="The report's diagrams are drawn with their nodes "
        "stacked on one another, so no flow can be read", found=True, pattern="failure",
        content="\n".join(_quote(d) for d in drawn)[:2000],
        location=f"report p.{drawn[0].page}", confidence=0.8,
        rationale=f"Every drawing of the report lays most of its labels over one another "
                  f"(labels overlapping another label: {counts}): nodes placed at one spot, "
                  "no edge or parallel branch can be followed.",
        data={"pages": sorted({d.page for d in drawn}),
              "stacked": [[d.page, d.data["stacked_runs"], d.data["drawing_runs"]]
                          for d in drawn]})
