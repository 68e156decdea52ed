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
|   | is written, the criteria that depend on the failure are not judged; a queued batch: rows
|   | no worker finished within ``--queue-timeout`` (the summary is written) |
| 130 | interrupted (Ctrl-C): a partial report from the last checkpoint, the resume hint |
| 143, 129, 131 | stopped by SIGTERM (`timeout`, a CI runner), SIGHUP or SIGQUIT (Ctrl-\\):
|   | handled as Ctrl-C is, the partial report and the resume hint included |
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from enum import IntEnum
from types import FrameType

from automaton_auditor.text import printable


class ExitCode(IntEnum):
    """How a command ended; the value is the process exit code."""

    OK = 0
    FAIL_UNDER = 1
    INPUT = 2
    FAILED = 3
    INTERRUPTED = 130


def error_line(message: str) -> str:
    """One `error:` line, whatever the message holds (newlines folded, control characters
    dropped: it may quote a rubric key or a path)."""
    return "error: " + printable(str(message), one_line=True)


def warning_line(message: str) -> str:
    """One `warning:` line, whatever the message holds (newlines folded, control characters
    dropped)."""
    return "warning: " + printable(str(message), one_line=True)


_interrupted = False
_said = False
_stopped_by = 0  # the stop signal that stopped the command (0: none, or Ctrl-C)
# The signals that stop a command the way Ctrl-C does, with exit 128 + the signal. SIGQUIT
# (Ctrl-\) too: by default it dumps core and exits 131 with no report and no line.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
# How long a stopped command may take to unwind (say how to resume, kill its children)
# before it exits hard: a node busy in a worker thread would otherwise hold the exit.
STOP_GRACE_S = 5.0
_resume_hint: Callable[[], str] | None = None
# How to continue a command stopped before its run wrote a checkpoint (or before it began).
NOTHING_TO_RESUME = "stopped before its first checkpoint: nothing to resume, run the audit again"


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


def interruption() -> str:
    """What interrupted the command, for its one `error:` line."""
    if _stopped_by:
        return f"stopped by {signal.Signals(_stopped_by).name}; child processes killed"
    return "interrupted"


def interrupted_code() -> int:
    """The exit code of an interrupted command: 130 for Ctrl-C, 128 + the signal for
    a `STOP_SIGNALS` one (what a shell and `timeout` expect)."""
    return 128 + _stopped_by if _stopped_by else int(ExitCode.INTERRUPTED)


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
    Ctrl-C exits 130 at once with one line. SIGTERM, SIGHUP and SIGQUIT (`STOP_SIGNALS`)
    take the same path (`_on_stop`). `before` runs first (killing child processes)."""

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
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_stop(before))


def _on_stop(before: Callable[[], object] | None) -> Callable[[int, FrameType | None], None]:
    """The `STOP_SIGNALS` take Ctrl-C's path (KeyboardInterrupt: the run stops at its next
    step, says how to resume, a partial state stays checkpointed), with exit 128 + signal.
    Only the first one counts: `timeout` signals the process group and a launcher such as
    `uv run` forwards it again, and a second unwinding would print a second line."""

    def on_stop(signum: int, _frame: FrameType | None) -> None:
        global _interrupted, _stopped_by
        if before is not None:
            before()
        if _stopped_by:
            return  # already stopping
        _stopped_by = signum
        # Ignored from now on, not just here: at interpreter exit Python puts its handlers
        # back to the default, and a repeat would then kill the process without its line.
        for repeat in STOP_SIGNALS:
            signal.signal(repeat, signal.SIG_IGN)
        timer = threading.Timer(STOP_GRACE_S, _exit_now, (128 + signum,))
        timer.daemon = True
        timer.start()
        if _interrupted:
            return  # Ctrl-C already unwinds the command
        _interrupted = True
        raise KeyboardInterrupt

    return on_stop


def set_resume_hint(hint: Callable[[], str] | None) -> None:
    """How to continue the run under way ("resume with: ..."), for a stop whose grace
    period ends before the run unwinds to the line that says so (None: no run)."""
    global _resume_hint
    _resume_hint = hint


def stop_line() -> str:
    """The one line of a stopped command: what stopped it and how to continue. With no run
    under way (start-up, a stop before the graph starts) nothing can be resumed; the line is
    said even if the hint cannot be worked out."""
    hint = NOTHING_TO_RESUME
    with contextlib.suppress(Exception):
        hint = _resume_hint() if _resume_hint is not None else hint
    return error_line(f"{interruption()}; {hint}")


def _exit_now(code: int) -> None:
    """The grace period is over: say why and how to resume (unless the command already
    did) and exit."""
    if not _said:
        sys.stderr.write(stop_line() + "\n")
        sys.stderr.flush()
    os._exit(code)
