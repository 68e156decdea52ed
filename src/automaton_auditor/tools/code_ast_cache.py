"""Per-file AST facts cached by git blob id, so a second audit of a commit parses nothing.

One SQLite file under the cache directory: a key is ``<facts version>:<blob id>:<path>``
(facts mention their path, so identical blobs at two paths are two entries). A corrupt
entry or database is ignored and rebuilt; the cache can only save time, never change facts.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from contextlib import closing, suppress
from pathlib import Path

from automaton_auditor.state import Finding, RebuiltGraph
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


_CODE_DIGEST: list[str] = []


def _code_digest() -> str:
    # The findings change when this package's AST code changes: key results on its source.
    if not _CODE_DIGEST:
        digest = hashlib.sha256(str(FACTS_VERSION).encode())
        for module in sorted(Path(__file__).parent.glob("code_ast*.py")):
            digest.update(module.name.encode() + module.read_bytes())
        _CODE_DIGEST.append(digest.hexdigest()[:16])
    return _CODE_DIGEST[0]


def result_key(blobs: dict[str, str]) -> str:
    """Key of a whole result: every tracked path with its blob id, and the code version."""
    digest = hashlib.sha256(_code_digest().encode())
    for path, blob in sorted(blobs.items()):
        digest.update(f"{path}\0{blob}\n".encode("utf-8", "surrogateescape"))
    return f"result:{digest.hexdigest()}"


def load_result(cache_dir: Path, key: str) -> tuple[list[Finding], RebuiltGraph | None] | None:
    """A cached (findings, graph) pair, or None (absent or corrupt)."""
    try:
        with closing(_connect(cache_dir)) as conn:
            row = conn.execute("SELECT body FROM facts WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        body = json.loads(row[0])
        findings = [Finding.model_validate(item) for item in body["findings"]]
        graph = RebuiltGraph.model_validate(body["graph"]) if body["graph"] else None
        return findings, graph
    except (sqlite3.Error, OSError, ValueError, TypeError, KeyError):
        return None


def store_result(cache_dir: Path, key: str,
                 result: tuple[list[Finding], RebuiltGraph | None]) -> None:
    """Save a whole result; a failure only costs recomputing it."""
    findings, graph = result
    body = json.dumps({"findings": [f.model_dump(mode="json") for f in findings],
                       "graph": graph.model_dump(mode="json") if graph else None})
    try:
        with closing(_connect(cache_dir)) as conn, conn:
            conn.execute("INSERT OR REPLACE INTO facts (key, body) VALUES (?, ?)", (key, body))
    except (sqlite3.Error, OSError):
        _reset(cache_dir)


def _reset(cache_dir: Path) -> None:
    # A database that cannot be opened or written is removed so the next run starts clean.
    with suppress(OSError):
        (cache_dir / DB_NAME).unlink(missing_ok=True)
