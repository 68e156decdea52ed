"""The hardened git runner: timeouts kill the whole process group; the environment is
scrubbed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.containment import session_members
from automaton_auditor.forensics.git import runner
from automaton_auditor.forensics.git.runner import GitStopped, hardened_env, run_git


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The session ids of the git commands run_git starts during the test."""
    started: list[int] = []
    real_spawn = runner.spawn

    def spy(*args: Any, **kwargs: Any) -> Any:
        child = real_spawn(*args, **kwargs)
        started.append(child.pid)
        return child

    monkeypatch.setattr(runner, "spawn", spy)
    return started


def test_timeout_kills_git_and_its_children(tmp_path: Path, sessions: list[int]) -> None:
    # An alias runs a shell child of git that forks more (one escapes by a double fork);
    # only this test passes such a setting.
    slow = "!sleep 300 & (sleep 300 &) ; sleep 300"
    with pytest.raises(GitStopped, match=r"ran longer than 0\.5 s") as info:
        run_git(["-c", f"alias.slow={slow}", "slow"], cwd=tmp_path, home=tmp_path,
                timeout_s=0.5)
    assert info.value.kind == "timeout"
    assert session_members(sessions[0]) == []  # git, the shell and every sleep are gone


def test_a_fork_storm_in_git_is_stopped(tmp_path: Path, sessions: list[int]) -> None:
    # Stopped by the process bound, or earlier by the kernel (the audit's pids cgroup, or
    # RLIMIT_NPROC) refusing the forks: either way git ends and nothing of it is left.
    storm = "!for i in $(seq 100); do sleep 300 & done; wait"
    with pytest.raises(GitStopped, match=r"hit the process limit \(24 at once\)") as info:
        run_git(["-c", f"alias.storm={storm}", "storm"], cwd=tmp_path, home=tmp_path,
                timeout_s=120)
    assert info.value.kind == "process_limit"
    assert session_members(sessions[0]) == []


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
