"""Benchmark: the vision detective (model-free path) on every corpus report.

Run from the repository root:  uv run python bench/bench_vision.py [PDF ...] [--runs N]
Reads every PDF in ../shared/corpus/pdfs/ by default and prints, per report, the best of
N runs of find_diagrams + vision_findings in seconds, the candidates found by kind, and
which parts of the courtroom split the diagrams show.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "pdfs"


def _one(pdf: Path, runs: int) -> str:
    from automaton_auditor.forensics.vision.inspector import find_diagrams, vision_findings

    best = float("inf")
    for _ in range(max(runs, 1)):
        started = time.perf_counter()
        diagrams, images = find_diagrams(pdf)
        findings = vision_findings(diagrams)
        best = min(best, time.perf_counter() - started)
    kinds: dict[str, int] = {}
    for facts in diagrams:
        kinds[facts.kind] = kinds.get(facts.kind, 0) + 1
    shown = [f.facet.removeprefix("vision.flow.") for f in findings
             if f.facet.startswith("vision.flow.") and f.found
             and f.facet != "vision.flow.classification"]
    png_kb = sum(len(i) for i in images) / 1024
    return (f"{pdf.name[:60]:60} {best:6.2f} s  {kinds}  PNG {png_kb:.0f} KiB  "
            f"shows: {', '.join(shown) or '-'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pdfs", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    pdfs = args.pdfs or sorted(CORPUS.glob("*.pdf"))
    if not pdfs:
        print(f"no reports given and none in {CORPUS}", file=sys.stderr)
        return 2
    for pdf in pdfs:
        print(_one(pdf, args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
