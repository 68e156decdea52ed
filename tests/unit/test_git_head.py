"""The one HEAD reader and the local acquisition treat every file of the target as hostile:
a ref outside refs/, a `.git` file or `commondir` pointing outside the target, a FIFO, a
device, a socket or a symlink is never opened; reads are bounded; a FIFO, a device or a
`/dev/zero` symlink anywhere in the git dir is refused with one line naming the file."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.forensics.git.acquire import (
    AcquisitionError,
    GitLimits,
    acquire,
    parse_target,
)
from automaton_auditor.forensics.git.head import (
    PACKED_REFS_BYTES,
    NoHead,
    UnsafeFile,
    git_dirs,
    local_head,
    resolve_head,
)
from tests.unit.test_git_narrative import make_repo

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="FIFOs and devices")
ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
       "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin:/usr/local/bin",
       "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={**ENV, "HOME": str(repo)}).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "r", [("one", {"a.py": "x = 1\n"})])


def bounded(call: Callable[[], Any], limit_s: float = 120.0) -> Any:
    """Run `call` in a thread; a call that blocks (on a FIFO) fails the test instead of
    hanging the suite. The bound is generous: this is not a timing assertion."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit_s)
    assert not thread.is_alive(), "blocked: a hostile file was opened"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def test_reads_loose_packed_symbolic_and_detached_heads(repo: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    _git(repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/alias\n")
    assert local_head(repo) == head
    _git(repo, "pack-refs", "--all")
    assert local_head(repo) == head
    (repo / ".git" / "HEAD").write_text(head + "\n")
    assert local_head(repo) == head
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    _git(repo, "checkout", "-q", "--detach", "HEAD")
    assert local_head(repo) == head


def test_a_git_file_inside_the_target_is_followed(repo: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    (repo / ".git").rename(repo / "store")
    (repo / ".git").write_text("gitdir: store\n")
    assert local_head(repo) == head


@pytest.mark.parametrize("content", [
    "ref: refs/../../../../../../../../etc/passwd",
    "ref: refs/heads/../../config",
    "ref: HEAD",
    "ref: /etc/passwd",
    "ref: refs/heads/.hidden",
    "ref: refs/heads/x.lock",
])
def test_refs_outside_refs_are_never_read(repo: Path, content: str) -> None:
    (repo / ".git" / "HEAD").write_text(content + "\n")
    assert local_head(repo) is None
    with pytest.raises(UnsafeFile, match="not a ref under refs/"):
        resolve_head(git_dirs(repo))


def test_a_git_file_or_commondir_pointing_outside_is_never_followed(repo: Path,
                                                                    tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "HEAD").write_text("c" * 40 + "\n")  # would pass for a commit if read
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {outside}\n")
    assert local_head(worktree) is None
    with pytest.raises(UnsafeFile, match="outside the target"):
        git_dirs(worktree)
    (worktree / ".git").write_text("gitdir: ../elsewhere\n")
    assert local_head(worktree) is None
    (repo / ".git" / "commondir").write_text(f"{outside}\n")
    with pytest.raises(UnsafeFile, match="outside the target"):
        git_dirs(repo)


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _socket(path: Path) -> socket.socket:
    path.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    return sock


def test_special_files_are_never_opened(repo: Path, tmp_path: Path) -> None:
    head = repo / ".git" / "HEAD"
    _fifo(head)
    assert bounded(lambda: local_head(repo)) is None
    with pytest.raises(UnsafeFile, match="a FIFO is never opened"):
        bounded(lambda: resolve_head(git_dirs(repo)))
    head.unlink()
    head.symlink_to("/dev/zero")
    with pytest.raises(UnsafeFile, match="a symlink is never opened"):
        bounded(lambda: resolve_head(git_dirs(repo)))
    head.unlink()
    outside_fifo = tmp_path / "outside.fifo"
    os.mkfifo(outside_fifo)
    head.symlink_to(outside_fifo)
    assert bounded(lambda: local_head(repo)) is None
    head.unlink()
    sock = _socket(head)
    try:
        with pytest.raises(UnsafeFile, match="a socket"):
            bounded(lambda: resolve_head(git_dirs(repo)))
    finally:
        sock.close()
    if os.geteuid() == 0:
        head.unlink()
        os.mknod(head, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
        with pytest.raises(UnsafeFile, match="a device is never opened"):
            bounded(lambda: resolve_head(git_dirs(repo)))


def test_reads_are_bounded(repo: Path) -> None:
    head = repo / ".git" / "HEAD"
    head.write_text("ref: refs/heads/main" + " " * 10_000 + "\n")
    with pytest.raises(UnsafeFile, match="larger than 512 bytes"):
        resolve_head(git_dirs(repo))
    head.write_text("ref: refs/heads/main\n")
    _git(repo, "pack-refs", "--all")
    packed = repo / ".git" / "packed-refs"
    with packed.open("r+b") as handle:  # a sparse file far larger than the scan bound
        handle.truncate(PACKED_REFS_BYTES * 4)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/missing\n")
    with pytest.raises(UnsafeFile, match="packed-refs: refused, a line longer than"):
        bounded(lambda: resolve_head(git_dirs(repo)))  # zeros: one endless line
    with packed.open("wb") as handle:  # many short lines, far more than the scan bound
        line = b"0" * 40 + b" refs/tags/t\n"
        handle.write(line * (PACKED_REFS_BYTES // len(line) + 10))
    with pytest.raises(UnsafeFile, match="packed-refs: refused, larger than"):
        bounded(lambda: resolve_head(git_dirs(repo)))
    _fifo(packed)
    with pytest.raises(UnsafeFile, match="packed-refs: refused, a FIFO"):
        bounded(lambda: resolve_head(git_dirs(repo)))


def test_no_head_is_a_one_line_reason(repo: Path, tmp_path: Path) -> None:
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/unborn\n")
    with pytest.raises(NoHead, match="refs/heads/unborn is not set"):
        resolve_head(git_dirs(repo))
    (repo / ".git" / "HEAD").write_text("not a ref at all\n")
    with pytest.raises(NoHead, match="neither a commit id nor a ref"):
        resolve_head(git_dirs(repo))
    with pytest.raises(NoHead, match="not a git repository"):
        git_dirs(tmp_path / "missing")


@pytest.mark.parametrize("where", ["packed-refs", "config", "objects/pack/pack-x.idx",
                                   "refs/heads/feature", "hooks/pre-commit", "index"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link", "socket"])
def test_special_files_anywhere_in_the_git_dir_are_refused(repo: Path, tmp_path: Path,
                                                           where: str, kind: str) -> None:
    path = repo / ".git" / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    sock = None
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = _socket(path)
    else:
        path.symlink_to("/dev/zero")
    limits = GitLimits(timeout_s=60)
    try:
        with pytest.raises(AcquisitionError) as info:
            bounded(lambda: acquire(parse_target(str(repo), limits), tmp_path / "w", limits))
    finally:
        if sock is not None:
            sock.close()
    assert info.value.kind == "unsafe_file"
    message = str(info.value)
    assert message.startswith(f".git/{where}: refused, ") and "\n" not in message
    assert list((tmp_path / "w").glob("repo-*")) == []


@pytest.mark.parametrize(("name", "said"), [
    ("v1", "an annotated tag object, not a commit"), ("HEAD^{tree}", "a tree, not a commit")])
def test_head_naming_another_object_says_what_it_is(repo: Path, tmp_path: Path, name: str,
                                                     said: str) -> None:
    """HEAD holding a tag's id used to say the object store did not hold it; it does."""
    _git(repo, "tag", "-a", "-m", "t", "v1")
    sha = _git(repo, "rev-parse", name)
    (repo / ".git" / "HEAD").write_text(sha + "\n")
    limits = GitLimits(timeout_s=60)
    with pytest.raises(AcquisitionError) as info:
        acquire(parse_target(str(repo), limits), tmp_path / "w", limits)
    assert f"HEAD names {sha[:12]}, {said}" in str(info.value)
