"""Contained child processes: their whole session dies on close, at a breach of their bounds,
when the audit is stopped (SIGTERM, SIGHUP) and when it is killed (SIGKILL). Processes are
found by sampling /proc, never by timing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from automaton_auditor.containment import (
    MARKER,
    PROCESS_LIMIT,
    TIMEOUT,
    Bounds,
    session_members,
    spawn,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
# A shell whose children outlive it inside the session (one even double-forks away).
FORKER = "sleep 300 & (sleep 300 &) ; sleep 300"


def marked(value: str) -> list[int]:
    """Live processes whose environment carries MARKER=value."""
    needle = f"{MARKER}={value}".encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if state != b"Z" and needle in environ + b"\0":
            found.append(int(name))
    return found


def until(check: Callable[[], bool], limit_s: float = 20.0) -> bool:
    """Poll `check` until it holds (a generous bound, not a timing assertion)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_close_kills_the_whole_session() -> None:
    child = spawn(["sh", "-c", FORKER], bounds=Bounds(timeout_s=60))
    assert until(lambda: len(session_members(child.pid)) >= 4)
    child.close()
    assert session_members(child.pid) == []
    assert child.breach == ""


def test_children_carry_the_marker() -> None:
    with spawn(["sh", "-c", f'printf %s "${MARKER}"'], bounds=Bounds(timeout_s=60),
               stdout=subprocess.PIPE) as child:
        assert child.popen.stdout is not None
        assert child.popen.stdout.read().decode() == str(os.getpid())


def test_wait_with_a_timeout_expires_on_a_live_child_and_returns_an_ended_ones_code() -> None:
    with spawn(["sleep", "300"], bounds=Bounds(timeout_s=60)) as sleeper:
        with pytest.raises(subprocess.TimeoutExpired):
            sleeper.wait(timeout=0.2)
        assert sleeper.popen.returncode is None  # still running: nothing reaped it
    with spawn(["sh", "-c", "exit 3"], bounds=Bounds(timeout_s=60)) as quick:
        assert quick.wait(timeout=30) == 3
        assert quick.wait(timeout=30) == 3  # already reaped: answered without a pidfd


def test_a_breached_lifetime_kills_the_session() -> None:
    child = spawn(["sh", "-c", FORKER], bounds=Bounds(timeout_s=0.5))
    child.wait(timeout=30)  # returns because the monitor killed it
    assert child.breach == TIMEOUT
    assert until(lambda: session_members(child.pid) == [])
    child.close()


def test_a_fork_storm_is_stopped_at_the_process_bound() -> None:
    storm = "for i in $(seq 200); do sleep 300 & done; wait"
    child = spawn(["sh", "-c", storm], bounds=Bounds(timeout_s=60, max_procs=8))
    child.wait(timeout=30)
    assert child.breach == PROCESS_LIMIT
    assert until(lambda: session_members(child.pid) == [])
    assert child.peak < 200  # stopped long before the storm ran its course
    child.close()


SCRIPT = """
import sys, time
from automaton_auditor import containment
containment.install_signal_handlers()
child = containment.spawn(["sh", "-c", {forker!r}], bounds=containment.Bounds(timeout_s=600))
while len(containment.session_members(child.pid)) < 4:
    time.sleep(0.02)
print(child.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
                                    signal.SIGKILL])
def test_no_child_outlives_a_stopped_or_killed_parent(signum: int) -> None:
    parent = subprocess.Popen([sys.executable, "-c", SCRIPT.format(forker=FORKER)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        assert parent.stdout is not None
        sid = int(parent.stdout.readline())
        assert len(marked(str(parent.pid))) >= 4
        parent.send_signal(signum)
        code = parent.wait(timeout=30)
        assert until(lambda: marked(str(parent.pid)) == [])
        assert until(lambda: marked(f"{parent.pid}:watchdog") == [])
        assert session_members(sid) == []
        if signum == signal.SIGKILL:
            assert code == -signal.SIGKILL
        else:
            assert code == 128 + signum
            assert parent.stderr is not None
            lines = parent.stderr.read().strip().splitlines()
            assert lines == [f"error: stopped by {signal.Signals(signum).name}; child "
                             "processes killed"]
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()


SCRATCH = """
import sys, time
from automaton_auditor.containment import scratch_dir
with scratch_dir("auditor-test-") as made:
    open(made + "/clone.txt", "w").write("a file of the clone")
    print(made, flush=True)
    if sys.argv[1] == "leave":
        sys.exit(0)
    time.sleep(300)
"""


@pytest.mark.parametrize("how", ["leave", "sigkill"])
def test_a_scratch_directory_is_removed_however_the_audit_ends(how: str) -> None:
    """Left normally, the block removes it; killed inside the block (SIGKILL, or the hard
    exit that ends a stop's grace period), no `finally` runs and the watchdog removes it."""
    audit = subprocess.Popen([sys.executable, "-c", SCRATCH, how], stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        assert audit.stdout is not None
        made = Path(audit.stdout.readline().strip())
        assert made.name.startswith("auditor-test-")
        if how == "sigkill":
            assert (made / "clone.txt").is_file()
            audit.kill()
        audit.wait(timeout=30)
        assert until(lambda: not made.exists()), made
    finally:
        if audit.poll() is None:
            audit.kill()
            audit.wait()
