"""The doc detective's tools: read a report into structure and say what it claims.

`ingest_report` reads a PDF through docling's model-free native pipeline (or Markdown,
DOCX, HTML through docling's own backends), rebuilds headings, paragraphs and page
furniture (`pdf_structure`), and chunks it for BM25 retrieval (`ask`). `doc_findings`
turns it into findings: the report's readability (`doc.ingest`) and, per rubric concept,
whether it is explained or only dropped (`doc.concepts.<slug>`), plus the `ReportFacts`
(cited paths and feature claims) the aggregator cross-checks. docling is imported lazily.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.pdf import hidden as pdf_hidden
from automaton_auditor.forensics.pdf import ingest as pdf_ingest
from automaton_auditor.forensics.pdf import injection, textlayer
from automaton_auditor.forensics.pdf import ocr as pdf_ocr
from automaton_auditor.forensics.pdf import structure as pdf_structure
from automaton_auditor.forensics.pdf.chunks import ask, make_chunks
from automaton_auditor.forensics.pdf.citations import Passage, cited_paths, future_flags
from automaton_auditor.forensics.pdf.concepts import (
    PLANNED,
    ConceptVerdict,
    Occurrence,
    classify,
    slug,
)
from automaton_auditor.forensics.pdf.markdown_marks import markdown_headings
from automaton_auditor.forensics.pdf.model import (
    Block,
    Chunk,
    IngestedReport,
    ReportError,
    ReportLimits,
)
from automaton_auditor.forensics.pdf.outline_fill import fill_outline
from automaton_auditor.forensics.pdf.report_claims import report_claims
from automaton_auditor.forensics.pdf.reviews import review_scopes
from automaton_auditor.state import Finding, ReportFacts

__all__ = ["Block", "Chunk", "IngestedReport", "ReportError", "ReportLimits", "ask",
           "doc_findings", "ingest_report", "unreadable_findings"]


def ingest_report(path: Path, limits: ReportLimits | None = None, *,
                  full_pipeline: bool | None = None, use_outline: bool = True) -> IngestedReport:
    """Read a report (PDF, Markdown, DOCX or HTML) into headings, blocks and chunks.

    Raises `ReportError` (one-line message, `kind` set) for missing, empty, oversized,
    non-PDF, encrypted, corrupt, over-long or text-less input; never runs embedded
    JavaScript. `full_pipeline` (default: env `AUDITOR_DOCLING_FULL=1`) tries docling's
    model pipeline first, offline, and falls back to the native one on any failure.
    `use_outline=False` ignores the PDF's bookmarks (headings then come from typography).
    `limits.ocr` (the `ocr` setting) reads a scanned report with the offline OCR extra
    instead of rejecting it as `no_text_layer`.
    """
    limits = limits or ReportLimits()
    path = Path(path)
    kind = pdf_ingest.sniff_format(path, limits)
    sha = pdf_ingest.sha256_of(path)
    if kind != "pdf":
        return _ingest_other(path, sha, kind)
    if full_pipeline is None:
        full_pipeline = os.environ.get("AUDITOR_DOCLING_FULL") == "1"
    return _ingest_pdf(path, sha, limits, full_pipeline, use_outline, limits.ocr)


def _ingest_pdf(path: Path, sha: str, limits: ReportLimits, full: bool,
                use_outline: bool = True, ocr: bool = False) -> IngestedReport:
    probe = pdf_ingest.probe_pdf(path, limits)
    warnings: list[str] = []
    if probe.javascript:
        warnings.append("the report embeds JavaScript; it was not executed")
    if full:
        report = _try_full_pipeline(path, sha, probe.page_count, warnings)
        if report is not None:
            report.javascript = probe.javascript
            return report
    converted = pdf_ingest.convert_pdf(path, limits, probe.page_count)
    if converted.partial:
        warnings.append("docling converted the report only partly (timeout or page errors)")
    # Text a reader of the page never sees is no part of what the report is judged on.
    hidden = pdf_hidden.hidden_text(path, limits)
    lines, sizes = pdf_hidden.screen_lines(converted.lines, hidden), converted.sizes
    text_pages = _text_pages(lines, limits.min_page_chars)
    if not text_pages:
        lines, sizes = _scanned(path, probe.page_count, limits, ocr, warnings)
        text_pages = _text_pages(lines, limits.min_page_chars)
    else:
        warnings.extend(_page_warnings(converted.parsed, text_pages, probe.page_count))
    skip = pdf_structure.furniture(lines, sizes)
    outline = probe.outline if use_outline else []
    marks = pdf_structure.outline_headings(lines, outline) if outline else {}
    source = "outline" if marks else "none"
    if marks:
        marks = fill_outline(lines, marks, skip)
    if not marks:
        marks = markdown_headings(lines, skip)
        source = "markdown" if marks else "none"
    if not marks:
        marks = pdf_structure.font_headings(lines, skip)
        source = "fonts" if marks else "none"
    ocr_used = any("recovered by OCR" in w for w in warnings)
    page_texts = {} if ocr_used else textlayer.page_texts(path, limits)
    blocks = textlayer.mend_blocks(pdf_structure.build_blocks(lines, marks, skip), page_texts)
    blocks, addressed = injection.screen_blocks(blocks)
    page_texts = textlayer.without(page_texts, [(h.page, h.text) for h in hidden]
                                   + [(b.page or 0, b.text) for b in addressed])
    document = pdf_structure.to_docling(path.stem, blocks, sizes, converted.pictures)
    return IngestedReport(
        path=path, sha256=sha, page_count=probe.page_count,
        headings=[(b.level, b.page or 0, b.text) for b in blocks if b.kind == "heading"],
        chunks=make_chunks(blocks), document=document, warnings=warnings, blocks=blocks,
        heading_source=source, text_pages=len(text_pages), javascript=probe.javascript,
        ocr=ocr_used, page_texts=page_texts, hidden=hidden, addressed=addressed)


def _page_warnings(parsed: set[int], text_pages: set[int], count: int) -> list[str]:
    """Name the pages that were damaged (docling could not parse them) and those that
    parsed but carry no text layer (full-page images)."""
    damaged = sorted(set(range(1, count + 1)) - parsed)
    textless = sorted(parsed - text_pages)
    notes = []
    if damaged:
        notes.append(f"{len(damaged)} of {count} pages are damaged and could not be parsed "
                     f"(pages {_ranges(damaged)})")
    if textless:
        notes.append(f"{len(textless)} of {count} pages have no text layer "
                     f"(pages {_ranges(textless)}); their content was not read")
    return notes


def _scanned(path: Path, pages: int, limits: ReportLimits, ocr: bool, warnings: list[str]
             ) -> tuple[list[Any], dict[int, tuple[float, float]]]:
    """Lines of a report without a text layer: OCR when enabled and installed, else the
    `no_text_layer` error."""
    if not textlayer.draws_an_image(path, limits):
        if replaced := pdf_ingest.replaced_bytes(path):
            raise ReportError("corrupt", f"report PDF is damaged: it was saved through a text "
                              f"conversion ({replaced} byte sequences are U+FFFD replacement "
                              "characters), so none of its "
                              f"{pages} pages can be decoded: {path.name}")
        raise ReportError("no_text_layer", f"report has no text and no image on any of its "
                          f"{pages} pages (blank, or page content that cannot be decoded): "
                          f"{path.name}; OCR would find nothing to read")
    reason = f"report has no text layer on any of its {pages} pages (scanned images?)"
    if not ocr:
        raise ReportError("no_text_layer", f"{reason}: {path.name}; --ocr (with the 'ocr' "
                          "extra installed) reads it by OCR")
    if not pdf_ocr.ocr_available():
        raise ReportError("no_text_layer", f"{reason}; OCR was requested but the 'ocr' extra "
                          f"(rapidocr-onnxruntime) is not installed: {path.name}")
    lines, sizes, notes = pdf_ocr.ocr_lines(path, limits)
    if not _text_pages(lines, limits.min_page_chars):
        raise ReportError("no_text_layer", f"{reason}; OCR found no text either: {path.name}")
    warnings.append("the report has no text layer: its text was recovered by OCR "
                    "(word spacing and accuracy may suffer)")
    warnings.extend(notes)
    return lines, sizes


def _text_pages(lines: list[Any], minimum: int) -> set[int]:
    chars: dict[int, int] = {}
    for line in lines:
        chars[line.page] = chars.get(line.page, 0) + len(line.text.replace(" ", ""))
    return {page for page, count in chars.items() if count >= minimum}


def _ranges(pages: list[int]) -> str:
    spans: list[str] = []
    for page in pages:
        if spans and spans[-1].split("-")[-1] == str(page - 1):
            spans[-1] = f"{spans[-1].split('-')[0]}-{page}"
        else:
            spans.append(str(page))
    return ", ".join(spans[:12]) + (" ..." if len(spans) > 12 else "")


def blocks_from_docling(document: Any) -> list[Block]:
    """Blocks from a DoclingDocument that already has structure (docling's own backends
    for Markdown/DOCX/HTML, or its full PDF pipeline)."""
    from docling_core.types.doc import (  # type: ignore[attr-defined]
        DocItemLabel,
        ListItem,
        SectionHeaderItem,
        TableItem,
        TextItem,
    )

    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    for item, _depth in document.iterate_items():
        page = item.prov[0].page_no if getattr(item, "prov", None) else None
        if isinstance(item, TableItem):
            text = item.export_to_markdown(doc=document)
            kind = "paragraph"
        elif isinstance(item, TextItem):
            text, kind = item.text, "paragraph"
            if item.label in (DocItemLabel.TITLE, DocItemLabel.SECTION_HEADER):
                # A title sits above level-1 section headers; levels are shifted to
                # start at 1 below (a DOCX has section headers only).
                level = item.level + 1 if isinstance(item, SectionHeaderItem) else 1
                stack = [(lvl, txt) for lvl, txt in stack if lvl < level] + [(level, text)]
                blocks.append(Block("heading", " ".join(text.split()), page, level=level,
                                    section=tuple(t for _, t in stack[:-1])))
                continue
            if item.label in (DocItemLabel.PAGE_HEADER, DocItemLabel.PAGE_FOOTER):
                kind = "furniture"
            elif isinstance(item, ListItem):
                kind = "list"
        else:
            continue
        if text.strip():
            blocks.append(Block(kind, text.strip(), page,  # type: ignore[arg-type]
                                section=tuple(t for _, t in stack)))
    top = min((b.level for b in blocks if b.kind == "heading"), default=1)
    for block in blocks:
        if block.kind == "heading":
            block.level -= top - 1
    return blocks


def _from_document(path: Path, sha: str, document: Any, pages: int, kind: str,
                   warnings: list[str], source: str) -> IngestedReport:
    blocks, addressed = injection.screen_blocks(blocks_from_docling(document))
    if not any(b.kind != "furniture" and b.text.strip() for b in blocks):
        raise ReportError("empty", f"report has no readable text: {path.name}")
    return IngestedReport(
        path=path, sha256=sha, page_count=pages,
        headings=[(b.level, b.page or 0, b.text) for b in blocks if b.kind == "heading"],
        chunks=make_chunks(blocks), document=document, warnings=warnings, blocks=blocks,
        source_format=kind, heading_source=source, addressed=addressed,
        text_pages=len({b.page for b in blocks if b.page}) or (1 if blocks else 0))


def _ingest_other(path: Path, sha: str, kind: str) -> IngestedReport:
    document = pdf_ingest.convert_other(path, kind)
    return _from_document(path, sha, document, 0, kind, [], "docling")


def _try_full_pipeline(path: Path, sha: str, pages: int, warnings: list[str]
                       ) -> IngestedReport | None:
    """docling's layout-model pipeline, offline; None (with a warning) when its models or
    torch are not installed or it fails."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        from docling.datamodel.base_models import InputFormat
        from docling.document_converter import DocumentConverter, PdfFormatOption

        converter = DocumentConverter(format_options={InputFormat.PDF: PdfFormatOption()})
        document = converter.convert(path).document
        return _from_document(path, sha, document, pages, "pdf", warnings, "docling")
    except Exception as exc:  # opt-in extra: any failure falls back
        warnings.append(f"full docling pipeline unavailable ({type(exc).__name__}); "
                        f"used the native pipeline")
        return None


# --- findings -------------------------------------------------------------------------------



def _where(page: int | None) -> str:
    return f"report p.{page}" if page else "report"


def ingest_finding(report: IngestedReport) -> Finding:
    """`doc.ingest`: the report was read, with its size and recovered structure."""
    outline = "\n".join(f"{'  ' * (level - 1)}{text} (p.{page})"
                        for level, page, text in report.headings[:80])
    return Finding(
        facet="doc.ingest", goal="The report is readable and its structure recovered",
        # a readable report is a precondition, not merit: neutral, so it never lifts a score
        found=True, pattern="neutral", content=outline or None,
        location=_where(1 if report.page_count else None),
        rationale=(f"Read {report.page_count or 'an unpaginated'} {report.source_format} "
                   f"report: {len(report.headings)} headings (from {report.heading_source}), "
                   f"{len(report.chunks)} chunks."
                   + (f" Warnings: {'; '.join(report.warnings)}." if report.warnings else "")),
        confidence=1.0,
        data={"page_count": report.page_count, "text_pages": report.text_pages,
              "headings": len(report.headings), "heading_source": report.heading_source,
              "chunks": len(report.chunks), "sha256": report.sha256,
              "format": report.source_format, "javascript": report.javascript,
              "warnings": list(report.warnings)})


def concept_finding(verdict: ConceptVerdict) -> Finding:
    """`doc.concepts.<slug>`: explained (found) versus dropped or absent (not found)."""
    term = verdict.term
    goal = f"The report explains '{term}' (how the architecture implements it), not just names it"
    deciding = verdict.deciding()
    quotes = "\n".join(f"p.{o.page} [{o.heading or '-'}]: {o.sentence}" for o in deciding)
    data: dict[str, Any] = {
        "term": term, "verdict": verdict.verdict, "occurrences": len(verdict.occurrences),
        "explained": sum(o.explained for o in verdict.occurrences),
        "pages": sorted({o.page for o in verdict.occurrences if o.page}),
        "quotes": [{"page": o.page, "heading": o.heading, "sentence": o.sentence[:400],
                    "explained": o.explained, "reason": o.reason} for o in deciding]}
    if verdict.verdict == "absent":
        return Finding(facet=f"doc.concepts.{slug(term)}", goal=goal, found=False,
                       pattern="success", location="report", confidence=0.9, data=data,
                       rationale=f"'{term}' (or a variant) never appears in the report."
                       + (f" {verdict.note}" if verdict.note else ""))
    first = deciding[0]
    data.update(loose=verdict.loose, by_substance=verdict.by_substance)
    loose = f" {verdict.note}" if verdict.loose and not verdict.by_substance else ""
    if verdict.verdict == "explained":
        why = f"Explained: {first.reason}.{loose}"
    else:
        reasons = "; ".join(dict.fromkeys(  # every deciding occurrence's reason, page named
            (f"p.{o.page}: " if o.page and len(deciding) > 1 else "") + o.reason for o in deciding))
        # read loosely (its key word, or its words apart), the phrase itself is not what appears
        what = f"words of '{term}' appear" if verdict.loose else f"'{term}' appears"
        why = (f"Keyword dropping: {what} {len(verdict.occurrences)} time(s) but "
               f"never with an explanation ({reasons}).{loose}")
    return Finding(facet=f"doc.concepts.{slug(term)}", goal=goal,
                   found=verdict.verdict == "explained", pattern="success", content=quotes,
                   location=_where(first.page), rationale=why, data=data,
                   confidence=(0.8 if verdict.verdict == "explained" else 0.75)
                   - (0.2 if verdict.loose or verdict.by_substance or _planned(deciding)
                      else 0.0))


def _planned(deciding: list[Occurrence]) -> bool:
    """Explained only as planned work: a mechanism the report says is still to be built, a
    weaker tie to the real architecture than a description of what runs."""
    return bool(deciding) and all(o.explained and o.reason.startswith(PLANNED)
                                  for o in deciding)


def report_facts(report: IngestedReport) -> ReportFacts:
    """Cited paths and feature claims, for the aggregator's cross-check."""
    blocks = textlayer.rejoined(report.blocks)
    future = future_flags((b.kind == "heading", b.level, b.text, b.section) for b in blocks)
    # a review of a peer's work quotes what an auditor found: its paths claim nothing
    review = review_scopes(blocks)
    passages = [Passage(b.page, b.text, flag, seen is not None) for b, flag, seen
                in zip(blocks, future, review, strict=True) if b.kind != "furniture"]
    cited, total = cited_paths(passages, report.page_texts)
    if total > len(cited):  # the doc detective's warnings reach the report's Errors section
        report.warnings.append(f"the report cites {total} distinct paths; only the first "
                               f"{len(cited)} (in reading order) were checked against the code")
    return ReportFacts(readable=True, page_count=report.page_count, cited_paths=cited,
                       claims=report_claims(blocks, future, review))


def doc_findings(report: IngestedReport, concepts: list[str]
                 ) -> tuple[list[Finding], ReportFacts]:
    """Findings about the report (ingestion, one per concept in rubric order) and the facts
    the aggregator cross-checks against the code."""
    findings = [ingest_finding(report)]
    if report.javascript:
        findings.append(Finding(
            facet="doc.ingest", goal="The report carries embedded JavaScript (never executed)",
            found=True, pattern="neutral", location="report", confidence=0.9,
            rationale="The PDF declares JavaScript actions; the auditor never runs them, "
                      "but an architecture report has no reason to carry active content."))
    findings += injection.judge_text_findings(report.hidden, report.addressed)
    for term in concepts:
        finding = concept_finding(classify(term, report.blocks, concepts))
        if report.ocr:  # OCR loses spacing and layout: the verdict is weaker evidence
            finding = finding.model_copy(update={
                "confidence": round(finding.confidence * 0.6, 2),
                "rationale": finding.rationale + " (Text recovered by OCR.)"})
        findings.append(finding)
    return findings, report_facts(report)


def unreadable_findings(error: ReportError) -> list[Finding]:
    """The found=False `doc.ingest` finding for a report that could not be read."""
    return [Finding(
        facet="doc.ingest", goal="The report is readable and its structure recovered",
        found=False, pattern="success", content=str(error), location="report",
        confidence=1.0, rationale=f"The report could not be read ({error.kind}): {error}",
        data={"error_kind": error.kind})]
