"""Writing a commit's files to disk from the object store, without ``git checkout``.

Checkout would run filters, follow ``.gitattributes``, create symlinks and lazily fetch
every large blob a partial clone left out. Writing regular files ourselves keeps all of
that out: symlinks, submodules and missing (large) blobs are recorded as skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from automaton_auditor.tools.git_run import run_git

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
    """Every entry of the commit's tree, recursively, in git's order."""
    result = run_git(["ls-tree", "-r", "-z", "--full-tree", commit, "--"], cwd=repo,
                     home=home, timeout_s=timeout_s)
    if result.returncode != 0:
        raise RuntimeError(f"git ls-tree failed: {result.stderr.strip()[:200]}")
    entries = []
    for record in result.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, oid = meta.decode("ascii").split()
        entries.append(TreeEntry(mode, kind, oid, raw_path.decode("utf-8", "surrogateescape")))
    return entries


def _missing_blobs(repo: Path, commit: str, home: Path, timeout_s: float) -> set[str]:
    # rev-list prints missing objects with a leading '?' and never fetches them.
    result = run_git(["rev-list", "--objects", "--missing=print", "--no-walk", commit, "--"],
                     cwd=repo, home=home, timeout_s=timeout_s)
    lines = result.stdout.decode("ascii", "replace").splitlines()
    return {line[1:].split()[0] for line in lines if line.startswith("?")}


def safe_relpath(path: str) -> bool:
    """True when a tree path stays inside the work tree and avoids ``.git``."""
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        return False
    parts = path.split("/")
    return all(p not in ("", ".", "..") and p.lower() != ".git" for p in parts)


def materialize(repo: Path, commit: str, home: Path, timeout_s: float,
                max_blob_bytes: int) -> Materialized:
    """Write the regular files of `commit` into `repo` (its work tree) and list its paths."""
    entries = list_tree(repo, commit, home, timeout_s)
    missing = _missing_blobs(repo, commit, home, timeout_s)
    skipped: dict[str, str] = {}
    wanted: dict[str, list[str]] = {}
    for entry in entries:
        reason = _skip_reason(entry, missing)
        if reason:
            skipped[entry.path] = reason
        else:
            wanted.setdefault(entry.oid, []).append(entry.path)
    blobs = _read_blobs(repo, list(wanted), home, timeout_s)
    for oid, paths in wanted.items():
        data = blobs.get(oid)
        for path in paths:
            if data is None:
                skipped[path] = "unreadable blob"
            elif len(data) > max_blob_bytes:
                skipped[path] = f"larger than {max_blob_bytes} bytes"
            else:
                try:
                    _write(repo, path, data)
                except OSError as exc:
                    skipped[path] = f"not writable: {exc.strerror}"
    return Materialized(sorted(e.path for e in entries), dict(sorted(skipped.items())))


def _skip_reason(entry: TreeEntry, missing: set[str]) -> str:
    if entry.kind == "commit":
        return "submodule (not fetched)"
    if entry.mode == "120000":
        return "symlink (not followed)"
    if entry.mode not in _REGULAR or entry.kind != "blob":
        return f"unsupported mode {entry.mode}"
    if not safe_relpath(entry.path):
        return "unsafe path"
    if entry.oid in missing:
        return "large blob left out of the partial clone"
    return ""


def _read_blobs(repo: Path, oids: list[str], home: Path, timeout_s: float) -> dict[str, bytes]:
    if not oids:
        return {}
    result = run_git(["cat-file", "--batch"], cwd=repo, home=home, timeout_s=timeout_s,
                     stdin=("\n".join(oids) + "\n").encode("ascii"))
    out, pos, blobs = result.stdout, 0, {}
    while pos < len(out):
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3:  # "<oid> missing"
            continue
        size = int(header[2])
        blobs[header[0].decode("ascii")] = out[pos:pos + size]
        pos += size + 1
    return blobs


def _write(root: Path, path: str, data: bytes) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    # O_NOFOLLOW|O_EXCL: never write through a link, never overwrite (we made every dir).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
