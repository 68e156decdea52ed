"""Hostile local targets: hooks, fsmonitor, symlinks out of the tree, submodules, LFS
pointers and a 50 MB file. Each audit completes, nothing runs (the canary file is never
created) and nothing outside the temporary directory is written."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.git.acquire import (
    AcquisitionError,
    GitLimits,
    acquire,
    clone_with_blobs,
    git_findings,
    parse_target,
)
from tests.unit.test_code_ast_graph import by_facet
from tests.unit.test_git_narrative import git, make_repo


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under root with its size and modification time."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            info = full.lstat()
            out[str(full.relative_to(root))] = (info.st_size, info.st_mtime_ns)
    return out


def hook(path: Path, canary: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch '{canary}'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A target repository armed every way we know, an outside dir and the canary path."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not touch\n")
    canary = outside / "CANARY"
    payload = f"open({str(canary)!r}, 'w').write('imported')\n"
    repo = make_repo(tmp_path / "target", [
        ("feat: graph", {"src/graph.py": payload + "from langgraph.graph import StateGraph\n"
                                                   "g = StateGraph(dict)\n"
                                                   "g.add_edge(['a', 'b'], 'c')\n"}),
    ])
    # symlinks out of the tree, an LFS pointer, a submodule and a 50 MB blob
    (repo / "escape").symlink_to(outside)
    (repo / "secret_link").symlink_to(outside / "secret.txt")
    (repo / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    (repo / "model.bin").write_text("version https://git-lfs.github.com/spec/v1\n"
                                    "oid sha256:" + "0" * 64 + "\nsize 12345\n")
    git(repo, "config", "core.compression", "0")  # only to build the fixture fast
    (repo / "big.dat").write_bytes(os.urandom(50 * 1024 * 1024))
    (repo / ".gitmodules").write_text(f'[submodule "sub"]\n\tpath = sub\n'
                                      f"\turl = {outside}\n")
    git(repo, "add", "-A")
    git(repo, "update-index", "--add", "--cacheinfo",
        "160000,1111111111111111111111111111111111111111,sub")
    git(repo, "commit", "-q", "-m", "feat: hostile payloads")
    # Armed last, so that building the fixture itself runs none of it.
    for name in ("post-checkout", "post-merge", "reference-transaction", "pre-upload-pack",
                 "fsmonitor-watchman", "post-index-change"):
        hook(repo / ".git" / "hooks" / name, canary)
        hook(repo / "evilhooks" / name, canary)
    fsmonitor = repo / "fsmon.sh"
    hook(fsmonitor, canary)
    git(repo, "config", "core.hooksPath", str(repo / "evilhooks"))
    git(repo, "config", "core.fsmonitor", str(fsmonitor))
    git(repo, "config", "filter.lfs.smudge", f"touch {canary}")
    git(repo, "config", "filter.lfs.process", f"touch {canary}")
    git(repo, "config", "filter.lfs.required", "true")
    git(repo, "config", "uploadpack.packObjectsHook", f"touch {canary}")
    assert not canary.exists()
    return repo, outside, canary


def test_hostile_local_target_is_audited_without_running_anything(
        hostile: tuple[Path, Path, Path], tmp_path: Path) -> None:
    repo, outside, canary = hostile
    before_outside, before_target = snapshot(outside), snapshot(repo)
    limits = GitLimits(timeout_s=60)
    work = tmp_path / "work"
    checkout = acquire(parse_target(str(repo), limits), work, limits)
    findings = git_findings(checkout.path, limits)
    code, graph = code_findings(checkout.path, checkout.files, cache_dir=work / "cache")

    assert not canary.exists()
    assert snapshot(outside) == before_outside
    assert snapshot(repo) == before_target
    assert checkout.skipped == {
        "big.dat": "larger than 1048576 bytes",
        "escape": "symlink (not followed)",
        "secret_link": "symlink (not followed)",
        "sub": "submodule (not fetched)",
    }
    assert "big.dat" in checkout.files and "sub" in checkout.files
    assert not (checkout.path / "escape").exists() and not (checkout.path / "sub").exists()
    assert (checkout.path / "model.bin").read_text().startswith("version https://git-lfs")
    git_dir_bytes = sum(p.stat().st_size for p in (checkout.path / ".git").rglob("*")
                        if p.is_file())
    assert git_dir_bytes < 5 * 1024 * 1024
    # read in place: the target's object store is lent, nothing is copied or fetched
    alternates = checkout.path / ".git" / "objects" / "info" / "alternates"
    assert alternates.read_text().split() == [str(repo / ".git" / "objects")]
    assert "remote" not in (checkout.path / ".git" / "config").read_text()
    assert next(f for f in findings if f.facet == "git.history").data["count"] == 2
    assert graph is not None and graph.fan_in == {"c": ["a", "b"]}
    # safety.insecure_temp quotes the target's own hard-coded /tmp literal (its payload line)
    assert all(str(tmp_path) not in (f.content or "") + f.location for f in code + findings
               if f.facet != "safety.insecure_temp")
    assert by_facet(code, "safety.insecure_temp").location == "src/graph.py:1"
    # The trap is live: a naive `git status` inside the target runs its fsmonitor.
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, check=False,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull})
    assert canary.exists()


def test_repository_size_cap(hostile: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """A clone (the https path, here over file://) stops at the size cap; a local target is
    read in place, so the cap bounds the bytes written instead."""
    repo, _outside, canary = hostile
    limits = GitLimits(max_blob_bytes=100 * 1024 * 1024, max_repo_mb=10)
    dest, home = tmp_path / "clone", tmp_path / "home"
    dest.mkdir()
    home.mkdir()
    with pytest.raises(AcquisitionError) as info:
        clone_with_blobs(f"file://{repo}", dest, home, limits, time.monotonic() + 60,
                         allow_file=True)
    assert info.value.kind == "too_large"
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    assert checkout.skipped["big.dat"] == "work tree exceeds 10 MB"
    assert not canary.exists()


def test_file_count_cap(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "many", [("many files", {f"f{i}.txt": "x" for i in range(30)})])
    limits = GitLimits(max_files=10)
    with pytest.raises(AcquisitionError) as info:
        acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    assert info.value.kind == "too_large" and "30 files" in str(info.value)


def test_missing_remote_is_classified_without_network(tmp_path: Path) -> None:
    # A local bare path that vanished between validation and clone.
    repo = make_repo(tmp_path / "gone", [("one", {"a.py": "x = 1\n"})])
    limits = GitLimits()
    target = parse_target(str(repo), limits)
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    with pytest.raises(AcquisitionError) as info:
        acquire(target, tmp_path / "work", limits)
    assert info.value.kind in ("not_a_repository", "not_found")


def test_compressible_blobs_cannot_fill_the_disk(tmp_path: Path) -> None:
    zeros = "\0" * 900_000
    repo = make_repo(tmp_path / "bomb", [("zeros", {f"z{i:02}.txt": zeros for i in range(20)})])
    limits = GitLimits(max_repo_mb=10)
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    written = [f for f in checkout.files if (checkout.path / f).exists()]
    assert 0 < len(written) < 20
    assert set(checkout.skipped.values()) == {"work tree exceeds 10 MB"}
    assert len(written) + len(checkout.skipped) == 20
