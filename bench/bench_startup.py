"""Start-up cost of the command line: what a shell loop pays on every call.

    uv run python bench/bench_startup.py [--runs 15]

Prints "command → median (min–max), CPU" for `audit --help`, `audit run --help`, an argument
error (a missing REPORT) and `import automaton_auditor.graph` (what every real audit pays
before any work), plus the ten slowest imports behind `audit --help` (``-X importtime``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_audit import audit_command


def sample(args: list[str], runs: int) -> tuple[list[float], list[float], int]:
    """Wall and CPU (user+sys) seconds of `runs` calls, and the last exit code."""
    walls, cpus, code = [], [], 0
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
        code = os.waitstatus_to_exitcode(status)
    return walls, cpus, code


def slowest_imports(args: list[str], count: int = 10) -> list[str]:
    """The slowest cumulative imports of one call, from ``python -X importtime``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                          text=True, check=False)
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    top = [r for r in rows if not r[1].startswith("    ")]  # top-level imports only
    return [f"{us / 1000:7.1f} ms  {name.strip()}" for us, name in sorted(top)[-count:][::-1]]


def main() -> None:
    """Run each command `--runs` times and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    audit = audit_command()
    cases = {
        "audit --help": [*audit, "--help"],
        "audit run --help": [*audit, "run", "--help"],
        "audit only-one-argument  [usage error, exit 2]": [*audit, "only-one-argument"],
        "python -c 'import automaton_auditor.graph'": [
            sys.executable, "-c", "import automaton_auditor.graph"],
    }
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    for label, command in cases.items():
        walls, cpus, code = sample(command, args.runs)
        print(f"{label} → {statistics.median(walls):.3f} s median "
              f"({min(walls):.3f}–{max(walls):.3f} s, n={len(walls)}), "
              f"CPU {statistics.median(cpus):.3f} s, exit {code}")
    print("slowest top-level imports of `audit --help`:")
    for line in slowest_imports(["-m", "automaton_auditor", "--help"]):
        print(f"  {line}")


if __name__ == "__main__":
    main()
