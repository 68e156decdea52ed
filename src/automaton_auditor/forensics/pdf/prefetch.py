"""Reading the report in a second process while the first one starts the courtroom.

A cold audit spends most of its time on the report: importing docling and converting the
pages. Run in the graph's doc thread, that work shares one interpreter lock with the vision
thread; started here in its own process, right after the service has checked the inputs, it uses
the second core while the main process imports LangGraph and runs the other detectives. The
doc detective then takes the result (`take_doc`) instead of reading the report itself.

The child returns the same JSON a warm run reads from the cache, so the evidence is
identical either way. Any failure in the child (an unreadable report, a crash) returns None
and the detective reads the report in-process as before, with its usual error handling.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.pdf.model import ReportLimits
from automaton_auditor.storage.facts import DocFacts

log = logging.getLogger(__name__)
_pending: dict[str, tuple[Any, Future[str | None]]] = {}
WAIT_S = 900.0


def doc_facts_json(path: str, terms: list[str], limits: ReportLimits) -> str | None:
    """In the child: the report's doc facts as JSON (None when it cannot be read)."""
    from automaton_auditor.forensics.pdf.reader import ReportError, doc_findings, ingest_report
    from automaton_auditor.storage.facts import roundtrip

    try:
        report = ingest_report(Path(path), limits)
    except ReportError:
        return None  # the detective reads it again and reports why
    findings, facts = doc_findings(report, terms)
    return roundtrip(DocFacts(findings=findings, report_facts=facts,
                              warnings=list(report.warnings))).model_dump_json()


def _exit_with_parent(parent_pid: int) -> None:
    """Worker initializer: leave when the audit process dies (even by SIGKILL), since a forked
    worker holds its own end of the task pipe and would otherwise wait on it forever."""
    import os
    import time

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def start_doc(key: str, path: str, terms: list[str], limits: ReportLimits) -> None:
    """Start reading the report in a child process, for `take_doc(key)`."""
    if key in _pending:
        return
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    # fork is cheap and safe before any thread exists; otherwise spawn.
    method = "fork" if threading.active_count() == 1 else "spawn"
    try:
        import os

        executor = ProcessPoolExecutor(max_workers=1, mp_context=get_context(method),
                                       initializer=_exit_with_parent,
                                       initargs=(os.getpid(),))
        future = executor.submit(doc_facts_json, path, terms, limits)
    except (OSError, ValueError, RuntimeError):
        return  # no child: the detective does the work itself
    _pending[key] = (executor, future)


def take_doc(key: str) -> DocFacts | None:
    """The prefetched doc facts for `key` (waiting for them), or None if none were started
    or the child failed."""
    entry = _pending.pop(key, None)
    if entry is None:
        return None
    executor, future = entry
    try:
        body = future.result(timeout=WAIT_S)
    except Exception:  # a crashed or hung child: read the report in-process instead
        log.warning("report prefetch failed; reading it in-process", exc_info=True)
        body = None
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
    return DocFacts.model_validate_json(body) if body else None


def cancel_all() -> None:
    """Stop prefetches nobody took (e.g. the audit stopped before the doc detective)."""
    while _pending:
        _key, (executor, future) = _pending.popitem()
        future.cancel()
        # A running child would otherwise finish its work before the interpreter may exit.
        for process in list(getattr(executor, "_processes", {}).values()):
            process.terminate()
        executor.shutdown(wait=False, cancel_futures=True)


def prefetch_report(report_path: str, concept_terms: list[str], limits: ReportLimits,
                    cache_dir: Path | None) -> None:
    """Start reading the report for this run unless its doc facts are already cached or it
    cannot even be hashed (the graph then reports the problem)."""
    from automaton_auditor.forensics.pdf.ingest import sha256_of
    from automaton_auditor.storage.facts import doc_key, load

    try:
        key = doc_key(sha256_of(Path(report_path)), concept_terms, limits)
    except OSError:
        return
    if cache_dir is not None and load(cache_dir, "doc", key, DocFacts) is not None:
        return
    start_doc(key, report_path, concept_terms, limits)
