"""The one HEAD reader: which commit a target names, read from its files as hostile input.

Git is never run in the target for this, so its config, hooks and fsmonitor never execute.
Every file is checked before it is opened and read with a byte bound:

- only regular files are opened (`automaton_auditor.safefile.open_regular`): a FIFO, a
  device, a socket or a symlink is refused without being opened;
- nothing outside the target is opened: a ``.git`` file (``gitdir:``) or ``commondir``
  pointing elsewhere, a ref outside ``refs/`` and a directory symlinked out are refused;
- HEAD and loose refs are read up to `REF_BYTES`; ``packed-refs`` is scanned line by line
  (`PACKED_LINE_BYTES` a line) up to `PACKED_REFS_BYTES`, so neither a FIFO nor a huge file
  can hang, fill memory or take long.

`resolve_head` raises `UnsafeFile` / `NoHead` with a one-line reason (acquisition reports
it); `local_head` answers None when unsure (cache look-ups and trace metadata). Remote
targets: ``git ls-remote`` through the hardened runner (no clone).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from automaton_auditor.containment import scratch_dir
from automaton_auditor.forensics.git.runner import GitStopped, run_git
from automaton_auditor.safefile import (
    UnsafeFile,
    inside,
    kind_of,
    open_regular,
    read_bounded,
    refused,
)
from automaton_auditor.storage.facts import valid_sha

REF_BYTES = 512
PACKED_REFS_BYTES = 32 * 1024 * 1024
PACKED_LINE_BYTES = 4096  # an object id, a space and a ref name
SYMREF_DEPTH = 5
# A ref name we follow: under refs/, plain components, none starting with a dot or ending
# in .lock, no "..", "@{", control characters or backslashes.
_REF = re.compile(r"^refs(?:/[A-Za-z0-9_+-][A-Za-z0-9._+-]*)+$")


class NoHead(ValueError):
    """The target names no commit the reader can tell (the message says why)."""


@dataclass(frozen=True)
class GitDirs:
    """Where a local repository keeps HEAD (`git_dir`) and its objects and refs
    (`common_dir`, different only for a linked worktree's own git dir)."""

    root: Path
    git_dir: Path
    common_dir: Path


def _text(path: Path, root: Path, limit: int = REF_BYTES) -> str:
    try:
        return read_bounded(path, limit, root=root).decode("ascii").strip()
    except UnicodeDecodeError:
        raise refused(path, "refused, not ASCII") from None


def git_dirs(target: Path) -> GitDirs:
    """The git dir and common dir of the local repository at `target` (a work tree with
    ``.git``, a ``.git`` file pointing inside the target, or a bare repository)."""
    root = Path(os.path.realpath(target))
    dot = root / ".git"
    try:
        info = os.lstat(dot)
    except FileNotFoundError:
        if (root / "objects").is_dir() and os.path.lexists(root / "HEAD"):
            return _with_common(root, root)  # a bare repository
        raise NoHead(f"{target} is not a git repository") from None
    if stat.S_ISDIR(info.st_mode):
        return _with_common(root, dot)
    if stat.S_ISREG(info.st_mode):  # "gitdir: <path>", relative to the work tree
        line = _text(dot, root)
        if not line.startswith("gitdir:"):
            raise refused(dot, "refused, not a 'gitdir:' line")
        pointed = root / line[len("gitdir:"):].strip()
        if not inside(pointed, root):
            raise refused(dot, "refused, its gitdir points outside the target")
        return _with_common(root, Path(os.path.realpath(pointed)))
    raise refused(dot, f"refused, {kind_of(info.st_mode)} is never opened")


def _with_common(root: Path, git_dir: Path) -> GitDirs:
    if not git_dir.is_dir() or os.path.islink(git_dir):
        raise NoHead(f"{git_dir} is not a git directory")
    try:
        pointed = git_dir / _text(git_dir / "commondir", root)
    except FileNotFoundError:
        return GitDirs(root, git_dir, git_dir)
    if not inside(pointed, root):
        raise refused(git_dir / "commondir", "refused, it points outside the target")
    return GitDirs(root, git_dir, Path(os.path.realpath(pointed)))


def _ref_target(content: str, path: Path) -> str:
    ref = content[len("ref:"):].strip()
    if not _REF.match(ref) or ".." in ref or ref.endswith(".lock") or "/." in ref:
        raise refused(path, f"refused, {ref[:80]!r} is not a ref under refs/")
    return ref


def resolve_head(dirs: GitDirs) -> str:
    """The commit HEAD names (symbolic refs followed up to `SYMREF_DEPTH`, loose then
    packed). Raises `UnsafeFile` or `NoHead` with a one-line reason."""
    path = dirs.git_dir / "HEAD"
    try:
        content = _text(path, dirs.root)
    except FileNotFoundError:
        raise NoHead(f"{path} is missing") from None
    for _ in range(SYMREF_DEPTH):
        if valid_sha(content):
            return content
        if not content.startswith("ref:"):
            raise NoHead(f"{path}: neither a commit id nor a ref")
        ref = _ref_target(content, path)
        path = dirs.common_dir / ref
        try:
            content = _text(path, dirs.root)
        except FileNotFoundError:
            return _packed(dirs, ref)
    raise NoHead(f"{path}: symbolic refs nested deeper than {SYMREF_DEPTH}")


def _packed(dirs: GitDirs, ref: str) -> str:
    path = dirs.common_dir / "packed-refs"
    try:
        fd = open_regular(path, dirs.root)
    except FileNotFoundError:
        raise NoHead(f"{ref} is not set (no commits yet?)") from None
    wanted = (" " + ref).encode("ascii")
    with os.fdopen(fd, "rb") as handle:  # line by line: linear, whatever the file holds
        read = 0
        while line := handle.readline(PACKED_LINE_BYTES + 1):
            read += len(line)
            if read > PACKED_REFS_BYTES:
                raise refused(path, f"refused, larger than {PACKED_REFS_BYTES} bytes")
            if len(line) > PACKED_LINE_BYTES:
                raise refused(path, f"refused, a line longer than {PACKED_LINE_BYTES} "
                                       "bytes")
            sha = _match_packed(line.rstrip(b"\n"), wanted)
            if sha:
                return sha
    raise NoHead(f"{ref} is not set (no commits yet?)")


def _match_packed(line: bytes, wanted: bytes) -> str:
    line = line.rstrip(b"\r")
    if not line.endswith(wanted):
        return ""
    sha = line[: -len(wanted)].decode("ascii", "replace")
    return sha if valid_sha(sha) else ""


def local_head(target: Path) -> str | None:
    """HEAD's commit of a local repository, read from its files; None when it cannot be
    told safely (a missing, hostile or unusual HEAD)."""
    try:
        return resolve_head(git_dirs(target))
    except (UnsafeFile, NoHead, OSError):
        return None


def is_shallow(target: Path) -> bool:
    """True when the local repository at `target` holds a shallow history (its ``shallow``
    file lists boundary commits); False when it cannot tell."""
    try:
        info = os.lstat(git_dirs(target).common_dir / "shallow")
    except (UnsafeFile, NoHead, OSError):
        return False
    return info.st_size > 0


def remote_head(url: str, timeout_s: float) -> str | None:
    """HEAD's commit of a remote repository (``git ls-remote``), None on any failure."""
    with scratch_dir("auditor-lsremote-") as home:
        try:
            result = run_git(["ls-remote", "--", url, "HEAD"], cwd=Path(home),
                             home=Path(home), timeout_s=min(timeout_s, 30))
        except GitStopped:
            return None
    if result.returncode != 0:
        return None
    for line in result.stdout.decode("ascii", "replace").splitlines():
        sha, _, name = line.partition("\t")
        if name.strip() == "HEAD" and valid_sha(sha.strip()):
            return sha.strip()
    return None


class TargetLike(Protocol):
    """What `head_commit` needs of a parsed target (`acquire.Target`)."""

    @property
    def kind(self) -> str: ...

    @property
    def value(self) -> str: ...


def head_commit(target: TargetLike, timeout_s: float) -> str | None:
    """The commit an audit of `target` would see, or None when it cannot be told cheaply.
    None for a shallow local target too: the facts of a shallow history must never be
    cached under (or answered from) the commit's full-history entry."""
    if target.kind == "local":
        path = Path(target.value)
        return None if is_shallow(path) else local_head(path)
    return remote_head(target.value, timeout_s)
