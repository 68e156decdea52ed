"""The structure docling's native pipeline leaves out, rebuilt from the PDF's own lines.

Native docling gives one text item per line with its box and font. From those lines this
module removes running headers and footers, finds headings (from the PDF outline when it
has one, else from font size, weight and numbering), rebuilds paragraphs and list items,
and assembles a `DoclingDocument` with real section headers.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from typing import TYPE_CHECKING

from automaton_auditor.forensics.pdf.code_lines import code_lines
from automaton_auditor.forensics.pdf.model import Block, BlockKind, Line
from automaton_auditor.forensics.pdf.table_rows import table_header_cells

if TYPE_CHECKING:
    from docling_core.types.doc import DoclingDocument  # type: ignore[attr-defined]

_GLYPH_BULLET = re.compile(r"^[\u2022\u25cf\u25e6\u25aa\u25a0\u2023\u2043\u2219\u00b7*\-\u2013]\s*")
_BULLET = re.compile(r"^(?:[\u2022\u25cf\u25e6\u25aa\u25a0\u2023\u2043\u2219\u00b7*\-\u2013]\s*"
                     r"|\(?[0-9]{1,2}[.)]\s+(?=\D)|\(?[a-z][.)]\s+)")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")
_PAGE_NO = re.compile(
    r"^(?:page\s*)?[-\u2013(]?\s*\d{1,4}\s*[-\u2013)]?(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
_DOT_LEADER = re.compile(r"(?:\.\s?){4,}")  # table-of-contents leaders
_SENTENCE_END = re.compile(r"[.!?:;]['\")\]]?$")


def _norm(text: str) -> str:
    """Letters and digits only, lower case: how outline titles are matched to lines."""
    return re.sub(r"[^0-9a-z]+", "", text.lower())


# --- running headers and footers -------------------------------------------------------------


def furniture(lines: list[Line], sizes: dict[int, tuple[float, float]]) -> set[int]:
    """Ids (`id(line)`) of running headers/footers: lines in the top or bottom margin that
    repeat (digits ignored) on many pages, and bare page numbers there."""
    margin: list[Line] = []
    for line in lines:
        height = sizes.get(line.page, (612.0, 792.0))[1]
        # LaTeX sets folios higher than word processors do: a generous band.
        if line.top < 0.12 * height or line.bottom > 0.86 * height:
            margin.append(line)
    pages = len(sizes) or 1
    keys = Counter(re.sub(r"\d+", "#", line.text.lower()) for line in margin)
    pages_per_key: dict[str, set[int]] = {}
    for line in margin:
        pages_per_key.setdefault(re.sub(r"\d+", "#", line.text.lower()), set()).add(line.page)
    repeated = {key for key in keys
                if len(pages_per_key[key]) >= max(3, int(0.4 * pages))}
    below: dict[int, float] = {}
    above: dict[int, float] = {}
    for line in lines:
        below[line.page] = max(below.get(line.page, 0.0), line.bottom)
        above[line.page] = min(above.get(line.page, 1e9), line.top)
    body = body_size(lines)
    # A bare number is a folio only as the page's first or last line (not a table cell).
    return {id(line) for line in margin
            if (_PAGE_NO.match(line.text)
                and (line.bottom >= below[line.page] - 0.5 or line.top <= above[line.page] + 0.5))
            or (re.sub(r"\d+", "#", line.text.lower()) in repeated
                and line.size <= body * 1.1)}  # a title repeated in the header stays


# --- headings ---------------------------------------------------------------------------------


def outline_headings(lines: list[Line], outline: list[tuple[int, int, str]]
                     ) -> dict[int, tuple[int, str]]:
    """Map the first line of each outline entry found on its page (or the next) to
    (level, title); continuation lines of a wrapped title map to level -1."""
    by_page: dict[int, list[Line]] = {}
    for line in lines:
        by_page.setdefault(line.page, []).append(line)
    marks: dict[int, tuple[int, str]] = {}
    for level, page, title in outline:
        target = _norm(title)
        if not target or _prose_entry(title):
            continue
        for candidate_page in (page, page + 1):
            span = _find_span(by_page.get(candidate_page, []), target, marks)
            if span:
                # The page's own wording keeps the section number the outline may omit.
                marks[id(span[0])] = (level + 1, " ".join(x.text for x in span))
                for extra in span[1:]:
                    marks[id(extra)] = (-1, title)
                break
    return marks


# How a sentence or a lead-in ends ("Why Pydantic over Dicts?" is a heading, a question).
_LEAD_IN = re.compile(r"[.:;,]['\")\]]?$")


def _prose_entry(title: str) -> bool:
    """An outline entry that is a paragraph, not a title: a word processor bookmarks every
    paragraph styled as a heading, so a bulleted item or a run of sentences lands in the
    outline, and so does a lead-in sentence ending in a colon. Read as a heading, its text
    would leave the section it explains."""
    text = title.strip()
    words = len(text.split())
    return (words > 14 or len(text) > 120 or (words >= 4 and bool(_LEAD_IN.search(text)))
            or bool(_GLYPH_BULLET.match(text) and not _NUMBERED.match(text)))


_SECTION_NO = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+")


def _find_span(page_lines: list[Line], target: str, taken: dict[int, tuple[int, str]]
               ) -> list[Line]:
    """Consecutive lines (at most four) spelling the outline title; the first line may
    carry a section number the outline leaves out ("2.1 Foo" for "Foo")."""
    for start, line in enumerate(page_lines):
        if id(line) in taken:
            continue
        span = _spell(page_lines[start:start + 4], target, strip_number=False)
        span = span or _spell(page_lines[start:start + 4], target, strip_number=True)
        if span:
            return span
    return []


def _spell(window: list[Line], target: str, strip_number: bool) -> list[Line]:
    acc = ""
    for offset, nxt in enumerate(window):
        text = _SECTION_NO.sub("", nxt.text) if strip_number and offset == 0 else nxt.text
        acc += _norm(text)
        if not acc or not target.startswith(acc):
            return []
        if acc == target:
            return window[: offset + 1]
    return []


LARGER_THAN_BODY = 1.15  # a heading clearly larger than body text (not a bold lead-in)


def body_size(lines: list[Line]) -> float:
    """The font size (line height) carrying the most characters."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size_class] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 10.0


def font_headings(lines: list[Line], skip: set[int]) -> dict[int, tuple[int, str]]:
    """Headings from typography when the PDF has no outline: larger than body text, or
    bold, short and numbered/isolated, never a line of code (`code_lines`). Levels come
    from numbering depth, else size rank."""
    body = body_size(lines)
    column = max((line.width for line in lines), default=500.0)
    in_rows = _side_by_side(lines)
    # Bold body-size text beside other text is a table cell; a larger heading may sit
    # beside the other column of a two-column page, a table's header row may not.
    skip = skip | table_header_cells(lines, body) | code_lines(lines, skip)
    candidates = [line for line in lines
                  if id(line) not in skip and _looks_like_heading(line, body, column)
                  and (id(line) not in in_rows or line.size >= body * LARGER_THAN_BODY)]
    sizes = sorted({line.size_class for line in candidates}, reverse=True)
    marks: dict[int, tuple[int, str]] = {}
    previous: Line | None = None
    first = 0  # id of the first line of the heading being built
    for line in candidates:
        numbered = _NUMBERED.match(line.text)
        level = numbered.group(1).count(".") + 1 if numbered else \
            sizes.index(line.size_class) + 1
        if previous is not None and _continues(previous, line):
            marks[id(line)] = (-1, line.text)
            head_level, head_text = marks[first]
            marks[first] = (head_level, f"{head_text} {line.text}")  # a wrapped heading
        else:
            marks[id(line)] = (min(level, 6), line.text)
            first = id(line)
        previous = line
    return marks


def _side_by_side(lines: list[Line]) -> set[int]:
    """Lines sharing a baseline with another line (table cells, not headings)."""
    marked: set[int] = set()
    ordered = sorted(lines, key=lambda x: (x.page, x.bottom))
    for index, line in enumerate(ordered):
        for other in ordered[index + 1:]:
            if other.page != line.page or other.bottom - line.bottom >= 2:
                break
            if other.x0 >= line.x1 or line.x0 >= other.x1:  # disjoint: two cells
                marked.update((id(line), id(other)))
    return marked


def _looks_like_heading(line: Line, body: float, column: float) -> bool:
    text = line.text
    words = text.split()
    if not 1 <= len(words) <= 14 or len(text) > 120 or not re.search(r"[A-Za-z]{2}", text):
        return False
    if _BULLET.match(text) and not _NUMBERED.match(text):
        return False
    # A bold lead-in ends with a colon; a heading does not end like a sentence.
    if re.search(r"[,;:]$", text) or (text.endswith(".") and not _NUMBERED.fullmatch(text)):
        return False
    if line.size >= body * LARGER_THAN_BODY:
        return True
    # Bold at body size: only a short line (a bold lead-in of a paragraph spans the column).
    return line.bold and line.size >= body * 0.95 and line.width < 0.75 * column


def _continues(previous: Line, line: Line) -> bool:
    """A wrapped heading: same page and style, directly below the previous heading line."""
    return (previous.page == line.page and abs(previous.size - line.size) < 0.5
            and 0 <= line.top - previous.bottom < line.size * 1.2)


# --- paragraphs ------------------------------------------------------------------------------


def leading(lines: list[Line], body: float) -> float:
    """Typical baseline-to-baseline distance of body text."""
    deltas = [b.top - a.top for a, b in itertools.pairwise(lines)
              if a.page == b.page and abs(a.size - body) < 1 and abs(b.size - body) < 1
              and 0 < b.top - a.top < 3 * body]
    return statistics.median(deltas) if deltas else body * 1.3


def build_blocks(lines: list[Line], headings: dict[int, tuple[int, str]],
                 skip: set[int]) -> list[Block]:
    """Headings, paragraphs and list items in reading order, each carrying its section
    path; furniture lines are kept as `furniture` blocks so the document records them."""
    body = body_size(lines)
    step = leading(lines, body)
    words = vocabulary(lines)
    cells = _side_by_side(lines)
    rights = _column_rights(lines)
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    current: list[Line] = []
    section: tuple[str, ...] = ()

    def flush() -> None:
        if current:
            blocks.append(_paragraph(current, section, words))
            current.clear()

    for line in lines:
        if id(line) in skip:
            flush()
            blocks.append(Block("furniture", line.text, line.page, bbox=_box([line])))
            continue
        mark = headings.get(id(line))
        if mark is not None:
            flush()
            if mark[0] == -1:
                continue  # continuation of a wrapped heading already emitted
            stack = [(lvl, txt) for lvl, txt in stack if lvl < mark[0]] + [mark]
            section = tuple(txt for _, txt in stack)
            blocks.append(Block("heading", mark[1], line.page, level=mark[0],
                                section=section[:-1], bbox=_box([line])))
            continue
        right = rights.get((current[-1].page, _column_key(current[-1])), 540.0) \
            if current else 540.0
        if current and (_breaks(current[-1], line, step, right)
                        or _new_row(current[-1], line, cells)):
            flush()
        current.append(line)
    flush()
    return blocks


def _column_key(line: Line) -> int:
    return round(line.x0 / 30)


def _column_rights(lines: list[Line]) -> dict[tuple[int, int], float]:
    """Right edge of the text that starts at each left margin of each page: a line is
    "short" against its own column, not against the page (two-column layouts)."""
    rights: dict[tuple[int, int], float] = {}
    for line in lines:
        key = (line.page, _column_key(line))
        rights[key] = max(rights.get(key, 0.0), line.x1)
    return rights


def _new_row(prev: Line, line: Line, cells: set[int]) -> bool:
    """After a table cell, a line on a lower baseline that starts further left opens the
    next row (tightly set LaTeX tables have no gap between rows)."""
    return id(prev) in cells and line.bottom - prev.bottom >= 2 and line.x0 < prev.x0 - 5


def _breaks(prev: Line, line: Line, step: float, column_right: float) -> bool:
    if prev.page != line.page:
        return True
    # Box height stands in for font size; a short line ("state:") has no tall glyph to
    # measure, so only longer lines can signal a size change.
    if abs(prev.size - line.size) > 1.0 and min(len(prev.text), len(line.text)) >= 12:
        return True
    if line.top - prev.top > step * 1.45 or line.top < prev.top - 1:
        return True
    if _GLYPH_BULLET.match(line.text) or _DOT_LEADER.search(prev.text):
        return True
    # "12. Foo" starts an item only after a finished line: prose wraps before numbers too.
    finished = prev.x1 < column_right * 0.8 or bool(_SENTENCE_END.search(prev.text))
    if _BULLET.match(line.text) and finished:
        return True
    # A short line ending a sentence closes its paragraph.
    return prev.x1 < column_right * 0.8 and bool(_SENTENCE_END.search(prev.text))


def vocabulary(lines: list[Line]) -> set[str]:
    """Lower-case words the document spells in full, to tell a typesetter's hyphenation
    ("adver-" + "sarial") from a real compound ("fan-" + "out")."""
    return {w.lower() for line in lines
            for w in re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*", line.text) if len(w) >= 3}


def _join(text: str, nxt: str, words: set[str]) -> str:
    if text[-1] in "/_":
        return text + nxt  # a path wrapped at a separator
    if text[-1] == "-" and text[-2:-1].isalpha():
        head = re.search(r"([A-Za-z]+)-$", text)
        tail = re.match(r"[a-z]+", nxt)
        if head and tail and (head.group(1) + tail.group(0)).lower() in words \
                and f"{head.group(1)}-{tail.group(0)}".lower() not in words:
            return text[:-1] + nxt  # hyphenated only to break the line
        return text + nxt
    return f"{text} {nxt}"


def _paragraph(lines: list[Line], section: tuple[str, ...], words: set[str]) -> Block:
    text = lines[0].text
    for prev, line in itertools.pairwise(lines):
        if abs(line.bottom - prev.bottom) < 2 and line.x0 > prev.x1 + 6:
            text = f"{text} | {line.text}"  # the next cell of a table row
        else:
            text = _join(text, line.text, words)
    kind: BlockKind = "list" if _BULLET.match(lines[0].text) else "paragraph"
    if _DOT_LEADER.search(lines[-1].text):
        kind = "toc"  # an entry ends with dot leaders and its page number
    return Block(kind, text, lines[0].page, section=section, bbox=_box(lines))


def _box(lines: list[Line]) -> tuple[float, float, float, float]:
    return (min(x.x0 for x in lines), min(x.top for x in lines),
            max(x.x1 for x in lines), max(x.bottom for x in lines))


# --- DoclingDocument ---------------------------------------------------------------------------


def to_docling(name: str, blocks: list[Block], sizes: dict[int, tuple[float, float]],
               pictures: list[tuple[int, tuple[float, float, float, float]]]
               ) -> DoclingDocument:
    """A DoclingDocument with section headers, paragraphs, list items, furniture and the
    picture boxes native docling found."""
    from docling_core.types.doc import (  # type: ignore[attr-defined]
        BoundingBox,
        ContentLayer,
        CoordOrigin,
        DocItemLabel,
        DoclingDocument,
        ProvenanceItem,
        Size,
    )

    doc = DoclingDocument(name=name)
    for page_no in sorted(sizes):
        doc.add_page(page_no=page_no, size=Size(width=sizes[page_no][0],
                                                height=sizes[page_no][1]))

    def prov(page: int | None, box: tuple[float, float, float, float] | None,
             text: str) -> ProvenanceItem | None:
        if page is None or box is None:
            return None
        return ProvenanceItem(page_no=page, charspan=(0, len(text)), bbox=BoundingBox(
            l=box[0], t=box[1], r=box[2], b=box[3], coord_origin=CoordOrigin.TOPLEFT))

    group = None  # consecutive list items share one list group
    for block in blocks:
        where = prov(block.page, block.bbox, block.text)
        if block.kind != "list":
            group = None
        if block.kind == "heading":
            doc.add_heading(text=block.text, level=max(1, min(block.level, 100)), prov=where)
        elif block.kind == "furniture":
            doc.add_text(label=DocItemLabel.PAGE_HEADER, text=block.text, prov=where,
                         content_layer=ContentLayer.FURNITURE)
        elif block.kind == "list":
            group = group or doc.add_list_group()
            doc.add_list_item(text=block.text, prov=where, parent=group)
        else:
            doc.add_text(label=DocItemLabel.TEXT, text=block.text, prov=where)
    for page, box in pictures:
        doc.add_picture(prov=prov(page, box, ""))
    return doc
