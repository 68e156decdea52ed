"""The processes of one audit: found in /proc while it runs and after it ends, measured (peak
RSS, count), and killed on a hang, a memory runaway or a fork storm, so that a failing case
cannot take the shared machine down.

The audit runs in its own session and, where the machine offers one, in a pids cgroup of its
own (the kernel stops a fork storm between two samples); this process is made a child
subreaper, so that a process that leaves the session still comes back to us when its parent
dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A runaway audit is killed here.
RSS_GUARD_MB = 1280
PROCESS_GUARD = 400  # a fork storm is killed here
# And stopped by the kernel here, between two samples (tasks count threads; an audit uses a
# few dozen).
PIDS_MAX = 1000
PIDS_ROOT = Path("/sys/fs/cgroup/pids")
GRACE_S = 3.0  # how long children may take to notice the audit ended
SAMPLE_S = 0.1
PR_SET_CHILD_SUBREAPER = 36


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


def live_pids() -> frozenset[int]:
    """Every process alive now: taken before an audit starts, none of them is the audit's
    (children this test process started earlier, e.g. another suite's workers, are not)."""
    return frozenset(_table())


def _family(root: int, existing: frozenset[int]) -> dict[int, _Proc]:
    """The audit's processes besides itself: its descendants (whatever session they made),
    anything in its session, and every orphan re-parented to us (we are their subreaper)
    with its descendants; never a process in `existing`."""
    table, me = _table(), os.getpid()
    table = {pid: info for pid, info in table.items() if pid not in existing}
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


def measure(root: int, start: float, timeout: float,
            existing: frozenset[int]) -> dict[str, Any]:
    """Wait for the audit `root`, sampling its processes; kill it on a hang, a memory or
    fork runaway. Then give its children GRACE_S to end and name those still alive."""
    peak_rss = peak_total = 0.0
    peak_procs = 1
    killed = ""
    while True:
        pid, status, rusage = os.wait4(root, os.WNOHANG)
        if pid:
            break
        family = _family(root, existing)
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
    left = _family(root, existing)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = {p: v for p, v in _family(root, existing).items() if v.state != "Z"}
    return {"code": os.waitstatus_to_exitcode(status), "seconds": seconds,
            "peak_rss_mb": peak_rss, "wait4_rss_mb": rusage.ru_maxrss / 1024,
            "peak_total_mb": peak_total, "peak_processes": peak_procs,
            "cpu_seconds": rusage.ru_utime + rusage.ru_stime, "killed": killed,
            "leftovers": [f"{pid} {info.name}" for pid, info in left.items()]}


def clean_up(root: int, existing: frozenset[int]) -> None:
    """Kill whatever the audit left, until nothing is (a fork storm keeps starting more)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(root, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(root, 0)
    for _ in range(50):
        remaining = _family(root, existing)
        if not remaining:
            return
        _reap_and_kill(list(remaining))
        time.sleep(0.1)


def pids_cgroup() -> Path | None:
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


def remove_cgroup(group: Path | None) -> None:
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
