"""Opt-in OCR for scanned reports (no text layer), fully offline.

Uses `rapidocr-onnxruntime` (the `ocr` extra), whose wheel ships its own detection and
recognition models, so nothing is downloaded at run time. Pages are rendered with pypdfium2
and each recognised text line becomes a `Line`, so the usual structure rebuilding applies.
Enabled by `ReportLimits.ocr` (`--ocr`, `AUDITOR_OCR=1`); capped by
`ReportLimits.max_ocr_pages` and `ReportLimits.ocr_budget_s`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.pdf.model import Line, ReportLimits

SCALE = 1.5  # render scale: pixels per PDF point


def ocr_available() -> bool:
    """True when the optional OCR engine is installed."""
    try:
        import rapidocr_onnxruntime  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def ocr_lines(path: Path, limits: ReportLimits
              ) -> tuple[list[Line], dict[int, tuple[float, float]], list[str]]:
    """Text lines recognised on the first pages of a scanned PDF, page sizes in points,
    and warnings (pages skipped by the caps)."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]
    from rapidocr_onnxruntime import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        RapidOCR,
    )

    engine = RapidOCR()
    lines: list[Line] = []
    sizes: dict[int, tuple[float, float]] = {}
    warnings: list[str] = []
    started = time.monotonic()
    pdf = pdfium.PdfDocument(str(path))
    try:
        total = len(pdf)
        for index in range(min(total, limits.max_ocr_pages)):
            if time.monotonic() - started > limits.ocr_budget_s:
                warnings.append(f"OCR stopped after {index} of {total} pages (time budget "
                                f"{limits.ocr_budget_s:.0f} s)")
                break
            page = pdf[index]
            sizes[index + 1] = (page.get_width(), page.get_height())
            result, _ = engine(page.render(scale=SCALE).to_numpy())
            lines.extend(_to_lines(result or [], index + 1))
        else:
            if total > limits.max_ocr_pages:
                warnings.append(f"OCR read the first {limits.max_ocr_pages} of {total} pages")
    finally:
        pdf.close()
    return lines, sizes, warnings


def _to_lines(result: list[Any], page: int) -> list[Line]:
    """rapidocr boxes (4 corner points, pixels) to Lines in points, top to bottom."""
    lines = []
    for box, text, score in result:
        if float(score) < 0.5 or not str(text).strip():
            continue
        xs = [p[0] / SCALE for p in box]
        ys = [p[1] / SCALE for p in box]
        top, bottom = min(ys), max(ys)
        lines.append(Line(page=page, text=" ".join(str(text).split()), x0=min(xs), top=top,
                          x1=max(xs), bottom=bottom, size=round(bottom - top, 1), bold=False))
    return sorted(lines, key=lambda line: (round(line.top / 4), line.x0))
