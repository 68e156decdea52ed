"""SQLite files that parallel audits share, opened in WAL mode.

Switching a new database to WAL is the one step that SQLite's busy timeout does not cover:
while another process holds a write lock on the fresh, empty file, ``PRAGMA
journal_mode=WAL`` fails at once with "database is locked", however long the timeout. Two
audits of ``batch -j 2`` starting on a new cache directory did exactly that. The switch is
therefore retried, with jitter, for as long as the busy timeout would have waited.

A file in the cache directory is hostile input like any file the auditor did not write: a
FIFO, a device, a directory or a symbolic link where a database should be (a read-only open
of a FIFO blocks for ever; a link would have SQLite write wherever it points) is never
opened. `connect_wal` renames it out of the way (`set_aside`) and starts a fresh database;
the readers that only look (`regular_or_absent`) read it as empty.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import stat
from contextlib import suppress
from pathlib import Path

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random


def is_busy(exc: BaseException) -> bool:
    """SQLite's "database is locked" / "database is busy": another connection's lock."""
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc))


def regular_or_absent(path: Path) -> bool:
    """Whether `path` is a regular file (not followed if a link) or absent: safe to open."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def set_aside(path: Path, seen: os.stat_result | None = None) -> None:
    """Rename what is at `path` to ``<name>.unusable-<hex>`` beside it, so a fresh database
    can take its place; nothing is deleted or followed. With `seen`, only if `path` is still
    that file (a parallel audit may have put a fresh one there already)."""
    with suppress(OSError):
        now = os.lstat(path)
        if seen is None or (now.st_dev, now.st_ino) == (seen.st_dev, seen.st_ino):
            os.rename(path, path.with_name(f"{path.name}.unusable-{secrets.token_hex(4)}"))


def connect_wal(path: Path, timeout_s: float, *,
                check_same_thread: bool = True) -> sqlite3.Connection:
    """`sqlite3.connect` with a `timeout_s` busy timeout, switched to WAL (readers go on
    while one audit writes); a lock still held after `timeout_s` raises as SQLite would.
    Anything but a regular file at `path` is set aside first."""
    with suppress(OSError):
        seen = os.lstat(path)
        if not stat.S_ISREG(seen.st_mode):
            set_aside(path, seen)  # that very file: a parallel audit may have replaced it
    conn = sqlite3.connect(path, timeout=timeout_s, check_same_thread=check_same_thread)
    try:
        for attempt in Retrying(retry=retry_if_exception(is_busy),
                                stop=stop_after_delay(timeout_s),
                                wait=wait_random(0.01, 0.1), reraise=True):
            with attempt:
                conn.execute("PRAGMA journal_mode=WAL")
    except BaseException:
        conn.close()
        raise
    return conn
