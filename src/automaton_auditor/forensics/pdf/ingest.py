"""Reading a report file safely: format sniffing, caps, PDF probing and docling conversion.

Reports are hostile input. Every check that can reject a file runs before docling sees it
(pypdfium2 opens the PDF without running any of its JavaScript: no form environment is
ever initialised), and every failure becomes a one-line `ReportError`.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from automaton_auditor.forensics.pdf.model import Line, ReportError, ReportLimits

if TYPE_CHECKING:
    from docling.datamodel.document import ConversionResult

# Formats docling reads without models, by file suffix.
TEXT_FORMATS = {".md": "md", ".markdown": "md", ".docx": "docx", ".html": "html",
                ".htm": "html"}
_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demibold|cmbx|sfbx|,b$", re.IGNORECASE)
_JS_MARKER = re.compile(rb"/(?:JavaScript|JS)\b")
# Pages docling converts at a time: memory is that of one batch, not of the whole report.
PAGE_BATCH = 40


@dataclass
class PdfProbe:
    """What pypdfium2 learnt about a PDF before conversion."""

    page_count: int
    outline: list[tuple[int, int, str]] = field(default_factory=list)  # (level, page, title)
    javascript: bool = False


def open_regular(path: Path) -> BinaryIO:
    """Open a file for reading only if it is a regular file: opened without blocking (a FIFO
    never hangs the run), then checked on the open descriptor (a device, a socket, a FIFO or
    a symlink to one raises `OSError` before a byte is read)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb")


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a regular file, streamed (`OSError` for anything else)."""
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sniff_format(path: Path, limits: ReportLimits) -> str:
    """Check existence, kind, size and magic bytes; return "pdf", "md", "docx" or "html"."""
    try:
        handle = open_regular(path)
    except FileNotFoundError:
        raise ReportError("missing", f"report not found: {path.name}") from None
    except OSError as exc:
        raise ReportError("missing", f"report is not a readable regular file "
                                     f"({exc.strerror}): {path.name}") from None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(1024)
    if size == 0:
        raise ReportError("empty", f"report is empty (0 bytes): {path.name}")
    if size > limits.max_mb * 1024 * 1024:
        raise ReportError("too_large", f"report is {size / 1048576:.1f} MB, over the "
                          f"{limits.max_mb} MB cap: {path.name}")
    kind = TEXT_FORMATS.get(path.suffix.lower())
    # Readers accept junk before the header; a Markdown file that quotes "%PDF-" is not one.
    if head.startswith(b"%PDF-") or (b"%PDF-" in head and kind is None):
        return "pdf"
    if kind == "docx":
        _check_docx(path, limits)
    if kind is None:
        raise ReportError("not_pdf", f"report is not a PDF (no %PDF header) nor Markdown, "
                          f"DOCX or HTML: {path.name}")
    return kind


def _check_docx(path: Path, limits: ReportLimits) -> None:
    """A DOCX is a zip: refuse a broken one, and a zip bomb by its declared sizes."""
    try:
        with zipfile.ZipFile(path) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ReportError("corrupt", f"report is not a valid DOCX (bad zip): {path.name}"
                          ) from None
    if expanded > 10 * limits.max_mb * 1024 * 1024:
        raise ReportError("too_large", f"report DOCX expands to {expanded / 1048576:.0f} MB, "
                          f"over {10 * limits.max_mb} MB: {path.name}")


# A text file this short that starts with "%PDF-" but holds no PDF object is a stand-in (a
# placeholder committed where the export should be), not a damaged export: say what it reads.
STAND_IN_BYTES = 4096
QUOTED_CHARS = 160


def text_stand_in(path: Path) -> str | None:
    """For a short file of printable text with no PDF object, its size and the start of
    what it reads (control characters and the ``%`` comment marks dropped, cut short), as
    one line; None for anything else."""
    try:
        with open_regular(path) as handle:
            data = handle.read(STAND_IN_BYTES + 1)
    except OSError:
        return None
    if len(data) > STAND_IN_BYTES or b" obj" in data or b"\0" in data:
        return None
    text = data.decode("utf-8", "replace")
    if sum(ch.isprintable() or ch in "\r\n\t" for ch in text) < 0.95 * len(text):
        return None
    words = " ".join(line.strip().lstrip("%").strip() for line in text.splitlines()[1:])
    words = "".join(ch for ch in words if ch.isprintable())
    quoted = words if len(words) <= QUOTED_CHARS else words[:QUOTED_CHARS - 1] + "…"
    return f"{len(data)} bytes; it reads: \"{quoted}\"" if quoted else f"{len(data)} bytes"


# A PDF passed through a text conversion (saved as UTF-8 text) has every byte that was not
# valid UTF-8 replaced by U+FFFD (EF BF BD): its compressed streams cannot be decoded, so its
# pages read as blank. At this share of the file the damage is the file's, not a blank page.
REPLACED_SHARE = 0.05
READ_CHUNK = 1 << 20


def replaced_bytes(path: Path) -> int:
    """How many U+FFFD replacement sequences the file holds when they make up at least
    `REPLACED_SHARE` of it (a text-converted binary), else 0. Read in bounded chunks."""
    count = size = 0
    tail = b""
    try:
        with open_regular(path) as handle:
            while chunk := handle.read(READ_CHUNK):
                data = tail + chunk
                count += data.count(b"\xef\xbf\xbd")
                tail = data[-2:] if not data.endswith(b"\xef\xbf\xbd") else b""
                size += len(chunk)
    except OSError:
        return 0
    return count if size and 3 * count >= REPLACED_SHARE * size else 0


def probe_pdf(path: Path, limits: ReportLimits) -> PdfProbe:
    """Open the PDF with pypdfium2: encryption, damage, page cap, outline, JavaScript."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]
    import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise ReportError("encrypted", f"report is password-protected: {path.name}") from None
        placeholder = text_stand_in(path)
        if placeholder is not None:
            raise ReportError("corrupt", f"report is no PDF document but a short text file "
                              f"with a PDF header ({placeholder}): {path.name}") from None
        raise ReportError("corrupt", f"report is a damaged PDF ({exc}): {path.name}") from None
    try:
        count = len(pdf)
        if count == 0:
            raise ReportError("corrupt", f"report PDF has no pages: {path.name}")
        if count > limits.max_pages:
            raise ReportError("too_many_pages", f"report has {count} pages, over the "
                              f"{limits.max_pages}-page cap: {path.name}")
        js_actions = int(pdfium_c.FPDFDoc_GetJavaScriptActionCount(pdf.raw))
        return PdfProbe(page_count=count, outline=_outline(pdf),
                        javascript=js_actions > 0 or _has_js_marker(path))
    finally:
        pdf.close()


def _outline(pdf: Any) -> list[tuple[int, int, str]]:
    """Bookmarks as (level, 1-based page, title); bounded so a hostile outline cannot loop."""
    entries: list[tuple[int, int, str]] = []
    try:
        for mark in pdf.get_toc(max_depth=8):
            dest = mark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((mark.get_title() or "").split())
            if title and index is not None and index >= 0:
                entries.append((mark.level, index + 1, title))
            if len(entries) >= 2000:
                break
    except Exception:  # a broken outline only loses a structure hint
        return entries
    return entries


def _has_js_marker(path: Path) -> bool:
    """Raw scan for JavaScript actions that pdfium's document-level count misses (links,
    annotations, OpenAction). Never executed, only reported."""
    with path.open("rb") as handle:
        return bool(_JS_MARKER.search(handle.read()))


@dataclass
class Converted:
    """What docling's native pipeline read: text lines, page sizes, the pages it parsed,
    picture boxes (page, top-left box), and whether it stopped short."""

    lines: list[Line] = field(default_factory=list)
    sizes: dict[int, tuple[float, float]] = field(default_factory=dict)
    parsed: set[int] = field(default_factory=set)
    pictures: list[tuple[int, tuple[float, float, float, float]]] = field(default_factory=list)
    partial: bool = False


def _native_converter(limits: ReportLimits) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from docling.datamodel.base_models import InputFormat
    from docling.datamodel.pipeline_options import NativePdfPipelineOptions
    from docling.document_converter import DocumentConverter, NativePdfFormatOption

    options = NativePdfPipelineOptions(generate_page_images=False,
                                       generate_picture_images=False,
                                       document_timeout=limits.timeout_s)
    return DocumentConverter(
        allowed_formats=[InputFormat.PDF],
        format_options={InputFormat.PDF: NativePdfFormatOption(pipeline_options=options)})


def convert_pdf(path: Path, limits: ReportLimits, page_count: int) -> Converted:
    """Run docling's model-free native PDF pipeline, `PAGE_BATCH` pages at a time so memory
    stays that of one batch (a 300-page report would otherwise hold every parsed page);
    raise ReportError("corrupt") when no batch converts. Past `limits.timeout_s` in all,
    the rest is left out and the result is partial."""
    from docling.datamodel.base_models import ConversionStatus

    converter = _native_converter(limits)
    done = Converted()
    started = time.monotonic()
    for first in range(1, page_count + 1, PAGE_BATCH):
        if time.monotonic() - started > limits.timeout_s:
            done.partial = True
            break
        try:
            result = converter.convert(path, raises_on_error=False,
                                       page_range=(first, min(page_count, first + PAGE_BATCH - 1)))
        except MemoryError:
            raise  # the reader's memory ceiling, said as such by the worker
        except Exception:  # hostile input: a batch the parser cannot read is left out
            done.partial = True
            continue
        if result.status not in (ConversionStatus.SUCCESS, ConversionStatus.PARTIAL_SUCCESS):
            done.partial = True
            continue
        done.partial = done.partial or result.status == ConversionStatus.PARTIAL_SUCCESS
        lines, sizes = page_lines(result)
        done.lines += lines
        done.sizes.update(sizes)
        done.parsed |= {p.page_no for p in result.pages if p.parsed_page is not None}
        done.pictures += _pictures(result)
    if not done.parsed:
        raise ReportError("corrupt", f"docling could not parse the report: {path.name}")
    return done


def _pictures(result: Any) -> list[tuple[int, tuple[float, float, float, float]]]:
    boxes = []
    sizes = {p.page_no: p.size.height for p in result.pages if p.size}
    for picture in result.document.pictures:
        for prov in picture.prov[:1]:
            box = prov.bbox.to_top_left_origin(sizes.get(prov.page_no, 792.0))
            boxes.append((prov.page_no, (box.l, box.t, box.r, box.b)))
    return boxes


def convert_other(path: Path, kind: str) -> Any:
    """Convert Markdown, DOCX or HTML with docling's model-free backends; return the
    DoclingDocument."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from docling.datamodel.base_models import ConversionStatus, InputFormat
    from docling.document_converter import DocumentConverter

    fmt = {"md": InputFormat.MD, "docx": InputFormat.DOCX, "html": InputFormat.HTML}[kind]
    try:
        result = DocumentConverter(allowed_formats=[fmt]).convert(path, raises_on_error=False)
    except Exception as exc:  # hostile input
        raise ReportError("corrupt", f"docling could not read the {kind} report "
                          f"({type(exc).__name__}): {path.name}") from None
    if result.status not in (ConversionStatus.SUCCESS, ConversionStatus.PARTIAL_SUCCESS):
        raise ReportError("corrupt", f"docling could not read the {kind} report: {path.name}")
    return result.document


def page_lines(result: ConversionResult) -> tuple[list[Line], dict[int, tuple[float, float]]]:
    """Text lines of every page (docling-parse line cells) and page sizes, top-left origin."""
    lines: list[Line] = []
    sizes: dict[int, tuple[float, float]] = {}
    for page in result.pages:
        width = page.size.width if page.size else 612.0
        height = page.size.height if page.size else 792.0
        sizes[page.page_no] = (width, height)
        parsed = page.parsed_page
        if parsed is None:
            continue
        for cell in parsed.textline_cells:
            line = _line_of(cell, page.page_no, height)
            # Text outside the page box is invisible to a reader: never count it.
            if line is not None and line.bottom > 0 and line.top < height:
                lines.append(line)
    return lines, sizes


def _line_of(cell: Any, page_no: int, page_height: float) -> Line | None:
    text = " ".join(str(cell.text).replace("\ufffe", "-").replace("\u00ad", "").split())
    if not text:
        return None
    rect = cell.rect
    xs = (rect.r_x0, rect.r_x1, rect.r_x2, rect.r_x3)
    ys = [rect.r_y0, rect.r_y1, rect.r_y2, rect.r_y3]
    if getattr(rect.coord_origin, "value", "TOPLEFT") != "TOPLEFT":
        ys = [page_height - y for y in ys]
    top, bottom = min(ys), max(ys)
    font = str(getattr(cell, "font_name", "") or "")
    return Line(page=page_no, text=text, x0=min(xs), top=top, x1=max(xs), bottom=bottom,
                size=round(bottom - top, 1), bold=bool(_BOLD_FONT.search(font)))
