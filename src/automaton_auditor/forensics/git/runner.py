"""Running git on hostile repositories: a fixed argument list, a scrubbed environment,
hardening ``-c`` settings, and every call contained (`automaton_auditor.containment`): a
lifetime, a ceiling on processes, and its whole session killed when it ends.

Nothing here decides *what* to run; `acquire`, `clone`, `materialize` and `history` do.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from automaton_auditor.containment import PROCESS_LIMIT, TIMEOUT, Bounds, Contained, spawn

# Environment variables passed through to git: the search path and what https needs to reach
# the network (proxies, CA bundles). Everything else, notably GIT_DIR, GIT_CONFIG_* and
# GIT_SSH*, is dropped so the caller's environment cannot redirect git.
_PASS_ENV = ("PATH", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
             "no_proxy", "ALL_PROXY", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
             "GIT_SSL_CAINFO", "SYSTEMROOT", "TZ")

# Settings that switch off every way a repository can make git run code or leave the
# sandbox: hooks, fsmonitor, symlinks, submodules, credential helpers, and every transport
# except https (local files are added only for explicit local targets).
HARDENING: tuple[str, ...] = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.symlinks=false",
    "core.protectNTFS=true",
    "core.protectHFS=true",
    "core.askPass=",
    "credential.helper=",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "protocol.allow=never",
    "protocol.https.allow=always",
    "filter.lfs.smudge=",
    "filter.lfs.process=",
    "filter.lfs.required=false",
    "http.followRedirects=initial",
    "advice.detachedHead=false",
    "core.quotePath=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "pack.threads=1",  # one thread per pack command: a predictable task count
    # A blob past this is "binary" to diff and log (no line counts) and streamed when packed:
    # xdiff holds a record per line, so a rewritten 60 MB file of 2-byte lines (a repository
    # under 1 MB) took one `git log --numstat` to 2.7 GB. Code the audit reads is far smaller
    # (the checkout skips blobs over `max_blob_bytes`).
    f"core.bigFileThreshold={4 << 20}",
)
LOCAL_FILE_PROTOCOL = "protocol.file.allow=always"
# The address space one git process may take: a backstop under the diff bound above (pack
# windows of a repository within `max_repo_mb` and https's threads fit many times over). A
# git that needs more fails, and the audit says which command did, as for a timeout.
MAX_GIT_MEMORY = 3 << 30
# Processes one git command may run at once (git, its remote helper, index-pack,
# upload-pack and their shells come to about six). Far above any legitimate need, far
# below a fork storm: a lazy fetch that recurses is stopped here.
MAX_PROCS = 24
# The longest path and path component a file system holds (PATH_MAX, NAME_MAX): a tracked
# path beyond them can never be checked out or imported, only carried (45,000 names of 4 KB
# in a 1 MB repository cost gigabytes as lists, facts and checkpoints), so it is left out.
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
# The most of one line of git output ever held: a commit subject or path beyond it is cut
# while it streams (a 300 MB subject compresses to 300 KB in the object store).
MAX_LINE_BYTES = MAX_PATH_BYTES + 4096
_CHUNK = 1 << 16
# How git and the shell say the kernel refused a fork (the pids cgroup or RLIMIT_NPROC).
_FORK_REFUSED = re.compile(r"cannot fork|unable to fork|fork\(\) failed|fork: resource", re.I)


@dataclass(frozen=True)
class GitResult:
    """What a finished git call returned."""

    returncode: int
    stdout: bytes
    stderr: str
    # The reason a `watch` gave to stop git early (e.g. "too_large"); "" otherwise.
    killed_reason: str = ""
    # stdout cut into records by `run_git(..., split=)`, each at most `MAX_LINE_BYTES`.
    records: tuple[bytes, ...] = ()


class GitStopped(RuntimeError):
    """A git command breached a bound of its containment: `kind` is "timeout" or
    "process_limit". Acquisition turns it into a failed audit (exit 3, partial report)."""

    def __init__(self, args: Sequence[str], kind: str, timeout_s: float) -> None:
        verb = next((a for a in args if not a.startswith("-")), "git")
        what = (f"ran longer than {timeout_s:g} s" if kind == TIMEOUT else
                f"hit the process limit ({MAX_PROCS} at once)")
        super().__init__(f"git {verb} {what} and was stopped")
        self.kind = kind


def hardened_env(home: Path) -> dict[str, str]:
    """A minimal environment for git: no system or global config, no prompts, no LFS
    smudge, a throwaway HOME, untranslated messages (so failures can be classified)."""
    env = {key: os.environ[key] for key in _PASS_ENV if key in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        "GIT_LFS_SKIP_SMUDGE": "1",
        "GIT_PROTOCOL_FROM_USER": "0",
        "GIT_ALLOW_PROTOCOL": "https",
        "GIT_OPTIONAL_LOCKS": "0",
        "LC_ALL": "C",
        "LANG": "C",
    })
    return env


def git_command(args: Sequence[str], *, allow_file: bool = False) -> list[str]:
    """``git -c ... <args>`` with the hardening settings in front of the subcommand."""
    settings = [*HARDENING, LOCAL_FILE_PROTOCOL] if allow_file else list(HARDENING)
    command = ["git"]
    for setting in settings:
        command += ["-c", setting]
    return command + list(args)


def git_bounds(timeout_s: float) -> Bounds:
    """The ceilings of one git command: its lifetime, the processes it may run at once and
    the address space of each (`MAX_GIT_MEMORY`)."""
    return Bounds(timeout_s=timeout_s, max_procs=MAX_PROCS, cgroup=True,
                  memory_bytes=MAX_GIT_MEMORY)


def run_git(args: Sequence[str], *, cwd: Path | None, home: Path, timeout_s: float,
            allow_file: bool = False, stdin: bytes | None = None,
            watch: Callable[[], str] | None = None, split: bytes = b"",
            keep: Callable[[bytes], bool] | None = None) -> GitResult:
    """Run one git command in the hardened environment and return its output.

    git runs contained (`automaton_auditor.containment`): in a session of its own, killed
    with everything it forked at `timeout_s` or when it runs more than `MAX_PROCS`
    processes at once (both raise `GitStopped`), when it returns and when the audit ends.
    Output goes to temporary files rather than pipes so a chatty git cannot deadlock us
    while we poll. `watch`, called about twice a second and once more when git ends, may
    return a reason to abort (for example a size cap), returned in
    `GitResult.killed_reason`. With `split` (a separator), stdout is not read whole: it
    streams into `GitResult.records`, each cut to `MAX_LINE_BYTES` and kept when `keep`
    (if given) accepts it, so a hostile repository's output costs bounded memory per record.
    """
    env = hardened_env(home)
    if allow_file:
        env["GIT_ALLOW_PROTOCOL"] = "https:file"
    command = git_command(args, allow_file=allow_file)
    with tempfile.TemporaryFile(dir=home) as out, tempfile.TemporaryFile(dir=home) as err, \
            tempfile.TemporaryFile(dir=home) as feed:
        # stdin comes from a file too: a write to a pipe git never reads would block
        # forever, beyond the reach of the timeout.
        feed.write(stdin or b"")
        feed.seek(0)
        with spawn(command, bounds=git_bounds(timeout_s), cwd=cwd, env=env, stdout=out,
                   stderr=err, stdin=feed if stdin is not None else subprocess.DEVNULL) as child:
            reason = _wait(child, watch)
        if child.breach:
            raise GitStopped(args, child.breach, timeout_s)
        out.seek(0)
        err.seek(0)
        stdout, records = (b"", tuple(filter(keep, bounded_records(out, split)))) if split \
            else (out.read(), ())
        result = GitResult(child.popen.returncode, stdout,
                           err.read().decode("utf-8", "replace"), reason, records)
    if result.returncode != 0 and _FORK_REFUSED.search(result.stderr):
        raise GitStopped(args, PROCESS_LIMIT, timeout_s)  # the kernel's ceiling held first
    return result


def bounded_records(handle: BinaryIO, sep: bytes, cap: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The records of `handle` split at `sep` (one byte), each cut to its first `cap` bytes; read in
    chunks, so a record of any length costs at most `cap` bytes of memory."""
    kept = bytearray()
    while chunk := handle.read(_CHUNK):
        start = 0
        while (end := chunk.find(sep, start)) >= 0:
            kept += chunk[start:min(end, start + cap - len(kept))]
            yield bytes(kept)
            kept.clear()
            start = end + len(sep)
        kept += chunk[start:start + max(cap - len(kept), 0)]
    if kept:
        yield bytes(kept)


def path_fits(path: bytes | str) -> bool:
    """Whether a tracked path could exist on a file system: at most `MAX_PATH_BYTES` in all
    and `MAX_NAME_BYTES` a component (a path cut by `bounded_records` is longer still)."""
    raw = path.encode("utf-8", "surrogateescape") if isinstance(path, str) else path
    return 0 < len(raw) <= MAX_PATH_BYTES and all(len(p) <= MAX_NAME_BYTES for p in raw.split(b"/"))


def _wait(child: Contained, watch: Callable[[], str] | None) -> str:
    while True:
        try:
            child.wait(timeout=0.5)
            # a command that ends between two polls (a fast local fetch of one big blob)
            # is held to the same bound: the watch reads what it left behind once more
            return watch() if watch else ""
        except subprocess.TimeoutExpired:
            reason = watch() if watch else ""
            if reason:
                child.kill()
                return reason


def dir_size(path: Path) -> int:
    """Bytes under `path`, ignoring files that vanish while we count (git renames packs)."""
    total = 0
    for root, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total
