"""Running git on hostile repositories: a fixed argument list, a scrubbed environment,
hardening ``-c`` settings, a timeout on every call and a kill of the whole process group.

Nothing here decides *what* to run; `tools.git` and `tools.git_narrative` do.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

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
)
LOCAL_FILE_PROTOCOL = "protocol.file.allow=always"


@dataclass(frozen=True)
class GitResult:
    """What a finished git call returned."""

    returncode: int
    stdout: bytes
    stderr: str
    timed_out: bool = False
    killed_reason: str = ""


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


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill a process started with ``start_new_session`` and all its children."""
    if proc.poll() is not None:
        return
    _kill_group(proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # git forks helpers (remote-https, index-pack, upload-pack): kill them all, not just
    # the parent, or they keep the pipes open and outlive the timeout.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def run_git(args: Sequence[str], *, cwd: Path | None, home: Path, timeout_s: float,
            allow_file: bool = False, stdin: bytes | None = None,
            watch: Callable[[], str] | None = None) -> GitResult:
    """Run one git command in the hardened environment and return its output.

    Output goes to temporary files rather than pipes so a chatty git cannot deadlock us
    while we poll. `watch`, called about twice a second, may return a reason to abort
    (for example a size cap); the process group is then killed.
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
        proc = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=out, stderr=err,
            stdin=feed if stdin is not None else subprocess.DEVNULL,
            start_new_session=True,
        )
        timed_out, reason = _wait(proc, timeout_s, watch)
        out.seek(0)
        err.seek(0)
        return GitResult(proc.returncode, out.read(),
                         err.read().decode("utf-8", "replace"), timed_out, reason)


def _wait(proc: subprocess.Popen[bytes], timeout_s: float,
          watch: Callable[[], str] | None) -> tuple[bool, str]:
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            _kill_group(proc)
            return True, "timeout"
        try:
            proc.wait(timeout=min(0.5, remaining) if watch else remaining)
            return False, ""
        except subprocess.TimeoutExpired:
            reason = watch() if watch else ""
            if reason:
                _kill_group(proc)
                return False, reason


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
