"""The hardened git runner: timeouts kill the whole process group; the environment is
scrubbed."""

from __future__ import annotations

import time
from pathlib import Path

from automaton_auditor.forensics.git.runner import hardened_env, run_git


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


def test_timeout_kills_git_and_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    # An alias runs a shell child of git that records its pid and then waits a long time;
    # only this test passes such a setting.
    result = run_git(["-c", f"alias.slow=!echo $$ > {pidfile}; exec sleep 60", "slow"],
                     cwd=tmp_path, home=tmp_path, timeout_s=2.0)
    assert result.timed_out
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "git's child outlived the timeout"


def test_environment_is_scrubbed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    monkeypatch.setenv("GIT_SSH_COMMAND", "touch /tmp/pwned")
    env = hardened_env(tmp_path)
    assert "GIT_DIR" not in env and "GIT_SSH_COMMAND" not in env
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["HOME"] == str(tmp_path) and env["GIT_LFS_SKIP_SMUDGE"] == "1"


def test_hardening_settings_reach_git(tmp_path: Path) -> None:
    result = run_git(["config", "--get", "core.hooksPath"], cwd=tmp_path, home=tmp_path,
                     timeout_s=30)
    assert result.stdout.decode().strip() == "/dev/null"
    result = run_git(["config", "--get", "protocol.file.allow"], cwd=tmp_path, home=tmp_path,
                     timeout_s=30)
    assert result.returncode != 0  # local files only for explicit local targets
