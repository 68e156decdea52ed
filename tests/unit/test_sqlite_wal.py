"""Parallel audits opening one fresh SQLite file: the switch to WAL waits for the lock."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from automaton_auditor.storage.runs import checkpointer
from automaton_auditor.storage.sqlite_wal import connect_wal


def _held_fresh_file(path: Path) -> sqlite3.Connection:
    """Another audit's connection holding a write lock on a new, empty database file: the
    state in which SQLite fails ``PRAGMA journal_mode=WAL`` at once, busy timeout or not."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_plain_sqlite_fails_at_once_on_a_held_fresh_file(tmp_path: Path) -> None:
    """The SQLite behaviour the helper exists for (if this ever passes, it is not needed)."""
    holder = _held_fresh_file(tmp_path / "runs.sqlite")
    try:
        conn = sqlite3.connect(tmp_path / "runs.sqlite", timeout=5)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            conn.execute("PRAGMA journal_mode=WAL")
        conn.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_the_checkpointer_waits_for_another_audit_opening_the_same_fresh_file(
        tmp_path: Path) -> None:
    holder = _held_fresh_file(tmp_path / "runs.sqlite")
    release = threading.Timer(0.3, lambda: (holder.execute("ROLLBACK"), holder.close()))
    release.start()
    try:
        with checkpointer(tmp_path) as saver:
            mode = saver.conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        release.join()
    assert mode == "wal"


def test_a_lock_held_past_the_timeout_still_raises_and_closes(tmp_path: Path) -> None:
    holder = _held_fresh_file(tmp_path / "facts.sqlite")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            connect_wal(tmp_path / "facts.sqlite", 0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
