"""Benchmark of the repository detective on a real repository.

    uv run python bench/bench_repo.py PATH_TO_GIT_REPO [--runs 3] [--workers N] [--clone]

Acquires PATH (a local ``--no-local`` partial clone, as an audit does), then times the git
narrative (uncached: the detectives' result cache keys it by commit) and the AST forensics,
cold (empty cache) and warm (same commit, cache filled). Prints files/s and wall times
(medians). ``--clone`` also times a full clone against the partial one.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings, python_files
from automaton_auditor.forensics.git.acquire import (
    AcquisitionError,
    Checkout,
    GitLimits,
    acquire,
    git_findings,
    parse_target,
)
from automaton_auditor.forensics.git.materialize import materialize

CPU: list[float] = []


def _timed(func, *args, **kwargs):  # type: ignore[no-untyped-def]
    # Wall time is what the user waits; CPU time of this process (children excluded) is
    # also kept because a busy machine inflates wall time.
    start, cpu = time.perf_counter(), time.process_time()
    result = func(*args, **kwargs)
    CPU.append(time.process_time() - cpu)
    return time.perf_counter() - start, result


def _clone_times(target: str, work: Path, limits: GitLimits) -> None:
    try:
        partial, _ = _timed(acquire, parse_target(target, limits), work / "p", limits)
    except AcquisitionError as exc:
        print(f"partial clone failed: {exc}")
        return
    start = time.perf_counter()
    subprocess.run(["git", "clone", "-q", "--no-local", "--no-checkout", "--", target,
                    str(work / "full")], check=True)
    full = time.perf_counter() - start
    print(f"clone (no checkout): full {full:.2f} s, partial blob:limit=1m + write "
          f"{partial:.2f} s")


def _acquire(target: str, work: Path, limits: GitLimits) -> Checkout:
    try:
        return acquire(parse_target(target, limits), work, limits)
    except AcquisitionError as exc:
        # Mirrors fetched for this machine are themselves partial clones with a few blobs
        # absent, which upload-pack refuses to filter: borrow their objects instead.
        print(f"(acquire failed: {exc}; using a --shared clone of the mirror)")
        dest = work / "shared"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", "--", target,
                        str(dest)], check=True)
        commit = subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
        home = work / "home"
        home.mkdir(exist_ok=True)
        done = materialize(dest, commit, home, limits.timeout_s, limits.max_blob_bytes)
        return Checkout(dest, commit, done.files, done.skipped)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--clone", action="store_true")
    args = parser.parse_args()
    limits = GitLimits(timeout_s=600, max_repo_mb=4000, max_files=500_000)
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(tmp)
        if args.clone:
            _clone_times(args.repo, work / "clones", limits)
        acquired, checkout = _timed(_acquire, args.repo, work, limits)
        py = len(python_files(checkout.files))
        print(f"{args.repo}: {len(checkout.files)} files, {py} Python files audited, "
              f"acquire {acquired:.2f} s")
        # the narrative is not cached here: the detectives' result cache keys it by commit
        log_times = [_timed(git_findings, checkout.path, limits)[0] for _ in range(args.runs)]
        cold, warm, cold_cpu, warm_cpu = [], [], [], []
        for run in range(args.runs):
            cache = work / f"cache{run}"
            cold.append(_timed(code_findings, checkout.path, checkout.files, cache,
                               args.workers)[0])
            cold_cpu.append(CPU[-1])
            warm.append(_timed(code_findings, checkout.path, checkout.files, cache,
                               args.workers)[0])
            warm_cpu.append(CPU[-1])
        findings, graph = code_findings(checkout.path, checkout.files, work / "cache0")
        c, w, g = (statistics.median(x) for x in (cold, warm, log_times))
        print(f"git narrative: {g:.3f} s")
        print(f"AST cold: {c:.3f} s ({py / c:,.0f} files/s)   warm: {w:.3f} s "
              f"({py / w:,.0f} files/s)")
        print(f"AST CPU time of this process: cold {statistics.median(cold_cpu):.3f} s, "
              f"warm {statistics.median(warm_cpu):.3f} s")
        print(f"detective total (narrative + AST): cold {g + c:.3f} s, warm AST {g + w:.3f} s")
        print(f"{len(findings)} findings; graph nodes: {len(graph.nodes) if graph else 0}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
