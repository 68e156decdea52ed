"""Run checkpoints in a shared PostgreSQL database (`database_url`): LangGraph's
`PostgresSaver` with the same serializer allow-list as the embedded SQLite file, so every
machine that points at the database sees, resumes and replays the same runs.

Also here: a per-run lock (a PostgreSQL advisory lock held for as long as a worker runs the
audit) so that a task delivered twice never runs one audit on two machines at once; the
lock dies with the holder's connection, so a killed worker frees it. Needs the ``scale``
extra (`psycopg`, `langgraph-checkpoint-postgres`); without it, or when the database cannot
be reached, `RunStoreError` says so in one line.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from automaton_auditor.settings import redact_url
from automaton_auditor.storage.runs import RECENT_RUNS_SQL, RunError, serializer

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver

SCALE_EXTRA_HINT = ("install the scale extra: uv sync --extra scale "
                    "(or pip install 'automaton-auditor[scale]')")
CONNECT_TIMEOUT_S = 10
# One advisory-lock key space for the auditor (the first argument of the two-int form).
_LOCK_SPACE = 0x41554454  # "AUDT"
_SET_UP: set[str] = set()
_SET_UP_LOCK = threading.Lock()


class RunStoreError(RunError):
    """The run database cannot be used (missing extra, unreachable, refused); one line."""


def is_postgres_url(url: str) -> bool:
    """True for a ``postgresql://`` (or ``postgres://``) URL."""
    return urlsplit(url).scheme in ("postgresql", "postgres")


def _psycopg() -> Any:
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver  # noqa: F401
    except ImportError:
        raise RunStoreError(f"a database_url needs PostgreSQL support: {SCALE_EXTRA_HINT}"
                            ) from None
    return psycopg


def connect(url: str, **kwargs: Any) -> Any:
    """An autocommit psycopg connection to `url`; `RunStoreError` when it cannot be made."""
    if not is_postgres_url(url):
        raise RunStoreError(f"database_url {redact_url(url)!r} is not a postgresql:// URL")
    psycopg = _psycopg()
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                               **kwargs)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RunStoreError(f"cannot reach the run database {redact_url(url)}: {first}") from None


@contextmanager
def postgres_checkpointer(url: str) -> Iterator[PostgresSaver]:
    """LangGraph's `PostgresSaver` on `url`, with our serializer; its tables are created on
    first use (once per process and database)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    # prepare_threshold=0: no server-side prepared statements, so a pooler such as PgBouncer
    # in transaction mode works too (as LangGraph's own from_conn_string does).
    with connect(url, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn, serde=serializer())
        _setup_once(url, saver, conn)
        yield saver


def _setup_once(url: str, saver: PostgresSaver, conn: Any) -> None:
    with _SET_UP_LOCK:
        if url in _SET_UP:
            return
        # Two workers starting at once would both run the migrations: serialise them.
        conn.execute("SELECT pg_advisory_lock(%s, 0)", (_LOCK_SPACE,))
        try:
            saver.setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, 0)", (_LOCK_SPACE,))
        _SET_UP.add(url)


def prune_run(saver: PostgresSaver, run_id: str) -> None:
    """Keep only the latest checkpoint of a finished run (with the blobs it references)."""
    saver.prune([run_id], strategy="keep_latest")


def recent_thread_ids(url: str, limit: int = 20) -> list[str]:
    """The ids of the most recent runs, newest first (checkpoint ids are time-ordered)."""
    psycopg = _psycopg()
    with connect(url) as conn:
        try:
            rows = conn.execute(RECENT_RUNS_SQL.format(limit="%s"), (limit,)).fetchall()
        except psycopg.errors.UndefinedTable:
            return []  # no run was ever recorded in this database
    return [str(thread_id) for thread_id, _last in rows]


def has_checkpoint(url: str, run_id: str) -> bool:
    """Whether `run_id` has a checkpoint in the database (False when it cannot be told)."""
    try:
        conn = connect(url)
    except RunStoreError:
        return False
    with conn:
        try:
            row = conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = %s LIMIT 1",
                               (run_id,)).fetchone()
        except _psycopg().Error:
            return False
    return row is not None


def _lock_key(run_id: str) -> int:
    """A stable signed 32-bit key for the run id."""
    return int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:4], "big", signed=True)


@contextmanager
def run_lock(url: str, run_id: str, wait: bool = True) -> Iterator[None]:
    """Hold the run's lock while the block runs. Another holder waits until the first is done
    or its connection is gone (a killed worker's connection closes with it); with `wait`
    False, `RunStoreError` says the run is in hand elsewhere."""
    key = (_LOCK_SPACE, _lock_key(run_id))
    with connect(url) as conn:
        if wait:
            conn.execute("SELECT pg_advisory_lock(%s, %s)", key)
        elif not conn.execute("SELECT pg_try_advisory_lock(%s, %s)", key).fetchone()[0]:
            raise RunStoreError(f"run {run_id} is running on another machine right now")
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", key)
