"""Where the auditor keeps what it can reuse, and a small key-value store for it.

Everything lives under one cache directory: `AUDITOR_CACHE_DIR` when set, otherwise the
platform's user cache directory (``platformdirs.user_cache_dir("automaton-auditor")``).

- ``facts.sqlite``: repository facts by commit SHA, parsed reports by SHA-256 (`storage.facts`);
- ``ast_facts.sqlite``: per-file AST facts by git blob id (`forensics.code.cache`);
- ``opinions.sqlite``: LLM answers by (model, prompt) hash, opt-in (`storage.opinions`);
- ``runs.sqlite``: LangGraph checkpoints of every run, for resume and replay (`storage.runs`).

A cache can only save time: an entry or database that fails to load is ignored (and
rebuilt by the next store), never fatal.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import stat
import tempfile
import time
from collections.abc import Iterable
from contextlib import closing, suppress
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from pathlib import Path

from automaton_auditor.storage.sqlite_wal import connect_wal, regular_or_absent

CACHE_ENV = "AUDITOR_CACHE_DIR"
APP_NAME = "automaton-auditor"
FACTS_DB = "facts.sqlite"
# Every file the cache directory may hold, with what it is (for `audit cache show`).
KNOWN_FILES: dict[str, str] = {
    "facts.sqlite": "repository facts (by commit) and parsed reports (by SHA-256)",
    "ast_facts.sqlite": "per-file AST facts (by git blob id)",
    "opinions.sqlite": "LLM answers (by model and prompt hash; --reuse-opinions)",
    "runs.sqlite": "run checkpoints (audit resume / audit replay)",
}
# Packages whose version changes what the detectives extract.
_FACT_PACKAGES = ("docling-slim", "docling-parse", "pypdfium2")


def default_cache_dir() -> Path:
    """The cache directory: `AUDITOR_CACHE_DIR`, else the platform user cache directory."""
    override = os.environ.get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP_NAME))


def make_cache_dir(path: Path) -> None:
    """Make the cache directory `path` and its missing parents, but never a home directory
    that does not exist (``HOME=/nonexistent``, as a container's root or a service user has):
    the platform cache lies under it, and a cache is no reason to create one. That case
    raises FileNotFoundError, as a read-only home's mkdir raises, and takes the same way
    out (`fallback_cache_dir` for an audit; a cache miss for a cache read)."""
    home = Path(os.path.expanduser("~"))  # "~" again when no home is known: never a parent
    if not home.is_dir() and path.is_relative_to(home):
        raise FileNotFoundError(errno.ENOENT, "the home directory does not exist", str(home))
    path.mkdir(parents=True, exist_ok=True)


def fallback_cache_dir() -> Path:
    """The cache used when the configured one cannot be written (a read-only HOME in CI).

    One per user in the temporary directory, reused by every run rather than one made per
    run and removed at exit: it holds the run checkpoints that ``audit resume`` (named in
    every failure message) needs after the process ends, and a folder per run leaked one
    each time. A shared /tmp lets another user plant that name to feed us cached facts, so
    it is used only when it is a directory (not a link) we own that nobody else may write;
    otherwise a fresh private one is made."""
    uid = os.getuid()
    path = Path(tempfile.gettempdir()) / f"auditor-cache-{uid}"
    try:
        with suppress(FileExistsError):
            path.mkdir(mode=0o700)
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o022:
            return path
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="auditor-cache-"))


def code_version_of(root: Traversable) -> str:
    """A digest of every ``.py``, ``.md`` and ``.json`` file under `root`, sub-packages
    included (relative paths and contents)."""
    digest = hashlib.sha256()
    stack, files = [root], []
    while stack:
        folder = stack.pop()
        for item in folder.iterdir():
            if item.is_dir() and item.name != "__pycache__":
                stack.append(item)
            elif item.name.endswith((".py", ".md", ".json")):
                files.append(item)
    for item in sorted(files, key=lambda f: str(f)):
        digest.update(str(item).removeprefix(str(root)).encode())
        digest.update(item.read_bytes())
    return digest.hexdigest()[:16]


@cache
def code_version() -> str:
    """The auditor's code version: `code_version_of` the installed package. Every cache key
    carries it, so any change to the auditor invalidates what it had computed."""
    return code_version_of(resources.files("automaton_auditor"))


@cache
def detective_version() -> str:
    """The code version plus the versions of the parsing libraries: what shapes the
    detectives' facts."""
    digest = hashlib.sha256(code_version().encode())
    for name in ("automaton-auditor", *_FACT_PACKAGES):
        try:
            digest.update(f"{name}={metadata.version(name)};".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=none;".encode())
    return digest.hexdigest()[:16]


def digest_of(*parts: object) -> str:
    """A stable SHA-256 of JSON-serialisable parts (used to build cache keys)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class KeyValueStore:
    """A SQLite table of (kind, key) -> text. Failures read as misses and are swallowed on
    write; a database that is not one (corrupt, truncated, another file) is deleted so the
    next run starts clean. A busy or locked one is left alone: parallel audits share it, and
    deleting it under them would throw their work away."""

    timeout_s = 15.0  # how long to wait for another audit's write

    def __init__(self, root: Path, name: str = FACTS_DB) -> None:
        self.path = root / name

    def _connect(self) -> sqlite3.Connection:
        make_cache_dir(self.path.parent)
        conn = connect_wal(self.path, self.timeout_s)  # parallel audits read while one writes
        conn.execute("CREATE TABLE IF NOT EXISTS entries (kind TEXT, key TEXT, body TEXT, "
                     "created REAL, PRIMARY KEY (kind, key))")
        return conn

    def get(self, kind: str, key: str) -> str | None:
        """The stored text, or None when absent or unreadable."""
        try:
            with closing(self._connect()) as conn:
                row = conn.execute("SELECT body FROM entries WHERE kind = ? AND key = ?",
                                   (kind, key)).fetchone()
        except (sqlite3.Error, OSError) as exc:
            self._reset(exc)
            return None
        return row[0] if row and isinstance(row[0], str) else None

    def put(self, kind: str, key: str, body: str) -> None:
        """Store text under (kind, key); a failure only costs a future recomputation."""
        try:
            with closing(self._connect()) as conn, conn:
                conn.execute("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)",
                             (kind, key, body, time.time()))
        except (sqlite3.Error, OSError) as exc:
            self._reset(exc)

    def get_many(self, kind: str, keys: list[str]) -> dict[str, str]:
        """The stored texts of those `keys` that are present (none when unreadable)."""
        found: dict[str, str] = {}
        try:
            with closing(self._connect()) as conn:
                for start in range(0, len(keys), 500):
                    chunk = keys[start:start + 500]
                    marks = ",".join("?" * len(chunk))
                    found.update(conn.execute(
                        f"SELECT key, body FROM entries WHERE kind = ? AND key IN ({marks})",  # noqa: S608
                        (kind, *chunk)).fetchall())
        except (sqlite3.Error, OSError) as exc:
            self._reset(exc)
            return {}
        return {k: v for k, v in found.items() if isinstance(v, str)}

    def put_many(self, kind: str, items: list[tuple[str, str]]) -> None:
        """Store many (key, text) pairs in one transaction."""
        if not items:
            return
        now = time.time()
        try:
            with closing(self._connect()) as conn, conn:
                conn.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)",
                                 [(kind, key, body, now) for key, body in items])
        except (sqlite3.Error, OSError) as exc:
            self._reset(exc)

    def delete(self, kind: str, key: str) -> None:
        """Drop one entry (used when an entry no longer parses)."""
        with suppress(sqlite3.Error, OSError), closing(self._connect()) as conn, conn:
            conn.execute("DELETE FROM entries WHERE kind = ? AND key = ?", (kind, key))

    def _reset(self, exc: Exception) -> None:
        if not isinstance(exc, sqlite3.OperationalError):
            self.clear()
        # locked, busy or unopenable: a miss now, and the database stays for the others

    def clear(self) -> None:
        """Delete the database (and its WAL files): every entry is forgotten."""
        for suffix in ("", "-wal", "-shm"):
            with suppress(OSError):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)


@dataclass(frozen=True)
class CacheFile:
    """One file of the cache directory, for `audit cache show`."""

    name: str
    what: str
    bytes: int
    entries: int | None


def _count_rows(path: Path) -> int | None:
    tables = {"facts.sqlite": "entries", "ast_facts.sqlite": "entries",
              "opinions.sqlite": "entries", "runs.sqlite": "checkpoints"}
    table = tables.get(path.name)
    if table is None or not regular_or_absent(path):  # a FIFO would block the open
        return None
    if path.name == "runs.sqlite":
        query = "SELECT COUNT(DISTINCT thread_id) FROM checkpoints"
    else:
        query = f"SELECT COUNT(*) FROM {table}"  # noqa: S608 - table names are our constants
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as conn:
            row = conn.execute(query).fetchone()
    except sqlite3.Error:
        return None
    return int(row[0]) if row else None


def cache_files(root: Path) -> list[CacheFile]:
    """The known files present under `root`, with their size (WAL included) and rows."""
    found: list[CacheFile] = []
    for name, what in KNOWN_FILES.items():
        path = root / name
        if not path.exists():
            continue
        size = sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal", "-shm")
                   if Path(f"{path}{s}").exists())
        found.append(CacheFile(name, what, size, _count_rows(path)))
    return found


def clear_cache(root: Path, names: Iterable[str] | None = None) -> list[str]:
    """Delete the named cache files (all known ones by default); returns what was removed.
    Only files this tool writes are touched, never the rest of the directory."""
    removed: list[str] = []
    for name in names or KNOWN_FILES:
        if name not in KNOWN_FILES:
            raise ValueError(f"unknown cache file {name!r}")
        for suffix in ("", "-wal", "-shm", "-journal"):
            path = root / f"{name}{suffix}"
            if path.exists():
                path.unlink()
                if not suffix:
                    removed.append(name)
    return removed
