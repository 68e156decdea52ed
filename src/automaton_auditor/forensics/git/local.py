"""A local target audited in place: its object store lent, read-only, to a fresh repository.

Nothing is cloned and git never runs in the target: no upload-pack, so the target's config,
hooks and promisor remotes are never read. The fresh repository (our config, no remote)
borrows the target's ``objects`` directory as an alternate, so

- **nothing is ever fetched**: with no promisor remote, an object the target does not hold
  (a blob a partial clone left out, a parent beyond a shallow boundary) is simply missing:
  the file is skipped, the history stops there;
- **a shallow target is read as it is**: its ``shallow`` file is copied, so the log stops at
  the boundary and the history is reported as a lower bound;
- the target's own alternates (``clone --shared`` / ``--reference``) are followed by git.

Before git reads anything, the git dirs and every object store they borrow from are walked
once: a FIFO, a device, a socket, or a symlink to one, anywhere in them is refused with a
one-line `UnsafeFile` naming it (git would block on it, or read without end).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from automaton_auditor.forensics.git.clone import lend_objects
from automaton_auditor.forensics.git.head import GitDirs, git_dirs, resolve_head
from automaton_auditor.forensics.git.runner import run_git
from automaton_auditor.safefile import kind_of, read_bounded, refused
from automaton_auditor.storage.facts import valid_sha

SCAN_ENTRIES = 500_000
SHALLOW_BYTES = 4 * 1024 * 1024
ALTERNATES_BYTES = 64 * 1024
ALTERNATE_DEPTH = 5


@dataclass(frozen=True)
class LocalSource:
    """What was read from a local target before git runs."""

    dirs: GitDirs
    stores: list[Path]
    commit: str
    shallow: list[str]


def inspect(target: Path) -> LocalSource:
    """The target's git dirs, object stores, HEAD commit and shallow boundary, every file
    checked first. Raises `UnsafeFile` or `NoHead` (one-line reasons)."""
    dirs = git_dirs(target)
    stores = object_stores(dirs)
    scan(dirs, stores)
    return LocalSource(dirs, stores, resolve_head(dirs), shallow_commits(dirs))


def object_stores(dirs: GitDirs) -> list[Path]:
    """The target's objects directory and those it borrows (alternates, nested up to git's
    own limit of five), as real paths."""
    stores: list[Path] = []
    pending = [(Path(os.path.realpath(dirs.common_dir / "objects")), 0)]
    while pending:
        store, level = pending.pop()
        if store in stores or not store.is_dir():
            continue
        stores.append(store)
        if level < ALTERNATE_DEPTH:
            pending += [(path, level + 1) for path in _alternates(store)]
    return stores


def _alternates(store: Path) -> Iterator[Path]:
    try:
        raw = read_bounded(store / "info" / "alternates", ALTERNATES_BYTES, root=store)
    except FileNotFoundError:
        return
    for line in raw.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line and not line.startswith(("#", '"')):
            yield Path(os.path.realpath(store / line))


def scan(dirs: GitDirs, stores: list[Path]) -> None:
    """Raise `UnsafeFile` on the first FIFO, device, socket or symlink to one in the git
    dirs and object stores (at most `SCAN_ENTRIES` entries are looked at)."""
    starts = list(dict.fromkeys([dirs.git_dir, dirs.common_dir, *stores]))
    find_special(starts, {str(store) for store in stores}, dirs, "in the git dir")


def find_special(starts: list[Path], skip: set[str], dirs: GitDirs, where: str,
                 links: bool = True) -> bool:
    """Raise `UnsafeFile` on the first FIFO, device or socket under `starts` (with `links`,
    a symlink to one too), never entering a directory whose real path is in `skip`.
    Returns False when `SCAN_ENTRIES` entries were looked at before the walk ended."""
    stack = list(starts)
    seen = 0
    while stack:
        if seen >= SCAN_ENTRIES:
            return False
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        seen += len(entries)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if os.path.realpath(entry.path) not in skip:
                    stack.append(Path(entry.path))
            elif entry.is_symlink():
                if links:
                    _check_link(entry.path, dirs)
            elif not entry.is_file(follow_symlinks=False):
                kind = kind_of(entry.stat(follow_symlinks=False).st_mode)
                raise refused(_shown(entry.path, dirs), f"refused, {kind} {where}")
    return True


def _check_link(path: str, dirs: GitDirs) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # dangling: nothing to read
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise refused(_shown(path, dirs), f"refused, a symlink to {kind_of(mode)}")


def _shown(path: str, dirs: GitDirs) -> str:
    try:
        return str(Path(path).relative_to(dirs.root))
    except ValueError:
        return path


def shallow_commits(dirs: GitDirs) -> list[str]:
    """The target's shallow boundary: commits whose parents it does not hold."""
    path = dirs.common_dir / "shallow"
    try:
        raw = read_bounded(path, SHALLOW_BYTES, root=dirs.root)
    except FileNotFoundError:
        return []
    lines = [line.decode("ascii", "replace") for line in raw.split() if line]
    if not all(valid_sha(line) for line in lines):
        raise refused(path, "refused, not a list of commit ids")
    return lines


# What HEAD names when it is not a commit, by `git cat-file -t`: the object is there, just
# not a commit (git itself peels a tag for `git log`; the auditor reads only HEAD's commit).
_NOT_A_COMMIT = {"tag": "an annotated tag object, not a commit", "tree": "a tree, not a commit",
                 "blob": "a blob, not a commit"}


def lend(source: LocalSource, dest: Path, home: Path, timeout_s: float,
         depth: int | None = None) -> bool:
    """Make `dest` a repository that reads `source`'s objects, with HEAD detached at its
    commit and its shallow boundary (cut further at `depth`). Returns True when the history
    is shallow. Raises RuntimeError when git cannot read the commit."""
    object_format = "sha256" if len(source.commit) == 64 else "sha1"
    init = run_git(["init", "--quiet", "--template=", f"--object-format={object_format}",
                    str(dest)], cwd=home, home=home, timeout_s=timeout_s)
    if init.returncode != 0:
        raise RuntimeError(f"git init failed: {init.stderr.strip()[:200]}")
    git_dir = dest / ".git"
    lend_objects(dest, source.stores[:1])  # git follows the target's own alternates
    boundary = list(source.shallow)
    if boundary:
        (git_dir / "shallow").write_text("".join(f"{sha}\n" for sha in boundary))
    (git_dir / "HEAD").write_text(source.commit + "\n")
    kind = run_git(["cat-file", "-t", source.commit], cwd=dest, home=home,
                   timeout_s=timeout_s).stdout.strip().decode("ascii", "replace")
    if kind != "commit":  # git writes only a commit there; a tag or tree is a hand edit
        what = _NOT_A_COMMIT.get(kind, "which the object store does not hold")
        raise RuntimeError(f"HEAD names {source.commit[:12]}, {what}")
    if depth:
        boundary = sorted(set(boundary) | cut_at_depth(dest, source.commit, depth, home,
                                                        timeout_s))
        (git_dir / "shallow").write_text("".join(f"{sha}\n" for sha in boundary))
    return bool(boundary)


def cut_at_depth(repo: Path, commit: str, depth: int, home: Path,
                 timeout_s: float) -> set[str]:
    """The commits at distance `depth` from `commit` (1 = the commit itself) that have
    parents: the boundary ``clone --depth`` would leave."""
    result = run_git(["rev-list", "--parents", commit, "--"], cwd=repo, home=home,
                     timeout_s=timeout_s)
    if result.returncode != 0:
        raise RuntimeError(f"git rev-list failed: {result.stderr.strip()[:200]}")
    parents = {}
    for line in result.stdout.decode("ascii", "replace").splitlines():
        sha, *rest = line.split()
        parents[sha] = rest
    level, seen = [commit], {commit}
    for _ in range(depth - 1):
        level = [p for sha in level for p in parents.get(sha, []) if p not in seen]
        seen.update(level)
    return {sha for sha in level if parents.get(sha)}
