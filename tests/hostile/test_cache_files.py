"""Hostile files in the cache directory (AUDITOR_CACHE_DIR), which the auditor did not write:
a FIFO, a directory, a symlink out (to a file that must not change) or garbage where one of
its SQLite databases should be. The audit is not stopped by them (exit 0, a report), nothing
blocks on a FIFO, nothing is written through the link, and what was there is kept beside
the fresh database (``<name>.unusable-<hex>``), never deleted."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from automaton_auditor.storage.kv import cache_files
from automaton_auditor.storage.runs import checkpointer, has_checkpoint, recent_thread_ids
from tests.hostile.builders import special
from tests.hostile.harness import Case, audit_and_check


def _plant(case: Case, name: str, kind: str) -> Path:
    path = case.root / "cache" / name
    if kind == "garbage":
        path.write_bytes(b"not a database\n" * 100)
    elif kind == "link-out":
        path.symlink_to(case.sandbox / "outside" / "secret.txt")
    else:
        special(path, kind)
    return path


@pytest.mark.parametrize(("name", "kind"), [
    ("runs.sqlite", "fifo"), ("runs.sqlite", "garbage"), ("runs.sqlite", "link-out"),
    ("runs.sqlite", "dir"), ("facts.sqlite", "fifo")])
def test_an_audit_goes_on_past_a_planted_cache_file(case: Case, good_repo: Path,
                                                    good_pdf: Path, name: str,
                                                    kind: str) -> None:
    case.cache = None  # the case's own cache folder
    _plant(case, name, kind)
    audit_and_check(case, good_repo, good_pdf, 0, "any")
    aside = list((case.root / "cache").glob(f"{name}.unusable-*"))
    assert len(aside) == 1, sorted(p.name for p in (case.root / "cache").iterdir())


def _within(seconds: float, fn: object) -> bool:
    thread = threading.Thread(target=fn, daemon=True)  # type: ignore[arg-type]
    thread.start()
    thread.join(seconds)
    return not thread.is_alive()


def test_readers_of_the_cache_never_open_a_fifo(tmp_path: Path) -> None:
    """`audit runs`, the resume hint and `audit cache show` only look: a FIFO reads as
    nothing (a read-only open of a FIFO waits for a writer for ever)."""
    for name in ("runs.sqlite", "facts.sqlite"):
        os.mkfifo(tmp_path / name)
    assert _within(10, lambda: has_checkpoint("x", tmp_path)), "has_checkpoint blocked"
    assert _within(10, lambda: recent_thread_ids(root=tmp_path)), "recent_thread_ids blocked"
    assert _within(10, lambda: cache_files(tmp_path)), "cache show blocked"


def test_a_database_that_is_not_one_is_kept_beside_a_fresh_one(tmp_path: Path) -> None:
    (tmp_path / "runs.sqlite").write_bytes(b"garbage" * 1000)
    with checkpointer(tmp_path) as saver:
        assert saver.get_tuple({"configurable": {"thread_id": "x"}}) is None
    aside = list(tmp_path.glob("runs.sqlite.unusable-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == b"garbage" * 1000


def test_a_database_of_another_shape_is_set_aside(tmp_path: Path) -> None:
    """A `runs.sqlite` whose `checkpoints` table is another program's (or another version's)
    failed every audit at its first checkpoint ("no such column: checkpoint_id", exit 3)."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(tmp_path / "runs.sqlite")) as conn, conn:
        conn.execute("CREATE TABLE checkpoints (thread_id TEXT)")
    with checkpointer(tmp_path) as saver:
        saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
                  {"v": 1, "id": "c1", "ts": "", "channel_values": {}, "channel_versions": {},
                   "versions_seen": {}}, {}, {})
    assert len(list(tmp_path.glob("runs.sqlite.unusable-*"))) == 1
