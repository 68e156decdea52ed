"""Which commit wrote each code line the audited commit holds (``git blame``).

A commit's net lines (added minus removed) miss a rewrite: a commit that turns a template
(a weather-lookup demo agent) into the real auditor removes nearly as much as it adds, so
its net lines understate what it brought. Blame credits every non-blank line of today's code
to the commit that last wrote it (``-w``: a change of indentation alone rewrites nothing;
``-M``: a line moved within its file keeps its author), so a commit that fills or rewrites
placeholders is credited with the code it brought that is still there.

Bounded like the other blob reads: at most `FILES` files, each under `BLOB_BYTES`, and
`BLOBS_BYTES` in all; a file git cannot blame (a missing blob) leaves the counts unknown.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from time import monotonic

from automaton_auditor.containment import scratch_dir
from automaton_auditor.forensics.git.history import BLOB_BYTES, BLOBS_BYTES, Commit
from automaton_auditor.forensics.git.runner import run_git

FILES = 300  # code files blamed, at most (a larger code base is not judged this way)
WORKERS = 4  # blames run at once
_HEADER = re.compile(rb"^([0-9a-f]{40}) \d+ \d+")


def _sized_paths(repo: Path, home: Path, timeout_s: float,
                 counts: Callable[[str], bool]) -> list[str] | None:
    """The code paths at HEAD to blame, or None when they exceed the bounds."""
    listed = run_git(["ls-tree", "-r", "-l", "-z", "HEAD", "--"], cwd=repo, home=home,
                     timeout_s=timeout_s, split=b"\0")
    if listed.returncode != 0:
        return None
    paths: list[str] = []
    budget = BLOBS_BYTES
    for record in listed.records:
        meta, _, raw = record.partition(b"\t")
        fields = meta.split()
        path = raw.decode("utf-8", "replace")
        if len(fields) != 4 or fields[1] != b"blob" or not counts(path) or "\n" in path:
            continue
        size = int(fields[3]) if fields[3].isdigit() else BLOB_BYTES + 1
        budget -= size
        if size > BLOB_BYTES or budget < 0 or len(paths) >= FILES:
            return None
        paths.append(path)
    return paths


def _blame(repo: Path, home: Path, path: str, deadline: float) -> dict[str, int] | None:
    """The non-blank lines of `path` at HEAD per commit that last wrote them (None: not
    blamed before `deadline`)."""
    left = deadline - monotonic()
    if left <= 0:
        return None
    result = run_git(["blame", "-w", "-M", "--porcelain", "HEAD", "--", path],
                     cwd=repo, home=home, timeout_s=left, split=b"\n")
    if result.returncode != 0:
        return None
    kept: dict[str, int] = {}
    author = b""
    for line in result.records:
        if line.startswith(b"\t"):
            if line.strip():
                name = author.decode("ascii")
                kept[name] = kept.get(name, 0) + 1
        elif match := _HEADER.match(line):
            author = match.group(1)
    return kept


def add_kept_lines(repo: Path, timeout_s: float, commits: list[Commit],
                   counts: Callable[[str], bool]) -> bool:
    """Set `Commit.kept` to the non-blank lines of today's code files (the paths `counts`
    accepts) each commit last wrote; False (and nothing set) when a file cannot be blamed
    or the code exceeds the bounds."""
    kept: Counter[str] = Counter()
    with scratch_dir("git-home-") as home_dir:
        home = Path(home_dir)
        paths = _sized_paths(repo, home, timeout_s, counts)
        if paths is None:
            return False
        # one time limit for every blame together, not one per file (300 files could
        # otherwise take 300 of them); a few blames at once, as git's own work is serial
        deadline = monotonic() + timeout_s
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for counted in pool.map(lambda p: _blame(repo, home, p, deadline), paths):
                if counted is None:
                    pool.shutdown(cancel_futures=True)
                    return False
                kept.update(counted)
    for commit in commits:
        commit.kept = kept.get(commit.sha, 0)
    return True


def kept_total(commits: list[Commit]) -> int | None:
    """Today's code lines the commits wrote; None when blame was not read."""
    if any(c.kept is None for c in commits):
        return None
    return sum(c.kept or 0 for c in commits)
