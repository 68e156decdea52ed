"""Whether a local target's work tree differs from its last commit. The audit reads the
committed tree (HEAD), so uncommitted, deleted or new files are not audited: the caller warns.

git never runs in the target's git dir: its config (includes, excludes and attributes
files, filters), hooks and promisor remotes are never read. The target is inspected as
acquisition does (`local.inspect`: a FIFO, a device or a socket in its git dirs answers
"cannot tell" at once), its object store is lent to a fresh repository, and a bounded copy
of its index is compared with its work tree (``git --work-tree``). A FIFO, a device or a
socket in the work tree would block git reading it as a ``.gitignore``, ``.gitattributes``
or a nested repository's HEAD, so the work tree is walked first and then git is not run.
"""

from __future__ import annotations

import os
from pathlib import Path

from automaton_auditor.containment import scratch_dir
from automaton_auditor.forensics.git import local
from automaton_auditor.forensics.git.head import NoHead
from automaton_auditor.forensics.git.runner import GitStopped, run_git
from automaton_auditor.safefile import UnsafeFile, open_regular, read_bounded

# At most this many changed paths are listed back (a count is enough for a warning).
MAX_LISTED = 20
# The index of a repository with a million files is about 100 MB; past this, no answer.
INDEX_BYTES = 256 * 1024 * 1024
EXCLUDE_BYTES = 1024 * 1024


def _copy_index(source: local.LocalSource, git_dir: Path) -> bool:
    """Copy the target's index (and info/exclude) into `git_dir`; False when it has none or
    it is larger than `INDEX_BYTES`."""
    dirs = source.dirs
    fd = open_regular(dirs.git_dir / "index", dirs.root)
    copied = 0
    with os.fdopen(fd, "rb") as index, (git_dir / "index").open("wb") as copy:
        while chunk := index.read(1024 * 1024):
            copied += len(chunk)
            if copied > INDEX_BYTES:
                return False
            copy.write(chunk)
    try:
        exclude = read_bounded(dirs.common_dir / "info" / "exclude", EXCLUDE_BYTES,
                               root=dirs.root)
    except FileNotFoundError:
        return True
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "exclude").write_bytes(exclude)
    return True


def _walkable(source: local.LocalSource) -> bool:
    """Whether the work tree holds nothing git could block on (and is small enough to
    walk); raises `UnsafeFile` naming a FIFO, device or socket."""
    dirs = source.dirs
    skip = {os.path.realpath(path) for path in (dirs.git_dir, dirs.common_dir)}
    return local.find_special([dirs.root], skip, dirs, "in the work tree", links=False)


def uncommitted_changes(repo: Path, timeout_s: float = 20.0) -> list[str] | None:
    """Paths whose work-tree state differs from HEAD (modified, deleted, untracked and not
    ignored), at most MAX_LISTED; None when it cannot be told safely (the caller says
    nothing; acquisition reports a hostile git dir itself)."""
    with scratch_dir("auditor-status-") as tmp:
        home, dest = Path(tmp) / "home", Path(tmp) / "repo"
        home.mkdir()
        try:
            source = local.inspect(repo)
            if source.dirs.git_dir == source.dirs.root or not _walkable(source):
                return None  # a bare repository has no work tree
            local.lend(source, dest, home, timeout_s)
            if not _copy_index(source, dest / ".git"):
                return None
            result = run_git(["--work-tree", str(source.dirs.root), "status",
                              "--porcelain=v1", "--untracked-files=normal",
                              "--ignore-submodules=all", "--no-renames"], cwd=dest,
                             home=home, timeout_s=timeout_s)
        except (UnsafeFile, NoHead, GitStopped, RuntimeError, OSError):
            return None
    if result.returncode != 0 or result.killed_reason:
        return None
    lines = result.stdout.decode("utf-8", "replace").splitlines()
    return [line[3:] for line in lines[:MAX_LISTED] if len(line) > 3] + (
        [f"… {len(lines) - MAX_LISTED} more"] if len(lines) > MAX_LISTED else [])
