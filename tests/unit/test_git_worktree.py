"""The uncommitted-changes check reads the target's work tree, never its git config: hostile
includes, excludes and attributes files, filters and hooks are not run or read, a FIFO in the
git dir or the work tree answers "cannot tell" without blocking, and the target's own index
is never rewritten."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from automaton_auditor.forensics.git.worktree import MAX_LISTED, uncommitted_changes
from tests.unit.test_git_head import bounded
from tests.unit.test_git_narrative import STEPWISE, git, make_repo

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="FIFOs")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "r", STEPWISE)


def test_lists_modified_deleted_and_untracked_paths_but_not_excluded_ones(repo: Path) -> None:
    assert uncommitted_changes(repo) == []
    (repo / "README.md").write_text("changed\n")
    (repo / "src" / "state.py").unlink()
    (repo / "new.py").write_text("n = 1\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("*.log\n")
    (repo / "run.log").write_text("")
    assert sorted(uncommitted_changes(repo) or []) == ["README.md", "new.py", "src/state.py"]


def test_a_long_list_is_cut(repo: Path) -> None:
    for index in range(MAX_LISTED + 5):
        (repo / f"n{index}.py").write_text("")
    changed = uncommitted_changes(repo) or []
    assert len(changed) == MAX_LISTED + 1 and changed[-1] == "… 5 more"


def test_hostile_config_is_never_read_and_the_index_never_written(repo: Path,
                                                                   tmp_path: Path) -> None:
    canary = tmp_path / "CANARY"
    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)
    with (repo / ".git" / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {fifo}\n[core]\n\texcludesFile = {fifo}\n"
                     f"\tattributesFile = {fifo}\n\tfsmonitor = touch {canary}\n"
                     f"[filter \"x\"]\n\tclean = touch {canary}\n\trequired = true\n")
    (repo / ".gitattributes").write_text("*.md filter=x\n")
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {canary}\n")
    hook.chmod(0o755)
    (repo / "README.md").write_text("changed\n")
    index = (repo / ".git" / "index").read_bytes()
    assert sorted(bounded(lambda: uncommitted_changes(repo))) == [".gitattributes",
                                                                    "README.md"]
    assert not canary.exists()
    assert (repo / ".git" / "index").read_bytes() == index


@pytest.mark.parametrize("where", [".git/packed-refs", "src/.gitignore", ".gitattributes",
                                   "vendor/nested/.git/HEAD"])
def test_a_fifo_anywhere_is_cannot_tell_without_blocking(repo: Path, where: str) -> None:
    path = repo / where
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert bounded(lambda: uncommitted_changes(repo)) is None


def test_a_bare_or_unusual_repository_is_cannot_tell(repo: Path, tmp_path: Path) -> None:
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "bare.git"))
    assert uncommitted_changes(tmp_path / "bare.git") is None
    (repo / ".git" / "index").unlink()
    assert uncommitted_changes(repo) is None
    assert uncommitted_changes(tmp_path / "missing") is None
