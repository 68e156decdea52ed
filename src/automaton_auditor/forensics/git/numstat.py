"""The lines each commit brought to the code (``git log --numstat``), read in one git call
for the whole history.

An object store that lacks some old blobs (a blobless or partial clone, a mirror that left
its largest files out) makes git stop at the first one it needs rather than fetch it. The
commits printed before it are kept; the one it stopped in is read again, with the rest,
without the path that holds the missing blob, when that path is no code (a report PDF, an
image): its lines are no code lines, so the counts stay exact. A missing blob under a path
the counts read, or more than `MAX_MISSING` of them, leaves the lines unread.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from automaton_auditor.containment import scratch_dir
from automaton_auditor.forensics.git.history import Commit
from automaton_auditor.forensics.git.runner import GitResult, run_git

# Renamed files looked for among this many added and as many removed files of a commit, at
# most (git's own default is 1000): a bounded cost per commit; beyond it a move is read as
# the files it removed and added.
RENAME_LIMIT = 100
MAX_MISSING = 5  # blobs left out of the count, at most (each costs one more git call)
_MISSING = re.compile(r"unable to read ([0-9a-f]{40})")


def add_line_counts(repo: Path, timeout_s: float, commits: list[Commit],
                    counts: Callable[[str], bool]) -> bool:
    """Set `Commit.lines` to the lines each commit brought to the paths `counts` accepts
    (``git log --numstat``: added minus removed, at least 0), `Commit.written` to the lines
    it added to them and `Commit.grown` to the lines it added to any file (renames detected,
    so a moved file adds only what the move changed; ``-w``, so a line whose indentation or
    line ending alone changed is no line added); False when they cannot be read (see the
    module docstring)."""
    todo, excluded = list(commits), list[str]()  # excluded: paths of missing blobs
    with scratch_dir("git-home-") as home_dir:
        home = Path(home_dir)
        for _attempt in range(MAX_MISSING + 1):
            result = run_git(["log", "--numstat", "-M", f"-l{RENAME_LIMIT}", "-w",
                              "--no-color", "--format=%x1e%H", "--no-walk=unsorted",
                              "--stdin", "--",
                              *(f":(exclude,literal){path}" for path in excluded)],
                             cwd=repo, home=home, timeout_s=timeout_s,
                             stdin="".join(f"{c.sha}\n" for c in todo).encode("ascii"),
                             split=b"\n")
            seen = _read(result, {c.sha: c for c in todo}, counts)
            if result.returncode == 0:
                _left_out(todo, set(seen), excluded)
                break
            path = _missing_path(repo, home, timeout_s, result, seen[-1] if seen else None)
            if path is None or counts(path):
                return False
            # the commit git stopped in is read again, with the ones it did not reach
            todo = todo[next(i for i, c in enumerate(todo) if c.sha == seen[-1]):]
            excluded.append(path)
        else:
            return False
    for commit in commits:
        if commit.lines is not None:
            commit.lines = max(commit.lines, 0)
    return True


def _left_out(todo: list[Commit], seen: set[str], excluded: list[str]) -> None:
    """The commits an exclusion hid (git lists a commit only when it touches a path the
    pathspec keeps): they touched only the left-out paths, no code. A commit that added or
    changed one of them grew by a line (a binary file counts as one)."""
    for commit in (c for c in todo if excluded and c.sha not in seen):
        commit.lines, commit.written = 0, 0
        commit.grown = int(bool(set(excluded) & {*commit.added, *commit.changed}))


def _read(result: GitResult, by_sha: dict[str, Commit],
          counts: Callable[[str], bool]) -> list[str]:
    """Count the numstat records into the commits; the shas whose header was read, in
    order."""
    seen: list[str] = []
    current: Commit | None = None
    for raw in result.records:
        line = raw.decode("utf-8", "replace")
        if line.startswith("\x1e"):
            current = by_sha.get(line[1:].strip())
            if current is not None:
                current.lines, current.grown, current.written = 0, 0, 0
                seen.append(current.sha)
            continue
        added, _, rest_of_line = line.partition("\t")
        removed, _, path = rest_of_line.partition("\t")
        if current is None or not path:
            continue
        # a binary file shows "-": it counts as one line
        current.grown = (current.grown or 0) + (int(added) if added.isdigit() else 1)
        if added.isdigit() and removed.isdigit() and counts(renamed_to(path)):
            current.lines = (current.lines or 0) + int(added) - int(removed)
            current.written = (current.written or 0) + int(added)
    return seen


def _missing_path(repo: Path, home: Path, timeout_s: float, result: GitResult,
                  sha: str | None) -> str | None:
    """The path that holds the blob git could not read, in the commit it stopped in or its
    parent; None when git failed otherwise or the blob is found under no path."""
    missing = _MISSING.search(result.stderr)
    if missing is None or sha is None:
        return None
    for tree in (sha, f"{sha}^"):
        listed = run_git(["ls-tree", "-r", "--full-tree", tree], cwd=repo, home=home,
                         timeout_s=timeout_s, split=b"\n")
        for raw in listed.records:
            meta, _, path = raw.decode("utf-8", "replace").partition("\t")
            if meta.split()[-1:] == [missing.group(1)]:
                return path
    return None


def renamed_to(path: str) -> str:
    """The path a ``--numstat`` rename entry names after the move (``a.py => b.py``,
    ``src/{a => b}/c.py``); any other path as it is."""
    if " => " not in path:
        return path
    if match := re.fullmatch(r"(.*)\{(.*) => (.*)\}(.*)", path):
        head, _, new, tail = match.groups()
        return (head + new + tail).replace("//", "/")
    return path.split(" => ", 1)[1]
