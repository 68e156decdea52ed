"""A commit re-made on another branch (a cherry-pick, or a rebased branch merged beside its
original: the same author time and subject, another sha) is one piece of work: the history
counts it once, and its lines are not counted twice."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.unit.test_git_concentration import BASE, HOUR, audited, build, facet, stepwise
from tests.unit.test_git_narrative import git


def test_a_commit_re_made_on_another_branch_counts_once(tmp_path: Path) -> None:
    repo = build(tmp_path / "target", stepwise())
    graph = subprocess.run(["git", "-C", str(repo), "rev-parse", "main~3"], check=True,
                           capture_output=True, text=True).stdout.strip()
    # a branch from before the graph commit re-makes it, then is merged back
    git(repo, "checkout", "-q", "-b", "dev", "main~5")
    git(repo, "cherry-pick", graph, when=BASE + 4 * 5 * HOUR)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch dev", "dev", when=BASE + 50 * HOUR)
    history = facet(audited(repo, tmp_path / "work"), "git.history")
    # the setup commit and the eight stages; the copy and the merge are not counted
    assert history.data["count"] == 9, history.rationale
    assert "1 more re-made on another branch (the same author time and subject) are " \
        "counted once." in history.rationale
