"""Hostile targets given as URLs: every one is refused before any network use (exit 2, one
`error:` line, no report), and nothing planted in it runs. The one URL that is
accepted points at 127.0.0.1, where nothing listens: the repository cannot be acquired
(exit 3, a partial report)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.harness import Case, audit, check, run_audit

# (id, target, what the error line names); {canary} and {repo} are filled in per case.
REFUSED = [
    ("ssh", "ssh://git@github.com/owner/repo.git", "ssh"),
    ("scp", "git@github.com:owner/repo.git", "ssh"),
    ("ext", "ext::sh -c touch% {canary}", "helper"),
    ("ext-in-https", "https::ext::sh -c touch% {canary}", ""),
    ("file", "file://{repo}", "https"),
    ("git-protocol", "git://github.com/owner/repo.git", "https"),
    ("http", "http://github.com/owner/repo", "https"),
    ("credentials", "https://user:hunter2@github.com/owner/repo", "credentials"),
    ("token", "https://ghp_abcdef@github.com/owner/repo", "credentials"),
    ("shell-semicolon", "https://github.com/owner/repo;touch {canary}", "shell"),
    ("shell-subst", "https://github.com/owner/$(touch {canary})", "shell"),
    ("shell-backtick", "https://github.com/owner/`touch {canary}`", "shell"),
    ("shell-pipe", "https://github.com/owner/repo|touch {canary}", "shell"),
    ("newline", "https://github.com/owner/repo\ntouch {canary}", ""),
    ("port-22", "https://github.com:22/owner/repo", "port"),
    ("port-8443", "https://github.com:8443/owner/repo", "port"),
    # urlsplit parses the port when it is read: these were a ValueError traceback
    ("port-out-of-range", "https://github.com:99999/owner/repo", "port out of range"),
    ("port-not-a-number", "https://github.com:abc/owner/repo", "port could not be cast"),
    ("query", "https://github.com/owner/repo?ref=main", "?ref=main"),
    ("fragment", "https://github.com/owner/repo#main", "fragment"),
    ("branch", "https://github.com/owner/repo/tree/main", "repository url"),
    ("blob", "https://github.com/owner/repo/blob/main/src/graph.py", "repository url"),
    ("traversal", "https://github.com/owner/../../repo", "repository url"),
    ("homoglyph-host", "https://g\u0456thub.com/owner/repo", "not allowed"),
    ("punycode-host", "https://xn--gthub-n4a.com/owner/repo", "not allowed"),
    ("loopback-host", "https://127.0.0.1/owner/repo", "not allowed"),
    ("userinfo-host", "https://github.com@127.0.0.1/owner/repo", ""),
]


@pytest.mark.parametrize(("target", "needle"), [pytest.param(t, n, id=i) for i, t, n in REFUSED])
def test_refused_url(case: Case, good_repo: Path, good_pdf: Path, target: str,
                     needle: str) -> None:
    result = audit(case, target.format(canary=case.canary, repo=good_repo), good_pdf)
    check(result, 2, needle=needle, report=False)


def test_url_10kb(case: Case, good_pdf: Path) -> None:
    """A 10 KB URL on an allowed host (127.0.0.1, so no network either way) is a bad URL."""
    target = "https://127.0.0.1/owner/" + "r" * 10_240
    result = audit(case, target, good_pdf, "--allow-host", "127.0.0.1")
    check(result, 2, needle="longer than", report=False)


def test_leading_dash_target(case: Case, good_pdf: Path) -> None:
    """After `--`, a target that starts with '-' reaches the validator: refused."""
    result = run_audit(case, "--output-dir", str(case.out), "-q", "--",
                       f"-oProxyCommand=touch {case.canary}", str(good_pdf))
    check(result, 2, needle="-", report=False)


def test_unreachable_allowed_host(case: Case, good_pdf: Path) -> None:
    """An allowed host where nothing listens: acquisition fails, exit 3, partial report."""
    result = audit(case, "https://127.0.0.1:443/owner/repo", good_pdf,
                   "--allow-host", "127.0.0.1")
    check(result, 3, report=True)
