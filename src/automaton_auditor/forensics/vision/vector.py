"""Vector primitives of a PDF page (pypdfium2): text runs, path outlines, geometry helpers.

The flowchart and sequence readers (`flowchart`, `sequence`, composed by `drawings`) build on
these to read diagrams from drawing operations, without rendering or a model.

LaTeX/TikZ, Graphviz and Mermaid exports draw a diagram as path objects: a closed outline
around each node's label, an open stroked path per edge, a small filled triangle per arrow
head. Reading those back gives the diagram's nodes (the text inside each outline) and its
edges (which outlines a connector's two ends touch; the arrow head gives the direction,
a dash pattern marks a conditional edge). A table's rules and a code listing's frame do not
form labelled outlines joined by connectors, so they are not mistaken for diagrams.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

MAX_PATHS = 4000  # per page; a hostile page may hold millions of path objects
MAX_TEXT_RECTS = 5000
MAX_CHARS = 200_000  # per page
MAX_DIAGRAMS_PER_PAGE = 4
MAX_SEGMENTS = 400  # per path
# Distances are in text-height units (the page's median text run height, about 10 points
# in a typical report), so a diagram scaled up or down reads the same.
ATTACH_TOL = 0.5  # how far a connector end may stop short of its node outline
HEAD_TOL = 0.6  # arrow head to connector end
HEAD_MAX = 1.2  # the largest arrow head
MIN_GAP = 0.4  # two outlines closer than this touch (listing stripes), no edge between them
STACK_OVERLAP = 0.5  # share of the smaller label another one covers: the two are stacked
MAX_STACK_RUNS = 300  # text runs of one drawing compared pairwise for stacking
Rect = tuple[float, float, float, float]  # left, bottom, right, top (PDF points)
Point = tuple[float, float]


@dataclass
class TextRect:
    """One run of text on the page with its bounds."""

    text: str
    rect: Rect

    @property
    def centre(self) -> Point:
        """The centre of the run."""
        left, bottom, right, top = self.rect
        return (left + right) / 2, (bottom + top) / 2


@dataclass
class PathInfo:
    """One path object: bounds, points in page space, how it is painted."""

    rect: Rect
    points: list[Point]
    filled: bool
    stroked: bool
    closed: bool
    dashed: bool
    diagonal: bool = False  # has a straight segment that is neither horizontal nor vertical
    curved: bool = False  # has a Bezier segment


@dataclass
class VectorNode:
    """A labelled outline."""

    label: str
    rect: Rect
    decision: bool = False


@dataclass
class VectorDiagram:
    """Nodes and edges read from one page's drawing, with the region they cover."""

    nodes: list[VectorNode]
    edges: list[tuple[str, str]]
    conditional: list[tuple[str, str]] = field(default_factory=list)
    region: Rect = (0.0, 0.0, 0.0, 0.0)
    labels: list[str] = field(default_factory=list)
    diagram_type: str = "flowchart"  # flowchart | sequence


class _Run:
    """Characters being gathered into one text run."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.box: list[float] = []

    def fits(self, box: tuple[float, float, float, float]) -> bool:
        """Same line and no wide gap: the character continues this run."""
        if not self.box:
            return True
        height = max(self.box[3] - self.box[1], box[3] - box[1], 1.0)
        same_line = abs((self.box[1] + self.box[3]) - (box[1] + box[3])) / 2 <= 0.5 * height
        return same_line and -0.5 * height <= box[0] - self.box[2] <= 1.0 * height

    def add(self, char: str, box: tuple[float, float, float, float] | None) -> None:
        """Append a character (and grow the bounds when it has a box)."""
        self.chars.append(char)
        if box is not None:
            self.box = list(box) if not self.box else [
                min(self.box[0], box[0]), min(self.box[1], box[1]),
                max(self.box[2], box[2]), max(self.box[3], box[3])]

    def close(self, out: list[TextRect]) -> None:
        """Emit the run when it has text and bounds."""
        text = " ".join("".join(self.chars).split())
        if text and self.box and len(out) < MAX_TEXT_RECTS:
            out.append(TextRect(text, (self.box[0], self.box[1], self.box[2], self.box[3])))


def _char_box(textpage: pdfium.PdfTextPage, index: int,
              rect: pdfium_c.FS_RECTF) -> tuple[float, float, float, float]:
    # The loose box spans the font's ascent to descent, the same for every glyph of a line:
    # a LaTeX underscore (below the baseline) stays on its word's line.
    pdfium_c.FPDFText_GetLooseCharBox(textpage.raw, index, rect)
    return rect.left, min(rect.bottom, rect.top), rect.right, max(rect.bottom, rect.top)


def text_rects(textpage: pdfium.PdfTextPage) -> list[TextRect]:
    """The page's text runs with their bounds: characters on one line without a wide gap
    form a run. Linear in the number of characters (pdfium's bounded-text look-up is
    per-rectangle and quadratic on dense pages); bounded in count."""
    runs: list[TextRect] = []
    run = _Run()
    rect = pdfium_c.FS_RECTF()
    for index in range(min(pdfium_c.FPDFText_CountChars(textpage.raw), MAX_CHARS)):
        char = chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, index) or 32)
        if char in "\r\n\x02":
            run.close(runs)
            run = _Run()
            continue
        box = _char_box(textpage, index, rect)
        if char.isspace() or box[2] - box[0] <= 0:
            run.add(" ", None)  # spaces carry no reliable box
            continue
        if not run.fits(box):
            run.close(runs)
            run = _Run()
        run.add(char, box)
    run.close(runs)
    return runs


def invisible_text_boxes(page: pdfium.PdfPage) -> list[Rect]:
    """Bounds of the page's invisible text objects: the OCR layer a scanner or OCR tool lays
    over a picture (render mode 3). Bounded in count."""
    boxes: list[Rect] = []
    for obj, ancestors in page_objects(page, (pdfium_c.FPDF_PAGEOBJ_TEXT,)):
        if len(boxes) >= MAX_TEXT_RECTS:
            break
        mode = pdfium_c.FPDFTextObj_GetTextRenderMode(obj.raw)
        if mode == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE:
            boxes.append(rect_to_page(tuple(obj.get_bounds()), ancestors))
    return boxes


def split_ocr(texts: list[TextRect], hidden: list[Rect]) -> tuple[list[TextRect], list[TextRect]]:
    """(visible runs, OCR runs): a run whose centre lies in an invisible text box is OCR."""
    if not hidden:
        return texts, []
    grid = Grid(hidden, 1.0)
    visible: list[TextRect] = []
    ocr: list[TextRect] = []
    for text in texts:
        (ocr if grid.hits(text.centre) else visible).append(text)
    return visible, ocr


def reading_sorted(texts: list[TextRect]) -> list[TextRect]:
    """Text runs in reading order: top to bottom by line (runs whose centres lie within 3
    points of the line's first run), left to right within a line."""
    ordered = sorted(texts, key=lambda t: (-t.centre[1], t.rect[0]))
    lines: list[list[TextRect]] = []
    for text in ordered:
        if lines and abs(lines[-1][0].centre[1] - text.centre[1]) <= 3.0:
            lines[-1].append(text)
        else:
            lines.append([text])
    return [t for line in lines for t in sorted(line, key=lambda t: t.rect[0])]


Ancestors = list[Any]  # the enclosing form objects' matrices, innermost first


def page_objects(page: pdfium.PdfPage, kinds: tuple[int, ...],
                 max_objects: int = 200_000) -> Iterator[tuple[pdfium.PdfObject, Ancestors]]:
    """Objects of the given types, inside form XObjects too, each with the matrices of the
    forms around it. pdfium reports a nested object's geometry in its form's space (a LaTeX
    figure included from a PDF is such a form); `to_page` maps it to page space."""
    forms: list[tuple[int, Any]] = []  # (level, matrix) of the enclosing forms
    for count, obj in enumerate(page.get_objects(max_depth=3)):
        if count >= max_objects:
            return
        while forms and forms[-1][0] >= obj.level:
            forms.pop()
        if obj.type == pdfium_c.FPDF_PAGEOBJ_FORM:
            forms.append((obj.level, obj.get_matrix()))
        elif obj.type in kinds:
            yield obj, [matrix for _, matrix in reversed(forms)]


def to_page(point: Point, ancestors: Ancestors) -> Point:
    """A point in an object's form space, in page space."""
    for matrix in ancestors:
        point = matrix.on_point(*point)
    return point


def rect_to_page(rect: Rect, ancestors: Ancestors) -> Rect:
    """Bounds in form space, as page-space bounds (of the transformed corners)."""
    if not ancestors:
        return rect
    corners = [to_page((x, y), ancestors) for x in (rect[0], rect[2]) for y in (rect[1], rect[3])]
    return (min(c[0] for c in corners), min(c[1] for c in corners),
            max(c[0] for c in corners), max(c[1] for c in corners))


def _points(obj: pdfium.PdfObject,
            ancestors: Ancestors) -> tuple[list[Point], bool, bool, bool]:
    """Points in page space, and whether the path closes, has a diagonal line, a curve."""
    matrix = obj.get_matrix()
    count = min(pdfium_c.FPDFPath_CountSegments(obj.raw), MAX_SEGMENTS)
    points: list[Point] = []
    closed = diagonal = curved = False
    x, y = ctypes.c_float(), ctypes.c_float()
    for index in range(max(count, 0)):
        seg = pdfium_c.FPDFPath_GetPathSegment(obj.raw, index)
        if not seg or not pdfium_c.FPDFPathSegment_GetPoint(seg, x, y):
            continue
        point = to_page(matrix.on_point(x.value, y.value), ancestors)
        kind = pdfium_c.FPDFPathSegment_GetType(seg)
        if kind == pdfium_c.FPDF_SEGMENT_LINETO and points:
            diagonal = diagonal or (abs(point[0] - points[-1][0]) > 1
                                    and abs(point[1] - points[-1][1]) > 1)
        curved = curved or kind == pdfium_c.FPDF_SEGMENT_BEZIERTO
        points.append(point)
        closed = closed or bool(pdfium_c.FPDFPathSegment_GetClose(seg))
    return points, closed, diagonal, curved


def path_infos(page: pdfium.PdfPage) -> list[PathInfo]:
    """Every path object on the page (inside forms too), bounded in number."""
    infos: list[PathInfo] = []
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    for obj, ancestors in page_objects(page, (pdfium_c.FPDF_PAGEOBJ_PATH,)):
        if len(infos) >= MAX_PATHS:
            break
        points, closed, diagonal, curved = _points(obj, ancestors)
        if len(points) < 2 or not pdfium_c.FPDFPath_GetDrawMode(obj.raw, fill, stroke):
            continue
        first, last = points[0], points[-1]
        closed = closed or (len(points) > 3 and dist(first, last) < 0.5)
        dashed = pdfium_c.FPDFPageObj_GetDashCount(obj.raw) > 0
        infos.append(PathInfo(rect_to_page(tuple(obj.get_bounds()), ancestors), points,
                              fill.value != 0,
                              bool(stroke.value), closed, dashed, diagonal, curved))
    return infos


def dist(a: Point, b: Point) -> float:
    return float(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5)


def inside(point: Point, rect: Rect, tol: float = 0.0) -> bool:
    return (rect[0] - tol <= point[0] <= rect[2] + tol
            and rect[1] - tol <= point[1] <= rect[3] + tol)


def gap(a: Rect, b: Rect) -> float:
    """Distance between two rectangles (0 when they touch or overlap)."""
    dx = max(b[0] - a[2], a[0] - b[2], 0.0)
    dy = max(b[1] - a[3], a[1] - b[3], 0.0)
    return float((dx * dx + dy * dy) ** 0.5)


def area(rect: Rect) -> float:
    return max(rect[2] - rect[0], 0.0) * max(rect[3] - rect[1], 0.0)


class Grid:
    """A coarse spatial index of rectangles, so point look-ups stay cheap on pages with
    thousands of paths (a hostile or merely huge table would otherwise be quadratic)."""

    def __init__(self, rects: list[Rect], tol: float = 0.0, cell: float = 48.0) -> None:
        self.rects = rects
        self.tol = tol
        self.cell = max(cell, 1.0)
        self.cells: dict[tuple[int, int], list[int]] = {}
        for index, rect in enumerate(rects):
            x0, y0 = self._cell((rect[0] - tol, rect[1] - tol))
            x1, y1 = self._cell((rect[2] + tol, rect[3] + tol))
            if (x1 - x0 + 1) * (y1 - y0 + 1) > 400:  # huge outlines are never nodes
                continue
            for cx in range(x0, x1 + 1):
                for cy in range(y0, y1 + 1):
                    self.cells.setdefault((cx, cy), []).append(index)

    def _cell(self, point: Point) -> tuple[int, int]:
        return int(point[0] // self.cell), int(point[1] // self.cell)

    def hits(self, point: Point) -> list[int]:
        """Indexes (ascending) of the rectangles containing the point, within `tol`."""
        return [i for i in self.cells.get(self._cell(point), [])
                if inside(point, self.rects[i], self.tol)]


def text_unit(texts: list[TextRect]) -> float:
    """The page's typical text height in points (median run height, 10 when no text)."""
    heights = sorted(t.rect[3] - t.rect[1] for t in texts if t.rect[3] > t.rect[1])
    return min(max(heights[len(heights) // 2], 2.0), 400.0) if heights else 10.0


def bounding_rect(rects: list[Rect]) -> Rect:
    """The smallest rectangle around all of them."""
    return (min(r[0] for r in rects), min(r[1] for r in rects),
            max(r[2] for r in rects), max(r[3] for r in rects))


def _overlap(a: Rect, b: Rect) -> float:
    """Area of the intersection of two rectangles."""
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def stacked_labels(texts: list[TextRect], region: Rect) -> list[tuple[TextRect, TextRect]]:
    """Pairs of different labels of a drawing region drawn over one another: each covers at
    least `STACK_OVERLAP` of the smaller one. A legible drawing puts its labels apart; labels
    laid on one another (nodes placed at one spot) cannot be read, nor can the flow between
    them. The same text twice at one spot is a font's fake bold or a shadow, not a stack.
    Bounded: at most `MAX_STACK_RUNS` runs of the region are compared."""
    runs = [t for t in texts if inside(t.centre, region) and len(t.text) <= 80
            and area(t.rect) > 0][:MAX_STACK_RUNS]
    pairs = []
    for index, first in enumerate(runs):
        for second in runs[index + 1:]:
            smaller = min(area(first.rect), area(second.rect))
            if first.text != second.text and \
                    _overlap(first.rect, second.rect) >= STACK_OVERLAP * smaller:
                pairs.append((first, second))
    return pairs


def drawing_stats(paths: list[PathInfo]) -> int:
    """How many paths look like a drawing rather than page furniture: diagonal lines, open
    curves (connectors) and small arrow-head polygons. Tables, code frames and rounded boxes
    are axis-aligned or closed, so they do not count."""
    count = 0
    for path in paths:
        size = max(path.rect[2] - path.rect[0], path.rect[3] - path.rect[1])
        arrow_head = path.filled and path.diagonal and size <= 12
        connector = not path.closed and (path.diagonal or path.curved) and size > 12
        count += arrow_head or connector
    return count
