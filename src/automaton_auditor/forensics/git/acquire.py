"""Acquiring the audited repository safely, and the git narrative of its history.

Targets are validated before any I/O (`parse_target`), then made readable in a fresh
directory (`acquire`): remote targets are partial clones over https that leave out blobs
over 1 MB (`clone`); local targets are read in place, their object store lent to a fresh
repository, so git never runs in them and nothing is fetched (`local`). Files are written
from the object store by us (never by ``git checkout``), so symlinks, submodules, LFS
filters and large blobs never reach the disk. Every git command runs contained
(`automaton_auditor.containment`). The audited code is never imported or executed.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from automaton_auditor.containment import Closed
from automaton_auditor.forensics.git import clone as git_clone
from automaton_auditor.forensics.git import local
from automaton_auditor.forensics.git.head import NoHead, local_head
from automaton_auditor.forensics.git.materialize import TreeTooLarge, materialize
from automaton_auditor.forensics.git.runner import GitResult, GitStopped
from automaton_auditor.forensics.git.story import narrative_findings
from automaton_auditor.safefile import UnsafeFile
from automaton_auditor.settings import default
from automaton_auditor.state import Finding
from automaton_auditor.text import hides


class InvalidTarget(ValueError):
    """A target refused before any I/O; the message is a one-line reason."""


class AcquisitionError(RuntimeError):
    """Acquisition failed; `kind` classifies why (not_found, authentication, timeout,
    too_large, network, not_a_repository, unsafe_file, process_limit, interrupted,
    git_error)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Target:
    """A validated target: a normalised https URL or a resolved local path."""

    kind: Literal["remote", "local"]
    value: str


@dataclass(frozen=True)
class GitLimits:
    """Caps on acquisition; all configurable."""

    timeout_s: float = default("git_timeout_s")
    max_repo_mb: int = default("max_repo_mb")
    max_files: int = default("max_files")
    depth: int | None = default("clone_depth")
    allowed_hosts: tuple[str, ...] = default("allowed_hosts")
    # Blobs larger than this are left out of remote clones and never written to disk.
    max_blob_bytes: int = default("max_blob_bytes")


@dataclass(frozen=True)
class Checkout:
    """A cloned repository: where it is, its HEAD commit and its tracked paths."""

    path: Path
    commit: str
    files: list[str]
    # Tracked paths not written to disk: symlinks, submodules, blobs over the size cap.
    skipped: dict[str, str] = field(default_factory=dict)
    shallow: bool = False


# Characters a shell would interpret; none belongs in a repository URL or a path we accept.
_SHELL_META = set(";&|`$<>(){}[]*?!'\"\\\n\r\t")
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")
_SEGMENT = re.compile(r"^[A-Za-z0-9_.-]+$")
# Hosts whose repositories are always <owner>/<repo> (GitLab allows nested groups).
_TWO_LEVEL_HOSTS = {"github.com", "bitbucket.org"}


def parse_target(target: str, limits: GitLimits) -> Target:
    """Validate a target without touching the network.

    Remote: ``https://<allowed host>/<owner>/<repo>[.git]`` only, without credentials, query
    or fragment. Local: an existing directory that is a git repository. Anything else
    raises `InvalidTarget` with a one-line reason.
    """
    value = target.strip()
    if not value:
        raise InvalidTarget("empty target")
    if value.startswith("-"):
        raise InvalidTarget(f"target may not start with '-': {value!r}")
    # a target is echoed in one-line messages, the summary table and `audit runs`: DEL, a C1
    # byte (0x9b is a one-byte CSI) or a bidi control there drives the terminal or reorders it
    if any(ord(ch) < 32 for ch in value) or hides(value):
        raise InvalidTarget(f"target contains control characters: {value!r}")
    if "://" in value or "::" in value or _SCP_LIKE.match(value):
        if any(ch in _SHELL_META for ch in value):
            raise InvalidTarget(f"target contains shell metacharacters: {value!r}")
        return Target("remote", _parse_url(value, limits))
    # A local path reaches git as one argv element (never a shell): any legal character,
    # parentheses and spaces included, is fine once it resolves to a git repository.
    return Target("local", str(_parse_local(value)))


# Far beyond any real repository URL (owner and name are at most 39 and 100 characters on
# GitHub); a longer one is a bad URL, not a question for the network.
MAX_URL_CHARS = 2048


def _parse_url(value: str, limits: GitLimits) -> str:
    if len(value) > MAX_URL_CHARS:
        raise InvalidTarget(f"URL longer than {MAX_URL_CHARS} characters ({len(value)})")
    lowered = value.lower()
    if lowered.startswith("ssh://") or _SCP_LIKE.match(value) or lowered.startswith("git@"):
        raise InvalidTarget("ssh URLs are not allowed: use https")
    if "::" in value.split("://", 1)[0] or lowered.startswith("ext::"):
        raise InvalidTarget("git remote helpers (<transport>::) are not allowed: use https")
    try:
        parts = urlsplit(value)
        port = parts.port  # parsed on access: a port out of range or not a number raises
    except ValueError as exc:  # also a bad [IPv6] literal or netloc
        raise InvalidTarget(f"not a valid URL ({exc}): {value}") from None
    if parts.scheme.lower() != "https":
        raise InvalidTarget(f"only https URLs are allowed, not {parts.scheme or '?'}://")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise InvalidTarget("credentials in the URL are not allowed")
    host = (parts.hostname or "").lower()
    if port not in (None, 443):
        raise InvalidTarget(f"non-standard port in URL: {port}")
    if host not in {h.lower() for h in limits.allowed_hosts}:
        allowed = ", ".join(limits.allowed_hosts)
        raise InvalidTarget(f"host {host or '?'} is not allowed (allowed: {allowed})")
    if parts.query or parts.fragment:
        raise InvalidTarget("query strings and fragments are not allowed in the URL")
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) < 2 or any(s in (".", "..") or not _SEGMENT.match(s) for s in segments):
        raise InvalidTarget(f"not a repository URL: {value}")
    if host in _TWO_LEVEL_HOSTS and len(segments) != 2:
        # e.g. a browser URL to a branch or file: auditing the default branch instead
        # would be a silent surprise
        raise InvalidTarget(f"not a repository URL: {value} (use https://{host}/<owner>/<repo>)")
    return f"https://{host}/" + "/".join(segments)


def _parse_local(value: str) -> Path:
    path = Path(value).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise InvalidTarget(f"{value} does not exist") from exc
    if not resolved.is_dir():
        raise InvalidTarget(f"{value} is not a directory")
    is_worktree = (resolved / ".git").exists()
    is_bare = (resolved / "HEAD").is_file() and (resolved / "objects").is_dir()
    if not (is_worktree or is_bare):
        raise InvalidTarget(f"{value} is not a git repository")
    return resolved


def acquire(target: Target, dest_parent: Path, limits: GitLimits) -> Checkout:
    """Make `target` readable in a fresh directory under `dest_parent` and write its files.

    A local target is read in place (`local`): its object store is lent to a fresh
    repository, nothing is copied or fetched. A remote one is cloned without blobs, and the
    blobs of HEAD (up to ``max_blob_bytes`` each) come from one depth-1 fetch of that commit
    (`clone`). The caller owns `dest_parent` and removes it; a failed acquisition removes its
    own directory. Raises `AcquisitionError` with a classified `kind`.
    """
    home = Path(_fresh_dir(dest_parent, "home"))
    dest = Path(_fresh_dir(dest_parent, "repo"))
    deadline = time.monotonic() + limits.timeout_s
    try:
        if target.kind == "local":
            commit = _lend_local(Path(target.value), dest, home, limits, deadline)
        else:
            commit = clone_with_blobs(target.value, dest, home, limits, deadline)
        checkout = materialize(dest, commit, home, _left(deadline, limits),
                               limits.max_blob_bytes, limits.max_files,
                               limits.max_repo_mb * 1024 * 1024)
        if target.kind != "local":
            git_clone.detach_commit_blobs(dest)
        return Checkout(dest, commit, checkout.files, checkout.skipped,
                        shallow=(dest / ".git" / "shallow").exists())
    except TreeTooLarge as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise AcquisitionError("too_large", str(exc)) from None
    except GitStopped as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise AcquisitionError(exc.kind, str(exc)) from None
    except (RuntimeError, OSError, ValueError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        if isinstance(exc, AcquisitionError):
            raise
        if isinstance(exc, Closed):
            raise AcquisitionError("interrupted", str(exc)) from None
        raise AcquisitionError("git_error", f"{type(exc).__name__}: {exc}"[:300]) from None
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _left(deadline: float, limits: GitLimits) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise AcquisitionError("timeout", f"acquisition exceeded {limits.timeout_s:g} s")
    return left


def _lend_local(path: Path, dest: Path, home: Path, limits: GitLimits, deadline: float) -> str:
    """Read a local target in place (`local.lend`); returns its HEAD commit."""
    try:
        source = local.inspect(path)
    except UnsafeFile as exc:
        raise AcquisitionError("unsafe_file", str(exc)) from None
    except NoHead as exc:
        raise AcquisitionError("not_a_repository", str(exc)) from None
    local.lend(source, dest, home, _left(deadline, limits), limits.depth)
    return source.commit


def clone_with_blobs(url: str, dest: Path, home: Path, limits: GitLimits, deadline: float,
                     allow_file: bool = False) -> str:
    """Blobless history plus HEAD's blobs; one ``blob:limit`` clone if the server cannot
    send a commit by id. Returns the HEAD commit. `allow_file` lets tests and benchmarks
    clone a file:// URL."""
    cap = limits.max_repo_mb * 1024 * 1024
    _check(git_clone.clone(url, allow_file, dest, home, "blob:none", limits.depth,
                           _left(deadline, limits), cap), limits)
    commit = _head(dest)
    failed = git_clone.fetch_commit_blobs(url, allow_file, dest, commit, home,
                                          limits.max_blob_bytes, _left(deadline, limits), cap)
    if not failed:
        return commit
    if failed == "too_large":
        raise AcquisitionError("too_large",
                               f"repository exceeds the cap of {limits.max_repo_mb} MB")
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir()
    _check(git_clone.clone(url, allow_file, dest, home, f"blob:limit={limits.max_blob_bytes}",
                           limits.depth, _left(deadline, limits), cap), limits)
    return _head(dest)


def _fresh_dir(parent: Path, prefix: str) -> str:
    parent.mkdir(parents=True, exist_ok=True)
    return tempfile.mkdtemp(prefix=f"{prefix}-", dir=parent)


def _check(result: GitResult, limits: GitLimits) -> None:
    if result.returncode != 0 or result.killed_reason:
        raise _classify(result, limits)


def _head(dest: Path) -> str:
    commit = local_head(dest)
    if commit is None:
        raise AcquisitionError("not_a_repository", "the repository has no commits")
    return commit


_CLASSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("not_a_repository", ("does not appear to be a git repository", "not a git repository",
                          "not found: did you run git update-server-info")),
    ("not_found", ("repository not found", "404", "not found", "does not exist")),
    ("authentication", ("authentication failed", "could not read username",
                        "could not read password", "terminal prompts disabled",
                        "401", "403", "permission denied")),
    ("network", ("could not resolve host", "failed to connect", "connection timed out",
                 "connection refused", "network is unreachable", "unable to access",
                 "ssl", "tls", "early eof", "rpc failed", "proxy")),
)


def classify_failure(stderr: str) -> str:
    """The failure kind a git error message points to (``git_error`` when unknown)."""
    text = stderr.lower()
    for kind, needles in _CLASSES:
        if any(needle in text for needle in needles):
            return kind
    return "git_error"


def _classify(result: GitResult, limits: GitLimits) -> AcquisitionError:
    if result.killed_reason == "too_large":
        return AcquisitionError("too_large",
                                f"repository exceeds the cap of {limits.max_repo_mb} MB")
    kind = classify_failure(result.stderr)
    lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip()]
    last = lines[-1] if lines else f"git exited with status {result.returncode}"
    if kind == "authentication":
        last = f"repository not found or private (authentication required): {last}"
    return AcquisitionError(kind, last[:300])


def git_findings(repo: Path, limits: GitLimits) -> list[Finding]:
    """The git narrative of `repo` (facets ``git.*``): commit count and span, bulk-upload
    detection and the development progression, each quoting the commits it rests on.
    A git command that breaches its bounds raises `AcquisitionError`."""
    try:
        return narrative_findings(repo, limits.timeout_s)
    except GitStopped as exc:
        raise AcquisitionError(exc.kind, str(exc)) from None
