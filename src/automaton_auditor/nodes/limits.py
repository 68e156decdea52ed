"""Settings turned into the limits each tool takes. The values (and their defaults) live only
in `automaton_auditor.settings.Settings`; the tools' limit dataclasses default to the same
fields, so a tool called without limits behaves as a run with default settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from automaton_auditor.forensics.git.acquire import GitLimits
from automaton_auditor.settings import Settings

if TYPE_CHECKING:  # imported lazily: input validation must not pay for numpy and PIL
    from automaton_auditor.forensics.pdf.model import ReportLimits
    from automaton_auditor.forensics.sandbox import ReaderBounds
    from automaton_auditor.forensics.vision.candidates import VisionLimits


def git_limits(settings: Settings) -> GitLimits:
    """Acquisition limits from the run settings."""
    return GitLimits(timeout_s=settings.git_timeout_s, max_repo_mb=settings.max_repo_mb,
                     max_files=settings.max_files, depth=settings.clone_depth,
                     allowed_hosts=tuple(settings.allowed_hosts),
                     max_blob_bytes=settings.max_blob_bytes)


def report_limits(settings: Settings) -> ReportLimits:
    """Report ingestion limits from the run settings."""
    from automaton_auditor.forensics.pdf.model import ReportLimits

    return ReportLimits(max_mb=settings.max_report_mb, max_pages=settings.max_report_pages,
                        timeout_s=settings.report_timeout_s,
                        ocr=settings.ocr, max_ocr_pages=settings.max_ocr_pages,
                        ocr_budget_s=settings.ocr_budget_s)


def reader_bounds(settings: Settings) -> ReaderBounds:
    """Ceilings of the child process that reads the report."""
    from automaton_auditor.forensics.sandbox import ReaderBounds

    memory_mb = settings.reader_memory_mb
    if settings.ocr:  # the OCR engine alone needs more than a text report's reading
        memory_mb = max(memory_mb, settings.reader_ocr_memory_mb)
    return ReaderBounds(memory_mb=memory_mb, cpu_s=settings.reader_cpu_s,
                        timeout_s=settings.reader_timeout_s)


def vision_limits(settings: Settings) -> VisionLimits:
    """Diagram extraction limits from the run settings."""
    from automaton_auditor.forensics.vision.candidates import VisionLimits

    return VisionLimits(max_pages=settings.max_report_pages,
                        max_diagrams=settings.max_diagrams)


def cache_dir(settings: Settings) -> Path | None:
    """Where per-file facts are cached, if anywhere."""
    return Path(settings.cache_dir) if settings.cache_dir else None
