"""The exit-code contract of every `audit` command, and the one-line error it prints.

| code | meaning |
|---|---|
| 0 | the audit finished |
| 1 | the overall score is below ``--fail-under`` |
| 2 | usage or input error (nothing was audited) |
| 3 | the audit failed (a partial report is written) |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

from enum import IntEnum


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
