"""Pictures that show no diagram of the audited graph, whatever is drawn: a drawing whose
nodes are all placed at one spot (labels over one another) shows no flow (vision.stacked),
the rubric's "no diagram", capped at 2."""

from __future__ import annotations

from pathlib import Path

from reportlab.pdfgen import canvas

from automaton_auditor.forensics.vision.inspector import find_diagrams, vision_findings
from automaton_auditor.forensics.vision.vector import TextRect, stacked_labels
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence

from .test_vision_pdf import _arrow, _box, _draw_vector_courtroom, _pdf

NODES = ["START", "ContextBuilder", "RepoInvestigator", "DocAnalyst", "EvidenceAggregator",
         "Prosecutor", "Defense", "TechLead", "ChiefJustice"]


def _draw_stacked_courtroom(c: canvas.Canvas) -> None:
    """The courtroom's nodes drawn at (nearly) one spot, arrows between them going nowhere
    a reader can follow: a TikZ figure whose nodes lost their positions."""
    c.setFont("Helvetica", 8)
    for shift, label in enumerate(NODES):
        _box(c, 250 + 2 * (shift % 3), 600 + shift % 2, label)
    for shift in range(7):
        _arrow(c, 260 + 10 * shift, 640, 262 + 10 * shift, 622)
    c.drawString(72, 560, "Figure 1: StateGraph topology with two parallel stages.")


def _score(path: Path) -> int:
    diagrams, _ = find_diagrams(path)
    dim = load_rubric().dimension("swarm_visual")
    evidence = [Evidence.from_finding(f, "vision", dim.id) for f in vision_findings(diagrams)]
    opinions = [offline_opinion(judge, dim, evidence) for judge in JUDGES]
    return decide(dim, opinions, evidence, load_rubric()).final_score


def test_a_drawing_with_every_node_at_one_spot_shows_no_flow(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "s.pdf", [_draw_stacked_courtroom])
    diagrams, _ = find_diagrams(path)
    (drawing,) = [d for d in diagrams if d.kind == "vector"]
    assert drawing.data["stacked_runs"] >= 4
    assert drawing.data["stacked_runs"] >= 0.5 * drawing.data["drawing_runs"]
    stacked = {f.facet: f for f in vision_findings(diagrams)}["vision.stacked"]
    assert stacked.found and stacked.pattern == "failure" and stacked.location == "report p.1"
    assert "'START' at [" in (stacked.content or "")  # the labels quoted with their bounds
    assert _score(path) <= 2


def test_a_legible_drawing_beside_it_keeps_the_diagram(tmp_path: Path) -> None:
    """One legible drawing in the report may show the flow: no stacked fact; nor for the
    legible drawing alone (its labels lie apart)."""
    both, _ = find_diagrams(_pdf(tmp_path / "b.pdf", [_draw_stacked_courtroom,
                                                     _draw_vector_courtroom]))
    assert "vision.stacked" not in {f.facet for f in vision_findings(both)}
    alone, _ = find_diagrams(_pdf(tmp_path / "a.pdf", [_draw_vector_courtroom]))
    assert all("stacked_runs" not in d.data for d in alone)
    assert "vision.stacked" not in {f.facet for f in vision_findings(alone)}


def test_the_same_text_twice_at_one_spot_is_no_stack() -> None:
    """A font's fake bold (the word printed twice, a fraction of a point apart) is one label;
    two different labels over one another are a stack; labels side by side are not."""
    bold = [TextRect("Judges", (10, 10, 40, 20)), TextRect("Judges", (10.3, 10, 40.3, 20))]
    assert stacked_labels(bold, (0, 0, 100, 100)) == []
    over = [TextRect("Judges", (10, 10, 40, 20)), TextRect("Defense", (12, 11, 44, 21))]
    assert len(stacked_labels(over, (0, 0, 100, 100))) == 1
    apart = [TextRect("Judges", (10, 10, 40, 20)), TextRect("Defense", (42, 10, 70, 20))]
    assert stacked_labels(apart, (0, 0, 100, 100)) == []

