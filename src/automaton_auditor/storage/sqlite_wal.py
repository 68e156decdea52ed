"""SQLite files that parallel audits share, opened in WAL mode.

Switching a new database to WAL is the one step that SQLite's busy timeout does not cover:
while another process holds a write lock on the fresh, empty file, ``PRAGMA
journal_mode=WAL`` fails at once with "database is locked", however long the timeout. Two
audits of ``batch -j 2`` starting on a new cache directory did exactly that. The switch is
therefore retried, with jitter, for as long as the busy timeout would have waited.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random


def _is_busy(exc: BaseException) -> bool:
    """SQLite's "database is locked" / "database is busy": another connection's lock."""
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc))


def connect_wal(path: Path, timeout_s: float, *,
                check_same_thread: bool = True) -> sqlite3.Connection:
    """`sqlite3.connect` with a `timeout_s` busy timeout, switched to WAL (readers go on
    while one audit writes); a lock still held after `timeout_s` raises as SQLite would."""
    conn = sqlite3.connect(path, timeout=timeout_s, check_same_thread=check_same_thread)
    try:
        for attempt in Retrying(retry=retry_if_exception(_is_busy),
                                stop=stop_after_delay(timeout_s),
                                wait=wait_random(0.01, 0.1), reraise=True):
            with attempt:
                conn.execute("PRAGMA journal_mode=WAL")
    except BaseException:
        conn.close()
        raise
    return conn
