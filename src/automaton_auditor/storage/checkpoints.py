"""Where run checkpoints live, chosen in one place: the embedded SQLite file ``runs.sqlite``
under the cache directory (the default, `storage.runs`), or a shared PostgreSQL database when
a database URL is configured (`storage.postgres`). The service opens, prunes and lists runs
only through here, so resume, replay and `audit runs` behave the same on either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from automaton_auditor.settings import redact_url
from automaton_auditor.storage import postgres, runs


@contextmanager
def open_checkpointer(root: Path | None = None,
                      database_url: str | None = None) -> Iterator[Any]:
    """The run checkpointer: PostgreSQL at `database_url` when given, else ``runs.sqlite``
    under `root` (the cache directory). Raises `postgres.RunStoreError` when the database
    cannot be used."""
    if database_url:
        with postgres.postgres_checkpointer(database_url) as saver:
            yield saver
    else:
        with runs.checkpointer(root) as saver:
            yield saver


def run_lock(database_url: str | None, run_id: str,
             wait: bool = True) -> AbstractContextManager[None]:
    """Hold run `run_id` while a shared run is streamed, so two machines never run it at
    once (`postgres.run_lock`); nothing to hold for the local SQLite file."""
    return postgres.run_lock(database_url, run_id, wait) if database_url else nullcontext()


def prune_finished(saver: Any, run_id: str) -> None:
    """Keep only the last checkpoint of a finished run: replay needs nothing else."""
    if isinstance(getattr(saver, "conn", None), sqlite3.Connection):
        runs.prune_finished(saver.conn, run_id)
    else:
        postgres.prune_run(saver, run_id)


def has_checkpoint(run_id: str, root: Path | None = None,
                   database_url: str | None = None) -> bool:
    """Whether `run_id` has a checkpoint (so `audit resume` can continue it)."""
    if database_url:
        return postgres.has_checkpoint(database_url, run_id)
    return runs.has_checkpoint(run_id, root)


def recent_thread_ids(limit: int = 20, root: Path | None = None,
                      database_url: str | None = None) -> list[str]:
    """The ids of the most recent runs, newest first."""
    if database_url:
        return postgres.recent_thread_ids(database_url, limit)
    return runs.recent_thread_ids(limit, root)


def runs_recorded(root: Path | None = None, database_url: str | None = None) -> bool:
    """False when there is certainly no run (no ``runs.sqlite`` yet)."""
    return bool(database_url) or runs.runs_db(root).exists()


def location(root: Path | None = None, database_url: str | None = None) -> str:
    """Where runs are kept, for messages (a database URL without its password)."""
    return redact_url(database_url) if database_url else str(runs.runs_db(root))
