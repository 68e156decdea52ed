"""`audit batch` against single audits: N generated repositories with the 44-page report.

    uv run python bench/bench_batch.py [--count 20] [--files 50] [--runs 1]

Each repository is a fixture (`make_fixture_repo.py`, a different seed each, ~10,000 lines
and 250 commits with the default 50 files). Every measurement starts from an empty cache
directory; the report is the same for every row, so a batch (like a user re-auditing many
repositories against one rubric) parses it once per worker and reads it from the cache after.

Prints "command → median" for:
- one cold audit (empty cache: repository and report parsed);
- one audit of a new repository with the report already cached (what each batch row costs);
- `audit batch` of N rows with --parallel 1 and --parallel 2: wall, and wall per audit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_audit import REPORT, audit_command, timed
from make_fixture_repo import make_fixture_repo


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "AUDITOR_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}


def single(repos: list[Path], report: Path, work: Path, runs: int) -> list[str]:
    """A cold audit, then an audit of another repository with the report cached."""
    cold, warm_report = [], []
    for n in range(runs):
        cache = work / f"single-cache-{n}"
        args = [*audit_command(), "--quiet", "--output-dir", str(work / f"single-{n}")]
        cold.append(timed([*args[:1], str(repos[0]), str(report), *args[1:]], _env(cache)))
        warm_report.append(timed([*args[:1], str(repos[1]), str(report), *args[1:]],
                                 _env(cache)))
    return [f"audit <fixture repo> <44-page report>  [cold] → "
            f"{statistics.median(s[0] for s in cold):.2f} s median (n={runs})",
            f"audit <another fixture repo> <same report>  [report cached] → "
            f"{statistics.median(s[0] for s in warm_report):.2f} s median (n={runs})"]


def batch(repos: list[Path], report: Path, work: Path, parallel: int, runs: int) -> str:
    """`audit batch` of every repository, `runs` times; wall and wall per audit."""
    pairs = work / "pairs.csv"
    pairs.write_text("target,report\n" + "".join(f"{r},{report}\n" for r in repos),
                     encoding="utf-8")
    walls, peaks, codes = [], [], set()
    for n in range(runs):
        cache = work / f"batch-cache-{parallel}-{n}"
        out = work / f"batch-{parallel}-{n}"
        wall, peak, code = timed([*audit_command(), "batch", str(pairs), "--parallel",
                                  str(parallel), "--output-dir", str(out), "--quiet"],
                                 _env(cache))
        walls.append(wall)
        peaks.append(peak)
        codes.add(code)
    median = statistics.median(walls)
    return (f"audit batch <{len(repos)} rows> --parallel {parallel} → {median:.2f} s median "
            f"(n={runs}), {median / len(repos):.2f} s per audit, exit {sorted(codes)}")


def main() -> None:
    """Build the repositories and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--report", type=Path, default=REPORT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        work = Path(tmp)
        repos = [make_fixture_repo(work / f"repo-{i:02d}", args.files, seed=i)
                 for i in range(max(2, args.count))]
        print(f"{len(repos)} fixture repositories, {args.report.name}; {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f}")
        for line in single(repos, args.report, work, args.runs):
            print(line)
        for parallel in (1, 2):
            print(batch(repos, args.report, work, parallel, args.runs))


if __name__ == "__main__":
    main()
