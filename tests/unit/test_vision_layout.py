"""Pictures that show no diagram of the audited graph, whatever is drawn: a drawing whose
nodes are all placed at one spot (labels over one another) shows no flow (vision.stacked);
pictures in a report that never names the graph are not introduced as it
(vision.off_subject). Both are the rubric's "no diagram", capped at 2."""

from __future__ import annotations

from pathlib import Path

from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from automaton_auditor.forensics.vision.inspector import find_diagrams, vision_findings
from automaton_auditor.forensics.vision.vector import TextRect, stacked_labels
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence

from .test_vision_pdf import _arrow, _box, _diagram_image, _draw_vector_courtroom, _pdf

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


OTHER_PROJECT = ("The governance layer wraps the editor's tool handler with a pre-hook and a "
                 "post-hook enforcement pipeline. Every destructive tool invocation passes "
                 "through scope validation, optimistic locking and human authorization before "
                 "it runs, and its outcome is serialised to an append-only ledger. ")


def _picture_page(prose: str) -> object:
    def draw(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 9)
        y = 800
        for start in range(0, len(prose), 95):
            c.drawString(40, y, prose[start:start + 95])
            y -= 11
        c.drawImage(ImageReader(_diagram_image()), 100, 60, 400, 300)
    return draw


def test_pictures_in_a_report_that_never_names_the_graph_show_no_diagram_of_it(
        tmp_path: Path) -> None:
    """A report about another system (its whole text never names a detective, a judge, an
    aggregator, the Chief Justice or the graph) holds pictures no reader is told are the
    audited graph: vision.off_subject, capped at 2. One mention of the graph's parts, or a
    report with next to no text (a scan), gives no such fact."""
    other = _pdf(tmp_path / "o.pdf", [_picture_page(OTHER_PROJECT * 12)] * 2)
    diagrams, _ = find_diagrams(other)
    assert diagrams and diagrams[0].data["subject_mentions"] == 0
    fact = {f.facet: f for f in vision_findings(diagrams)}["vision.off_subject"]
    assert fact.found and fact.pattern == "failure" and fact.data["report_chars"] >= 2000
    assert _score(other) <= 2
    named = OTHER_PROJECT * 12 + "The detectives run in parallel before the judges."
    ours, _ = find_diagrams(_pdf(tmp_path / "n.pdf", [_picture_page(named)] * 2))
    assert "vision.off_subject" not in {f.facet for f in vision_findings(ours)}
    short, _ = find_diagrams(_pdf(tmp_path / "s.pdf", [_picture_page("Figure 1.")]))
    assert "vision.off_subject" not in {f.facet for f in vision_findings(short)}
