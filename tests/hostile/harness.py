"""Running `audit` the way a grader runs it on hostile input, and checking the contract.

Each case gets its own folders under `tmp_path`: `sandbox/` (the inputs the case built: a
repository, a report, a rubric, an `outside/` folder with a secret), `home/` (HOME), `cwd/`
(the working directory), `out/` (--output-dir), `cache/` (AUDITOR_CACHE_DIR) and `tmp/`
(TMPDIR). The audit is a child process (`python -m automaton_auditor`) in its own session, so
that every process it starts can be found in /proc while it runs and after it ends; this
process is made a child subreaper, so that a process that leaves the session still comes
back to us when its parent dies.

`check()` asserts, for every case, what the contract promises whatever the input: the exit
code and ONE `error:` (or `warning:`) line per the README's table, a report written where
the contract says so, no canary, no write outside out/, cache/ and tmp/, no traceback, a
peak RSS under `RSS_CEILING_MB`, no process left behind and no hang (`HANG_TIMEOUT_S`).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

HANG_TIMEOUT_S = 60.0
# For inputs the contract says are refused at once (FIFOs, devices, huge files): still
# generous (a whole audit takes 2-5 s), and a hang costs less while it is not fixed.
REFUSE_TIMEOUT_S = 30.0
RSS_CEILING_MB = 1024
# A runaway audit is killed here, so that a failing case cannot take the shared machine down.
RSS_GUARD_MB = 1280
PROCESS_CEILING = 60  # processes of one audit at any sampled moment
PROCESS_GUARD = 400  # a fork storm is killed here
# And stopped by the kernel here, between two samples: the audit runs in a pids cgroup of its
# own where the machine offers one (tasks count threads; an audit uses a few dozen).
PIDS_MAX = 1000
PIDS_ROOT = Path("/sys/fs/cgroup/pids")
GRACE_S = 3.0  # how long children may take to notice the audit ended
SAMPLE_S = 0.1
WRITABLE = ("out", "cache", "tmp")
PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Case:
    """The folders of one case; `sandbox` is where its inputs are built."""

    root: Path
    watched: tuple[Path, ...] = ()  # shared inputs (module fixtures) that must not change
    cache: Path | None = None  # a cache shared by a module's cases (default: the case's own)

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
        return env


@dataclass
class Result:
    """What one audit did."""

    args: list[str]
    code: int | None  # None: killed (hang or memory guard)
    stdout: str
    stderr: str
    seconds: float
    # The largest peak RSS (VmHWM) of any process of the audit, sampled every SAMPLE_S.
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


def become_subreaper() -> None:
    """Orphans of an audit are re-parented to this process instead of init."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


@dataclass(frozen=True)
class _Proc:
    name: str
    state: str
    ppid: int
    session: int


def _table() -> dict[int, _Proc]:
    """Every live process, from /proc/<pid>/stat."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            raw = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2:].split()
        table[int(entry.name)] = _Proc(raw[raw.index("(") + 1:raw.rindex(")")], fields[0],
                                       int(fields[1]), int(fields[3]))
    return table


def _family(root: int) -> dict[int, _Proc]:
    """The audit's processes besides itself: its descendants (whatever session they made),
    anything in its session, and every orphan re-parented to us (we are their subreaper)
    with its descendants."""
    table, me = _table(), os.getpid()
    children: dict[int, list[int]] = {}
    for pid, info in table.items():
        children.setdefault(info.ppid, []).append(pid)
    seeds = [pid for pid, info in table.items()
             if pid != root and (info.ppid == me or info.session == root)]
    found = {pid: table[pid] for pid in seeds}
    stack = [root, *seeds]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found and child != root:
                found[child] = table[child]
                stack.append(child)
    return found


def _memory_kb(pid: int) -> tuple[int, int]:
    """(peak RSS since exec, current RSS) of a process in KB; zeros when it is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return 0, 0
    values = {k: int(v.split()[0]) for k, _, v in (line.partition(":") for line in lines)
              if k in ("VmHWM", "VmRSS")}
    return values.get("VmHWM", 0), values.get("VmRSS", 0)


def _reap_and_kill(pids: list[int]) -> None:
    """Kill and reap the processes the audit left behind (only those, by pid)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        # not our child: init or the audit's tree reaps it
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


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


def _measure(root: int, start: float, timeout: float) -> dict[str, Any]:
    """Wait for the audit `root`, sampling its processes; kill it on a hang, a memory or
    fork runaway. Then give its children GRACE_S to end and name those still alive."""
    peak_rss = peak_total = 0.0
    peak_procs = 1
    killed = ""
    while True:
        pid, status, rusage = os.wait4(root, os.WNOHANG)
        if pid:
            break
        family = _family(root)
        memory = [_memory_kb(p) for p in (root, *family)]
        peak_rss = max(peak_rss, max(hwm for hwm, _rss in memory) / 1024)
        peak_total = max(peak_total, sum(rss for _hwm, rss in memory) / 1024)
        peak_procs = max(peak_procs, len(family) + 1)
        elapsed = time.monotonic() - start
        if not killed and (elapsed > timeout or peak_total > RSS_GUARD_MB
                           or len(family) > PROCESS_GUARD):
            killed = (f"killed after {timeout:.0f}s (hang)" if elapsed > timeout
                      else f"killed at {peak_total:.0f} MB (memory guard)"
                      if peak_total > RSS_GUARD_MB else
                      f"killed at {len(family)} processes (fork guard)")
            with contextlib.suppress(ProcessLookupError):
                os.kill(root, signal.SIGKILL)  # reaped by wait4 above
            _reap_and_kill(list(family))
        time.sleep(SAMPLE_S)
    seconds = time.monotonic() - start
    deadline = time.monotonic() + GRACE_S
    left = _family(root)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = {p: v for p, v in _family(root).items() if v.state != "Z"}
    return {"code": os.waitstatus_to_exitcode(status), "seconds": seconds,
            "peak_rss_mb": peak_rss, "wait4_rss_mb": rusage.ru_maxrss / 1024,
            "peak_total_mb": peak_total, "peak_processes": peak_procs,
            "cpu_seconds": rusage.ru_utime + rusage.ru_stime, "killed": killed,
            "leftovers": [f"{pid} {info.name}" for pid, info in left.items()]}


def _clean_up(root: int) -> None:
    """Kill whatever the audit left, until nothing is (a fork storm keeps starting more)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(root, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(root, 0)
    for _ in range(50):
        remaining = _family(root)
        if not remaining:
            return
        _reap_and_kill(list(remaining))
        time.sleep(0.1)


def _pids_cgroup() -> Path | None:
    """A cgroup v1 pids group under this process's own, capped at PIDS_MAX tasks; None where
    there is none to write (the fork guard above still applies)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        own = next(line.split(":", 2)[2] for line in lines
                   if line.split(":")[1].split(",").count("pids"))
        group = PIDS_ROOT / own.lstrip("/") / f"hostile-{os.getpid()}-{secrets.token_hex(4)}"
        group.mkdir()
        (group / "pids.max").write_text(str(PIDS_MAX))
    except (OSError, StopIteration, IndexError):
        return None
    return group


def _remove_cgroup(group: Path | None) -> None:
    """Kill every task left in the group (and in groups the audit made under it), remove
    them all."""
    if group is None:
        return
    for _ in range(50):
        groups = [*sorted((p for p in group.rglob("*") if p.is_dir()), reverse=True), group]
        tasks = [int(pid) for g in groups
                 for pid in (g / "cgroup.procs").read_text().split()
                 if (g / "cgroup.procs").exists()]
        _reap_and_kill(tasks)
        for g in groups:
            with contextlib.suppress(OSError):
                g.rmdir()
        if not group.exists():
            return
        time.sleep(0.1)


def run_audit(case: Case, *args: str, timeout: float = HANG_TIMEOUT_S,
              cwd: Path | None = None) -> Result:
    """Run `python -m automaton_auditor ARGS` in the case's environment and measure it."""
    import subprocess

    before = snapshot(_watched_roots(case))
    top_entries = {p.name for p in case.root.iterdir()}
    stdout_path, stderr_path = case.root / "tmp" / ".stdout", case.root / "tmp" / ".stderr"
    group = _pids_cgroup()

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
        measured = _measure(proc.pid, start, timeout)
    finally:
        _clean_up(proc.pid)
        _remove_cgroup(group)
    proc.returncode = measured.pop("code")
    after = snapshot(_watched_roots(case))
    changed = sorted(set(before.items()) ^ set(after.items()))
    changed_paths = sorted({path for path, _ in changed})
    changed_paths += sorted(f"{case.root}/{name} (new)" for name in
                            {p.name for p in case.root.iterdir()} - top_entries)
    return Result(list(args), None if measured["killed"] else proc.returncode,
                  stdout_path.read_text(errors="replace"),
                  stderr_path.read_text(errors="replace"), changed=changed_paths, case=case,
                  **measured)


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
        assert len(lines) == 1 and errors, f"expected ONE error: line\n{why}"
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


def params(rows: list[tuple[Any, ...]]) -> list[Any]:
    """pytest params from table rows `(id, *values, marks)`."""
    return [pytest.param(*values, id=name, marks=marks) for name, *values, marks in rows]


def audit_and_check(case: Case, target: object, report: object, code: int,
                    stream: Stream = "error", needle: str = "", *extra: str,
                    fast: bool = False) -> Result:
    """`audit` then `check` (a report is always expected: the inputs were checked). `fast`:
    the contract refuses this input at once, so a shorter hang timeout applies."""
    result = audit(case, target, report, *extra,
                   timeout=REFUSE_TIMEOUT_S if fast else HANG_TIMEOUT_S)
    check(result, code, stream, needle=needle, report=True)
    return result
