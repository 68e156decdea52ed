"""Writing a commit's files to disk from the object store, without ``git checkout``.

Checkout would run filters, follow ``.gitattributes``, create symlinks and lazily fetch
every large blob a partial clone left out. Writing regular files ourselves keeps all of
that out: symlinks, submodules, blobs over the size cap and blobs the object store does not
hold are recorded as skipped. The repository has no promisor remote, so a missing blob is
reported missing by ``cat-file``, never fetched.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from automaton_auditor.containment import spawn
from automaton_auditor.forensics.git.runner import (
    GitStopped,
    git_bounds,
    git_command,
    hardened_env,
    path_fits,
    run_git,
)

_REGULAR = {"100644", "100755", "100664"}


@dataclass
class Materialized:
    """The tracked paths at a commit and the ones not written to disk (path -> why)."""

    files: list[str]
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TreeEntry:
    """One entry of ``git ls-tree -r``."""

    mode: str
    kind: str
    oid: str
    path: str


def list_tree(repo: Path, commit: str, home: Path, timeout_s: float) -> list[TreeEntry]:
    """Every entry of the commit's tree, recursively, in git's order; a path no file system
    could hold (`path_fits`) is left out: it can be neither written nor imported, and
    carrying it through facts and checkpoints would cost memory without bound."""
    result = run_git(["ls-tree", "-r", "-z", "--full-tree", commit, "--"], cwd=repo,
                     home=home, timeout_s=timeout_s, split=b"\0",
                     keep=lambda record: path_fits(record.partition(b"\t")[2]))
    if result.returncode != 0:
        raise RuntimeError(f"git ls-tree failed: {result.stderr.strip()[:200]}")
    entries = []
    for record in result.records:
        meta, _, raw_path = record.partition(b"\t")
        # Undecodable names are replaced: every path we report must be valid UTF-8.
        mode, kind, oid = meta.decode("ascii", "replace").split()
        entries.append(TreeEntry(mode, kind, oid, raw_path.decode("utf-8", "replace")))
    return entries


def blob_sizes(repo: Path, oids: list[str], home: Path, timeout_s: float) -> dict[str, int]:
    """The size of each blob of `oids` the object store holds (``cat-file --batch-check``,
    which reports a missing object as missing and never fetches it)."""
    if not oids:
        return {}
    result = run_git(["cat-file", "--batch-check"], cwd=repo, home=home, timeout_s=timeout_s,
                     stdin=("\n".join(oids) + "\n").encode("ascii"))
    if result.returncode != 0:
        raise RuntimeError(f"git cat-file failed: {result.stderr.strip()[:200]}")
    sizes = {}
    for line in result.stdout.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes


def safe_relpath(path: str) -> bool:
    """True when a tree path stays inside the work tree and avoids ``.git``."""
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        return False
    parts = path.split("/")
    return all(p not in ("", ".", "..") and p.lower() != ".git" for p in parts)


def materialize(repo: Path, commit: str, home: Path, timeout_s: float,
                max_blob_bytes: int, max_files: int = 50_000,
                max_tree_bytes: int = 500 * 1024 * 1024) -> Materialized:
    """Write the regular files of `commit` into `repo` (its work tree) and list its paths.

    Raises `TreeTooLarge` above `max_files` entries; stops writing (and records the rest as
    skipped) once `max_tree_bytes` are written, since tiny packs can hold huge files.
    """
    entries = list_tree(repo, commit, home, timeout_s)
    if len(entries) > max_files:
        raise TreeTooLarge(f"{len(entries)} files exceed the cap of {max_files}")
    skipped: dict[str, str] = {}
    wanted: dict[str, list[str]] = {}
    for entry in entries:
        reason = _skip_reason(entry)
        if reason:
            skipped[entry.path] = reason
        else:
            wanted.setdefault(entry.oid, []).append(entry.path)
    sizes = blob_sizes(repo, list(wanted), home, timeout_s)
    for oid in list(wanted):
        size = sizes.get(oid)
        if size is None or size > max_blob_bytes:
            reason = MISSING if size is None else f"larger than {max_blob_bytes} bytes"
            skipped.update(dict.fromkeys(wanted.pop(oid), reason))

    budget = [max_tree_bytes]
    over = f"work tree exceeds {max_tree_bytes // (1024 * 1024)} MB"

    def write(oid: str, data: bytes | None) -> bool:
        # Counted per path written: one blob may sit at thousands of paths.
        for path in wanted.pop(oid, []):
            if data is None:
                skipped[path] = f"larger than {max_blob_bytes} bytes"
                continue
            budget[0] -= len(data)
            if budget[0] < 0:
                skipped[path] = over
                continue
            try:
                _write(repo, path, data)
            except OSError as exc:
                skipped[path] = f"not writable: {exc.strerror}"
        return budget[0] >= 0

    stop = stream_blobs(repo, list(wanted), home, timeout_s, max_blob_bytes, write)
    if budget[0] < 0:
        stop = over
    for paths in wanted.values():  # whatever the stream did not deliver
        for path in paths:
            skipped[path] = stop or "unreadable blob"
    return Materialized(sorted(e.path for e in entries), dict(sorted(skipped.items())))


class TreeTooLarge(RuntimeError):
    """The commit's tree exceeds the file-count cap."""


MISSING = "not in the object store (left out of a partial or shallow clone)"


def _skip_reason(entry: TreeEntry) -> str:
    if entry.kind == "commit":
        return "submodule (not fetched)"
    if entry.mode == "120000":
        return "symlink (not followed)"
    if entry.mode not in _REGULAR or entry.kind != "blob":
        return f"unsupported mode {entry.mode}"
    if not safe_relpath(entry.path):
        return "unsafe path"
    return ""


def stream_blobs(repo: Path, oids: list[str], home: Path, timeout_s: float,
                 max_blob_bytes: int, on_blob: Callable[[str, bytes | None], bool]) -> str:
    """Feed each blob of `oids` to `on_blob` (None for one over the size cap) as
    ``git cat-file --batch`` streams it; `on_blob` returns False to stop.

    Returns "" when all were read, else why it stopped; the process group is killed at
    the deadline even if git stalls mid-stream (`GitStopped`).
    """
    if not oids:
        return ""
    with tempfile.TemporaryFile(dir=home) as feed:
        feed.write(("\n".join(oids) + "\n").encode("ascii"))
        feed.seek(0)
        with spawn(git_command(["cat-file", "--batch"]), bounds=git_bounds(timeout_s),
                   cwd=repo, env=hardened_env(home), stdin=feed, stdout=subprocess.PIPE,
                   stderr=subprocess.DEVNULL) as child:
            stop = _consume(child.popen, max_blob_bytes, on_blob)
        if child.breach:
            raise GitStopped(["cat-file"], child.breach, timeout_s)
        return stop


def _consume(proc: subprocess.Popen[bytes], max_blob_bytes: int,
             on_blob: Callable[[str, bytes | None], bool]) -> str:
    assert proc.stdout is not None
    while True:
        header = proc.stdout.readline().split()
        if not header:
            return "" if proc.poll() is not None or proc.wait() == 0 else "git cat-file failed"
        if len(header) != 3:  # "<oid> missing"
            continue
        size = int(header[2])
        if size > max_blob_bytes:
            proc.stdout.read(size + 1)
            on_blob(header[0].decode("ascii"), None)
            continue
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        if len(data) < size:
            return "git cat-file stopped (timeout)"
        if not on_blob(header[0].decode("ascii"), data):
            return "size budget reached"


def _write(root: Path, path: str, data: bytes) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    # O_NOFOLLOW|O_EXCL: never write through a link, never overwrite (we made every dir).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
