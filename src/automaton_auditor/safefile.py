"""Reading a file the auditor did not create, as hostile input: opened without blocking (a
FIFO never hangs the run), refused unless it is a regular file (no FIFO, device, socket or
directory), and read up to a byte cap (``/dev/zero`` or a huge file never fills memory)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class UnsafeFile(ValueError):
    """A file that was not read; the message is one line naming the file and the rule."""


def read_bounded(path: Path, max_bytes: int, what: str = "file") -> bytes:
    """At most `max_bytes` of a regular file; raises `UnsafeFile` when the file is missing,
    not a regular file, unreadable or larger than the cap."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise UnsafeFile(f"{what} not found: {path}") from None
    except OSError as exc:
        raise UnsafeFile(f"cannot read {what} {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(f"{what} is not a regular file: {path}")
        if info.st_size > max_bytes:
            raise UnsafeFile(f"{what} is larger than {max_bytes:,} bytes: {path}")
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise UnsafeFile(f"cannot read {what} {path}: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise UnsafeFile(f"{what} is larger than {max_bytes:,} bytes: {path}")
    return data


def is_regular(path: Path) -> bool:
    """Whether `path` is a regular file (symlinks followed; False when absent)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def read_bounded_text(path: Path, max_bytes: int, what: str = "file") -> str:
    """`read_bounded`, decoded as UTF-8 (a BOM is dropped); `UnsafeFile` when it is not."""
    try:
        return read_bounded(path, max_bytes, what).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnsafeFile(f"{what} is not UTF-8 text: {path}") from None
