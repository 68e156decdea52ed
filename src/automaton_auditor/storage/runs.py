"""Run checkpoints: every audit has a run id (the LangGraph thread id) and is checkpointed
after every step in ``runs.sqlite`` under the cache directory, through LangGraph's
`SqliteSaver`, so an interrupted or failed run can be resumed and a finished one replayed
(`automaton_auditor.service` does both). Only our own state models may be revived from disk.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automaton_auditor.storage.kv import default_cache_dir, make_cache_dir
from automaton_auditor.storage.sqlite_wal import (
    connect_wal,
    is_busy,
    regular_or_absent,
    set_aside,
)

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

RUNS_DB = "runs.sqlite"
# The most recent runs, newest first (checkpoint ids are time-ordered); SQLite and PostgreSQL.
RECENT_RUNS_SQL = ("SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints "
                   "GROUP BY thread_id ORDER BY last DESC LIMIT {limit}")

# Every column the checkpointer reads or writes: a `runs.sqlite` whose tables lack one is
# another program's or another version's, and is set aside like a file that is no database.
SCHEMA_PROBES = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
    "metadata FROM checkpoints LIMIT 0",
    "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
    "value FROM writes LIMIT 0")


class RunError(ValueError):
    """A run id that cannot be resumed or replayed; the message is one line."""


def new_run_id() -> str:
    """A sortable, unique run id: UTC time plus 24 random bits."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def runs_db(root: Path | None = None) -> Path:
    """The checkpoint database (under the cache directory)."""
    return (root or default_cache_dir()) / RUNS_DB


def serializer() -> Any:
    """LangGraph's serializer, allowed to revive only our own state models (and LangGraph's
    safe built-ins) from disk; every checkpointer uses it."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from automaton_auditor import state

    return JsonPlusSerializer(allowed_msgpack_modules=[(t.__module__, t.__name__)
                                                       for t in state.STATE_MODELS])


@contextmanager
def checkpointer(root: Path | None = None) -> Iterator[SqliteSaver]:
    """LangGraph's SQLite checkpointer on ``runs.sqlite`` (WAL: parallel audits share it)."""
    path = runs_db(root)
    make_cache_dir(path.parent)
    seen = _lstat(path)
    try:
        saver = _saver(path)
    except sqlite3.DatabaseError as exc:  # not a database, malformed, cannot be opened
        if is_busy(exc):
            raise
        set_aside(path, seen)  # kept beside it, and the runs start again in a fresh one
        saver = _saver(path)
    with closing(saver.conn):
        yield saver


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _saver(path: Path) -> SqliteSaver:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = connect_wal(path, 30.0, check_same_thread=False)
    try:
        saver = SqliteSaver(conn, serde=serializer())
        saver.setup()
        for probe in SCHEMA_PROBES:  # tables of another shape (another version, not ours)
            conn.execute(probe)
    except BaseException:
        conn.close()
        raise
    return saver


def thread_config(run_id: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The graph config that names a run's checkpoint thread."""
    config = dict(extra or {})
    config["configurable"] = {**config.get("configurable", {}), "thread_id": run_id}
    return config


def prune_finished(conn: sqlite3.Connection, run_id: str) -> None:
    """Keep only the last checkpoint of a finished run: replay needs nothing else, and each
    intermediate step holds the whole evidence again (about 2 MB per audit otherwise)."""
    with conn:
        row = conn.execute("SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?",
                           (run_id,)).fetchone()
        if not row or row[0] is None:
            return
        conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id != ?",
                     (run_id, row[0]))
        conn.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id != ?",
                     (run_id, row[0]))


@dataclass(frozen=True)
class RunInfo:
    """What the checkpoints say about one run."""

    run_id: str
    target: str
    report: str
    next_nodes: tuple[str, ...]
    finished: bool
    values: dict[str, Any]

    @property
    def status(self) -> str:
        """done, or where the run stopped."""
        if self.finished:
            return "done"
        return f"stopped before {', '.join(self.next_nodes)}" if self.next_nodes else "stopped"


def has_checkpoint(run_id: str, root: Path | None = None) -> bool:
    """Whether `run_id` has a checkpoint (so `audit resume` can continue it)."""
    path = runs_db(root)
    if not path.exists() or not regular_or_absent(path):  # a FIFO would block the open
        return False
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)) as conn:
            row = conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1",
                               (run_id,)).fetchone()
    except sqlite3.Error:
        return False
    return row is not None


def recent_thread_ids(limit: int = 20, root: Path | None = None) -> list[str]:
    """The ids of the most recent runs, newest first (checkpoint ids are time-ordered)."""
    path = runs_db(root)
    if not path.exists() or not regular_or_absent(path):  # a FIFO would block the open
        return []
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)) as conn:
            rows = conn.execute(RECENT_RUNS_SQL.format(limit="?"), (limit,)).fetchall()
    except sqlite3.Error:
        return []
    return [str(thread_id) for thread_id, _last in rows]
