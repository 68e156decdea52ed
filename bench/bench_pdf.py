"""Benchmark: ingest the 44-page tedoaba corpus report and print pages/s and peak memory.

Run from the repository root:  uv run python bench/bench_pdf.py [PDF] [--runs N]
Reads ../shared/corpus/pdfs/tedoaba__Digital-Courtroom__final_report.pdf by default.
Peak RSS (ru_maxrss) covers the whole process (docling-parse allocates in C++, so
tracemalloc alone would undercount); the Python-heap peak is printed beside it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

DEFAULT = (Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "pdfs"
           / "tedoaba__Digital-Courtroom__final_report.pdf")


def _rss_mb() -> float:
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pdf", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not args.pdf.is_file():
        print(f"no such report: {args.pdf}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    import docling.document_converter  # noqa: F401  - the lazy import, timed here once

    from automaton_auditor.forensics.pdf.reader import (
        ReportLimits,
        ask,
        doc_findings,
        ingest_report,
    )

    print(f"import (package + docling): {time.perf_counter() - started:.2f} s, "
          f"RSS {_rss_mb():.0f} MB")
    rss_before = _rss_mb()
    timings = []
    for _ in range(args.runs):
        started = time.perf_counter()
        report = ingest_report(args.pdf, ReportLimits())
        timings.append(time.perf_counter() - started)
    # One more run under tracemalloc (which slows Python down) for the heap peak only.
    tracemalloc.start()
    ingest_report(args.pdf, ReportLimits())
    _, py_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    started = time.perf_counter()
    findings, facts = doc_findings(report, ["Dialectical Synthesis", "Fan-In / Fan-Out",
                                            "Metacognition", "State Synchronization"])
    ask(report, "How do the judges run in parallel?")
    analysis = time.perf_counter() - started
    pages = report.page_count
    print(f"report: {args.pdf.name}: {pages} pages, {len(report.headings)} headings "
          f"({report.heading_source}), {len(report.chunks)} chunks, "
          f"{len(facts.cited_paths)} cited paths")
    for run, seconds in enumerate(timings, start=1):
        print(f"ingest run {run}: {seconds:.2f} s = {pages / seconds:.1f} pages/s")
    best = min(timings)
    print(f"best: {pages / best:.1f} pages/s; findings + ask: {analysis * 1000:.0f} ms "
          f"({len(findings)} findings)")
    print(f"peak RSS {_rss_mb():.0f} MB (+{_rss_mb() - rss_before:.0f} MB over the imports); "
          f"Python heap peak {py_peak / 1048576:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
