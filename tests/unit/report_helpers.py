"""Ingested reports built in the test from blocks, never from a real PDF."""

from __future__ import annotations

from pathlib import Path

from docling_core.types.doc import DoclingDocument  # type: ignore[attr-defined]

from automaton_auditor.forensics.pdf.model import Block, IngestedReport


def ingested(blocks: list[Block], page_count: int, name: str = "r.pdf") -> IngestedReport:
    """A report of `page_count` pages holding `blocks` (no headings, chunks nor warnings)."""
    return IngestedReport(path=Path(name), sha256="0", page_count=page_count, headings=[],
                          chunks=[], document=DoclingDocument(name="r"), warnings=[],
                          blocks=blocks)
