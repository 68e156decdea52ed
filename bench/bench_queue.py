"""`audit batch --queue` throughput with one and with two `audit worker`s.

    uv run --extra scale python bench/bench_queue.py [--rows 12] [--runs 3] [--files 10]

Installs PostgreSQL and Redis when missing (`.ci/install-servers`, as root with apt-get),
starts both as child processes on free 127.0.0.1 ports, and for 1 and 2 workers: starts the
workers, warms them up with one small batch (imports, first report), then times `runs`
batches of `rows` rows submitted with `audit batch --queue` (wall time from submission to the
last result). Every row has its own repository (`make_fixture_repo.py`, a different seed
each) and its own two-page report, as a cohort would; batches run with `--no-cache` so that
every run does the same work. Prints audits per minute and seconds per audit (medians), and
stops everything it started by PID.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))
from make_fixture_repo import make_fixture_repo  # noqa: E402
from tests.integration.conftest import make_report_pdf  # noqa: E402
from tests.integration.servers import (  # noqa: E402
    missing_servers,
    postgres_server,
    redis_server,
    stop_pid,
)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "automaton_auditor", *args]


def _pairs(work: Path, rows: int, files: int, name: str) -> Path:
    lines = ["target,report"]
    for row in range(rows):
        repo = make_fixture_repo(work / f"{name}-repos" / f"team-{row:03d}", files, seed=row)
        report = make_report_pdf(work / f"{name}-report-{row:03d}.pdf", f"Report {row}")
        lines.append(f"{repo},{report}")
    path = work / f"{name}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextlib.contextmanager
def _workers(count: int, broker: str, database: str, work: Path) -> Iterator[None]:
    processes = []
    try:
        for n in range(count):
            env = {**os.environ, "AUDITOR_DATABASE_URL": database, "HF_HUB_OFFLINE": "1",
                   "AUDITOR_CACHE_DIR": str(work / f"cache-{count}-{n}")}
            log = (work / f"worker-{count}-{n}.log").open("wb")
            processes.append(subprocess.Popen(
                _cli("worker", "--queue", broker, "--name", f"bench{n}@%h", "-q",
                     "--root", str(work)),
                env=env, stdout=log, stderr=subprocess.STDOUT))
        yield
    finally:
        for process in processes:
            stop_pid(process)


def _batch(pairs: Path, broker: str, out: Path) -> float:
    """Wall seconds of one queued batch (submission to last result)."""
    started = time.perf_counter()
    result = subprocess.run(_cli("batch", str(pairs), "--queue", broker, "--no-cache",
                                 "--output-dir", str(out), "-q"),
                            capture_output=True, text=True, check=False,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if result.returncode != 0:
        raise SystemExit(f"batch failed ({result.returncode}): {result.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    """Install the servers if missing, then measure one and two workers."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=12)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=10, help="files per fixture repository")
    args = parser.parse_args()
    if missing_servers():
        subprocess.run(["bash", str(ROOT / ".ci" / "install-servers")], check=True)
    if missing_servers():
        raise SystemExit(f"cannot run without {missing_servers()}")
    with tempfile.TemporaryDirectory(prefix="bench-queue-") as tmp, \
            postgres_server() as database, redis_server() as broker:
        work = Path(tmp)
        warm = _pairs(work, 2, args.files, "warm")
        pairs = _pairs(work, args.rows, args.files, "rows")
        for count in (1, 2):
            with _workers(count, broker, database, work):
                _batch(warm, broker, work / f"warm-{count}")
                walls = [_batch(pairs, broker, work / f"out-{count}-{n}")
                         for n in range(args.runs)]
            wall = statistics.median(walls)
            print(f"audit batch <{args.rows} rows> --queue, {count} worker(s) → "
                  f"{60 * args.rows / wall:.1f} audits/min, {wall / args.rows:.2f} s per audit "
                  f"(median wall {wall:.1f} s of {args.runs}: "
                  f"{', '.join(f'{w:.1f}' for w in walls)})", flush=True)


if __name__ == "__main__":
    main()
