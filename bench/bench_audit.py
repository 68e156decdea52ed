"""Wall time and peak memory of whole audits through the real command line (offline bench).

    uv run python bench/bench_audit.py [--runs 3] [--repo DIR] [--report PDF]

Inputs: the generated benchmark repository (`make_fixture_repo.py`, ~10,000 lines, 250
commits; built in a temporary directory unless --repo is given) and the 44-page corpus report
(``../shared/corpus/pdfs/tedoaba__Digital-Courtroom__final_report.pdf`` beside the checkout).

Prints, as "command → median (min–max)":
- cold audit: an empty cache directory every run;
- warm re-audit: the same commit and report again, with the cache the cold run filled;
- a reworded rubric: every fact from the cache, but the graph runs (judges, Chief Justice);
- --no-cache audit (what the cold path costs without writing the cache).
Peak memory is the maximum resident set size of the audit process (``wait4``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT.parent / "shared" / "corpus" / "pdfs" / "tedoaba__Digital-Courtroom__final_report.pdf"
sys.path.insert(0, str(Path(__file__).parent))


def audit_command() -> list[str]:
    """The installed console script (what a user runs), else `python -m`."""
    script = Path(sys.executable).parent / "audit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "automaton_auditor"]


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr is not None:
        err = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
        if proc.returncode not in (0, 1) and err:
            print(f"  ! exit {proc.returncode}: {err.splitlines()[-1]}", file=sys.stderr)
    return wall, usage.ru_maxrss / 1024, proc.returncode


def summary(label: str, samples: list[tuple[float, float, int]]) -> str:
    """One figure line: median wall (min–max), peak memory, exit codes."""
    walls = [s[0] for s in samples]
    peak = max(s[1] for s in samples)
    codes = sorted({s[2] for s in samples})
    return (f"{label} → {statistics.median(walls):.2f} s median "
            f"({min(walls):.2f}–{max(walls):.2f} s, n={len(walls)}), "
            f"peak RSS {peak:.0f} MB, exit {codes}")


def _rubric_variant(work: Path) -> Path:
    """The embedded rubric with one criterion renamed: same facts, a different result."""
    import json

    from automaton_auditor.rubric import load_rubric

    data = load_rubric().model_dump()
    data["dimensions"][0]["name"] += " (reworded)"
    path = work / "rubric-reworded.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def bench(repo: Path, report: Path, runs: int, work: Path) -> list[str]:
    """Cold, warm and no-cache audits, `runs` each."""
    base = [*audit_command(), str(repo), str(report), "--quiet"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    lines, cold, warm, nocache, facts = [], [], [], [], []
    rubric = _rubric_variant(work)
    for n in range(runs):
        cache = work / f"cache-{n}"
        run_env = {**env, "AUDITOR_CACHE_DIR": str(cache)}
        cold.append(timed([*base, "--output-dir", str(work / f"cold-{n}")], run_env))
        warm.append(timed([*base, "--output-dir", str(work / f"warm-{n}")], run_env))
        facts.append(timed([*base, "--output-dir", str(work / f"facts-{n}"), "--rubric",
                            str(rubric)], run_env))
        nocache.append(timed([*base, "--output-dir", str(work / f"nc-{n}"), "--no-cache"],
                             {**env, "AUDITOR_CACHE_DIR": str(work / f"nc-cache-{n}")}))
    shown = "audit <bench repo> <44-page report> --quiet"
    lines.append(summary(f"{shown}  [cold: empty cache]", cold))
    lines.append(summary(f"{shown}  [warm: same commit and report]", warm))
    lines.append(summary(f"{shown} --rubric <reworded>  [facts cached, graph runs]", facts))
    lines.append(summary(f"{shown} --no-cache", nocache))
    return lines


def main() -> None:
    """Build the inputs, run the benchmark, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--report", type=Path, default=REPORT)
    args = parser.parse_args()
    if not args.report.is_file():
        sys.exit(f"report not found: {args.report}")
    from make_fixture_repo import line_count, make_fixture_repo

    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        work = Path(tmp)
        repo = args.repo or make_fixture_repo(work / "bench-repo")
        print(f"inputs: {repo} ({line_count(repo)} lines of Python), {args.report.name}; "
              f"{os.cpu_count()} CPUs")
        for line in bench(repo, args.report, args.runs, work):
            print(line)


if __name__ == "__main__":
    main()
