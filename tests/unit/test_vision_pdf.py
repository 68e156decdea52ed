"""find_diagrams and vision_findings on PDFs built in the test with reportlab."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from automaton_auditor.forensics.vision.inspector import (
    VisionError,
    VisionLimits,
    find_diagrams,
    vision_findings,
)
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence

WIDTH, HEIGHT = A4


def _diagram_image(size: tuple[int, int] = (400, 300), alpha: bool = False) -> Image.Image:
    """A box-and-arrow picture; with `alpha` its background is transparent."""
    image = Image.new("RGBA" if alpha else "RGB", size,
                      (0, 0, 0, 0) if alpha else (255, 255, 255))
    draw = ImageDraw.Draw(image)
    for x in (20, 150, 280):
        draw.rectangle((x, 200, x + 100, 250), outline=(30, 30, 200, 255), width=3,
                       fill=(220, 220, 255, 255))
        draw.line((200, 80, x + 50, 200), fill=(0, 0, 0, 255), width=3)
    draw.rectangle((150, 30, 250, 80), outline=(200, 30, 30, 255), width=3)
    return image


def _box(c: canvas.Canvas, x: float, y: float, label: str, w: float = 90) -> None:
    c.rect(x, y, w, 20, stroke=1, fill=0)
    c.drawString(x + 6, y + 6, label)


def _arrow(c: canvas.Canvas, x1: float, y1: float, x2: float, y2: float) -> None:
    c.line(x1, y1, x2, y2)
    head = c.beginPath()
    head.moveTo(x2, y2)
    head.lineTo(x2 - 3, y2 + 5)
    head.lineTo(x2 + 3, y2 + 5)
    head.close()
    c.drawPath(head, stroke=0, fill=1)


def _draw_vector_courtroom(c: canvas.Canvas) -> None:
    """START -> ctx -> {repo, doc, vision} -> agg -> {prosecutor, defense, techlead} -> cj."""
    c.setFont("Helvetica", 8)
    c.drawString(72, 780, "Figure 2: StateGraph")
    _box(c, 250, 720, "context_builder")
    row1 = [(100, "RepoInvestigator"), (250, "DocAnalyst"), (400, "VisionInspector")]
    row2 = [(100, "Prosecutor"), (250, "Defense"), (400, "TechLead")]
    for x, label in row1:
        _box(c, x, 640, label)
        _arrow(c, 295, 720, x + 45, 661)
        _arrow(c, x + 45, 640, 295, 581)
    _box(c, 250, 560, "EvidenceAggregator")
    for x, label in row2:
        _box(c, x, 480, label)
        _arrow(c, 295, 560, x + 45, 501)
        _arrow(c, x + 45, 480, 295, 421)
    _box(c, 250, 400, "ChiefJustice")


def _pdf(path: Path, pages: list[object]) -> Path:
    c = canvas.Canvas(str(path), pagesize=A4)
    for draw in pages:
        draw(c)  # type: ignore[operator]
        c.showPage()
    c.save()
    return path


def _prose(c: canvas.Canvas, text: str = "Plain prose about the auditor.") -> None:
    c.setFont("Helvetica", 10)
    y = 780
    for line in text.split("\n"):
        c.drawString(72, y, line)
        y -= 14


def test_raster_diagram_with_soft_mask_comes_out_on_white(tmp_path: Path) -> None:
    def page(c: canvas.Canvas) -> None:
        _prose(c, "Section 3: Architecture")
        c.drawImage(ImageReader(_diagram_image(alpha=True)), 100, 400, 400, 300, mask="auto")
        c.drawString(100, 380, "Figure 1: the detectives fan out")
        c.drawImage(ImageReader(Image.new("RGB", (20, 20), "red")), 50, 50, 20, 20)
        c.drawImage(ImageReader(Image.new("RGB", (600, 4), "black")), 50, 100, 500, 3)

    diagrams, images = find_diagrams(_pdf(tmp_path / "r.pdf", [page]))
    assert [(d.page, d.kind, d.width, d.height) for d in diagrams] == [(1, "raster", 400, 300)]
    assert "Figure 1" in diagrams[0].nearby_text
    shown = Image.open(io.BytesIO(images[0])).convert("L")
    assert shown.getpixel((5, 5)) > 240  # transparent background composited on white
    assert shown.getpixel((21, 225)) < 120  # the box outline is still there
    classification = vision_findings(diagrams)[-1]
    assert classification.facet == "vision.flow.classification" and not classification.found
    assert classification.content == (
        "p.1 raster: unknown (none) [Figure 1: the detectives fan out]")


def test_vector_diagram_nodes_edges_and_direction(tmp_path: Path) -> None:
    diagrams, images = find_diagrams(_pdf(tmp_path / "v.pdf", [_draw_vector_courtroom]))
    assert len(diagrams) == 1
    facts = diagrams[0]
    assert facts.kind == "vector" and facts.data["read_from"] == "drawing operations"
    assert {"context_builder", "DocAnalyst", "ChiefJustice"} <= set(facts.labels)
    assert ("context_builder", "DocAnalyst") in facts.edges
    assert ("TechLead", "ChiefJustice") in facts.edges
    assert ("ChiefJustice", "TechLead") not in facts.edges
    assert Image.open(io.BytesIO(images[0])).size[0] > 100
    by_facet = {f.facet: f for f in vision_findings(diagrams)}
    for part in ("parallel_detectives", "aggregation", "parallel_judges", "synthesis"):
        assert by_facet[f"vision.flow.{part}"].found, part
        assert by_facet[f"vision.flow.{part}"].location == "report p.1"
    assert not by_facet["vision.flow.linear"].found
    full = by_facet["vision.flow.full_split"]
    assert full.found and full.confidence == 0.85
    assert (full.content or "").startswith("context_builder -> {DocAnalyst, RepoInvestigator")


def test_vector_linear_pipeline_is_flagged(tmp_path: Path) -> None:
    def page(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 8)
        names = ["RepoInvestigator", "DocAnalyst", "Prosecutor", "ChiefJustice"]
        for i, name in enumerate(names):
            _box(c, 250, 700 - 80 * i, name)
            if i:
                _arrow(c, 295, 700 - 80 * (i - 1), 295, 721 - 80 * i)

    diagrams, _ = find_diagrams(_pdf(tmp_path / "lin.pdf", [page]))
    assert diagrams[0].edges == [("RepoInvestigator", "DocAnalyst"), ("DocAnalyst", "Prosecutor"),
                                 ("Prosecutor", "ChiefJustice")]
    by_facet = {f.facet: f for f in vision_findings(diagrams)}
    assert by_facet["vision.flow.linear"].found
    assert by_facet["vision.flow.linear"].content == (
        "RepoInvestigator -> DocAnalyst -> Prosecutor -> ChiefJustice")
    assert not by_facet["vision.flow.parallel_detectives"].found
    assert not by_facet["vision.flow.full_split"].found
    assert by_facet["vision.flow.full_split"].location == "report p.1"


def test_tables_and_text_are_not_diagrams(tmp_path: Path) -> None:
    def table(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 9)
        for row in range(8):
            y = 700 - 20 * row
            c.line(72, y, 520, y)
            c.drawString(80, y + 6, f"row {row}")
            c.drawString(300, y + 6, f"value {row}")
        for x in (72, 290, 520):
            c.line(x, 560, x, 700)

    diagrams, _ = find_diagrams(_pdf(tmp_path / "t.pdf", [table, _prose]))
    assert diagrams == []
    findings = vision_findings(diagrams)
    assert findings[0].facet == "vision.extract" and not findings[0].found
    assert all(not f.found for f in findings)
    assert findings[0].location == "report"


def test_table_with_filled_cells_is_not_a_flowchart(tmp_path: Path) -> None:
    """Cells painted as filled outlines with short labels, ruled by lines along their sides
    (how word processors export tables): the rules join cells, they are not connectors."""
    def table(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 10)
        c.setFillColorRGB(1, 1, 1)
        rows = [(600, 650, ["Criterion", "Score", "Evidence"]),
                (300, 600, ["", "", ""]),
                (80, 300, ["Forensic Accuracy", "4/5", "graph.py"])]
        for bottom, top, labels in rows:
            for col in range(3):
                c.rect(72 + 150 * col, bottom, 150, top - bottom, stroke=0, fill=1)
        c.setFillColorRGB(0, 0, 0)
        for bottom, top, labels in rows:
            for col, label in enumerate(labels):
                c.drawString(80 + 150 * col, top - 20, label)
        for x in (73, 222, 372, 521):
            c.line(x, 80, x, 650)
        for y in (649, 599, 299, 81):
            c.line(72, y, 522, y)

    diagrams, _ = find_diagrams(_pdf(tmp_path / "t.pdf", [table]))
    assert [d for d in diagrams if d.edges] == []


def test_mermaid_block_in_the_text_layer(tmp_path: Path) -> None:
    source = ("Architecture as code:\ngraph TD\n  S[START] --> R[RepoInvestigator]\n"
              "  S --> D[DocAnalyst]\n  R --> A[EvidenceAggregator]\n  D --> A\n"
              "  A --> P[Prosecutor]\n  A --> T[TechLead]\n  P --> C[ChiefJustice]\n"
              "  T --> C\n\nEnd of section.")
    pdf = _pdf(tmp_path / "m.pdf", [_prose, lambda c: _prose(c, source)])
    diagrams, images = find_diagrams(pdf)
    assert [(d.page, d.kind) for d in diagrams] == [(2, "mermaid")]
    assert images == [b""]
    assert ("START", "RepoInvestigator") in diagrams[0].edges
    findings = {f.facet: f for f in vision_findings(diagrams)}
    assert findings["vision.flow.parallel_judges"].found
    assert findings["vision.flow.parallel_judges"].content == (
        "EvidenceAggregator -> {Prosecutor, TechLead}")


def test_mermaid_source_alone_is_not_a_drawn_diagram(tmp_path: Path) -> None:
    """Mermaid source printed as text, with no picture or drawing anywhere: a success-pattern
    fact not found (vision.drawn): the rubric's "no diagram present", which caps the
    criterion at 2 however right the flow it spells out (full marks without the fact); a
    report that also draws its diagram gets no such fact."""
    source = ("graph TD\n  S[START] --> R[RepoInvestigator]\n  S --> D[DocAnalyst]\n"
              "  R --> A[EvidenceAggregator]\n  D --> A\n  A --> P[Prosecutor]\n"
              "  A --> T[TechLead]\n  P --> C[ChiefJustice]\n  T --> C\n\nEnd.")
    text_only, _ = find_diagrams(_pdf(tmp_path / "m.pdf", [lambda c: _prose(c, source)]))
    drawn = {f.facet: f for f in vision_findings(text_only)}["vision.drawn"]
    assert not drawn.found and drawn.pattern == "success" and drawn.location == "report p.1"
    dim = load_rubric().dimension("swarm_visual")
    evidence = [Evidence.from_finding(f, "vision", dim.id)
                for f in vision_findings(text_only)]
    opinions = [offline_opinion(judge, dim, evidence) for judge in JUDGES]
    assert decide(dim, opinions, evidence, load_rubric()).final_score == 2
    rest = [e for e in evidence if e.facet != "vision.drawn"]
    rest_opinions = [offline_opinion(judge, dim, rest) for judge in JUDGES]
    assert decide(dim, rest_opinions, rest, load_rubric()).final_score == 5
    both, _ = find_diagrams(_pdf(tmp_path / "b.pdf", [_draw_vector_courtroom,
                                                     lambda c: _prose(c, source)]))
    assert "vision.drawn" not in {f.facet for f in vision_findings(both)}


@pytest.mark.parametrize("hide", ["white", "tiny", "white box"])
def test_a_hidden_mermaid_block_is_no_diagram(tmp_path: Path, hide: str) -> None:
    """Mermaid a reader cannot see (white, 1-point, under a white box) earns no diagram; the
    visible prose on the same page still reads."""
    source = ("graph TD\n  S[START] --> R[RepoInvestigator]\n  S --> D[DocAnalyst]\n"
              "  R --> A[EvidenceAggregator]\n  D --> A\n  A --> P[Prosecutor]\n"
              "  A --> T[TechLead]\n  P --> C[ChiefJustice]\n  T --> C")

    def page(c: canvas.Canvas) -> None:
        _prose(c, "Architecture, in prose only.")
        c.setFillColorRGB(1, 1, 1) if hide == "white" else None
        c.setFont("Helvetica", 1 if hide == "tiny" else 10)
        text = c.beginText(72, 600)
        for line in source.split("\n"):
            text.textLine(line)
        c.drawText(text)
        if hide == "white box":
            c.setFillColorRGB(1, 1, 1)
            c.rect(60, 440, 400, 175, stroke=0, fill=1)

    diagrams, _ = find_diagrams(_pdf(tmp_path / "h.pdf", [page]))
    assert [d.kind for d in diagrams] == []


def test_scanned_pages_are_scored_for_graphics(tmp_path: Path) -> None:
    def scan(image: Image.Image) -> object:
        return lambda c: c.drawImage(ImageReader(image), 0, 0, WIDTH, HEIGHT)

    text_scan = Image.new("RGB", (300, 420), "white")
    ImageDraw.Draw(text_scan).text((20, 20), "Only text here", fill="black")
    diagram_scan = _diagram_image((300, 420))
    diagrams, _ = find_diagrams(_pdf(tmp_path / "s.pdf", [scan(text_scan), scan(diagram_scan)]))
    assert [(d.page, d.kind, d.data["likely_diagram"]) for d in diagrams] == [
        (1, "scan", False), (2, "scan", True)]
    extract = vision_findings(diagrams)[0]
    assert extract.found and extract.location == "report p.2"
    assert "1 look graphic" in extract.rationale


def test_limits_cap_candidates_and_keep_readable_ones(tmp_path: Path) -> None:
    def raster(c: canvas.Canvas) -> None:
        c.drawImage(ImageReader(_diagram_image()), 100, 400, 200, 150)

    pages = [raster, raster, _draw_vector_courtroom]
    # The same picture twice is one candidate, its repeat noted.
    diagrams, _ = find_diagrams(_pdf(tmp_path / "c.pdf", pages))
    assert [(d.page, d.kind) for d in diagrams] == [(1, "raster"), (3, "vector")]
    assert diagrams[0].data["also_on_pages"] == [2]
    capped, images = find_diagrams(tmp_path / "c.pdf", VisionLimits(max_diagrams=1))
    assert [d.kind for d in capped] == ["vector"] and len(images) == 1
    assert capped[0].data["candidates_total"] == 2
    assert find_diagrams(tmp_path / "c.pdf", VisionLimits(max_pages=1))[0][0].page == 1


def test_hostile_input_raises_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4\n garbage \x00\x01")
    with pytest.raises(VisionError) as err:
        find_diagrams(bad)
    assert "\n" not in str(err.value) and "bad.pdf" in str(err.value)


def test_same_pdf_gives_identical_facts(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "d.pdf", [_draw_vector_courtroom])
    first, second = find_diagrams(path), find_diagrams(path)
    assert [d.model_dump() for d in first[0]] == [d.model_dump() for d in second[0]]
    assert first[1] == second[1]
    assert vision_findings(first[0]) == vision_findings(second[0])


def _curve(c: canvas.Canvas, x1: float, y1: float, x2: float, y2: float,
           dashed: bool = False) -> None:
    """A Bezier connector (as Mermaid and Graphviz draw them) with an arrow head."""
    if dashed:
        c.setDash(3, 2)
    path = c.beginPath()
    path.moveTo(x1, y1)
    path.curveTo(x1, (y1 + y2) / 2, x2, (y1 + y2) / 2, x2, y2 + 5)
    c.drawPath(path, stroke=1, fill=0)
    c.setDash()
    head = c.beginPath()
    head.moveTo(x2, y2)
    head.lineTo(x2 - 3, y2 + 5)
    head.lineTo(x2 + 3, y2 + 5)
    head.close()
    c.drawPath(head, stroke=0, fill=1)


def test_curved_dashed_connectors_and_decision_diamonds(tmp_path: Path) -> None:
    def page(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 8)
        c.roundRect(250, 720, 90, 20, 5)
        c.drawString(256, 726, "aggregator")
        diamond = c.beginPath()
        for x, y in ((295, 680), (335, 660), (295, 640), (255, 660)):
            (diamond.lineTo if x != 295 or y != 680 else diamond.moveTo)(x, y)
        diamond.close()
        c.drawPath(diamond, stroke=1, fill=0)
        c.drawString(280, 657, "ok?")
        _box(c, 150, 560, "Prosecutor")
        _box(c, 350, 560, "ErrorHandler")
        _curve(c, 295, 720, 295, 680)
        _curve(c, 295, 640, 195, 580, dashed=True)
        _curve(c, 295, 640, 395, 580, dashed=True)

    (facts,), _ = find_diagrams(_pdf(tmp_path / "cv.pdf", [page]))
    assert set(facts.edges) == {("aggregator", "ok?"), ("ok?", "Prosecutor"),
                                ("ok?", "ErrorHandler")}
    assert facts.data["decisions"] == ["ok?"]
    assert sorted(map(tuple, facts.data["conditional_edges"])) == [("ok?", "ErrorHandler"),
                                                                   ("ok?", "Prosecutor")]
    by_facet = {f.facet: f for f in vision_findings([facts])}
    assert by_facet["vision.flow.linear"].found  # a yes/no branch is not parallelism


def test_huge_page_renders_within_the_size_cap(tmp_path: Path) -> None:
    path = tmp_path / "huge.pdf"
    c = canvas.Canvas(str(path), pagesize=(14000, 14000))
    c.scale(20, 20)
    _draw_vector_courtroom(c)
    c.showPage()
    c.save()
    (facts,), (png,) = find_diagrams(path, VisionLimits(max_image_side=512))
    assert facts.kind == "vector" and len(facts.edges) == 12  # scale-free tolerances
    assert max(Image.open(io.BytesIO(png)).size) == 512


def test_graphviz_style_lines_stop_at_the_arrow_head(tmp_path: Path) -> None:
    """Graphviz ends an edge's line where its (stroked and filled) arrow head begins, a
    whole head-length before the node; the head's tip is what touches the node."""
    def page(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 10)
        for y, label in ((700, "__start__"), (640, "Evidence Aggregator"), (580, "Judge")):
            c.ellipse(200, y, 330, y + 24)
            c.drawString(215, y + 8, label)
        for top in (700, 640):
            c.line(265, top, 265, top - 26)  # stops 10 points short of the next node
            head = c.beginPath()
            head.moveTo(261, top - 26)
            head.lineTo(265, top - 36)
            head.lineTo(269, top - 26)
            head.close()
            c.drawPath(head, stroke=1, fill=1)

    (facts,), _ = find_diagrams(_pdf(tmp_path / "gv.pdf", [page]))
    assert facts.edges == [("START", "Evidence Aggregator"), ("Evidence Aggregator", "Judge")]


def test_two_figures_on_one_page_are_two_diagrams(tmp_path: Path) -> None:
    def page(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 8)
        for x, names in ((80, ["Alpha", "Beta", "Gamma"]), (380, ["Delta", "Epsilon", "Zeta"])):
            top = 700 if x == 80 else 500
            for i, name in enumerate(names):
                _box(c, x, top - 80 * i, name)
                if i:
                    _arrow(c, x + 45, top - 80 * (i - 1), x + 45, top + 21 - 80 * i)

    diagrams, images = find_diagrams(_pdf(tmp_path / "two.pdf", [page]))
    assert [d.edges for d in diagrams] == [[("Alpha", "Beta"), ("Beta", "Gamma")],
                                           [("Delta", "Epsilon"), ("Epsilon", "Zeta")]]
    assert all(images)


def test_ocr_layer_words_are_a_scans_labels(tmp_path: Path) -> None:
    def page(c: canvas.Canvas) -> None:
        c.drawImage(ImageReader(_diagram_image((300, 420))), 0, 0, WIDTH, HEIGHT)
        text = c.beginText(120, 500)
        text.setTextRenderMode(3)  # invisible: an OCR layer
        text.setFont("Helvetica", 12)
        text.textLine("RepoInvestigator")
        c.drawText(text)

    def photo_with_prose(c: canvas.Canvas) -> None:
        _prose(c, "A caption above")
        c.drawImage(ImageReader(_diagram_image()), 60, 300, 480, 480)  # covers the prose

    diagrams, _ = find_diagrams(_pdf(tmp_path / "ocr.pdf", [page, photo_with_prose]))
    assert [(d.kind, d.labels) for d in diagrams] == [("scan", ["RepoInvestigator"]),
                                                      ("raster", [])]
    assert diagrams[1].nearby_text.startswith("A caption above")


def test_figure_inside_a_form_xobject_is_read_in_page_space(tmp_path: Path) -> None:
    """LaTeX's \\includegraphics of a PDF figure draws it as a scaled form XObject: pdfium
    gives the form's paths in form space, the text layer in page space."""
    path = tmp_path / "form.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    c.beginForm("figure")
    _draw_vector_courtroom(c)
    c.drawImage(ImageReader(_diagram_image()), 380, 250, 150, 100)
    c.drawImage(ImageReader(_diagram_image((200, 100))), 100, -300, 150, 100)  # off the page
    c.endForm()
    c.saveState()
    c.translate(60, -150)
    c.scale(0.8, 0.8)
    c.doForm("figure")
    c.restoreState()
    c.showPage()
    c.save()
    diagrams, _ = find_diagrams(path)
    vector = next(d for d in diagrams if d.kind == "vector")
    assert ("context_builder", "DocAnalyst") in vector.edges and len(vector.edges) == 12
    (raster,) = [d for d in diagrams if d.kind == "raster"]
    assert raster.data["bbox"] == [364.0, 50.0, 484.0, 130.0]


def test_vector_sequence_diagram_messages_between_lifelines(tmp_path: Path) -> None:
    def page(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 8)
        people = {"Orchestrator": 100, "RepoInvestigator": 250, "EvidenceAggregator": 400}
        for name, x in people.items():
            for y in (700, 500):
                _box(c, x, y, name)
            c.setDash(2, 2)
            c.line(x + 45, 700, x + 45, 520)
            c.setDash()
        for y, (src, dst) in ((660, ("Orchestrator", "RepoInvestigator")),
                              (620, ("RepoInvestigator", "EvidenceAggregator")),
                              (580, ("EvidenceAggregator", "Orchestrator"))):
            x1, x2 = people[src] + 45, people[dst] + 45
            tip = x2 - 6 if x2 > x1 else x2 + 6
            c.line(x1, y, tip, y)
            head = c.beginPath()
            head.moveTo(x2, y)
            head.lineTo(tip, y + 3)
            head.lineTo(tip, y - 3)
            head.close()
            c.drawPath(head, stroke=0, fill=1)
            c.drawString(min(x1, x2) + 10, y + 3, "message")

    (facts,), _ = find_diagrams(_pdf(tmp_path / "seq.pdf", [page]))
    assert facts.data["diagram_type"] == "sequence"
    assert facts.edges == [("Orchestrator", "RepoInvestigator"),
                           ("RepoInvestigator", "EvidenceAggregator"),
                           ("EvidenceAggregator", "Orchestrator")]
    classification = {f.facet: f for f in vision_findings([facts])}["vision.flow.classification"]
    assert classification.data["diagrams"][0]["classification"] == "sequence"
    assert {f.facet: f for f in vision_findings([facts])}["vision.flow.linear"].found is False


def test_work_budget_keeps_the_text_layer_of_later_pages(tmp_path: Path) -> None:
    def with_mermaid(c: canvas.Canvas) -> None:
        _draw_vector_courtroom(c)
        _prose(c, "graph LR\n  A[RepoInvestigator] --> B[EvidenceAggregator]\n"
                  "  C[DocAnalyst] --> B")

    path = _pdf(tmp_path / "budget.pdf", [_draw_vector_courtroom, with_mermaid])
    full, _ = find_diagrams(path)
    assert [(d.page, d.kind) for d in full] == [(1, "vector"), (2, "mermaid"), (2, "vector")]
    cheap, _ = find_diagrams(path, VisionLimits(max_work=400))
    assert [(d.page, d.kind) for d in cheap] == [(1, "vector"), (2, "mermaid")]
    assert cheap[0].data["skipped_pages"] == [2]


def _table(c: canvas.Canvas) -> None:
    """A four-column table: filled header cells, column rules below them, row rules across
    (what a Chrome or WeasyPrint export of a Markdown table draws)."""
    c.setFont("Helvetica", 9)
    xs = [72, 190, 300, 410, 520]
    for x, head in zip(xs, ["Component", "Status", "Technology", "Notes"], strict=False):
        c.setFillColorRGB(0.2, 0.5, 0.9)
        c.rect(x, 700, 110, 24, stroke=0, fill=1)
        c.setFillColorRGB(0, 0, 0)
        c.drawString(x + 6, 708, head)
    for x in xs:
        c.line(x, 700, x, 560)
    for y in (660, 620, 580):
        c.line(xs[0], y, xs[-1], y)
        c.drawString(78, y + 14, "Detective Layer")


def test_a_table_grid_is_no_sequence_diagram(tmp_path: Path) -> None:
    # column rules hang below the header cells like lifelines and row rules join them like
    # messages, but no rule carries an arrow head
    diagrams, _ = find_diagrams(_pdf(tmp_path / "table.pdf", [_table]))
    assert [d for d in diagrams if d.data.get("diagram_type") == "sequence"] == []


def test_an_icon_picture_is_no_diagram_candidate(tmp_path: Path) -> None:
    # a 136x128-pixel emoji shown 32 points wide beside the author's name
    def page(c: canvas.Canvas) -> None:
        _prose(c, "Name: A. Author")
        c.drawImage(ImageReader(_diagram_image((136, 128))), 72, 720, 32, 30)
        c.drawImage(ImageReader(_diagram_image()), 100, 300, 300, 220)

    diagrams, _ = find_diagrams(_pdf(tmp_path / "icon.pdf", [page]))
    assert [(d.kind, d.data["bbox"][0]) for d in diagrams] == [("raster", 100.0)]


PROSE_FLOWS = ("Detective layer:\n"
               "START → [RepoInvestigator || DocAnalyst || VisionInspector] → EvidenceAggregator\n"
               "Judicial layer:\n"
               "EvidenceAggregator → [Prosecutor || Defense || TechLead] → ChiefJustice\n"
               "Project layout:\n├── src/graph.py\n└── src/state.py")
BOX_ART = ("+--------------+\n|    START     |\n+--------------+\n       |\n       v\n"
           "+------------------+\n| RepoInvestigator |\n+------------------+")


def test_arrow_chains_in_the_prose_are_no_diagram(tmp_path: Path) -> None:
    """Flows written only as arrow chains in sentences or list items (a file tree beside them
    is no drawing): the rubric's "no diagram", capped at 2 whatever they show; a drawing made
    of characters, or a picture, is a diagram and lifts the cap."""
    prose, _ = find_diagrams(_pdf(tmp_path / "p.pdf", [lambda c: _prose(c, PROSE_FLOWS)]))
    facts = {f.facet: f for f in vision_findings(prose)}
    assert facts["vision.flow.parallel_judges"].found  # what the chains say is still read
    only = facts["vision.prose_only"]
    assert only.found and only.pattern == "failure" and only.data["pages"] == [1]
    dim = load_rubric().dimension("swarm_visual")
    evidence = [Evidence.from_finding(f, "vision", dim.id) for f in vision_findings(prose)]
    opinions = [offline_opinion(judge, dim, evidence) for judge in JUDGES]
    assert decide(dim, opinions, evidence, load_rubric()).final_score <= 2
    art, _ = find_diagrams(_pdf(tmp_path / "a.pdf", [lambda c: _prose(c, PROSE_FLOWS),
                                                     lambda c: _prose(c, BOX_ART)]))
    assert "vision.prose_only" not in {f.facet for f in vision_findings(art)}
    drawn, _ = find_diagrams(_pdf(tmp_path / "d.pdf", [lambda c: _prose(c, PROSE_FLOWS),
                                                       _draw_vector_courtroom]))
    assert "vision.prose_only" not in {f.facet for f in vision_findings(drawn)}
