"""Target validation (no I/O beyond stat) and failure classification."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from automaton_auditor.forensics.git.acquire import (
    GitLimits,
    InvalidTarget,
    classify_failure,
    parse_target,
)

LIMITS = GitLimits()


@pytest.mark.parametrize(("raw", "normalised"), [
    ("https://github.com/tedoaba/Digital-Courtroom", "https://github.com/tedoaba/Digital-Courtroom"),
    ("https://GitHub.com/a/b.git", "https://github.com/a/b.git"),
    ("https://gitlab.com/group/sub/repo/", "https://gitlab.com/group/sub/repo"),
])
def test_https_urls_on_the_allowlist(raw: str, normalised: str) -> None:
    target = parse_target(raw, LIMITS)
    assert target.kind == "remote" and target.value == normalised


@pytest.mark.parametrize(("raw", "reason"), [
    ("git@github.com:a/b.git", "ssh URLs are not allowed"),
    ("ssh://git@github.com/a/b", "ssh URLs are not allowed"),
    ("ext::sh -c touch% /tmp/pwned", "remote helpers"),
    ("file:///etc", "only https"),
    ("http://github.com/a/b", "only https"),
    ("https://user:token@github.com/a/b", "credentials"),
    ("https://evil.example/a/b", "host evil.example is not allowed"),
    ("https://github.com/a/b;rm -rf ~", "shell metacharacters"),
    ("https://github.com/a/$(whoami)", "shell metacharacters"),
    ("--upload-pack=touch /tmp/x", "may not start with '-'"),
    ("https://github.com/onlyowner", "not a repository URL"),
    ("https://github.com/a/b/tree/main", "use https://github.com/<owner>/<repo>"),
    ("https://github.com/a/b?x=1", "shell metacharacters"),
    ("https://github.com:2222/a/b", "non-standard port"),
    ("https://github.com:99999/a/b", "not a valid URL (Port out of range"),
    ("https://github.com:abc/a/b", "not a valid URL (Port could not be cast"),
    ("", "empty target"),
    ("repo\x1b[2Jx", "control characters"),
    ("repo\x7f", "control characters"),  # DEL
    ("repo\x9bx", "control characters"),  # a C1 byte: a one-byte CSI on some terminals
    ("repo\u202eetadpu", "control characters"),  # a bidi override reorders the echo
])
def test_refused_targets_give_a_one_line_reason(raw: str, reason: str) -> None:
    with pytest.raises(InvalidTarget) as info:
        parse_target(raw, LIMITS)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


def test_allow_host_extends_the_allowlist() -> None:
    limits = GitLimits(allowed_hosts=("github.com", "git.example.org"))
    assert parse_target("https://git.example.org/a/b", limits).kind == "remote"


def test_local_targets(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InvalidTarget, match="is not a git repository"):
        parse_target(str(plain), LIMITS)
    with pytest.raises(InvalidTarget, match="does not exist"):
        parse_target(str(tmp_path / "missing"), LIMITS)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    target = parse_target(str(repo), LIMITS)
    assert target.kind == "local" and target.value == str(repo.resolve())


@pytest.mark.parametrize(("stderr", "kind"), [
    ("remote: Repository not found.\nfatal: repository 'https://github.com/a/b/' not found",
     "not_found"),
    ("fatal: could not read Username for 'https://github.com': terminal prompts disabled",
     "authentication"),
    ("fatal: unable to access 'https://github.com/a/b/': Could not resolve host: github.com",
     "network"),
    ("fatal: '/tmp/x' does not appear to be a git repository", "not_a_repository"),
    ("fatal: something odd", "git_error"),
])
def test_failure_classification(stderr: str, kind: str) -> None:
    assert classify_failure(stderr) == kind
