"""Diagram candidates in a PDF, read with pypdfium2 (no docling, no model).

Four sources, each turned into a `DiagramFacts` (and PNG bytes for the ones a vision model
can look at):

- raster images, decoded by pdfium's renderer so ICC-based and soft-masked images (which
  docling-parse cannot decode) come out right; decorative rules and tiny bitmaps skipped;
- scanned pages (one image covering the page, no text layer), scored for how graphic they
  look so the likely diagram pages stand out;
- vector drawings, read back from the drawing operations (`vision_geometry`) and the region
  rendered at `render_dpi`;
- diagram source in the text layer: Mermaid, DOT, character drawings and arrow chains
  (`diagram_parse`, `diagrams.trees`, `diagram_arrows`).
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]
from PIL import Image

from automaton_auditor.forensics.diagrams.arrows import parse_arrows, text_art
from automaton_auditor.forensics.diagrams.flow import ParsedFlow
from automaton_auditor.forensics.diagrams.pagebreak import join_broken_drawings, running_test
from automaton_auditor.forensics.diagrams.parse import MAX_TEXT_CHARS, parse_dot, parse_mermaid
from automaton_auditor.forensics.diagrams.trees import parse_char_drawings
from automaton_auditor.forensics.pdf.hidden import visible_page_text
from automaton_auditor.forensics.vision import vector as geo
from automaton_auditor.forensics.vision.drawings import read_vector_diagrams
from automaton_auditor.forensics.vision.labels import split_labels
from automaton_auditor.settings import default
from automaton_auditor.state import DiagramFacts

log = logging.getLogger(__name__)
NEARBY_CHARS = 600
SCAN_COVERAGE = 0.75  # an image covering this share of the page, with no text: a scan
GRAPHIC_SCORE_MIN = 0.03  # share of coloured or dark-filled pixels that marks a drawing
ICON_MAX_PT = 72  # a picture shown smaller than an inch each way is an icon
DRAWING_PATHS_MIN = 6  # connectors/arrow heads that make an unread vector page worth rendering
MAX_RENDER_SIDE = 2400  # pixels, for any rendered region
# A candidate's PNG is made only if the candidate survives the `max_diagrams` cap: rendering
# is the costly part, and a hostile report may hold thousands of candidates.
Render = Callable[[], bytes]
Candidate = tuple[DiagramFacts, Render]
Texts = Callable[[], list[geo.TextRect]]


class VisionError(ValueError):
    """The PDF cannot be opened at all; the one-line message says why."""


@dataclass(frozen=True)
class VisionLimits:
    """Bounds on the work done per report."""

    max_pages: int = default("max_report_pages")
    min_side_px: int = 48
    render_dpi: int = 110
    max_image_side: int = 1024
    max_diagrams: int = default("max_diagrams")
    # Page objects plus characters examined for pictures and drawings, per report: a hostile
    # report of huge pages keeps only its text layer past this (a 44-page report uses ~90k).
    max_work: int = 2_000_000


@dataclass
class WorkBudget:
    """What is left of `VisionLimits.max_work`, and the first page it did not cover."""

    left: int
    exhausted_at: int | None = None

    def take(self, page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, number: int) -> bool:
        """Charge one page (objects + characters, counted by pdfium); False once spent."""
        cost = (max(pdfium_c.FPDFPage_CountObjects(page.raw), 0)
                + max(pdfium_c.FPDFText_CountChars(textpage.raw), 0))
        if self.exhausted_at is not None or cost > self.left:
            self.exhausted_at = self.exhausted_at or number
            return False
        self.left -= cost
        return True


def on_white(image: Image.Image) -> Image.Image:
    """RGB image with any transparency composited on white (a transparent diagram would
    otherwise turn black: black lines on black)."""
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")


def to_png(image: Image.Image, max_side: int) -> bytes:
    """PNG bytes of an image downscaled so its longer side is at most `max_side`."""
    image = image.copy()
    image.thumbnail((max_side, max_side))  # downscale first: compositing is per pixel
    image = on_white(image)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=2)  # speed over size: it is sent once
    return buffer.getvalue()


def graphic_score(image: Image.Image) -> float:
    """Share of pixels that are strongly coloured or dark-filled: near 0 for a page of text,
    well above `GRAPHIC_SCORE_MIN` for a coloured diagram (a cheap, model-free signal)."""
    small = image.copy()
    small.thumbnail((300, 300))
    small = on_white(small)
    pixels = np.asarray(small).astype(np.int16)
    if pixels.size == 0:
        return 0.0
    saturation = pixels.max(axis=2) - pixels.min(axis=2)
    dark = pixels.mean(axis=2) < 90
    return round(float(((saturation > 60) | dark).mean()), 3)


RenderPlan = tuple[tuple[float, float, float, float], float, tuple[int, int]]


def render_plan(page: pdfium.PdfPage, rect: geo.Rect, limits: VisionLimits, *,
                pad: float = 6.0, max_side: float | None = None) -> RenderPlan | None:
    """How to render the visible part of a region (PDF user space): pdfium's crop, the
    scale (`render_dpi`, or `max_side` pixels on the longer side) and the pixel size; None
    when the region lies off the page."""
    box = page.get_cropbox()
    left, bottom = max(rect[0] - pad, box[0]), max(rect[1] - pad, box[1])
    right, top = min(rect[2] + pad, box[2]), min(rect[3] + pad, box[3])
    if right - left < 1 or top - bottom < 1:
        return None
    crop = (left - box[0], bottom - box[1], box[2] - right, box[3] - top)
    if page.get_rotation():  # pdfium crops a rotated page in its rotated frame: keep it all
        crop = (0.0, 0.0, 0.0, 0.0)
    width, height = page.get_size()
    shown_w, shown_h = width - crop[0] - crop[2], height - crop[1] - crop[3]
    shown = max(shown_w, shown_h, 1.0)
    # A hostile page may be kilometres wide: the bitmap never exceeds MAX_RENDER_SIDE.
    scale = limits.render_dpi / 72.0 if max_side is None else max_side / shown
    scale = min(scale, MAX_RENDER_SIDE / shown)
    return crop, scale, (max(round(shown_w * scale), 1), max(round(shown_h * scale), 1))


def _render(page: pdfium.PdfPage, plan: RenderPlan) -> Image.Image:
    crop, scale, _ = plan
    image: Image.Image = page.render(scale=scale, crop=crop).to_pil()
    return image


def _png_later(document: pdfium.PdfDocument, index: int, plan: RenderPlan,
               max_side: int) -> Render:
    """A deferred render: the page is loaded again by index, so no page stays in memory."""
    return lambda: to_png(_render(document[index], plan), max_side)


def _nearby(texts: list[geo.TextRect], rect: geo.Rect, span: float = 70.0) -> str:
    """Text runs just above and just below a region (heading, caption), in reading order."""
    def band(low: float, high: float) -> str:
        runs = [t for t in texts if low <= t.centre[1] <= high]
        return " ".join(" ".join(t.text for t in geo.reading_sorted(runs)).split())

    above, below = band(rect[3], rect[3] + span), band(rect[1] - span, rect[1])
    return f"{above} | {below}"[:NEARBY_CHARS] if above or below else ""


def _labels_in(texts: list[geo.TextRect], rect: geo.Rect) -> list[str]:
    return [t.text for t in geo.reading_sorted(texts)
            if rect[0] <= t.centre[0] <= rect[2] and rect[1] <= t.centre[1] <= rect[3]
            and len(t.text) <= 80][:60]


def _bbox(rect: geo.Rect) -> list[float]:
    return [round(v, 1) for v in rect]


def _image_key(obj: pdfium.PdfImage) -> str:
    """Identity of an embedded picture (its encoded stream), to spot repeats cheaply."""
    digest = hashlib.sha256(repr(obj.get_px_size()).encode())
    digest.update(bytes(obj.get_data(decode_simple=False))[:5_000_000])
    return digest.hexdigest()[:16]


def _raster_candidates(document: pdfium.PdfDocument, index: int, texts: Texts,
                       limits: VisionLimits, *, seen: dict[str, DiagramFacts],
                       ) -> list[Candidate]:
    """Pictures worth a look: the image as the reader sees it is its page region rendered
    by pdfium (ICC colour spaces, soft masks, JBIG2, rotation, transparency over the white
    page), at its own resolution capped to `max_image_side`; it never decodes gigabytes."""
    page, number = document[index], index + 1
    width, height = page.get_size()
    found: list[Candidate] = []
    # Computed on the first picture worth keeping: visible text, and the OCR layer whose words
    # are the picture's labels (other text inside its bounds is the page's, not the image's).
    split = functools.cache(lambda: geo.split_ocr(texts(), geo.invisible_text_boxes(page)))
    for obj, ancestors in geo.page_objects(page, (pdfium_c.FPDF_PAGEOBJ_IMAGE,)):
        if not isinstance(obj, pdfium.PdfImage):
            continue
        rect = geo.rect_to_page(tuple(obj.get_bounds()), ancestors)
        px_w, px_h = obj.get_px_size()
        shown_w, shown_h = rect[2] - rect[0], rect[3] - rect[1]
        # Skip tiny bitmaps (icons, bullets, an emoji drawn as a picture: under an inch on
        # the page, no diagram's labels can be read) and thin strips (decorative rules).
        if min(px_w, px_h) < limits.min_side_px or min(shown_w, shown_h) < 24 \
                or max(shown_w, shown_h) < ICON_MAX_PT:
            continue
        if max(shown_w, shown_h) > 12 * max(min(shown_w, shown_h), 1.0):
            continue
        target = min(max(px_w, px_h, 1), limits.max_image_side)
        plan = render_plan(page, rect, limits, pad=0.0, max_side=target)
        if plan is None:  # drawn off the page: nobody sees it
            continue
        digest = _image_key(obj)
        if digest in seen:  # the same picture repeated (a logo in every header)
            seen[digest].data.setdefault("also_on_pages", []).append(number)
            continue
        # A scan: a page-wide picture on a page without a text layer.
        visible, ocr = split()
        scan = len(visible) <= 2 and (shown_w * shown_h >= SCAN_COVERAGE * width * height
                                    or shown_w >= 0.9 * width)
        data: dict[str, Any] = {"bbox": _bbox(rect), "sha": digest}
        if scan:  # a scan holds text pages and figures alike: flag the graphic ones
            small = render_plan(page, rect, limits, pad=0.0, max_side=300)
            data["graphic_score"] = graphic_score(_render(page, small)) if small else 0.0
            data["likely_diagram"] = data["graphic_score"] >= GRAPHIC_SCORE_MIN
        facts = DiagramFacts(page=number, kind="scan" if scan else "raster", width=px_w,
                             height=px_h, labels=_labels_in(ocr, rect),
                             nearby_text=_nearby(visible, rect), data=data)
        seen[digest] = facts
        found.append((facts, _png_later(document, index, plan, limits.max_image_side)))
    return found


def _stacking(texts: list[geo.TextRect], region: geo.Rect) -> dict[str, Any]:
    """The drawing's labels laid over one another (`vector.stacked_labels`), quoted with
    their bounds, and how many of its text runs they are; empty when none are."""
    pairs = geo.stacked_labels(texts, region)
    if not pairs:
        return {}
    stacked = {id(run) for pair in pairs for run in pair}
    runs = sum(1 for t in texts if geo.inside(t.centre, region) and len(t.text) <= 80)
    return {"stacked_labels": [[a.text, _bbox(a.rect), b.text, _bbox(b.rect)]
                               for a, b in pairs[:8]],
            "stacked_runs": len(stacked), "drawing_runs": runs}


def _vector_facts(document: pdfium.PdfDocument, index: int, texts: list[geo.TextRect],
                  limits: VisionLimits, region: geo.Rect, data: dict[str, Any],
                  diagram: geo.VectorDiagram | None) -> Candidate | None:
    plan = render_plan(document[index], region, limits)
    if plan is None:
        return None
    data = {**data, **_stacking(texts, region)}
    labels = diagram.labels if diagram else _labels_in(texts, region)
    facts = DiagramFacts(page=index + 1, kind="vector", width=plan[2][0], height=plan[2][1],
                         labels=labels, edges=diagram.edges if diagram else [],
                         nearby_text=_nearby(texts, region), data={"bbox": _bbox(region),
                                                                   **data})
    return facts, _png_later(document, index, plan, limits.max_image_side)


def _vector_candidates(document: pdfium.PdfDocument, index: int, lazy_texts: Texts,
                       limits: VisionLimits) -> list[Candidate]:
    """Drawn diagrams read from the drawing operations; failing that, a page region with
    many connector-like paths is still rendered for a vision model (edges unknown)."""
    page = document[index]
    paths = geo.path_infos(page)
    if len(paths) < 4:
        return []
    texts = lazy_texts()
    diagrams = read_vector_diagrams(paths, texts, page.get_size())
    found = [_vector_facts(document, index, texts, limits, d.region, {
        "read_from": "drawing operations", "diagram_type": d.diagram_type,
        "conditional_edges": [list(e) for e in d.conditional],
        "decisions": sorted(n.label for n in d.nodes if n.decision),
        "nodes": [n.label for n in d.nodes]}, d) for d in diagrams]
    drawing = geo.drawing_stats(paths)
    if not diagrams and drawing >= DRAWING_PATHS_MIN:
        region: geo.Rect = (min(p.rect[0] for p in paths), min(p.rect[1] for p in paths),
                            max(p.rect[2] for p in paths), max(p.rect[3] for p in paths))
        found.append(_vector_facts(document, index, texts, limits, region, {
            "drawing_paths": drawing, "read_from": "render only"}, None))
    return [c for c in found if c is not None]


def page_candidates(document: pdfium.PdfDocument, index: int, limits: VisionLimits,
                    seen: dict[str, DiagramFacts],
                    budget: WorkBudget | None = None) -> tuple[list[Candidate], str]:
    """The drawn diagram candidates on one page (0-based `index`), and its text layer;
    only the text layer once the work budget is spent."""
    number = index + 1
    page = document[index]
    textpage = page.get_textpage()
    text = _lines(textpage.get_text_range())
    if budget is not None and not budget.take(page, textpage, number):
        return [], text
    # Text runs cost a pass over every character: only pages with pictures or drawings
    # need them.
    texts: Texts = functools.cache(lambda: geo.text_rects(textpage))
    found: list[Candidate] = []
    # Pictures and drawings fail independently: a broken image keeps the page's drawing.
    for reader in (functools.partial(_raster_candidates, seen=seen), _vector_candidates):
        try:
            found.extend(reader(document, index, texts, limits))
        except Exception:  # a hostile object must not cost the page
            log.debug("page %d: %s failed", number, reader, exc_info=True)
    return found, text


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def visible_text_candidates(document: pdfium.PdfDocument, texts: list[str]) -> list[Candidate]:
    """`text_candidates` of `texts` (one per page), read again with hidden runs blanked on
    the pages where a text diagram starts and the page after (a block may cross the break):
    white, tiny or covered Mermaid is no diagram a reader saw. Only those pages pay for the
    check, and a report without text diagrams is parsed once; a page that cannot be checked
    gives no text."""
    found = text_candidates(texts)
    pages = {facts.page for facts, _render in found}
    if not pages:
        return found
    screened = list(texts)
    for index in sorted({i for p in pages for i in (p - 1, p) if i < len(texts)}):
        try:
            page = document[index]
            textpage = page.get_textpage()
            try:
                raw = textpage.get_text_range()
            finally:
                textpage.close()
            screened[index] = _lines(visible_page_text(page, raw))
        except Exception:  # a hostile page must not end the audit, nor vouch for its text
            screened[index] = ""
    return text_candidates(screened)


def _text_facts(flow: ParsedFlow, page: int, source: str) -> DiagramFacts:
    data: dict[str, Any] = {"diagram_type": flow.diagram_type,
                            "conditional_edges": [list(e) for e in flow.conditional],
                            "decisions": flow.decisions, "source": source[:NEARBY_CHARS],
                            **({"parallel_nodes": flow.parallel} if flow.parallel else {})}
    return DiagramFacts(page=page, kind=flow.kind, labels=flow.labels[:60], edges=flow.edges,
                        nearby_text=" ".join(source.split())[:NEARBY_CHARS], data=data)


def _no_png() -> bytes:
    return b""


def text_candidates(page_texts: list[str]) -> list[Candidate]:
    """Diagrams written as text (Mermaid, DOT, box drawings, arrow chains) in the whole text
    layer, each placed on the page where it starts; a block cut by a page break is one."""
    page_texts = join_broken_drawings(page_texts)
    starts, offset = [], 0
    for text in page_texts:
        starts.append(offset)
        offset += len(text) + 1
    full = "\n".join(page_texts)[:MAX_TEXT_CHARS]

    def page_of(pos: int) -> int:
        return max(i for i, s in enumerate(starts) if s <= pos) + 1

    found: list[Candidate] = []
    blank = list(full)
    blocks = [*parse_mermaid(full, running_test(page_texts)), *parse_dot(full)]
    for start, end, flow in [*blocks, *parse_char_drawings(full)]:
        found.append((_text_facts(flow, page_of(start), full[start:end]), _no_png))
        blank[start:end] = " " * (end - start)  # arrow chains must not re-read a block
    rest = "".join(blank)
    for pos, flow in parse_arrows(rest):
        lo = max(rest.rfind("\n", 0, max(pos - 200, 0)), 0)
        found.append((_text_facts(flow, page_of(pos), rest[lo: pos + 400]), _no_png))
    # Pages drawing with characters, whether or not a flow was read there: a report whose
    # only flows are arrow chains in its prose has no drawing (`vision.findings`).
    art = [number for number, text in enumerate(page_texts, 1) if text_art(text)]
    labels = split_labels(page_texts) if art else []
    for facts, _png in found:
        facts.data["text_art_pages"] = art
        if labels:  # what the drawings say is drawn in parallel (`labels.split_labels`)
            facts.data["split_labels"] = labels
    return found


def open_pdf(path: Path) -> pdfium.PdfDocument:
    """Open a PDF or raise VisionError with a one-line reason."""
    try:
        return pdfium.PdfDocument(str(path))
    except (pdfium.PdfiumError, OSError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise VisionError(f"cannot open PDF {path.name}: {reason}") from None
