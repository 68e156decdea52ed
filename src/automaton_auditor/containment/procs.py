"""The process table and the watchdog, in the standard library only: the watchdog runs this
file by path (``python -I -S procs.py``), without the package or site-packages.

The watchdog is a process in a session of its own that holds a pipe from the audit. It notes
what the audit registers -- sessions ("+sid" / "-sid"), its pids cgroup ("c<dir>") and scratch
directories ("d<dir>" / "r<dir>") -- and when the pipe closes (the audit ended, however it
ended: SIGKILL, the hard exit at the end of a stop's grace period) it kills the sessions still
registered, removes the cgroup and the scratch directories still there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import Mapping

_LINUX = sys.platform.startswith("linux")


def session_members(sid: int, table: Mapping[int, tuple[int, str]] | None = None
                    ) -> list[int]:
    """Live (non-zombie) processes of session `sid`."""
    rows = process_table() if table is None else table
    return [pid for pid, (session, state) in rows.items() if session == sid and state != "Z"]


def process_table() -> dict[int, tuple[int, str]]:
    """pid -> (session id, state) of every process, read from ``/proc``."""
    table: dict[int, tuple[int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                raw = handle.read(512)
        except OSError:
            continue
        fields = raw[raw.rfind(b")") + 2:].split()
        if len(fields) > 3:
            table[int(name)] = (int(fields[3]), fields[0].decode("ascii", "replace"))
    return table


def kill_session(sid: int, attempts: int = 200) -> None:
    """SIGKILL every process of session `sid` until none is left (bounded attempts).

    The group is signalled only while members exist: a session id no process uses any
    more may have been handed to an unrelated process."""
    if not _LINUX:
        with contextlib.suppress(OSError):
            os.killpg(sid, signal.SIGKILL)
        return
    for _ in range(attempts):
        members = session_members(sid)
        if not members:
            return
        with contextlib.suppress(OSError):
            os.killpg(sid, signal.SIGKILL)
        for pid in members:  # a member that moved to a group of its own
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def tree_size(pid: int, stop: int) -> int:
    """Processes in the tree under `pid` (itself included), counted up to `stop`, from the
    ``/proc/<pid>/task/<pid>/children`` lists."""
    pending, seen = [pid], 0
    while pending and seen < stop:
        current = pending.pop()
        seen += 1
        try:
            with open(f"/proc/{current}/task/{current}/children", "rb") as handle:
                pending += [int(p) for p in handle.read().split()]
        except (OSError, ValueError):
            continue
    return seen


def watchdog_main() -> None:
    """Read the audit's registrations until the pipe closes, then clean up after it."""
    live: set[int] = set()
    groups: list[str] = []
    scratch: set[str] = set()
    for line in sys.stdin:
        sign, value = line[:1], line[1:].rstrip("\n")
        if sign == "c":
            groups.append(value)
        elif sign in "dr" and value:
            (scratch.add if sign == "d" else scratch.discard)(value)
        elif value.strip().isdigit():
            (live.add if sign == "+" else live.discard)(int(value))
    for sid in live:
        kill_session(sid)
    for group in groups:
        for _ in range(100):  # empty now; the kernel may take a moment to let go
            with contextlib.suppress(OSError):
                os.rmdir(group)
                break
            time.sleep(0.01)
    for directory in scratch:  # its processes are dead: nothing writes there any more
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":  # run by path, without site-packages: the stdlib only
    watchdog_main()
