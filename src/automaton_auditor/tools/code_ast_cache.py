"""Per-file AST facts cached by git blob id, so a second audit of a commit parses nothing.

One SQLite file under the cache directory: a key is ``<facts version>:<blob id>:<path>``
(facts mention their path, so identical blobs at two paths are two entries). A corrupt
entry or database is ignored and rebuilt; the cache can only save time, never change facts.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from contextlib import closing, suppress
from pathlib import Path

from automaton_auditor.tools.code_ast_common import JSON
from automaton_auditor.tools.code_ast_walk import FACTS_VERSION

DB_NAME = "ast_facts.sqlite"


def _key(blob: str, path: str) -> str:
    return f"{FACTS_VERSION}:{blob}:{path}"


def _connect(cache_dir: Path) -> sqlite3.Connection:
    cache_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(cache_dir / DB_NAME, timeout=10)
    conn.execute("CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, body TEXT)")
    return conn


def load(cache_dir: Path, wanted: Iterable[tuple[str, str]]) -> dict[str, JSON]:
    """Cached facts by path for the (path, blob) pairs present and readable."""
    keys = {_key(blob, path): path for path, blob in wanted}
    found: dict[str, JSON] = {}
    try:
        with closing(_connect(cache_dir)) as conn:
            rows = _select(conn, list(keys))
    except (sqlite3.Error, OSError):
        _reset(cache_dir)
        return {}
    for key, body in rows:
        if key not in keys:
            continue
        try:
            value = json.loads(body)
        except (ValueError, TypeError):
            continue  # a corrupt entry is parsed again and overwritten
        if isinstance(value, dict):
            found[keys[key]] = value
    return found


def _select(conn: sqlite3.Connection, keys: list[str]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ",".join("?" * len(chunk))
        rows += conn.execute(f"SELECT key, body FROM facts WHERE key IN ({marks})",  # noqa: S608
                             chunk).fetchall()
    return rows


def store(cache_dir: Path, entries: Iterable[tuple[str, str, JSON]]) -> None:
    """Save facts for (path, blob, facts) triples; failures only cost a future re-parse."""
    rows = [(_key(blob, path), json.dumps(facts, sort_keys=True)) for path, blob, facts in entries]
    if not rows:
        return
    try:
        with closing(_connect(cache_dir)) as conn, conn:
            conn.executemany("INSERT OR REPLACE INTO facts (key, body) VALUES (?, ?)", rows)
    except (sqlite3.Error, OSError):
        _reset(cache_dir)


def _reset(cache_dir: Path) -> None:
    # A database that cannot be opened or written is removed so the next run starts clean.
    with suppress(OSError):
        (cache_dir / DB_NAME).unlink(missing_ok=True)
