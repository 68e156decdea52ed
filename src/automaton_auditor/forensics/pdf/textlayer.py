"""The report's text as a second extractor reads it: pypdfium2's text page, per page.

docling's native pipeline and pdfium break lines and identifiers differently; where they
disagree on a cited path, the cross-check takes the spelling that matches the repository.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.pdf.model import Block, ReportLimits

# A page's text beyond this many characters is not read (a hostile page can hold millions).
MAX_PAGE_CHARS = 200_000
_WRAPPED = re.compile(r"(?<=[\w.-][/_])\n(?=[\w.-])")
# A space inside an identifier as a text layer may put it: before "_", around "/", after
# "name." before an extension (`chief _justice.py`, `src/ tools`, `judges. py`).
GAP_CORE = r"(?<=[\w.-]) (?=_\w)|(?<=[\w-]/) (?=[\w.-])|(?<=\w) (?=/[\w.-])"
IDENT_GAP = re.compile(rf"{GAP_CORE}|(?<=[A-Za-z_]\.) (?=[a-z]{{1,5}}\b)")


def flowed(text: str) -> str:
    """pdfium's lines as one flow: a line ending at `/` or `_` continues the identifier on
    the next line; every other line break becomes a space."""
    text = _WRAPPED.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return re.sub(r"[ \t]*\n[ \t]*", " ", text.replace("\x02", "-").replace("\u00ad", ""))


def each_page(path: Path, limits: ReportLimits) -> Generator[tuple[int, Any], None, None]:
    """(1-based number, pypdfium2 page) of the first `limits.max_pages` pages pdfium can
    load, each closed after its turn (and the document when the loop ends or stops);
    nothing when pdfium cannot read the file."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        return
    try:
        for index in range(min(len(pdf), limits.max_pages)):
            try:
                page = pdf[index]
            except pdfium.PdfiumError:
                continue  # a damaged page: the others are still read
            try:
                yield index + 1, page
            finally:
                page.close()
    finally:
        pdf.close()


def page_texts(path: Path, limits: ReportLimits) -> dict[int, str]:
    """Text of each page (1-based), flowed; {} when pdfium cannot read the file."""
    texts: dict[int, str] = {}
    for number, page in each_page(path, limits):
        textpage = page.get_textpage()
        try:
            count = min(textpage.count_chars(), MAX_PAGE_CHARS)
            texts[number] = flowed(textpage.get_text_range(0, count))
        finally:
            textpage.close()
    return texts


def without(texts: dict[int, str], pieces: list[tuple[int, str]]) -> dict[int, str]:
    """The page texts with each (page, text) piece taken out (text left out of what the report
    is judged on must not come back through the second extractor)."""
    if not pieces:
        return texts
    kept = dict(texts)
    for page, piece in pieces:
        words = " ".join(piece.split())
        if page in kept and words:
            kept[page] = " ".join(kept[page].split()).replace(words, " ")
    return kept


def mend(text: str, other: str) -> str:
    """`text` with each identifier gap closed where the `other` extractor's text of the same
    page reads the identifier whole (and never with the gap): `build _graph` becomes
    `build_graph` when pdfium read `build_graph`; `the _private` helper stays as written."""
    if not other:
        return text
    pieces: list[str] = []
    last = 0
    for match in IDENT_GAP.finditer(text):
        left = text[:match.start()].rsplit(None, 1)[-1] if text[:match.start()].strip() else ""
        rest = text[match.end():].split(None, 1)
        right = rest[0] if rest else ""
        if left and right and left + right in other and f"{left} {right}" not in other:
            pieces.append(text[last:match.start()])
            last = match.end()
    return "".join(pieces) + text[last:] if pieces else text


def mend_blocks(blocks: list[Block], texts: dict[int, str]) -> list[Block]:
    """Blocks whose identifier gaps the second extractor's page text shows to be spurious."""
    mended = []
    for block in blocks:
        other = texts.get(block.page or 0, "")
        text = mend(block.text, other) if " " in block.text and other else block.text
        mended.append(block if text == block.text else replace(block, text=text))
    return mended


_CONTINUED = re.compile(r"^\s*\.[A-Za-z_]")


def rejoined(blocks: list[Block]) -> list[Block]:
    """The blocks, with one that starts with a method name (``.with_structured_output(...)``,
    a line the text layer broke before the dot) joined to the block before it: the sentence
    it ends begins there ("When added, Judges must use")."""
    out: list[Block] = []
    for block in blocks:
        if out and _CONTINUED.match(block.text) and out[-1].kind != "furniture":
            out[-1] = replace(out[-1], text=f"{out[-1].text} {block.text.strip()}")
        else:
            out.append(block)
    return out


def draws_an_image(path: Path, limits: ReportLimits) -> bool:
    """Whether some page draws an image (a scanned page is one). A report with no text layer
    and no image has nothing OCR could read: blank pages, or content pdfium cannot decode
    (a PDF whose bytes a text conversion mangled)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

    from automaton_auditor.forensics.vision.vector import page_objects

    pages = each_page(path, limits)
    try:
        for _number, page in pages:
            try:
                if next(page_objects(page, (pdfium_c.FPDF_PAGEOBJ_IMAGE,)), None) is not None:
                    return True
            except pdfium.PdfiumError:
                continue
    finally:
        pages.close()
    return False
