"""Text in the PDF that a reader of the page never sees, read from the drawing operations.

A report can carry text for the machine only: white on a white page, fully transparent,
drawn in render mode 3 (invisible) with no picture under it, a point or two high, placed
outside the page box, or covered by a picture or a white box drawn after it. Such text is
no explanation a reader could follow. `hidden_text` finds it with pypdfium2's page objects
(the text object's fill colour and alpha, render mode, font size times its matrices, bounds
against the crop box, the pictures and white boxes drawn later); `screen_lines` takes it out
of the lines the report is read from and `visible_page_text` out of a page's text layer
(which the vision inspector reads Mermaid and DOT from); the doc detective reports it
(quoting text and page) as a fact that earns nothing.

What is not hidden: white text on a darker filled shape or a picture drawn before it (a
heading in a coloured box), and invisible text over a picture (the OCR layer of a scanned
page). A picture covering most of the page is a scan, not a cover.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.pdf.model import HiddenText, Line, ReportLimits
from automaton_auditor.forensics.pdf.textlayer import each_page

TINY_PT = 3.0  # text below this height cannot be read on the page (footnotes are 6-8 pt)
WHITE = 245  # each of r, g, b at least this is white on a white page
SCAN_SHARE = 0.8  # a picture covering this share of the page is a scanned page
MAX_SPANS = 200  # hidden runs kept per report
MAX_OBJECT_CHARS = 2000
MAX_COVERS = 400  # pictures and filled shapes remembered per page
OPAQUE = 0.9  # share of a picture's pixels over a text that must be opaque to hide it
MAX_PICTURE_PIXELS = 16_000_000
Rect = tuple[float, float, float, float]  # left, bottom, right, top (PDF points)


@dataclass
class _Text:
    index: int
    text: str
    rect: Rect
    size: float
    how: str


def hidden_text(path: Path, limits: ReportLimits) -> list[HiddenText]:
    """Every hidden run of text in the PDF, in page and drawing order (at most `MAX_SPANS`);
    [] when pdfium cannot read the file."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    found: list[HiddenText] = []
    pages = each_page(path, limits)
    try:
        for number, page in pages:
            try:
                found += _page_hidden(page.pdf, page, number)
            except pdfium.PdfiumError:
                continue  # a page whose text pdfium cannot load hides nothing it can read
            if len(found) >= MAX_SPANS:
                break
    finally:
        pages.close()
    return found[:MAX_SPANS]


def visible_page_text(page: Any, text: str) -> str:
    """`text`, the page's text layer as pypdfium2's ``get_text_range`` gives it, with every
    character of a hidden run blanked to a space (its length and line breaks kept). A page
    whose characters pdfium cannot place is returned blank when it hides anything: hidden
    text must not reach a reader that cannot be told where it is."""
    import pypdfium2 as pdfium

    try:
        runs = _page_hidden(page.pdf, page, 1)
    except pdfium.PdfiumError:
        return text
    if not runs:
        return text
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        if count != len(text):  # surrogate pairs or a changed layer: no safe mapping
            return "".join(ch if ch == "\n" else " " for ch in text)
        top = tuple(page.get_cropbox())[3]
        boxes = [run.box for run in runs]
        chars = list(text)
        for index, char in enumerate(chars):
            if char.isspace():
                continue
            left, bottom, right, upper = textpage.get_charbox(index)
            centre = ((left + right) / 2, top - (bottom + upper) / 2)
            if any(_contains(box, centre) for box in boxes):
                chars[index] = " "
        return "".join(chars)
    finally:
        textpage.close()


def _page_hidden(pdf: Any, page: Any, number: int) -> list[HiddenText]:
    from automaton_auditor.forensics.vision.vector import rect_to_page

    crop = tuple(page.get_cropbox())
    page_area = max(_area(crop), 1.0)
    texts: list[_Text] = []
    under: list[tuple[int, Rect]] = []  # painted: darker shapes and pictures
    pictures: list[tuple[int, Rect, Any]] = []
    boxes: list[tuple[int, Rect]] = []  # opaque white filled rectangles
    textpage = page.get_textpage()
    try:
        for index, (obj, ancestors) in enumerate(_objects(page)):
            rect = rect_to_page(tuple(obj.get_bounds()), ancestors)
            if obj.type == _c().FPDF_PAGEOBJ_TEXT:
                words = _text_of(obj, textpage)
                if words:
                    texts.append(_Text(index, words, rect, _size(obj, ancestors),
                                       _colour_how(obj)))
                continue
            if len(boxes) < MAX_COVERS and _opaque_box(obj, ancestors) \
                    and _area(rect) < SCAN_SHARE * page_area:
                boxes.append((index, rect))
            if len(under) < MAX_COVERS and _paints(obj):
                under.append((index, rect))
                if obj.type == _c().FPDF_PAGEOBJ_IMAGE and _area(rect) < SCAN_SHARE * page_area:
                    pictures.append((index, rect, obj))
    finally:
        textpage.close()
    cover = _Covers(pdf, page, pictures, boxes)
    for text in texts:
        text.how = _how(text, crop, under, cover)
    _mark_overflow(texts, crop)
    return _spans([t for t in texts if t.how], number, crop[3])


def _objects(page: Any) -> Any:
    from automaton_auditor.forensics.vision.vector import page_objects

    c = _c()
    return page_objects(page, (c.FPDF_PAGEOBJ_TEXT, c.FPDF_PAGEOBJ_IMAGE, c.FPDF_PAGEOBJ_PATH))


def _c() -> Any:
    import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

    return pdfium_c


def _how(text: _Text, crop: tuple[float, ...], under: list[tuple[int, Rect]],
         cover: _Covers) -> str:
    """How the run is hidden ("" when a reader sees it); `text.how` holds what its colour
    and render mode say."""
    obj_how = text.how
    left, bottom, right, top = text.rect
    if right < crop[0] or left > crop[2] or top < crop[1] or bottom > crop[3]:
        return "off-page"
    centre = ((left + right) / 2, (bottom + top) / 2)
    backed = any(i < text.index and _contains(r, centre) for i, r in under)
    if obj_how in ("invisible", "transparent", "white") and not backed:
        return obj_how
    if text.size < TINY_PT:
        return "tiny"
    return "covered" if cover.hides(text) else ""


class _Covers:
    """The pictures and opaque white rectangles of a page, and whether one drawn after a
    text hides it: it spans the text's box and is opaque there (a picture's transparent
    margin hides nothing)."""

    def __init__(self, pdf: Any, page: Any, pictures: list[tuple[int, Rect, Any]],
                 boxes: list[tuple[int, Rect]]) -> None:
        self.pdf, self.page, self.pictures, self.boxes = pdf, page, pictures, boxes
        self.alpha: dict[int, tuple[int, int, bytes] | None] = {}

    def hides(self, text: _Text) -> bool:
        """Whether a picture or a filled box drawn after `text` covers it opaquely."""
        left, bottom, right, top = text.rect

        def spans(rect: Rect) -> bool:
            return _contains(rect, (left, bottom)) and _contains(rect, (right, top))

        return any(index > text.index and spans(rect) for index, rect in self.boxes) or any(
            index > text.index and spans(rect) and self._opaque(index, rect, obj, text.rect)
            for index, rect, obj in self.pictures)

    def _opaque(self, index: int, rect: Rect, obj: Any, area: Rect) -> bool:
        if index not in self.alpha:
            self.alpha[index] = _alpha(self.pdf, self.page, obj)
        alpha = self.alpha[index]
        if alpha is None:
            return False
        width, height, values = alpha
        span_x, span_y = max(rect[2] - rect[0], 1e-6), max(rect[3] - rect[1], 1e-6)
        x0 = int((max(area[0], rect[0]) - rect[0]) / span_x * (width - 1))
        x1 = int((min(area[2], rect[2]) - rect[0]) / span_x * (width - 1))
        y0 = int((rect[3] - min(area[3], rect[3])) / span_y * (height - 1))
        y1 = int((rect[3] - max(area[1], rect[1])) / span_y * (height - 1))
        cells = [values[y * width + x] for y in range(y0, y1 + 1, max((y1 - y0) // 8, 1))
                 for x in range(x0, x1 + 1, max((x1 - x0) // 16, 1))]
        return bool(cells) and sum(v > 200 for v in cells) >= OPAQUE * len(cells)


def _alpha(pdf: Any, page: Any, obj: Any) -> tuple[int, int, bytes] | None:
    """The picture as drawn (mask applied): width, height and its alpha bytes, row 0 at the
    top; None when pdfium cannot render it or it is too large to check."""
    c = _c()
    bitmap = c.FPDFImageObj_GetRenderedBitmap(pdf.raw, page.raw, obj.raw)
    if not bitmap:
        return None
    try:
        width, height = c.FPDFBitmap_GetWidth(bitmap), c.FPDFBitmap_GetHeight(bitmap)
        stride, kind = c.FPDFBitmap_GetStride(bitmap), c.FPDFBitmap_GetFormat(bitmap)
        if width <= 0 or height <= 0 or width * height > MAX_PICTURE_PIXELS:
            return None
        if kind != c.FPDFBitmap_BGRA:
            return width, height, b"\xff" * (width * height)  # no alpha: opaque
        raw = ctypes.string_at(c.FPDFBitmap_GetBuffer(bitmap), stride * height)
        rows = [raw[y * stride:y * stride + 4 * width][3::4] for y in range(height)]
        return width, height, b"".join(rows)
    finally:
        c.FPDFBitmap_Destroy(bitmap)


def _mark_overflow(texts: list[_Text], crop: tuple[float, ...]) -> None:
    """An off-page run on the line of a run that crosses the page edge is a line running
    past the margin (a long code line), not text placed out of sight: not hidden."""
    crossing = [t.rect for t in texts if not t.how and _crosses(t.rect, crop)]
    for text in texts:
        if text.how == "off-page" and any(_same_line(text.rect, r) for r in crossing):
            text.how = ""


def _crosses(rect: Rect, crop: tuple[float, ...]) -> bool:
    return rect[0] < crop[0] < rect[2] or rect[0] < crop[2] < rect[2] or \
        rect[1] < crop[1] < rect[3] or rect[1] < crop[3] < rect[3]


def _same_line(a: Rect, b: Rect) -> bool:
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap > 0.5 * min(a[3] - a[1], b[3] - b[1])


def _text_of(obj: Any, textpage: Any) -> str:
    """The text object's text (bounded in characters), whitespace collapsed."""
    c = _c()
    size = c.FPDFTextObj_GetText(obj.raw, textpage.raw, None, 0)
    if size <= 2:
        return ""
    size = min(size, 2 * MAX_OBJECT_CHARS + 2)
    buffer = ctypes.create_string_buffer(size)
    got = c.FPDFTextObj_GetText(obj.raw, textpage.raw,
                                ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)), size)
    text = buffer.raw[:max(min(got, size) - 2, 0)].decode("utf-16-le", "replace")
    return " ".join(text.replace("\x00", " ").split())


def _colour_how(obj: Any) -> str:
    """ "invisible", "transparent" or "white" from the render mode and fill colour."""
    c = _c()
    mode = c.FPDFTextObj_GetTextRenderMode(obj.raw)
    if mode == c.FPDF_TEXTRENDERMODE_INVISIBLE:
        return "invisible"
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    if not c.FPDFPageObj_GetFillColor(obj.raw, r, g, b, a):
        return ""
    if a.value == 0:
        return "transparent"
    return "white" if min(r.value, g.value, b.value) >= WHITE else ""


def _size(obj: Any, ancestors: list[Any]) -> float:
    """The text's height on the page: font size scaled by its matrix and its forms'."""
    c = _c()
    font = ctypes.c_float()
    if not c.FPDFTextObj_GetFontSize(obj.raw, font):
        return TINY_PT
    scale = 1.0
    for matrix in [obj.get_matrix(), *ancestors]:
        scale *= abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
    return float(font.value) * scale


def _paints(obj: Any) -> bool:
    """Whether the object paints an area a reader sees: a picture, or a filled shape that is
    not white."""
    c = _c()
    if obj.type == c.FPDF_PAGEOBJ_IMAGE:
        return True
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    if not c.FPDFPath_GetDrawMode(obj.raw, fill, stroke) or not fill.value:
        return False
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    return bool(c.FPDFPageObj_GetFillColor(obj.raw, r, g, b, a)) and a.value > 0 and \
        min(r.value, g.value, b.value) < WHITE


def _opaque_box(obj: Any, ancestors: list[Any]) -> bool:
    """Whether the object is a filled, opaque, axis-aligned white rectangle: drawn over text
    on a white page it leaves a reader nothing to see, not even a box. (A coloured box drawn
    over text shows the reader a box: a diagram whose node hides an edge label, not text
    planted for the machine.)"""
    c = _c()
    if obj.type != c.FPDF_PAGEOBJ_PATH:
        return False
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    if not c.FPDFPath_GetDrawMode(obj.raw, fill, stroke) or not fill.value or \
            not c.FPDFPageObj_GetFillColor(obj.raw, r, g, b, a) or a.value < OPAQUE * 255 \
            or min(r.value, g.value, b.value) < WHITE:
        return False
    if any(abs(m.b) > 1e-6 or abs(m.c) > 1e-6 for m in [obj.get_matrix(), *ancestors]):
        return False  # rotated or skewed: its bounds are no rectangle of paint
    count = c.FPDFPath_CountSegments(obj.raw)
    if not 4 <= count <= 6:
        return False
    x, y = ctypes.c_float(), ctypes.c_float()
    xs, ys = set(), set()
    for index in range(count):
        seg = c.FPDFPath_GetPathSegment(obj.raw, index)
        if not seg or c.FPDFPathSegment_GetType(seg) == c.FPDF_SEGMENT_BEZIERTO or \
                not c.FPDFPathSegment_GetPoint(seg, x, y):
            return False
        xs.add(round(x.value, 1))
        ys.add(round(y.value, 1))
    return len(xs) == 2 and len(ys) == 2


def _area(rect: Rect) -> float:
    return max(rect[2] - rect[0], 0.0) * max(rect[3] - rect[1], 0.0)


def _contains(rect: Rect, point: tuple[float, float], tol: float = 1.0) -> bool:
    return (rect[0] - tol <= point[0] <= rect[2] + tol
            and rect[1] - tol <= point[1] <= rect[3] + tol)


def _spans(texts: list[_Text], page: int, height: float) -> list[HiddenText]:
    """Objects drawn one after the other and hidden the same way, as one run each."""
    spans: list[HiddenText] = []
    previous = -2
    for text in texts:
        box = (text.rect[0], height - text.rect[3], text.rect[2], height - text.rect[1])
        last = spans[-1] if spans else None
        if last is not None and last.how == text.how and text.index == previous + 1:
            merged = (min(last.box[0], box[0]), min(last.box[1], box[1]),
                      max(last.box[2], box[2]), max(last.box[3], box[3]))
            spans[-1] = HiddenText(page, f"{last.text} {text.text}", last.how, merged)
        else:
            spans.append(HiddenText(page, text.text, text.how, box))
        previous = text.index
    return spans


def screen_lines(lines: list[Line], hidden: list[HiddenText]) -> list[Line]:
    """The lines without the hidden text: a hidden run's words are taken out of the line
    that holds them; a line then empty, or mostly covered by hidden runs whose words it
    spells differently, is dropped."""
    by_page: dict[int, list[HiddenText]] = {}
    for run in hidden:
        by_page.setdefault(run.page, []).append(run)
    kept: list[Line] = []
    for line in lines:
        runs = [r for r in by_page.get(line.page, ()) if _overlap(line, r.box) > 0]
        if not runs:
            kept.append(line)
            continue
        text = line.text
        for run in runs:
            text = " ".join(text.replace(run.text, " ").split())
        covered = sum(_overlap(line, r.box) for r in runs)
        if text and (text != line.text or covered < 0.5 * max(line.x1 - line.x0, 1e-6)):
            kept.append(replace(line, text=text))
    return kept


def _overlap(line: Line, box: tuple[float, float, float, float]) -> float:
    """The width a run's box shares with the line (0 unless they share height too)."""
    tall = min(line.bottom, box[3]) - max(line.top, box[1])
    if tall <= 0.3 * min(line.bottom - line.top, box[3] - box[1]):
        return 0.0
    return max(min(line.x1, box[2]) - max(line.x0, box[0]), 0.0)
