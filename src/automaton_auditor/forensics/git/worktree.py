"""Whether a local target's work tree differs from its last commit. The audit reads the
committed tree (HEAD), so uncommitted, deleted or new files are not audited: the caller warns.

git runs in the hardened environment (no hooks, no fsmonitor), and every clean/process filter
the repository's own config names is overridden on the command line, so `git status` runs
nothing the repository chose.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from automaton_auditor.forensics.git.runner import GitStopped, run_git

# At most this many changed paths are listed back (a count is enough for a warning).
MAX_LISTED = 20


def _filter_overrides(repo: Path, home: Path, timeout_s: float) -> list[str]:
    result = run_git(["config", "--includes", "--get-regexp", r"^filter\."], cwd=repo,
                     home=home, timeout_s=timeout_s)
    names = {line.split()[0].split(".")[1] for line in
             result.stdout.decode("utf-8", "replace").splitlines()
             if line.count(".") >= 2 and line.split()}
    overrides = []
    for name in sorted(names):
        overrides += ["-c", f"filter.{name}.clean=", "-c", f"filter.{name}.process=",
                      "-c", f"filter.{name}.required=false"]
    return overrides


def uncommitted_changes(repo: Path, timeout_s: float = 20.0) -> list[str] | None:
    """Paths whose work-tree state differs from HEAD (modified, deleted, untracked and not
    ignored), at most MAX_LISTED; None when git cannot tell (the caller says nothing)."""
    with tempfile.TemporaryDirectory(prefix="auditor-status-") as home:
        try:
            overrides = _filter_overrides(repo, Path(home), timeout_s)
            result = run_git([*overrides, "status", "--porcelain=v1",
                              "--untracked-files=normal", "--ignore-submodules=all",
                              "--no-renames"], cwd=repo, home=Path(home), timeout_s=timeout_s)
        except GitStopped:
            return None
    if result.returncode != 0 or result.killed_reason:
        return None
    lines = result.stdout.decode("utf-8", "replace").splitlines()
    return [line[3:] for line in lines[:MAX_LISTED] if len(line) > 3] + (
        [f"… {len(lines) - MAX_LISTED} more"] if len(lines) > MAX_LISTED else [])
