"""Reading the report in contained child processes, started as early as possible.

Every read of the report (docling's conversion, pypdfium2's text and rendering, OCR) runs in a
child process under `forensics.sandbox`'s ceilings, never in the audit's own process. The
command line starts both reads (`prefetch_report`) right after the inputs are checked, so they
use the second core while the audit imports LangGraph and runs the repository detective; the
doc and vision detectives then take their answers (`doc_facts`, `diagrams`), or start the child
themselves when nothing was prefetched (a batch, a LangGraph Server run).

The doc child answers with the same JSON a warm run reads from the cache, so the evidence is
identical either way. A child that fails (an unreadable report, a crash, a ceiling breached)
becomes a `ReportError` whose kind and one-line message say why.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from automaton_auditor.forensics import sandbox
from automaton_auditor.forensics.pdf.model import ErrorKind, ReportError, ReportLimits
from automaton_auditor.state import DiagramFacts
from automaton_auditor.storage.facts import DocFacts

if TYPE_CHECKING:
    from automaton_auditor.forensics.vision.candidates import VisionLimits

_KINDS = set(get_args(ErrorKind))


def vision_key(sha256: str, limits: VisionLimits) -> str:
    """Key of a report's diagram facts: its SHA-256 and the vision limits."""
    from automaton_auditor.storage.facts import limits_key, report_key

    return report_key(sha256, {"vision": limits_key(limits)})


def _doc_request(path: str, terms: list[str], limits: ReportLimits) -> dict[str, Any]:
    return {"path": path, "terms": list(terms), "limits": asdict(limits)}


def _answer(key: str, task: str, request: dict[str, Any],
            bounds: sandbox.ReaderBounds) -> Any:
    """The prefetched answer for `key`, else one read now; failures as `ReportError`."""
    try:
        job = sandbox.take(key) or sandbox.start(task, request, bounds)
        return job.result()
    except sandbox.ReaderFailed as exc:
        kind = exc.kind if exc.kind in _KINDS else "crash"
        raise ReportError(kind, str(exc)) from None  # type: ignore[arg-type]


def doc_facts(key: str, path: str, terms: list[str], limits: ReportLimits,
              bounds: sandbox.ReaderBounds) -> DocFacts:
    """The doc detective's facts of the report; `ReportError` when it cannot be read."""
    answer = _answer(key, "doc", _doc_request(path, terms, limits), bounds)
    try:
        return DocFacts.model_validate(answer)
    except ValueError:
        raise ReportError("crash", "the PDF reader answered something that is not doc "
                                   "facts") from None


def diagrams(key: str, path: str, limits: VisionLimits, bounds: sandbox.ReaderBounds
             ) -> tuple[list[DiagramFacts], list[bytes]]:
    """The report's diagram candidates and their PNGs; `ReportError` when it cannot be
    read."""
    answer = _answer(key, "vision", {"path": path, "limits": asdict(limits)}, bounds)
    try:
        found = [DiagramFacts.model_validate(d) for d in answer["diagrams"]]
        images = [base64.b64decode(png, validate=True) for png in answer["images"]]
    except (KeyError, TypeError, ValueError, binascii.Error):
        raise ReportError("crash", "the PDF reader answered something that is not "
                                   "diagrams") from None
    if len(images) != len(found):
        raise ReportError("crash", "the PDF reader answered diagrams without their images")
    return found, images


def cancel_all() -> None:
    """Stop reads nobody took (e.g. the audit stopped before the detectives)."""
    sandbox.cancel_all()


def prefetch_report(report_path: str, concept_terms: list[str], limits: ReportLimits,
                    vision_limits: VisionLimits, bounds: sandbox.ReaderBounds,
                    cache_dir: Path | None, vision_cached: bool = True) -> None:
    """Start reading the report for this run, each read unless its facts are already cached
    (`vision_cached=False`: diagram facts are never cached, with a vision model) or the
    report cannot even be hashed (the graph then reports the problem)."""
    from automaton_auditor.forensics.pdf.ingest import sha256_of
    from automaton_auditor.storage.facts import VisionFacts, doc_key, load

    try:
        sha = sha256_of(Path(report_path))
    except OSError:
        return
    key = doc_key(sha, concept_terms, limits)
    if cache_dir is None or load(cache_dir, "doc", key, DocFacts) is None:
        sandbox.start_keyed(key, "doc", _doc_request(report_path, concept_terms, limits),
                            bounds)
    key = vision_key(sha, vision_limits)
    if not vision_cached or cache_dir is None or load(cache_dir, "vision", key,
                                                      VisionFacts) is None:
        sandbox.start_keyed(key, "vision", {"path": report_path,
                                            "limits": asdict(vision_limits)}, bounds)
