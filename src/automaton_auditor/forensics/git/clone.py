"""The clone strategy for remote (https) targets: full history without blobs, plus the
blobs of one commit. Local targets are not cloned at all (`local`).

A blobless clone (``--filter=blob:none``) brings every commit and tree, which is all the
git narrative needs, at a fraction of a full clone. The files of the audited commit come
from a second, depth-1 fetch of that exact commit with ``--filter=blob:limit=N`` into a
side store that the clone borrows as an alternate while its files are written. Measured
here on sympy (62,658 commits, local transport, 2 busy cores): the whole acquisition
(blobless clone, commit blobs, files written) 8.5 s, against 31.7 s for one
``blob:limit=1m`` clone (194 MB) and 30.4 s for a full clone (203 MB), files not written.

A filtered clone is a promisor: any later read of an object it lacks would make git fetch it
from the server, and a shallow server answers each such fetch with another one (thousands of
nested ``git fetch`` processes). So the promisor remote is removed as soon as the clone ends
(`drop_promisor`): from then on a missing object is reported missing, never fetched.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from automaton_auditor.forensics.git.runner import GitResult, dir_size, run_git

# file:// sources (tests and benchmarks only): their upload-pack reads their own config, so
# it is hardened too, and may serve filters and wants by object id.
UPLOAD_PACK = ("git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true "
               "-c core.fsmonitor=false -c core.hooksPath=/dev/null upload-pack")
SIDE = "head-blobs"


def _size_watch(path: Path, cap: int) -> Callable[[], str]:
    def watch() -> str:
        return "too_large" if dir_size(path) > cap else ""
    return watch


def clone(url: str, local: bool, dest: Path, home: Path, filter_spec: str,
          depth: int | None, timeout_s: float, cap: int) -> GitResult:
    """``git clone --no-checkout --filter=<spec>`` of `url` into `dest`, left with no
    promisor remote. `local` allows a file:// URL (tests and benchmarks)."""
    args = ["clone", "--quiet", "--no-checkout", "--no-tags", "--single-branch",
            "--origin=origin", f"--filter={filter_spec}"]
    if local:
        args += ["--no-local", f"--upload-pack={UPLOAD_PACK}"]
    if depth:
        args.append(f"--depth={int(depth)}")
    result = run_git([*args, "--", url, str(dest)], cwd=home, home=home, timeout_s=timeout_s,
                     allow_file=local, watch=_size_watch(dest / ".git", cap))
    if result.returncode == 0 and not result.killed_reason:
        drop_promisor(dest, home, timeout_s)
    return result


def drop_promisor(repo: Path, home: Path, timeout_s: float) -> None:
    """Remove the remote (and any partial-clone extension) from a clone's config, so that
    no read can ever lazy-fetch. Raises RuntimeError if the remote cannot be removed."""
    removed = run_git(["config", "--local", "--remove-section", "remote.origin"], cwd=repo,
                      home=home, timeout_s=timeout_s)
    if removed.returncode != 0:
        raise RuntimeError(f"cannot remove the promisor remote: {removed.stderr.strip()}")
    # git 2.39 records the promisor in remote.origin only; later versions may also set this.
    run_git(["config", "--local", "--unset-all", "extensions.partialClone"], cwd=repo,
            home=home, timeout_s=timeout_s)


def fetch_commit_blobs(url: str, local: bool, dest: Path, commit: str, home: Path,
                       max_blob_bytes: int, timeout_s: float, cap: int) -> str:
    """Fetch `commit` with its blobs up to `max_blob_bytes` into a side store and lend it
    to `dest` as an alternate. Returns "" on success, else "too_large" or "unsupported"
    (the server cannot send a commit by id); nothing is attached then. A breached bound
    raises `GitStopped`."""
    side = dest / ".git" / SIDE
    init = run_git(["init", "--quiet", "--bare", str(side)], cwd=home, home=home,
                   timeout_s=timeout_s)
    if init.returncode != 0:
        return "unsupported"
    args = ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--depth=1",
            f"--filter=blob:limit={max_blob_bytes}"]
    if local:
        args.append(f"--upload-pack={UPLOAD_PACK}")
    result = run_git([*args, "--", url, commit], cwd=side, home=home, timeout_s=timeout_s,
                     allow_file=local, watch=_size_watch(side, cap))
    if result.returncode != 0 or result.killed_reason:
        shutil.rmtree(side, ignore_errors=True)
        return result.killed_reason or "unsupported"
    lend_objects(dest, [side / "objects"])
    return ""


def lend_objects(repo: Path, stores: list[Path]) -> None:
    """Let `repo` read objects from `stores` (``objects/info/alternates``)."""
    alternates = repo / ".git" / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text("".join(f"{store}\n" for store in stores))


def detach_commit_blobs(dest: Path) -> None:
    """Drop the side store once the files are written: the narrative needs no blobs."""
    (dest / ".git" / "objects" / "info" / "alternates").unlink(missing_ok=True)
    shutil.rmtree(dest / ".git" / SIDE, ignore_errors=True)
