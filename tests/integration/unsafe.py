"""A shell-injection flaw committed into the test repository, and where its lines are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

UNSAFE_TOOLS_PY = '''import os


def clone(url: str) -> str:
    os.system(f"git clone {url} /tmp/repo")
    return "/tmp/repo"


def score(expression: str) -> int:
    return eval(expression)
'''
TOOLS = "src/tools/repo_tools.py"
OS_SYSTEM_LINE = UNSAFE_TOOLS_PY.splitlines().index(
    '    os.system(f"git clone {url} /tmp/repo")') + 1


def commit_unsafe_tools(repo: Path) -> None:
    """Replace the sandboxed clone tool by ``os.system(f"git clone {url}")`` plus an
    ``eval`` and commit it."""
    (repo / TOOLS).write_text(UNSAFE_TOOLS_PY, encoding="utf-8")
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
           "HOME": str(repo), "PATH": "/usr/bin:/bin:/usr/local/bin",
           "GIT_AUTHOR_DATE": "2026-02-09T10:00:00", "GIT_COMMITTER_DATE": "2026-02-09T10:00:00"}
    for args in (["add", TOOLS], ["commit", "-q", "-m", "Clone with the shell"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def audit(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "automaton_auditor", *args],
                          capture_output=True, text=True, timeout=300)


def written_report(out: Path) -> Path:
    """The one report.json an audit wrote under `out`."""
    [path] = sorted(out.rglob("report.json"))
    return path


def read_json(path: Path) -> Any:
    """A JSON file's content."""
    return json.loads(path.read_text(encoding="utf-8"))
