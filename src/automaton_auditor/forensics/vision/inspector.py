"""The vision detective's tools: find every diagram in the report, read its flow, compare it
with the graph rebuilt from the code.

Public API (called by the vision_inspector node and the evidence aggregator):

- `find_diagrams(path, limits)` -> (diagram facts, PNG bytes per candidate, b"" for text).
  Kinds: raster, scan, vector (read from the drawing operations: nodes, edges, decisions,
  dashed = conditional; flowcharts and sequence diagrams), mermaid, dot, arrow (a flow
  written as ``a -> [b || c] -> d`` in the text). Raises `VisionError` only for a file
  that is not a PDF at all.
- `vision_findings(diagrams)` -> "vision.extract", "vision.flow.full_split",
  "vision.flow.{parallel_detectives,aggregation,parallel_judges,synthesis}" (success
  pattern), "vision.flow.linear" (failure pattern), "vision.flow.classification" (neutral),
  and "vision.drawn" (not found) when Mermaid/DOT source printed as text is all there is.
- `compare_with_code(diagrams, graph)` -> "vision.compare.nodes", "vision.compare.parallelism"
  (success pattern), "vision.compare.misleading" (failure pattern: "Misleading
  Architecture Visual") and "vision.compare.loops" (a drawn loop the code lacks).
- `analyze_with_model(diagrams, images, model)` (async) -> diagrams with `analysis` filled
  from a `DiagramAnalysis` (degraded answers marked ``{"degraded": True, ...}``).

Everything but `analyze_with_model` is model-free and deterministic.
"""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.vision.candidates import (
    Candidate,
    Render,
    VisionError,
    VisionLimits,
    WorkBudget,
    open_pdf,
    page_candidates,
    visible_text_candidates,
)
from automaton_auditor.forensics.vision.compare import compare_with_code
from automaton_auditor.forensics.vision.findings import vision_findings
from automaton_auditor.forensics.vision.model_reader import DiagramAnalysis, analyze_with_model
from automaton_auditor.forensics.vision.subject import report_subject
from automaton_auditor.state import DiagramFacts

__all__ = ["DiagramAnalysis", "VisionError", "VisionLimits", "analyze_with_model",
           "compare_with_code", "find_diagrams", "vision_findings"]

# Which candidates survive the `max_diagrams` cap first: diagrams whose flow was read, then
# drawn images, then scanned pages that look graphic, then the other scanned pages.
_KIND_ORDER = {"mermaid": 0, "dot": 0, "vector": 1, "arrow": 2, "raster": 3, "scan": 4}


def _priority(candidate: Candidate) -> tuple[int, int, int]:
    facts = candidate[0]
    scan_rank = 0 if facts.kind != "scan" or facts.data.get("likely_diagram") else 1
    return (0 if facts.edges else 1, scan_rank, _KIND_ORDER.get(facts.kind, 5))


def _page_order(candidate: Candidate) -> tuple[int, int, float]:
    facts = candidate[0]
    top = facts.data.get("bbox", [0, 0, 0, 0])[3]
    return (facts.page, _KIND_ORDER.get(facts.kind, 5), -float(top))


def _png(render: Render) -> bytes:
    try:
        return render()
    except Exception:  # a picture pdfium cannot render is sent to no model, nothing more
        return b""


def _read_pages(path: Path, limits: VisionLimits,
                ) -> tuple[list[tuple[DiagramFacts, bytes]], int, list[int], dict[str, int]]:
    """The kept candidates with their PNGs (rendered only for the kept ones, before the
    document closes), how many candidates there were, the pages that failed, and what the
    text layer says of the audited graph (`subject.report_subject`)."""
    document = open_pdf(path)
    candidates: list[Candidate] = []
    texts: list[str] = []
    skipped: list[int] = []
    seen: dict[str, DiagramFacts] = {}
    budget = WorkBudget(limits.max_work)
    try:
        for index in range(min(len(document), limits.max_pages)):
            try:
                found, text = page_candidates(document, index, limits, seen, budget)
            except Exception:  # a hostile page must not end the audit
                skipped.append(index + 1)
                found, text = [], ""
            candidates.extend(found)
            texts.append(text)
        candidates.extend(visible_text_candidates(document, texts))
        kept = sorted(candidates, key=_priority)[: limits.max_diagrams]
        kept.sort(key=_page_order)
        if budget.exhausted_at is not None:  # pages past it were read for text only
            skipped.extend(range(budget.exhausted_at, min(len(document), limits.max_pages) + 1))
        return ([(facts, _png(render)) for facts, render in kept], len(candidates),
                sorted(set(skipped)), report_subject(texts))
    finally:
        document.close()


def find_diagrams(path: Path, limits: VisionLimits | None = None,
                  ) -> tuple[list[DiagramFacts], list[bytes]]:
    """Every diagram candidate in a PDF, in page order, with PNG bytes per candidate.

    Candidates: raster images (ICC and soft-masked ones included), scanned pages, vector
    drawings (nodes and edges read from the drawing operations, region rendered), and
    Mermaid / DOT / arrow-chain source in the text layer (PNG bytes ``b""``). At most
    `limits.max_diagrams` are kept, those with a readable flow first; each kept candidate's
    ``data["candidates_total"]`` says how many there were, ``data["report_chars"]`` and
    ``data["subject_mentions"]`` how much text the report holds and how often it names the
    audited graph's parts.

    A page that fails to parse, or that comes after `limits.max_work` is spent, is read for
    its text layer only (listed in ``data["skipped_pages"]``). Raises
    `VisionError` (a ValueError with a one-line message) only when the file cannot be opened
    as a PDF at all; the caller records that message as the detective's error.
    """
    limits = limits or VisionLimits()
    kept, total, skipped, subject = _read_pages(path, limits)
    diagrams, images = [], []
    for facts, png in kept:
        extra = {"candidates_total": total, **subject,
                 **({"skipped_pages": skipped} if skipped else {})}
        diagrams.append(facts.model_copy(update={"data": {**facts.data, **extra}}))
        images.append(png)
    return diagrams, images
