"""The exit-code contract of every `audit` command, the one-line messages it prints, and
Ctrl-C turned into one line wherever it lands.

| code | meaning |
|---|---|
| 0 | the audit finished (a present but unreadable report: its criteria are not judged, and a
|   | ``warning:`` line says so) |
| 1 | a gate failed: the overall score is below ``--fail-under``, or a ``--fail-on`` criterion
|   | is below its minimum (or not judged) |
| 2 | usage or input error: nothing was audited and nothing was written |
| 3 | the audit failed (repository not acquired, judges' provider down): a partial report
|   | is written, the criteria that depend on the failure are not judged |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from enum import IntEnum
from types import FrameType


class ExitCode(IntEnum):
    """How a command ended; the value is the process exit code."""

    OK = 0
    FAIL_UNDER = 1
    INPUT = 2
    FAILED = 3
    INTERRUPTED = 130


def error_line(message: str) -> str:
    """One `error:` line, whatever the message holds (newlines folded)."""
    return "error: " + " ".join(str(message).split())


def warning_line(message: str) -> str:
    """One `warning:` line, whatever the message holds (newlines folded)."""
    return "warning: " + " ".join(str(message).split())


_interrupted = False
_said = False


def said_error() -> bool:
    """Whether this process already printed its `error:` line (`note_error`)."""
    return _said


def note_error() -> None:
    """Record that the command printed its one `error:` line."""
    global _said
    _said = True


def interrupted() -> bool:
    """Whether Ctrl-C was pressed during this process (`install_sigint`)."""
    return _interrupted


def is_interrupt(exc: BaseException) -> bool:
    """Whether `exc` is Ctrl-C, possibly wrapped by a library (pydantic turns a
    KeyboardInterrupt raised while it builds a schema into a SchemaError)."""
    seen: BaseException | None = exc
    for _ in range(20):
        if seen is None:
            break
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return _interrupted


def install_sigint(before: Callable[[], object] | None = None) -> None:
    """Ctrl-C raises KeyboardInterrupt once (the run stops at its next step and says how to
    resume) and records it, so an interrupt a library wrapped is still recognised; a second
    Ctrl-C exits 130 at once with one line. `before` runs first (killing child processes)."""

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        global _interrupted
        if before is not None:
            before()
        if _interrupted:  # a second Ctrl-C: the user wants out now
            sys.stderr.write(error_line("interrupted") + "\n")
            os._exit(ExitCode.INTERRUPTED)
        _interrupted = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
