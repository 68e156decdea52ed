"""Placeholder files: a stage's stubs are not its code; the files are read in bounds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from automaton_auditor.forensics.git import history
from automaton_auditor.forensics.git.progression import placeholder
from tests.unit.test_git_narrative import make_repo


@pytest.mark.parametrize("source", [
    "",
    '"""Judges."""\nimport os\n',
    "def judge(state):\n    '''TODO'''\n    return {}\n",
    "def a(s):\n    return {'opinions': []}\n\ndef b(s):\n    pass\n\n"
    "def c(s):\n    return a(s)['opinions'] + b(s)\n",
    "class Judge:\n    '''TODO'''\n",
    "def f():\n    raise NotImplementedError('later')\n",
])
def test_placeholders(source: str) -> None:
    assert placeholder(source)


@pytest.mark.parametrize("source", [
    "g = StateGraph(State)\ng.add_node('a', a)\n",
    "def build():\n    g = StateGraph(State)\n    g.add_edge(START, 'a')\n    return g.compile()\n",
    "class State(TypedDict):\n    evidences: list[str]\n",
    "def a(s):\n    return {}\n\ndef b(s):\n    return len(s)\n",
    "def broken(:\n",
])
def test_working_code(source: str) -> None:
    assert not placeholder(source)


def test_read_blobs_reads_files_at_their_commit_in_bounds(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are read as the commit left them, in two git calls; a path git cannot resolve
    and a blob over the size bound are left out, and the total stays under its bound."""
    repo = make_repo(tmp_path / "r", [
        ("one", {"src/graph.py": "old = 1\n", "src/my tools.py": "t = 1\n"}),
        ("two", {"src/graph.py": "new = 2\n", "big.py": "x" * 5000}),
    ])
    shas = subprocess.run(["git", "-C", str(repo), "log", "--format=%H", "--reverse"],
                          capture_output=True, text=True, check=True).stdout.split()
    monkeypatch.setattr(history, "BLOB_BYTES", 4096)
    texts = history.read_blobs(repo, 30.0, [
        (shas[0], "src/graph.py"), (shas[1], "src/graph.py"), (shas[0], "src/my tools.py"),
        (shas[0], "big.py"), (shas[1], "big.py"), (shas[1], "gone.py")])
    assert texts == {(shas[0], "src/graph.py"): "old = 1\n",
                     (shas[1], "src/graph.py"): "new = 2\n",
                     (shas[0], "src/my tools.py"): "t = 1\n"}
    monkeypatch.setattr(history, "BLOBS_BYTES", 10)
    capped = history.read_blobs(repo, 30.0, [(shas[0], "src/graph.py"),
                                             (shas[1], "src/graph.py")])
    assert capped == {(shas[0], "src/graph.py"): "old = 1\n"}  # 8 bytes, then the bound
