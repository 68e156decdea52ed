"""Data types shared by the report-ingestion modules (`pdf_*`), kept apart to avoid cycles.

`tools.pdf` re-exports the public ones; import them from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from automaton_auditor.settings import default

if TYPE_CHECKING:  # docling is imported lazily: importing it costs seconds.
    from docling_core.types.doc import DoclingDocument  # type: ignore[attr-defined]

ErrorKind = Literal[
    "missing", "empty", "not_pdf", "encrypted", "corrupt", "too_large", "too_many_pages",
    "no_text_layer", "unsupported",
    # the contained reader's own failures (`forensics.sandbox`): a ceiling, or a crash
    "memory", "cpu_time", "timeout", "crash",
]


class ReportError(ValueError):
    """A report that cannot be read; `kind` says why, the message is one line."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(" ".join(message.split()))
        self.kind: ErrorKind = kind


@dataclass(frozen=True)
class ReportLimits:
    """Caps applied before and while reading a report (hostile input)."""

    max_mb: int = default("max_report_mb")
    max_pages: int = default("max_report_pages")
    # docling's own per-document timeout; a partial result is kept with a warning.
    timeout_s: float = default("report_timeout_s")
    # Below this many non-blank characters a page counts as having no text layer.
    min_page_chars: int = 25
    # Opt-in OCR of scanned reports: at most this many pages, within this many seconds.
    ocr: bool = default("ocr")
    max_ocr_pages: int = default("max_ocr_pages")
    ocr_budget_s: float = default("ocr_budget_s")


@dataclass
class Chunk:
    """A retrieval unit: at most ~1,000 characters from one page under one heading."""

    text: str
    page: int | None
    heading: str | None
    index: int


@dataclass
class Line:
    """One text line of a PDF page, top-left coordinates, with its font traits."""

    page: int
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool

    @property
    def size_class(self) -> float:
        """The font size to the half point: sizes are compared at that resolution."""
        return round(self.size * 2) / 2

    @property
    def width(self) -> float:
        """Horizontal extent of the line."""
        return self.x1 - self.x0


BlockKind = Literal["heading", "paragraph", "list", "toc", "furniture"]


@dataclass
class Block:
    """A structural unit of the report: heading, paragraph, list item, table-of-contents
    entry or page furniture.

    `section` is the heading path above the block (outermost first), which the concept
    classifier reads to tell an architecture section from a summary.
    """

    kind: BlockKind
    text: str
    page: int | None
    level: int = 0
    section: tuple[str, ...] = ()
    bbox: tuple[float, float, float, float] | None = None  # l, t, r, b (top-left origin)

    @property
    def heading(self) -> str | None:
        """The innermost heading above the block (a heading is its own)."""
        if self.kind == "heading":
            return self.text
        return self.section[-1] if self.section else None


@dataclass(frozen=True)
class HiddenText:
    """A run of text the page does not show (`pdf.hidden`): page (1-based), the text, how it
    is hidden and where (left, top, right, bottom in points from the page's top-left)."""

    page: int
    text: str
    how: str  # white | transparent | invisible | tiny | off-page | covered
    box: tuple[float, float, float, float]


@dataclass
class IngestedReport:
    """A report read into structure: headings, blocks, chunks and a DoclingDocument."""

    path: Path
    sha256: str
    page_count: int
    headings: list[tuple[int, int, str]]  # (level, page, text); page 0 when unpaginated
    chunks: list[Chunk]
    document: DoclingDocument
    warnings: list[str]
    blocks: list[Block] = field(default_factory=list)
    source_format: str = "pdf"
    heading_source: str = "none"  # outline | markdown | fonts | docling | none
    text_pages: int = 0
    javascript: bool = False
    ocr: bool = False  # text recovered by OCR: structure and wording are less reliable
    # The same pages as a second extractor (pypdfium2) reads them, for cited paths.
    page_texts: dict[int, str] = field(default_factory=dict)
    # Text left out of what the report is judged on: runs hidden from a reader (`pdf.hidden`)
    # and the paragraphs that address the grader (`pdf.injection`).
    hidden: list[HiddenText] = field(default_factory=list)
    addressed: list[Block] = field(default_factory=list)
    # Cached BM25 index over `chunks`, built on first `ask`.
    _index: Any = field(default=None, repr=False, compare=False)
