"""Lines per commit read from ``git log --numstat`` when the object store lacks some blobs
(a blobless or partial clone, a mirror that left its largest files out): the path holding
a missing blob is left out when it is no code, so the code counts stay exact; a missing
code blob leaves the lines unread."""

from __future__ import annotations

import subprocess
from pathlib import Path

from automaton_auditor.forensics.git.history import Commit
from automaton_auditor.forensics.git.numstat import add_line_counts
from tests.unit.test_git_narrative import make_repo

STEPS = [
    ("setup", {"pyproject.toml": "[project]\n"}),
    ("tools", {"src/tools.py": "a = 1\nb = 2\n"}),
    ("report", {"reports/report.pdf": "%PDF-1.4 not really\n" * 40}),
    ("graph", {"src/graph.py": "g = 1\nh = 2\ni = 3\n"}),
    ("report again", {"reports/report.pdf": "%PDF-1.5 another\n" * 30,
                      "src/judges.py": "j = 1\n"}),
]


def _commits(repo: Path) -> list[Commit]:
    log = subprocess.run(["git", "-C", str(repo), "log", "--reverse", "--format=%H %ct"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return [Commit(sha, int(when), "d", "s") for sha, when in
            (line.split() for line in log if line)]


def _drop_blob(repo: Path, spec: str) -> None:
    """Remove the loose object of the blob `spec` names, as a partial store lacks it."""
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", spec], capture_output=True,
                         text=True, check=True).stdout.strip()
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


def _counts(repo: Path) -> tuple[bool, list[int | None]]:
    commits = _commits(repo)
    read = add_line_counts(repo, 30.0, commits, lambda path: path.endswith(".py"))
    return read, [c.lines for c in commits]


def test_a_missing_report_blob_leaves_the_code_counts_exact(tmp_path: Path) -> None:
    full = make_repo(tmp_path / "full", STEPS)
    assert _counts(full) == (True, [0, 2, 0, 3, 1])
    partial = make_repo(tmp_path / "partial", STEPS)
    _drop_blob(partial, "HEAD~2:reports/report.pdf")  # the first version of the report
    assert _counts(partial) == (True, [0, 2, 0, 3, 1])


def test_a_missing_code_blob_leaves_the_lines_unread(tmp_path: Path) -> None:
    partial = make_repo(tmp_path, STEPS)
    _drop_blob(partial, "HEAD~1:src/graph.py")
    read, _lines = _counts(partial)
    assert read is False
