"""Running `audit` the way a grader runs it on hostile input, and checking the contract.

Each case gets its own folders under `tmp_path`: `sandbox/` (the inputs the case built: a
repository, a report, a rubric, an `outside/` folder with a secret), `home/` (HOME), `cwd/`
(the working directory), `out/` (--output-dir), `cache/` (AUDITOR_CACHE_DIR) and `tmp/`
(TMPDIR). The audit is a child process (`python -m automaton_auditor`), watched, measured
and, when it runs away, killed by `tests.hostile.processes`.

`check()` asserts, for every case, what the contract promises whatever the input: the exit
code and ONE `error:` (or `warning:`) line per the README's table, a report written where
the contract says so, no canary, no write outside out/, cache/ and tmp/, no traceback, a
peak RSS under `RSS_CEILING_MB`, no process left behind and no hang (`HANG_TIMEOUT_S`).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.hostile.processes import clean_up, live_pids, measure, pids_cgroup, remove_cgroup

HANG_TIMEOUT_S = 60.0
# For inputs the contract says are refused at once (FIFOs, devices, huge files): still
# generous (a whole audit takes 2-5 s), and a hang costs less while it is not fixed.
REFUSE_TIMEOUT_S = 30.0
# For a case marked `hangs()` (a known hang, not fixed yet): the watchdog that turns it into
# a failure fires sooner, so that known hangs do not dominate the suite's time. A fixed case
# is refused in about a second, well inside it, and turns red (XPASS).
KNOWN_HANG_TIMEOUT_S = 10.0
RSS_CEILING_MB = 1024
PROCESS_CEILING = 60  # processes of one audit at any sampled moment
WRITABLE = ("out", "cache", "tmp")


@dataclass
class Case:
    """The folders of one case; `sandbox` is where its inputs are built."""

    root: Path
    watched: tuple[Path, ...] = ()  # shared inputs (module fixtures) that must not change
    cache: Path | None = None  # a cache shared by a module's cases (default: the case's own)
    hang_timeout: float | None = None  # set for a case marked `hangs()`
    extra_env: dict[str, str] = field(default_factory=dict)  # e.g. tracing to a local fake

    # 40 hex digits: read as a commit id or quoted, it would show up in the output.
    secret: str = field(default_factory=lambda: secrets.token_hex(20))

    def __post_init__(self) -> None:
        for name in ("sandbox", "home", "cwd", *WRITABLE):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        (self.sandbox / "outside").mkdir(exist_ok=True)
        (self.sandbox / "outside" / "secret.txt").write_text(self.secret + "\n")

    @property
    def sandbox(self) -> Path:
        return self.root / "sandbox"

    @property
    def out(self) -> Path:
        return self.root / "out"

    @property
    def canary(self) -> Path:
        """The file every planted payload tries to create."""
        return self.sandbox / "outside" / "CANARY"

    def env(self) -> dict[str, str]:
        """The child's environment: offline, with every place it may write inside the case."""
        keep = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "VIRTUAL_ENV")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(HOME=str(self.root / "home"), TMPDIR=str(self.root / "tmp"),
                   AUDITOR_CACHE_DIR=str(self.cache or self.root / "cache"),
                   XDG_CACHE_HOME=str(self.root / "cache" / "xdg"),
                   XDG_CONFIG_HOME=str(self.root / "home" / ".config"),
                   LANGSMITH_TRACING="false",
                   LANGCHAIN_TRACING_V2="false", NO_COLOR="1", COLUMNS="200")
        env.update(self.extra_env)
        return env


@dataclass
class Result:
    """What one audit did."""

    args: list[str]
    code: int | None  # None: killed (hang or memory guard)
    stdout: str
    stderr: str
    seconds: float
    # The largest peak RSS (VmHWM) of any process of the audit, sampled every `processes.SAMPLE_S`.
    peak_rss_mb: float
    # wait4's ru_maxrss: the audit and the children it waited for. An upper bound: Linux
    # keeps the RSS this process had when it forked the audit.
    wait4_rss_mb: float
    peak_total_mb: float  # the largest sampled sum of the audit's processes' RSS
    peak_processes: int
    cpu_seconds: float = 0.0
    killed: str = ""
    leftovers: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    case: Case | None = None

    def lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]

    def describe(self) -> str:
        killed = f", {self.killed}" if self.killed else ""
        return (f"audit {' '.join(self.args)!s:.300}\n"
                f"  exit {self.code} in {self.seconds:.1f}s ({self.cpu_seconds:.1f}s CPU), "
                f"peak RSS {self.peak_rss_mb:.0f} MB (wait4 {self.wait4_rss_mb:.0f} MB, all "
                f"processes {self.peak_total_mb:.0f} MB), "
                f"{self.peak_processes} processes{killed}\n"
                f"  stderr: {self.stderr[-1500:]!r}\n  stdout: {self.stdout[-300:]!r}")


def snapshot(roots: list[Path]) -> dict[str, tuple[Any, ...]]:
    """Every path under the roots (not following links): type, size, mtime, link target."""
    out: dict[str, tuple[Any, ...]] = {}
    for root in roots:
        if not root.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                full = Path(dirpath) / name
                info = full.lstat()
                link = os.readlink(full) if full.is_symlink() else ""
                out[str(full)] = (info.st_mode, info.st_size, info.st_mtime_ns, link)
    return out


def _watched_roots(case: Case) -> list[Path]:
    roots = [p for p in case.root.iterdir() if p.name not in WRITABLE]
    return roots + list(case.watched)


# Every audit of this session, by test id (see `worst_cases`).
MEASURED: list[tuple[str, Result]] = []


def run_audit(case: Case, *args: str, timeout: float = HANG_TIMEOUT_S,
              cwd: Path | None = None) -> Result:
    """Run `python -m automaton_auditor ARGS` in the case's environment and measure it."""
    timeout = min(timeout, case.hang_timeout or timeout)
    import subprocess

    before = snapshot(_watched_roots(case))
    top_entries = {p.name for p in case.root.iterdir()}
    stdout_path, stderr_path = case.root / "tmp" / ".stdout", case.root / "tmp" / ".stderr"
    group = pids_cgroup()
    existing = live_pids()

    def join_group() -> None:  # in the child, before exec: nothing forks before it joins
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    start = time.monotonic()
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "automaton_auditor", *args],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=case.env(), cwd=cwd or case.root / "cwd",
                                start_new_session=True, preexec_fn=join_group)
    try:
        measured = measure(proc.pid, start, timeout, existing)
    finally:
        clean_up(proc.pid, existing)
        remove_cgroup(group)
    proc.returncode = measured.pop("code")
    after = snapshot(_watched_roots(case))
    changed = sorted(set(before.items()) ^ set(after.items()))
    changed_paths = sorted({path for path, _ in changed})
    changed_paths += sorted(f"{case.root}/{name} (new)" for name in
                            {p.name for p in case.root.iterdir()} - top_entries)
    result = Result(list(args), None if measured["killed"] else proc.returncode,
                    stdout_path.read_text(errors="replace"),
                    stderr_path.read_text(errors="replace"), changed=changed_paths, case=case,
                    **measured)
    MEASURED.append((os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0], result))
    return result


def worst_cases() -> list[str]:
    """The audits of this session with the largest peak RSS and the longest time, killed
    ones (known hangs and runaways) counted apart: for the suite's summary."""
    if not MEASURED:
        return []
    done = [(name, r) for name, r in MEASURED if not r.killed]
    lines = [f"hostile: {len(MEASURED)} audits, {len(MEASURED) - len(done)} killed by the "
             f"watchdog or the memory guard"]
    if done:
        name, rss = max(done, key=lambda item: _rss(item[1]))
        lines.append(f"hostile: largest peak RSS {_rss(rss):.0f} MB ({rss.seconds:.1f} s): {name}")
        name, slow = max(done, key=lambda item: item[1].seconds)
        lines.append(f"hostile: longest {slow.seconds:.1f} s ({_rss(slow):.0f} MB): {name}")
    return lines


def _rss(result: Result) -> float:
    return max(result.peak_rss_mb, result.wait4_rss_mb, result.peak_total_mb)


def audit(case: Case, target: object, report: object, *extra: str,
          timeout: float = HANG_TIMEOUT_S) -> Result:
    """`audit TARGET REPORT --output-dir OUT -q EXTRA...` for a case."""
    return run_audit(case, str(target), str(report), "--output-dir", str(case.out), "-q",
                     *extra, timeout=timeout)


def reports(out: Path) -> list[Path]:
    """Every report.md under the output folder (the folder naming is not the contract)."""
    return sorted(out.rglob("report.md"))


def report_json(out: Path) -> dict[str, Any]:
    """The one report.json under the output folder."""
    found = sorted(out.rglob("report.json"))
    assert len(found) == 1, f"expected one report.json under {out}, found {found}"
    data: dict[str, Any] = json.loads(found[0].read_text(encoding="utf-8"))
    return data


Stream = Literal["error", "warning", "quiet", "any"]


def check(result: Result, code: int, stream: Stream = "error", *, needle: str = "",
          report: bool | None = None) -> None:
    """The contract for one case.

    stream: "error" — exactly one non-empty stderr line, starting `error:`; "warning" — no
    `error:` line and at least one `warning:` line; "quiet" — no `error:`/`warning:` line;
    "any" — no `error:` line. `needle` must appear (case-insensitive) in that line.
    report: True — a report.md and report.json were written; False — none; None — either.
    """
    case = result.case
    assert case is not None
    why = result.describe()
    assert result.code is not None, f"{result.killed}\n{why}"
    assert max(result.peak_rss_mb, result.wait4_rss_mb, result.peak_total_mb) <= RSS_CEILING_MB, \
        f"peak RSS over {RSS_CEILING_MB} MB\n{why}"
    assert "Traceback" not in result.stderr + result.stdout, why
    assert not case.canary.exists(), f"a planted payload ran\n{why}"
    planted = [p for p in case.root.rglob("CANARY*") if not p.is_dir()]
    assert not planted, f"a planted payload ran: {planted}\n{why}"
    assert result.peak_processes <= PROCESS_CEILING, f"too many processes\n{why}"
    assert not result.changed, f"wrote outside out/, cache/ and tmp/: {result.changed}\n{why}"
    leaked = [p for p in case.out.rglob("*") if p.is_file()
              and case.secret.encode() in p.read_bytes()]
    assert case.secret not in result.stdout + result.stderr and not leaked, \
        f"a file outside the target leaked into the output: {leaked}\n{why}"
    assert not result.leftovers, f"processes left behind: {result.leftovers}\n{why}"
    assert result.code == code, why
    lines = result.lines()
    errors = [line for line in lines if line.startswith("error:")]
    warnings = [line for line in lines if line.startswith("warning:")]
    if stream == "error":
        # An input error (2) is ONE line; a failed audit (3) may first warn about what it
        # left not judged, but still ends with one `error:` line.
        others = [line for line in lines if line not in errors
                  and (code == 2 or not line.startswith("warning:"))]
        assert len(errors) == 1 and not others and lines[-1] == errors[0], \
            f"expected ONE error: line\n{why}"
        picked = errors
    elif stream == "warning":
        assert not errors and warnings, f"expected warning: line(s), no error:\n{why}"
        picked = warnings
    else:
        assert not errors, why
        if stream == "quiet":
            assert not warnings, why
        picked = lines
    if needle:
        assert any(needle.lower() in line.lower() for line in picked), \
            f"{needle!r} not in the {stream} line\n{why}"
    written = reports(case.out)
    if report is True:
        assert written and list(case.out.rglob("report.json")), f"no report written\n{why}"
    elif report is False:
        assert not written, f"a report was written: {written}\n{why}"


def broken(owner: str, observed: str) -> pytest.MarkDecorator:
    """A case the code does not pass yet: strict, so it turns red (XPASS) once fixed."""
    return pytest.mark.xfail(strict=True, reason=f"{owner}: {observed}")


def hangs(owner: str, observed: str) -> tuple[pytest.MarkDecorator, ...]:
    """`broken()` for a case that hangs: its watchdog is KNOWN_HANG_TIMEOUT_S."""
    return broken(owner, observed), pytest.mark.hostile_hang


def params(rows: list[tuple[Any, ...]]) -> list[Any]:
    """pytest params from table rows `(id, *values, marks)`."""
    return [pytest.param(*values, id=name, marks=marks) for name, *values, marks in rows]


def audit_and_check(case: Case, target: object, report: object, code: int,
                    stream: Stream = "error", needle: str = "", *extra: str,
                    fast: bool = False) -> Result:
    """`audit` then `check`, with the report the README's table promises: none for an input
    error (exit 2: an earlier report is never overwritten), written otherwise (a partial one
    for exit 3). `fast`: the contract refuses this input at once, so a shorter hang timeout
    applies."""
    result = audit(case, target, report, *extra,
                   timeout=REFUSE_TIMEOUT_S if fast else HANG_TIMEOUT_S)
    check(result, code, stream, needle=needle, report=code != 2)
    return result
