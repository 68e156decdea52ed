"""The report's readers in a contained child process: docling's C++ parser, pypdfium2's text
and rendering, and OCR never run in the audit's own process.

A hostile PDF can ask a parser for gigabytes (a 4 KB content stream that inflates to 2 GiB)
or for hours. Each read runs as `python -m automaton_auditor.forensics.reader_worker` through
`containment.spawn`: its own session, killed with the audit on every way out, under an
address-space ceiling (RLIMIT_AS, `ReaderBounds.memory_mb`), a CPU-time ceiling
(RLIMIT_CPU, `cpu_s`) and a wall-clock deadline (`timeout_s`). The request goes in as JSON on
stdin, the answer comes back as JSON on stdout (at most `MAX_REPLY_BYTES`).

A child that breaches a ceiling, crashes or answers nonsense becomes a `ReaderFailed` with a
one-line reason ("the PDF reader ran out of its 1024 MB memory ceiling"): the detective turns
it into a found=False finding, never a dead audit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import IO, Any, Literal

from automaton_auditor import containment
from automaton_auditor.settings import default

FailureKind = Literal["memory", "cpu_time", "timeout", "crash"]
MAX_REPLY_BYTES = 256 << 20  # diagrams' PNGs included; a larger answer is a failure
_STDERR_TAIL = 2000
WORKER = "automaton_auditor.forensics.reader_worker"


@dataclass(frozen=True)
class ReaderBounds:
    """Ceilings of the child process that reads a report (settings `reader_*`)."""

    memory_mb: int = default("reader_memory_mb")
    cpu_s: int = default("reader_cpu_s")
    timeout_s: float = default("reader_timeout_s")


class ReaderFailed(ValueError):
    """The child failed: `kind` is a ceiling breached, a crash, or an error kind the child
    reported (the report's own `ReportError` kinds); the message is one line."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(" ".join(message.split()))
        self.kind = kind


class _Drain(threading.Thread):
    """Reads one stream to its end (bounded) so the child never blocks on a full pipe."""

    def __init__(self, stream: IO[bytes], keep: int, tail: bool = False) -> None:
        super().__init__(name="reader-pipe", daemon=True)
        self.stream, self.keep, self.tail = stream, keep, tail
        self.data, self.overflow = bytearray(), False

    def run(self) -> None:
        try:
            for block in iter(lambda: self.stream.read(1 << 16), b""):
                self.data += block
                if len(self.data) > self.keep:
                    self.overflow = True
                    self.data = self.data[-self.keep:] if self.tail else self.data[:self.keep]
        except (OSError, ValueError):
            return


class Job:
    """One task running in a contained child; `result()` waits for its answer."""

    def __init__(self, task: str, request: dict[str, Any], bounds: ReaderBounds) -> None:
        self.task, self.bounds = task, bounds
        self.peak_kib, self.cpu_used_s = 0, 0.0
        self.child = containment.spawn(
            [sys.executable, "-m", WORKER],
            bounds=containment.Bounds(timeout_s=bounds.timeout_s, max_procs=4,
                                      memory_bytes=bounds.memory_mb << 20,
                                      cpu_s=bounds.cpu_s),
            env=_child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        popen = self.child.popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self.out = _Drain(popen.stdout, MAX_REPLY_BYTES)
        self.err = _Drain(popen.stderr, _STDERR_TAIL, tail=True)
        self.out.start()
        self.err.start()
        try:
            popen.stdin.write(json.dumps({"task": task, **request}).encode())
            popen.stdin.close()
        except OSError:
            pass  # the child died at once: its exit status says why

    def result(self) -> Any:
        """The child's answer; raises `ReaderFailed`. The child is gone afterwards."""
        try:
            code = self._reap()
            self.out.join(5)
            self.err.join(5)
            return self._answer(code)
        finally:
            self.child.close()

    def _reap(self) -> int:
        """Wait for the child (the containment monitor kills it at its deadline) and keep
        its peak resident size, which tells an allocation failure from another crash."""
        popen = self.child.popen
        try:
            _pid, status, usage = os.wait4(self.child.pid, 0)
        except ChildProcessError:  # reaped by the monitor's kill: Popen has the status
            return popen.wait()
        self.peak_kib, self.cpu_used_s = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
        popen.returncode = os.waitstatus_to_exitcode(status)
        return popen.returncode

    def cancel(self) -> None:
        """Kill the child (nobody wants its answer any more)."""
        self.child.close()

    def _answer(self, code: int) -> Any:
        if self.child.breach == containment.TIMEOUT:
            raise ReaderFailed("timeout", f"the PDF reader took longer than its "
                                          f"{self.bounds.timeout_s:.0f} s ceiling")
        # RLIMIT_CPU's soft and hard limits are equal: the kernel's SIGKILL may beat SIGXCPU
        if code in (-signal.SIGXCPU, -signal.SIGKILL) and \
                self.cpu_used_s >= self.bounds.cpu_s - 0.5:
            raise ReaderFailed("cpu_time", f"the PDF reader used up its {self.bounds.cpu_s} s "
                                           f"CPU-time ceiling")
        reply = _decode(bytes(self.out.data)) if not self.out.overflow else None
        if code == 0 and isinstance(reply, dict) and "ok" in reply:
            return reply["ok"]
        if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
            kind = str(reply["error"].get("kind") or "crash")
            if kind == "memory":
                raise self._out_of_memory("")
            raise ReaderFailed(kind, str(reply["error"].get("message") or
                                         f"the PDF reader failed ({kind})"))
        raise self._crash(code)

    def _out_of_memory(self, how: str) -> ReaderFailed:
        return ReaderFailed("memory", f"the PDF reader ran out of its {self.bounds.memory_mb} "
                                      f"MB memory ceiling{how}")

    def _crash(self, code: int) -> ReaderFailed:
        if code < 0 and -code in _ABORTS and self.peak_kib >= (self.bounds.memory_mb << 10) * 0.5:
            # pdfium and the C++ parsers abort when an allocation fails under RLIMIT_AS; the
            # address space counts mapped libraries too, so the resident peak stays lower
            return self._out_of_memory(f" (it stopped with {signal.Signals(-code).name} at "
                                       f"{self.peak_kib >> 10} MB resident)")
        if self.out.overflow:
            return ReaderFailed("crash", f"the PDF reader answered more than "
                                         f"{MAX_REPLY_BYTES >> 20} MB")
        how = signal.Signals(-code).name if code < 0 else f"exit status {code}"
        last = bytes(self.err.data).decode("utf-8", "replace").strip().splitlines()[-1:]
        return ReaderFailed("crash", f"the PDF reader crashed ({how})"
                                     + (f": {last[0][:200]}" if last else ""))


# How an allocator dies when an allocation fails (abort, a trap, an illegal instruction, or a
# fault on the null it got back).
_ABORTS = {signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGTRAP, signal.SIGILL}


def _decode(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


# What the child inherits: where Python, its packages and temp files live, the locale, and
# docling's switch (OCR comes in the request's limits). No credentials: a parser a hostile
# PDF subverts finds no API key.
_INHERITED = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_", "TMPDIR", "TEMP", "TMP", "PYTHON",
              "VIRTUAL_ENV", "UV_", "XDG_", "HF_", "AUDITOR_DOCLING_FULL")


def _child_env() -> dict[str, str]:
    """The child's environment: the `_INHERITED` variables, offline, one thread per math
    library (threads reserve address space the memory ceiling counts)."""
    env = {k: v for k, v in os.environ.items() if k.startswith(_INHERITED)}
    env.update({"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2", "PYTHONUNBUFFERED": "1"})
    return env


def start(task: str, request: dict[str, Any], bounds: ReaderBounds) -> Job:
    """Start one task in a contained child (`ReaderFailed` when no child can start)."""
    try:
        return Job(task, request, bounds)
    except (OSError, containment.Closed) as exc:
        raise ReaderFailed("crash", f"the PDF reader could not start: {exc}") from None


_pending: dict[str, Job] = {}
_lock = threading.Lock()


def start_keyed(key: str, task: str, request: dict[str, Any], bounds: ReaderBounds) -> None:
    """Start a task early, for `take(key)` (a second start of the same key is a no-op; a
    child that cannot start leaves the work to `take`'s caller)."""
    with _lock:
        if key in _pending:
            return
        try:
            _pending[key] = start(task, request, bounds)
        except ReaderFailed:
            return


def take(key: str) -> Job | None:
    """The job started for `key`, now the caller's to wait for (None if none was)."""
    with _lock:
        return _pending.pop(key, None)


def cancel_all() -> None:
    """Kill the jobs nobody took (the audit stopped before its detectives read them)."""
    with _lock:
        jobs = list(_pending.values())
        _pending.clear()
    for job in jobs:
        job.cancel()
