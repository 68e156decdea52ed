"""Histories replayed with invented dates: finished files committed one by one, after the work.

git records the second each commit was authored. Someone committing as they work lands on a
whole minute (``:00`` seconds) about once in sixty commits; dates on whole minutes are dates
typed in (``--date "2026-02-24 09:00"``, ``GIT_AUTHOR_DATE``). A history in which most commits
are dated that way, and each of them only adds new files (no file is ever changed), is a
replay: finished code committed a file or two at a time under invented dates. Its
step-by-step story is staged after the work, so the rubric's "atomic, step-by-step history"
is not shown and "no iterative development is visible" (the failure pattern).

Found when at least `LEAST` authored commits, and at least half of them, are replayed
(dated on a whole minute, adding files only). When the replayed commits bring half or more
of the code lines, the code itself arrived that way (cap 2); otherwise only part of the
story is staged (cap 3). Small histories are never judged by this fact (a few commits on
whole minutes say nothing), merges never count, and the commits a shallow history is cut
at are left out. Not judged when the paths each commit touched could not be read.
"""

from __future__ import annotations

from collections.abc import Collection

from automaton_auditor.forensics.git.history import Commit, code_lines
from automaton_auditor.state import Finding

FACET = "git.replayed_dates"
GOAL = "Commits dated on whole minutes that only add finished files (a replayed history)"
LEAST = 10  # replayed commits from which the history is a replay (chance: 1 in 60 each)
SHARE = 0.5  # ... and at least this share of the authored commits
CODE_SHARE = 0.5  # the replayed commits bring this share of the code lines: cap 2


def replayed(commit: Commit) -> bool:
    """Dated on a whole minute and only adding files (not a merge)."""
    return (not commit.merge and commit.timestamp % 60 == 0 and bool(commit.added)
            and not commit.changed)


def replay_finding(commits: list[Commit], boundary: Collection[str] = (),
                   paths_error: str = "") -> Finding:
    """Finding ``git.replayed_dates`` for a log given oldest first (see the module)."""
    inside = [c for c in commits if not c.merge and c.sha not in boundary]
    if paths_error or not inside:
        return Finding(facet=FACET, goal=GOAL, found=False, pattern="failure",
                       location="git log", confidence=0.3, data={"judged": False, "cap": None},
                       rationale="Not judged: the paths each commit touched could not be read.")
    staged = [c for c in inside if replayed(c)]
    found = len(staged) >= LEAST and len(staged) >= SHARE * len(inside)
    total = code_lines(inside)
    share = (code_lines(staged) or 0) / total if total else None
    cap = (2 if share is not None and share >= CODE_SHARE else 3) if found else None
    quoted = "\n".join(f"{c.quote()} (adds {len(c.added)} file(s), changes none)"
                       for c in staged[:12])
    code = f", bringing {share:.0%} of the code lines" if share is not None else ""
    if found:
        rationale = (f"Replayed (no better than {cap}): {len(staged)} of {len(inside)} "
                     f"authored commits are dated on a whole minute and only add files"
                     f"{code}; people committing as they work land on :00 seconds about once "
                     "in sixty commits, so these dates were typed in and the finished files "
                     "committed one step at a time after the work.")
    else:
        rationale = (f"{len(staged)} of {len(inside)} authored commits are dated on a whole "
                     f"minute and only add files (a replay needs {LEAST} and half).")
    return Finding(facet=FACET, goal=GOAL, found=found, pattern="failure",
                   location=f"commit {staged[0].sha[:12]}" if staged else "git log",
                   content=quoted or None, rationale=rationale,
                   confidence=0.85 if found else 0.5,
                   data={"judged": True, "cap": cap, "replayed": [c.sha for c in staged[:50]],
                         "authored": len(inside),
                         "code_share": None if share is None else round(share, 3)})
