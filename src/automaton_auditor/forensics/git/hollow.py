"""Commits whose message claims work their diff does not hold.

The rubric asks for "meaningful commit messages" that say what changed. A subject that claims
an implementation ("feat(orchestration): implement fan-out/fan-in graph") over a diff that adds
no line to any file (an empty file, or nothing at all), or only a few comment lines in new
files (``# tools package`` in a new ``__init__.py``, when the files could be read), tells a
story the code does not: the history overclaims. One such commit is a slip; two or more are a
failure fact.

Subjects that say the commit only lays out, keeps or removes files ("created folder
structure", "add __init__ placeholders", "remove old notes") are honest about an empty diff
and never count. Merge commits join work authored elsewhere and never count either. The fact
is judged only when the lines each commit added were read (a blobless or long history is not
judged) and leaves out the commits a shallow history is cut at.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from automaton_auditor.forensics.git.history import Commit
from automaton_auditor.forensics.git.progression import Reader
from automaton_auditor.state import Finding

FACET = "git.hollow_commits"
GOAL = "Commit messages claim implementations their diffs do not add"
LEAST = 2  # hollow claims from which the history overclaims (one is a slip)
CLAIM = re.compile(r"\b(implement\w*|add(s|ed|ing)?|creat(e|es|ed|ing)|build(s|ing)?|built"
                   r"|complet(e|es|ed|ing)|finali[sz](e|es|ed|ing)|integrat(e|es|ed|ing)"
                   r"|introduc(e|es|ed|ing)|develop(s|ed|ing)?)\b", re.I)
# Words that announce an empty diff: the subject does not claim content it lacks.
HONEST = re.compile(r"\b(skeleton|scaffold\w*|structure|folders?|director(y|ies)|placeholders?"
                    r"|stubs?|empty|\.?gitkeep|init|__init__|remov\w*|delet\w*|revert\w*"
                    r"|renam\w*|mov(e|es|ed|ing))\b", re.I)


# A commit adding at most this many lines, all in new files, may add only comments: its
# files are read to tell (a larger one is taken to hold code).
SMALL_LINES = 3
SMALL_READS = 50  # files read for this, at most


def claims_implementation(subject: str) -> bool:
    """True when a commit subject claims it implements or adds something (and does not
    announce an empty diff: a scaffold, a placeholder, a removal, a move)."""
    return bool(CLAIM.search(subject)) and not HONEST.search(subject.replace("_", " "))


def _inside(commits: list[Commit], boundary: Collection[str]) -> list[Commit]:
    """The authored commits (not merges) the history is not cut at."""
    return [c for c in commits if not c.merge and c.sha not in boundary]


def _small(commit: Commit) -> bool:
    """A claiming commit that only adds files, with a few lines in all (`SMALL_LINES`)."""
    return (not commit.merge and not commit.changed and bool(commit.added)
            and 0 < (commit.grown or 0) <= SMALL_LINES and claims_implementation(commit.subject))


def files_to_read(commits: list[Commit]) -> list[tuple[str, str]]:
    """The ``(commit sha, path)`` files `hollow_claims` may read, at most `SMALL_READS`: the
    new files of the small claiming commits (`_small`)."""
    return [(c.sha, path) for c in commits if _small(c) for path in c.added][:SMALL_READS]


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def comments_only(commit: Commit, read: Reader | None) -> bool:
    """The commit's diff adds lines, but only comment or blank lines in new files, as they
    were read (a file that cannot be read counts as code)."""
    if read is None or not _small(commit):
        return False
    texts = [read(commit.sha, path) for path in commit.added]
    return all(text is not None and _only_comments(text) for text in texts)


def hollow_claims(commits: list[Commit], boundary: Collection[str] = (),
                  read: Reader | None = None) -> list[Commit]:
    """The authored commits whose subject claims an implementation while their diff adds no
    line to any file (`Commit.grown` is 0), or only comments in new files (`comments_only`,
    when `read` reads a file at a commit)."""
    return [c for c in _inside(commits, boundary)
            if (c.grown == 0 and claims_implementation(c.subject)) or comments_only(c, read)]


def hollow_finding(commits: list[Commit], boundary: Collection[str] = (),
                   read: Reader | None = None) -> Finding:
    """Finding ``git.hollow_commits`` for a log given oldest first (see the module)."""
    inside = _inside(commits, boundary)
    if not inside or any(c.grown is None for c in inside):
        return Finding(facet=FACET, goal=GOAL, found=False, pattern="failure",
                       location="git log", confidence=0.3, data={"judged": False},
                       rationale="Not judged: the lines each commit added could not be read.")
    hollow = hollow_claims(inside, read=read)
    found = len(hollow) >= LEAST
    quoted = "\n".join(f"{c.quote()} (adds {_added(c)}, {len(c.added) + len(c.changed)} "
                       "file(s))" for c in hollow[:12])
    if hollow:
        rationale = (f"{len(hollow)} of {len(inside)} authored commits claim an "
                     "implementation in their subject but add no line of code (only empty "
                     "files, comment lines, or nothing)" + ("." if found else
                                                   f": fewer than {LEAST}, a slip."))
    else:
        rationale = (f"None of {len(inside)} authored commits claims an implementation "
                     "over a diff that adds nothing.")
    return Finding(facet=FACET, goal=GOAL, found=found, pattern="failure",
                   location=f"commit {hollow[0].sha[:12]}" if hollow else "git log",
                   content=quoted or None, rationale=rationale,
                   confidence=0.75 if found else 0.5,
                   data={"judged": True, "hollow": [c.sha for c in hollow[:50]],
                         "authored": len(inside)})


def _added(commit: Commit) -> str:
    return (f"{commit.grown} comment line(s) only" if commit.grown else "0 lines")
