"""The commit a target's HEAD names, found without cloning, so a cached commit is not cloned.

Local targets: the HEAD file and refs are *read as files*; git is not run in the target at
all, so its config, hooks and fsmonitor never execute. Anything unusual (a worktree's
``.git`` file, a symbolic ref chain, a malformed ref) answers None and the caller clones as
usual. Remote targets: ``git ls-remote`` through the hardened runner (no clone).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from automaton_auditor.forensics.git.acquire import Target
from automaton_auditor.forensics.git.runner import run_git
from automaton_auditor.storage.facts import valid_sha

_REF = re.compile(r"^refs/[A-Za-z0-9._/-]+$")
_MAX_REF_BYTES = 4096


def _read_small(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 1 << 22:
            return None
        return path.read_text(encoding="ascii", errors="strict")
    except (OSError, UnicodeDecodeError):
        return None


def _git_dir(repo: Path) -> Path | None:
    dot = repo / ".git"
    if dot.is_dir() and not dot.is_symlink():
        return dot
    if (repo / "HEAD").is_file() and (repo / "objects").is_dir():
        return repo  # a bare repository
    return None  # worktrees and submodules (.git files): let the clone decide


def _packed(git_dir: Path, ref: str) -> str | None:
    text = _read_small(git_dir / "packed-refs")
    for line in (text or "").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and valid_sha(sha):
            return sha
    return None


def local_head(repo: Path) -> str | None:
    """HEAD's commit of a local repository, read from its files (None when unsure)."""
    git_dir = _git_dir(repo)
    head = _read_small(git_dir / "HEAD") if git_dir else None
    if git_dir is None or head is None or len(head) > _MAX_REF_BYTES:
        return None
    head = head.strip()
    if valid_sha(head):
        return head
    if not head.startswith("ref: "):
        return None
    ref = head[5:].strip()
    if not _REF.match(ref) or ".." in ref:
        return None
    loose = _read_small(git_dir / ref)
    if loose is not None:
        sha = loose.strip()
        return sha if valid_sha(sha) else None
    return _packed(git_dir, ref)


def remote_head(url: str, timeout_s: float) -> str | None:
    """HEAD's commit of a remote repository (``git ls-remote``), None on any failure."""
    with tempfile.TemporaryDirectory(prefix="auditor-lsremote-") as home:
        result = run_git(["ls-remote", "--", url, "HEAD"], cwd=Path(home), home=Path(home),
                         timeout_s=min(timeout_s, 30))
    if result.returncode != 0 or result.timed_out:
        return None
    for line in result.stdout.decode("ascii", "replace").splitlines():
        sha, _, name = line.partition("\t")
        if name.strip() == "HEAD" and valid_sha(sha.strip()):
            return sha.strip()
    return None


def head_commit(target: Target, timeout_s: float) -> str | None:
    """The commit an audit of `target` would see, or None when it cannot be told cheaply."""
    if target.kind == "local":
        return local_head(Path(target.value))
    return remote_head(target.value, timeout_s)
