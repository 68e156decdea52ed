"""The git narrative: what the history of the audited repository says about how it was built.

One ``git log --no-renames --name-status`` pass gives every commit's hash, author date,
subject and the paths it added or changed (``--no-renames``: rename detection makes a
partial clone fetch every old blob). From it: the commit count and time span, bulk-upload
detection, and the development progression classified from the paths each commit touches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from automaton_auditor.containment import scratch_dir
from automaton_auditor.forensics.git.runner import GitStopped, path_fits, run_git
from automaton_auditor.text import clip

# Above this many commits, file lists are read only for the oldest ones: the progression
# story is told by the first commits, and diffing 60,000 commits costs seconds.
NAMES_LIMIT = 2000
BULK_SHARE = 0.7
CLUSTER_SECONDS = 30 * 60
# A commit subject is kept to this many characters (quoted in findings and reports).
SUBJECT_LIMIT = 300
# Longer histories are not read line by line (a burst is a short history's pattern).
LINES_LIMIT = 500

STAGES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("setup", re.compile(r"(^|/)(pyproject\.toml|requirements[^/]*\.txt|setup\.(py|cfg)|uv\.lock"
                         r"|poetry\.lock|\.env\.example|\.python-version|makefile|dockerfile)$")),
    ("tools", re.compile(r"(^|/)tools?(/|\.py$)|_tools?\.py$|(^|/)(detectives?|"
                         r"investigators?)(/|\.py$)|(ast|git|pdf|repo|doc|vision)_?"
                         r"(parser|analy[sz]er|reader|utils?)\.py$")),
    ("state", re.compile(r"(^|/)(state|models?|schemas?)(/|\.py$)")),
    ("graph", re.compile(r"(^|/)(graph|workflow|orchestrat\w*|builder)(/|\.py$)")),
    ("judges", re.compile(r"judge|prosecutor|defen[cs]e|tech_?lead|persona")),
    ("synthesis", re.compile(r"justice|chief|synthes|report_?(writer|gen\w*)")),
)
STAGE_ORDER = {"setup": 0, "tools": 1, "state": 1, "graph": 2, "judges": 3, "synthesis": 4}
_VAGUE = re.compile(r"^(init(ial)?( commit)?|update[sd]?|wip|fix(es)?|changes?|commit|\.|"
                    r"first commit|add files via upload|upload|final|done|test)\W*$", re.I)

_TYPE_PREFIX = re.compile(r"^[A-Za-z]{2,10}(?:\([^)]{0,30}\))?!?\s*:\s*")

# Words that name no part of the code and no particular change: a subject made only of them
# says nothing ("update system", "final submission", "making everything up to date").
_GENERIC = frozenset({
    "a", "add", "added", "all", "again", "and", "another", "any", "bit", "bug", "bugs",
    "change", "changes", "changed", "code", "commit", "commits", "date",
    "done", "everything", "file", "files", "final", "finally", "fix", "fixed", "fixes",
    "fixing", "for", "i", "it", "its", "latest", "make", "makin", "making", "minor", "misc",
    "more", "my", "new", "of", "on", "one", "progress", "project", "push", "pushed", "repo",
    "small", "some", "stuff", "submission", "submisson", "submit", "submitted", "system",
    "the", "this", "to", "up", "update", "updated", "updates", "updating", "version", "wip",
    "work", "working"})


@dataclass
class Commit:
    """One commit of the log."""

    sha: str
    timestamp: int
    date: str
    subject: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    # Lines the commit brought to code files, when read (`add_line_counts`): added minus
    # removed, at least 0, so a rewrite or a move that adds as much as it removes brings none.
    lines: int | None = None
    parents: int = 1  # a merge has two or more; the root (or a shallow boundary) none
    # Lines the commit added to any file, when read (a binary file counts as one): 0 for a
    # commit that adds only empty files, deletes, moves or re-indents, or changes nothing.
    grown: int | None = None
    # Non-blank lines of today's code this commit last wrote, when blamed
    # (`survival.add_kept_lines`): added or rewritten by it, and still there.
    kept: int | None = None
    # Lines the commit added to code files, when read (`add_line_counts`): every line it
    # wrote, a rewrite's included; a file it moved, or a line it only re-indented, adds none.
    written: int | None = None
    # Commits re-made from this one on another branch (`remade_once`), counted in it
    copies: int = 0

    @property
    def merge(self) -> bool:
        """True for a merge commit: it joins work authored in other commits."""
        return self.parents > 1

    def quote(self) -> str:
        """``<short sha> <date> <subject>``, as evidence quotes it."""
        return f"{self.sha[:8]} {self.date} {self.subject}"


def remade_once(commits: list[Commit]) -> list[Commit]:
    """`commits` with each commit re-made on another branch (a cherry-pick, or a rebased
    branch merged beside the original: the same author time and subject, another sha)
    kept once, the first: one piece of work, not two. The survivor keeps the lines today's
    code owes to either copy (blame credits whichever the walk met first)."""
    seen: dict[tuple[int, str], Commit] = {}
    out: list[Commit] = []
    for commit in commits:
        first = None if commit.merge else seen.setdefault((commit.timestamp, commit.subject),
                                                          commit)
        if first is None or first is commit:
            out.append(commit)
            continue
        first.copies += 1
        if commit.kept is not None:
            first.kept = (first.kept or 0) + commit.kept
    return out


@dataclass
class Log:
    """The commits reachable from HEAD, oldest first, and why their paths are unknown
    ("" when they were read: a treeless partial source lacks the older trees)."""

    commits: list[Commit]
    paths_error: str = ""


def read_log(repo: Path, timeout_s: float) -> Log:
    """All commits reachable from HEAD, oldest first, with paths for the oldest ones."""
    with scratch_dir("git-home-") as home_dir:
        home = Path(home_dir)
        meta = _git_log(repo, home, timeout_s, ["HEAD"], names=False)
        commits = _parse(meta)
        commits.reverse()
        oldest = [c.sha for c in commits[:NAMES_LIMIT]]
        if not oldest:
            return Log(commits)
        try:
            named = {c.sha: c for c in _parse(_git_log(repo, home, timeout_s, oldest,
                                                       names=True))}
        except GitStopped:
            raise
        except RuntimeError as exc:  # a tree is missing: commits and dates still hold
            return Log(commits, str(exc))
        for commit in commits[:NAMES_LIMIT]:
            if commit.sha in named:
                twin = named[commit.sha]
                commit.added, commit.changed = twin.added, twin.changed
        return Log(commits)


def _git_log(repo: Path, home: Path, timeout_s: float, revs: list[str],
             names: bool) -> tuple[bytes, ...]:
    args = ["log", "--no-renames", "--no-color", "--format=%x1e%H%x1f%at%x1f%aI%x1f%P%x1f%s"]
    stdin = None
    if names:
        args += ["--name-status", "--no-walk=unsorted", "--stdin"]
        stdin = ("\n".join(revs) + "\n").encode("ascii")
    else:
        args += [*revs]
    # Read line by line, each line cut short: a commit subject of any size costs kilobytes.
    result = run_git([*args, "--"], cwd=repo, home=home, timeout_s=timeout_s, stdin=stdin,
                     split=b"\n")
    if result.returncode != 0:
        raise RuntimeError(f"git log failed: {result.stderr.strip()[:200]}")
    return result.records


def _parse(lines: tuple[bytes, ...]) -> list[Commit]:
    commits: list[Commit] = []
    for raw in lines:
        line = raw.decode("utf-8", "replace")
        if line.startswith("\x1e"):
            # a line cut short may lack its last fields: they read as empty
            sha, stamp, date, parents, subject = (line[1:].split("\x1f", 4) + [""] * 4)[:5]
            commits.append(Commit(sha, _int(stamp), clip(date, 40), clip(subject.strip(),
                                  SUBJECT_LIMIT), parents=len(parents.split())))
            continue
        status, _, path = line.partition("\t")
        if not path or not commits or not path_fits(path):
            continue
        commit = commits[-1]
        (commit.added if status.startswith("A") else commit.changed).append(path)
    return commits


def _int(text: str) -> int:
    """An author time as git prints it; one past the signed 64-bit range (a hand-written
    header takes any digits) is held at its end: still a forged date (`impossible_date`),
    and every span between two times still fits the checkpoint's 64-bit integers."""
    if not text.isdigit():
        return 0
    return MAX_RAW_TIMESTAMP if len(text) > 19 else min(int(text), MAX_RAW_TIMESTAMP)


def head_files(repo: Path, timeout_s: float) -> list[str]:
    """Tracked paths at HEAD."""
    with scratch_dir("git-home-") as home_dir:
        result = run_git(["ls-tree", "-r", "-z", "--name-only", "HEAD", "--"], cwd=repo,
                         home=Path(home_dir), timeout_s=timeout_s, split=b"\0", keep=path_fits)
    return sorted(p.decode("utf-8", "replace") for p in result.records if p)


# Blobs read whole for one audit, at most: each one and all of them together (a hostile
# history's 500 MB "graph.py" is left unread rather than loaded).
BLOB_BYTES = 256 * 1024
BLOBS_BYTES = 8 * 1024 * 1024


def read_blobs(repo: Path, timeout_s: float,
               wanted: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The text of each ``(commit sha, path)`` in `wanted` as that commit left it, in two
    git calls (``cat-file --batch-check`` for the sizes, then ``--batch`` for the blobs).
    Left out: a path git cannot resolve (deleted, a missing blob: nothing is fetched), one
    over `BLOB_BYTES`, and any beyond `BLOBS_BYTES` in all."""
    wanted = [(sha, path) for sha, path in wanted if "\n" not in path]
    if not wanted:
        return {}
    with scratch_dir("git-home-") as home_dir:
        home = Path(home_dir)
        check = run_git(["cat-file", "--batch-check"], cwd=repo, home=home,
                        timeout_s=timeout_s, split=b"\n",
                        stdin="".join(f"{sha}:{path}\n" for sha, path in wanted).encode())
        chosen: dict[str, list[tuple[str, str]]] = {}
        budget = BLOBS_BYTES
        for key, line in zip(wanted, check.records, strict=False):
            name, kind, size = [*line.decode("ascii", "replace").split(), "", "", ""][:3]
            if kind == "blob" and size.isdigit() and int(size) <= min(BLOB_BYTES, budget):
                budget -= int(size) if name not in chosen else 0
                chosen.setdefault(name, []).append(key)
        if check.returncode != 0 or not chosen:
            return {}
        blobs = run_git(["cat-file", "--batch"], cwd=repo, home=home, timeout_s=timeout_s,
                        stdin="".join(f"{name}\n" for name in chosen).encode("ascii"))
    return {key: text for name, text in _batch_blobs(blobs.stdout)
            for key in chosen.get(name, ())}


def _batch_blobs(output: bytes) -> list[tuple[str, str]]:
    """``(object name, text)`` of each blob in ``git cat-file --batch`` output."""
    found, at = [], 0
    while (end := output.find(b"\n", at)) >= 0:
        header = output[at:end].split()
        if len(header) != 3 or not header[2].isdigit():
            break  # "<name> missing" or a damaged stream: nothing more can be read
        size = int(header[2])
        found.append((header[0].decode("ascii", "replace"),
                      output[end + 1:end + 1 + size].decode("utf-8", "replace")))
        at = end + 1 + size + 1
    return found


BURST_GAP = 10 * 60  # commits closer in time than this belong to one run
BURST_MIN_COMMITS = 3
BURST_SHARE = 0.5  # a run of commits minutes apart bringing this share of the code: a burst
QUOTE_COMMITS = 12  # commits quoted in a fact, at most


def code_lines(commits: list[Commit]) -> int | None:
    """The code lines the commits bring together; None when a commit's lines were not read."""
    if any(c.lines is None for c in commits):
        return None
    return sum(c.lines or 0 for c in commits)


def time_clusters(commits: list[Commit], boundary: Collection[str],
                  gap: int = BURST_GAP) -> list[list[Commit]]:
    """Runs of at least `BURST_MIN_COMMITS` commits, by author time, each within `gap`
    seconds of the one before (a shallow boundary commit is no evidence of when its files
    were written, so it is left out)."""
    ordered = sorted((c for c in commits if c.sha not in boundary), key=lambda c: c.timestamp)
    runs: list[list[Commit]] = []
    for commit in ordered:
        if runs and commit.timestamp - runs[-1][-1].timestamp <= gap:
            runs[-1].append(commit)
        else:
            runs.append([commit])
    return [run for run in runs if len(run) >= BURST_MIN_COMMITS]


def largest_run(commits: list[Commit], boundary: Collection[str],
                weight: Callable[[Commit], int]) -> tuple[list[Commit], float]:
    """The run of commits minutes apart (`time_clusters`) carrying the largest share of the
    history's `weight` (boundary commits left out of both), and that share."""
    total = sum(weight(c) for c in commits if c.sha not in boundary)
    best: list[Commit] = []
    share = 0.0
    for run in time_clusters(commits, boundary):
        if total and sum(weight(c) for c in run) / total > share:
            best, share = run, sum(weight(c) for c in run) / total
    return best, share


def runs_over(commits: list[Commit], boundary: Collection[str], weight: Callable[[Commit], int],
              share: float, least: int = 0) -> list[tuple[list[Commit], int, float]]:
    """Every run of commits minutes apart (`time_clusters`) carrying at least `share` of the
    history's `weight` and at least `least` of it, in time order, each with its weight and
    share: the bursts a fact names (not only the largest, which alone decides its score)."""
    total = sum(weight(c) for c in commits if c.sha not in boundary)
    runs = [(run, sum(weight(c) for c in run)) for run in time_clusters(commits, boundary)]
    return [(run, added, added / total) for run, added in runs
            if total and added / total >= share and added >= least]


def run_span(run: list[Commit], *notes: str) -> str:
    """``<n> commits in <m> minutes (<sha> <first date> to <last time>, <notes>)``: a run
    of commits minutes apart as a fact names it."""
    seconds = run[-1].timestamp - run[0].timestamp
    within = f"{seconds} seconds" if seconds < 120 else f"{seconds // 60} minutes"
    last = run[-1].date[11:] if run[-1].date[:10] == run[0].date[:10] else run[-1].date
    return (f"{len(run)} commits in {within} ("
            + ", ".join((f"{run[0].sha[:8]} {run[0].date} to {last}", *notes)) + ")")


def shallow_boundary(repo: Path) -> list[str]:
    """The commits our own checkout's history is cut at (its ``.git/shallow``)."""
    try:
        text = (repo / ".git" / "shallow").read_text("ascii", errors="replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


def stages_of(paths: list[str]) -> list[str]:
    """The development stages a set of paths belongs to (a path may hit several)."""
    found = []
    for name, pattern in STAGES:
        if any(pattern.search(p.lower()) for p in paths):
            found.append(name)
    return found


MAX_RAW_TIMESTAMP = 2**63 - 1  # the largest author time kept (see `_int`)
# The last second a calendar date can name (9999-12-31T23:59:59Z). git accepts any 64-bit
# author time; one past this is forged, and Python's datetime cannot represent it.
MAX_TIMESTAMP = 253_402_300_799


def impossible_date(ts: int) -> bool:
    """Whether an author time lies beyond any calendar date (a forged commit date)."""
    return not 0 <= ts <= MAX_TIMESTAMP


def iso(ts: int) -> str:
    """A UTC ISO timestamp for an epoch second (the raw number for an `impossible_date`)."""
    if impossible_date(ts):
        return f"@{ts} (no calendar date)"
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_vague(subject: str) -> bool:
    """True for commit subjects that say nothing about the change: a stock word, a few
    characters (an editor's ``:wq``), or only words that name no part and no change of it
    ("Updated System", "makin everything up to date", "final submisson")."""
    # a conventional-commit type ("feat:", "chore(repo):") names the kind of change, not
    # the change: "chore: update" says as little as "update"
    rest = _TYPE_PREFIX.sub("", subject.strip(), count=1) or subject.strip()
    words = re.findall(r"[a-z]+", rest.lower())
    return bool(_VAGUE.match(rest)) or len(subject.strip()) < 8 or (
        bool(words) and all(w in _GENERIC for w in words))


def summary(commits: list[Commit]) -> dict[str, Any]:
    """Count, first and last dates and span in hours."""
    stamps = [c.timestamp for c in commits]
    return {"count": len(commits), "first": iso(min(stamps)), "last": iso(max(stamps)),
            "span_hours": round((max(stamps) - min(stamps)) / 3600, 2)}
