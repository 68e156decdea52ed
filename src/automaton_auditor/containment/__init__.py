"""Child processes that cannot outlive the audit, nor multiply without bound.

Every helper process the auditor starts (git and what git forks; later the PDF and AST
workers) goes through `spawn`, which puts it in a session of its own on a short leash:

- **Killed on every way out.** `Contained.close` (or leaving its ``with`` block) kills the
  whole session, not only the direct child; `kill_all` kills every live session: at the
  end of the command line, on Ctrl-C, SIGTERM, SIGHUP and SIGQUIT (`install_signal_handlers`).
- **Dies with the audit.** The direct child gets ``PR_SET_PDEATHSIG`` (SIGKILL, Linux), and
  a watchdog process in a session of its own holds a pipe from the audit: when the audit
  dies, even by SIGKILL, the pipe closes and the watchdog kills every registered session,
  grandchildren and orphans included.
- **Bounded.** A monitor thread counts each session's process tree a hundred times a second
  (every process of the session, orphans included, ten times a second) and kills a session
  over ``Bounds.max_procs`` live processes or past ``Bounds.timeout_s`` (`Contained.breach`
  says which). The kernel holds a ceiling too: ``RLIMIT_NPROC`` outside root (root is exempt)
  and, where a cgroup v1 pids hierarchy may be written, one pids cgroup per audit
  (``Bounds.cgroup``, `CGROUP_TASKS`). Optional ``RLIMIT_AS`` / ``RLIMIT_CPU`` ceilings.
- **Traceable.** Every descendant carries ``AUDITOR_CONTAINED=<audit pid>`` in its
  environment (the watchdog ``<audit pid>:watchdog``): strays show in ``/proc/*/environ``.

Usage: ``with spawn(["git", "log"], bounds=Bounds(timeout_s=60), stdout=out) as child:
code = child.wait()``; then ``child.breach`` ("timeout", "process_limit") says why it died.
``PR_SET_PDEATHSIG`` fires when the *thread* that spawned the child ends: spawn from the
thread that waits for the child (the watchdog covers the rest).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

from automaton_auditor.containment import procs
from automaton_auditor.containment.procs import (
    kill_session,
    process_table,
    session_members,
    tree_size,
)

__all__ = ["Bounds", "Closed", "Contained", "closing", "install_signal_handlers", "kill_all",
           "kill_session", "process_table", "scratch_dir", "session_members", "spawn",
           "tree_size"]

MARKER = "AUDITOR_CONTAINED"
TIMEOUT, PROCESS_LIMIT = "timeout", "process_limit"  # the breaches
PR_SET_PDEATHSIG = 1
TREE_S, SCAN_EVERY = 0.01, 10  # the monitor's period; every n-th round reads all of /proc
CGROUP_TASKS = 48  # tasks (threads count) the audit's pids cgroup may hold at once
_LINUX = sys.platform.startswith("linux")


class Closed(RuntimeError):
    """The audit is shutting down: no new child process may start."""


@dataclass(frozen=True)
class Bounds:
    """Ceilings for one contained session."""

    timeout_s: float | None = None
    max_procs: int = 32
    memory_bytes: int | None = None
    cpu_s: int | None = None
    cgroup: bool = False  # join the audit's pids cgroup (no many-threaded workers here)


class Contained:
    """A child process in a session of its own (see the module docstring)."""

    def __init__(self, popen: subprocess.Popen[bytes], bounds: Bounds) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.bounds = bounds
        self.deadline = bounds.timeout_s and time.monotonic() + bounds.timeout_s
        self.breach, self.peak = "", 1  # the breach that killed it; most processes seen

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the direct child (``subprocess.TimeoutExpired`` after `timeout`)."""
        if timeout is not None and self.popen.returncode is None:
            _exited_within(self.pid, timeout, self.popen.args)
        return self.popen.wait(timeout)

    def kill(self, breach: str = "") -> None:
        """Kill every process of the session and reap the direct child."""
        if breach and not self.breach:
            self.breach = breach
        kill_session(self.pid)
        with contextlib.suppress(OSError):
            self.popen.kill()
        self.popen.wait()

    def close(self) -> None:
        """Kill what is left of the session, close our pipe ends, stop watching it."""
        self.kill()
        for stream in filter(None, (self.popen.stdin, self.popen.stdout, self.popen.stderr)):
            stream.close()
        _REGISTRY.forget(self)

    def __enter__(self) -> Contained:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _exited_within(pid: int, timeout: float, args: Any) -> None:
    """Block until process `pid` ends, at most `timeout` seconds (``TimeoutExpired``), woken
    by its exit through a pidfd where Linux has one: ``Popen.wait(timeout)`` polls with
    sleeps that can double a short git command's time. Elsewhere, return at once (the
    caller's ``Popen.wait`` polls)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here, or the process is already reaped
        return
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(max(0, int(timeout * 1000))):
            raise subprocess.TimeoutExpired(args, timeout)
    finally:
        os.close(fd)


def _user_processes() -> int:
    def mine(name: str) -> bool:
        with contextlib.suppress(OSError):
            return os.stat(f"/proc/{name}").st_uid == os.getuid()
        return False

    return sum(1 for name in os.listdir("/proc") if name.isdigit() and mine(name))


@functools.cache
def _prctl() -> Any:
    """libc's prctl, loaded once (None off Linux)."""
    return ctypes.CDLL(None, use_errno=True).prctl if _LINUX else None


def _pids_cgroup() -> Path | None:
    """This audit's own cgroup v1 pids group, created with its ceiling; None where the
    machine offers none we may write."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        path = next(line.split(":", 2)[2] for line in lines if line.split(":")[1] == "pids")
        group = Path("/sys/fs/cgroup/pids", path.lstrip("/"), f"auditor-{os.getpid()}")
        group.mkdir(exist_ok=True)
        (group / "pids.max").write_text(str(CGROUP_TASKS))
        return group
    except (OSError, StopIteration, IndexError):
        return None


def _preexec(bounds: Bounds, parent: int) -> Callable[[], None]:
    """What the child runs between fork and exec: death signal and rlimits. Everything it
    needs is resolved here, in the parent, so the child only makes system calls."""
    prctl = _prctl()
    wanted: list[tuple[int, int]] = []
    if bounds.memory_bytes:
        wanted.append((resource.RLIMIT_AS, bounds.memory_bytes))
    if bounds.cpu_s:
        wanted.append((resource.RLIMIT_CPU, bounds.cpu_s))
    if _LINUX and os.geteuid() != 0:  # root ignores RLIMIT_NPROC
        wanted.append((resource.RLIMIT_NPROC, _user_processes() + bounds.max_procs))
    limits = []
    for which, value in wanted:  # never above the hard limit already in force
        hard = resource.getrlimit(which)[1]
        limits.append((which, value if hard == resource.RLIM_INFINITY else min(value, hard)))

    group = _REGISTRY.cgroup() if bounds.cgroup else None
    procs = str(group / "cgroup.procs") if group else ""

    def preexec() -> None:
        if procs:
            with contextlib.suppress(OSError):
                fd = os.open(procs, os.O_WRONLY)
                os.write(fd, str(os.getpid()).encode("ascii"))
                os.close(fd)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the audit died before the death signal was armed
                os._exit(1)
        for which, value in limits:
            resource.setrlimit(which, (value, value))

    return preexec


def spawn(args: Sequence[str], *, bounds: Bounds, env: Mapping[str, str] | None = None,
          cwd: str | os.PathLike[str] | None = None, stdin: int | IO[Any] | None = None,
          stdout: int | IO[Any] | None = None, stderr: int | IO[Any] | None = None,
          ) -> Contained:
    """Start `args` contained (see the module docstring). Raises `Closed` once the audit
    is shutting down."""
    child_env = dict(os.environ if env is None else env)
    child_env[MARKER] = str(os.getpid())
    with _REGISTRY.lock:
        if _REGISTRY.closed:
            raise Closed("the audit is stopping")
        popen = subprocess.Popen(list(args), cwd=cwd, env=child_env, stdin=stdin,
                                 stdout=stdout, stderr=stderr, start_new_session=True,
                                 preexec_fn=_preexec(bounds, os.getpid()))
        child = Contained(popen, bounds)
        _REGISTRY.add(child)
    return child


class _Registry:
    """The live sessions, the monitor thread that enforces their bounds and the
    watchdog process that kills them if the audit dies."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.wake = threading.Condition(self.lock)
        self.live: dict[int, Contained] = {}
        self.closed = False
        self.monitor: threading.Thread | None = None
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.pid = os.getpid()
        self._cgroup: list[Path | None] = []

    def cgroup(self) -> Path | None:
        """The audit's pids cgroup, made on first use (the watchdog removes it)."""
        if not self._cgroup:
            self._cgroup.append(_pids_cgroup() if _LINUX else None)
            if self._cgroup[0] is not None:
                self._tell(f"c{self._cgroup[0]}\n")
        return self._cgroup[0]

    def add(self, child: Contained) -> None:
        if self.pid != os.getpid():  # a forked copy of the audit starts afresh
            self.pid, self.live, self.watchdog, self.monitor = os.getpid(), {}, None, None
            self._cgroup = []
        self.live[child.pid] = child
        self._tell(f"+{child.pid}\n")
        if self.monitor is None or not self.monitor.is_alive():
            self.monitor = threading.Thread(target=self._watch, name="containment",
                                            daemon=True)
            self.monitor.start()
        self.wake.notify()

    def forget(self, child: Contained) -> None:
        with self.lock:
            if self.live.pop(child.pid, None) is not None:
                self._tell(f"-{child.pid}\n")

    def scratch(self, sign: str, path: str) -> None:
        """Tell the watchdog a scratch directory was made ("d") or removed ("r")."""
        with self.lock:
            self._tell(f"{sign}{path}\n")

    def _tell(self, line: str) -> None:
        if self.watchdog is None and _LINUX:
            self.watchdog = _start_watchdog()
        if self.watchdog is None or self.watchdog.stdin is None:
            return
        try:
            self.watchdog.stdin.write(line.encode("ascii"))
            self.watchdog.stdin.flush()
        except (OSError, ValueError):
            self.watchdog = None  # gone: PDEATHSIG and kill_all still hold

    def _watch(self) -> None:
        # Every TREE_S the process tree of each session is counted (cheap: its ``children``
        # files); every SCAN_EVERY-th round the whole of /proc is read, which also counts
        # the orphans a double fork leaves in the session.
        rounds = 0
        while True:
            with self.lock:
                while not self.live:
                    self.wake.wait()
                children = list(self.live.values())
            table = process_table() if _LINUX and rounds % SCAN_EVERY == 0 else None
            rounds += 1
            now = time.monotonic()
            for child in children:
                if child.popen.returncode is not None and table is None:
                    continue
                members = (len(session_members(child.pid, table)) if table is not None
                           else tree_size(child.pid, child.bounds.max_procs + 1))
                child.peak = max(child.peak, members)
                if child.deadline and now > child.deadline:
                    child.kill(TIMEOUT)
                elif members > child.bounds.max_procs:
                    child.kill(PROCESS_LIMIT)
            time.sleep(TREE_S)


_REGISTRY = _Registry()


def _start_watchdog() -> subprocess.Popen[bytes] | None:
    # A session of its own: it must outlive a kill of the audit's process group.
    try:
        return subprocess.Popen([sys.executable, "-I", "-S", procs.__file__],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, MARKER: f"{os.getpid()}:watchdog"})
    except OSError:
        return None


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[str]:
    """A temporary directory removed when the block ends, and by the watchdog if the audit
    dies inside the block (SIGKILL, the hard exit that ends a stop's grace period), where no
    ``finally`` runs: a cancelled CI job or a killed batch leaves no clone behind."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        told = tmp.isascii() and tmp.isprintable()  # one line of the watchdog's pipe
        if told:
            _REGISTRY.scratch("d", tmp)
        try:
            yield tmp
        finally:
            if told:
                _REGISTRY.scratch("r", tmp)


def closing() -> bool:
    """Whether the audit is shutting down (`kill_all(close=True)`): children die from now."""
    return _REGISTRY.closed  # one bool, set under the lock before any child is killed


def kill_all(close: bool = False) -> None:
    """Kill every live contained session; with `close`, refuse new ones from now on."""
    with _REGISTRY.lock:
        _REGISTRY.closed = _REGISTRY.closed or close
        children = list(_REGISTRY.live.values())
    for child in children:
        child.kill()


def install_signal_handlers() -> None:
    """On SIGTERM, SIGHUP and SIGQUIT: kill every contained session, refuse new ones and exit with
    128 + the signal after one line on stderr (a stuck thread gets 2 s, then the process
    exits hard). On Ctrl-C: kill them, then raise KeyboardInterrupt as usual."""

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        kill_all(close=True)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        name = signal.Signals(signum).name
        sys.stderr.write(f"error: stopped by {name}; child processes killed\n")
        timer = threading.Timer(2.0, os._exit, (128 + signum,))
        timer.daemon = True
        timer.start()
        raise SystemExit(128 + signum)

    # exits.STOP_SIGNALS and Ctrl-C (containment sits below exits and may not import it)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGINT):
        signal.signal(signum, on_signal)
