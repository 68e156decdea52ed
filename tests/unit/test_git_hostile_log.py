"""Hostile git histories read with bounded memory and never a crash: a commit-message bomb,
a date past any calendar, thousands of over-long file names; facts with lone surrogates
still serialise; the read-only-HOME cache fallback is one folder per user."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import tracemalloc
import zlib
from pathlib import Path

import ormsgpack
import pytest

from automaton_auditor.forensics.git.history import (
    SUBJECT_LIMIT,
    head_files,
    iso,
    read_log,
)
from automaton_auditor.forensics.git.materialize import materialize
from automaton_auditor.forensics.git.runner import MAX_LINE_BYTES, bounded_records
from automaton_auditor.forensics.git.story import narrative_findings
from automaton_auditor.state import Finding
from automaton_auditor.storage import kv
from automaton_auditor.storage.facts import RepoFacts, roundtrip

GRAPH = b"from langgraph.graph import StateGraph\n"


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], input=stdin, check=True,
                          capture_output=True)
    return done.stdout.decode().strip()


def _base(repo: Path, extra: bytes = b"") -> Path:
    """One commit adding src/graph.py (plus `extra` fast-import file commands)."""
    _git(repo.parent, "init", "-q", "-b", "main", str(repo))
    stream = (b"blob\nmark :1\ndata 6\nx = 1\n\ncommit refs/heads/main\n"
              b"committer A <a@x> 1700000000 +0000\ndata 5\nfeat\n"
              b"M 100644 inline src/graph.py\ndata %d\n%s\n" % (len(GRAPH), GRAPH) + extra)
    _git(repo, "fast-import", "--quiet", stdin=stream)
    return repo


def _raw_commit(repo: Path, header: str, subject: bytes) -> str:
    """A commit on HEAD written straight into the object store (git would not make it)."""
    tree = _git(repo, "rev-parse", "HEAD^{tree}")
    body = f"tree {tree}\nparent {_git(repo, 'rev-parse', 'HEAD')}\n{header}\n\n".encode()
    raw = b"commit %d\0" % len(body + subject) + body + subject
    oid = hashlib.sha1(raw).hexdigest()  # git names objects by SHA-1
    folder = repo / ".git" / "objects" / oid[:2]
    folder.mkdir(exist_ok=True)
    (folder / oid[2:]).write_bytes(zlib.compress(raw, 9))
    _git(repo, "update-ref", "refs/heads/main", oid)
    return oid


def test_records_are_cut_while_they_stream() -> None:
    data = b"short\n" + b"a" * (5 * MAX_LINE_BYTES) + b"\nlast"
    records = list(bounded_records(io.BytesIO(data), b"\n"))
    assert records == [b"short", b"a" * MAX_LINE_BYTES, b"last"]


def test_a_commit_message_bomb_costs_kilobytes(tmp_path: Path) -> None:
    repo = _base(tmp_path / "bomb")
    who = "A <a@x> 1700000100 +0000"
    _raw_commit(repo, f"author {who}\ncommitter {who}", b"feat: " + b"a" * (40 << 20) + b"\n")
    tracemalloc.start()
    try:
        commits = read_log(repo, 60).commits
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(commits) == 2 and commits[-1].subject.startswith("feat: aaa")
    assert len(commits[-1].subject) <= SUBJECT_LIMIT
    assert peak < 8 << 20  # was the 40 MB subject, several times over


def test_a_date_past_any_calendar_is_a_fact_not_a_crash(tmp_path: Path) -> None:
    repo = _base(tmp_path / "future")
    who = "A <a@x> 99999999999999 +0000"
    forged = _raw_commit(repo, f"author {who}\ncommitter {who}", b"feat: graph\n")
    assert "no calendar date" in iso(99999999999999)
    history = next(f for f in narrative_findings(repo, 60) if f.facet == "git.history")
    assert history.data["impossible_dates"] == [forged]
    assert "beyond year 9999" in history.rationale


def test_a_date_past_64_bits_is_held_where_the_checkpoint_can_store_it(tmp_path: Path) -> None:
    """An author time of 10^20 (or 5,000 digits) is still a forged date, but every time and
    span the history facts keep fits a 64-bit integer (msgpack, the checkpointer's format,
    refused the fact and the audit ended with no criterion judged)."""
    repo = _base(tmp_path / "far")
    for stamp in ("100000000000000000000", "9" * 5000):
        who = f"A <a@x> {stamp} +0000"
        _raw_commit(repo, f"author {who}\ncommitter A <a@x> 1700000200 +0000",
                    f"feat: {len(stamp)} digits\n".encode())
    commits = read_log(repo, 60).commits
    assert [c.timestamp for c in commits[-2:]] == [2**63 - 1, 2**63 - 1]
    history = next(f for f in narrative_findings(repo, 60) if f.facet == "git.history")
    assert len(history.data["impossible_dates"]) == 2
    ormsgpack.packb(history.model_dump())  # the checkpointer's serialiser takes it


def test_overlong_file_names_are_left_out(tmp_path: Path) -> None:
    names = b"".join(b"M 100644 :1 src/%s%05d.py\n" % (b"n" * 3000, i) for i in range(300))
    deep = b"M 100644 :1 %s/deep.py\n" % b"/".join([b"d" * 200] * 25)  # 5 KB, short parts
    repo = _base(tmp_path / "long", names + deep)
    assert head_files(repo, 60) == ["src/graph.py"]
    home = tmp_path / "home"
    home.mkdir()
    done = materialize(repo, _git(repo, "rev-parse", "HEAD"), home, 60, 1 << 20)
    assert done.files == ["src/graph.py"] and not done.skipped
    assert read_log(repo, 60).commits[0].added == ["src/graph.py"]


def test_lone_surrogates_in_facts_serialise() -> None:
    finding = Finding(facet="graph.nodes", goal="g", found=True, location="src/graph.py",
                      rationale="node repo_investigator\ud800", confidence=1.0,
                      data={"nodes": ["repo_investigator\ud800"], "k\udfff": 1})
    facts = roundtrip(RepoFacts(commit="a" * 40, files=["x\udc80.py"], findings=[finding]))
    assert facts.findings[0].data["nodes"] == ["repo_investigator\\ud800"]
    assert facts.files == ["x\\udc80.py"] and "k\\udfff" in facts.findings[0].data
    facts.model_dump_json()


def test_the_fallback_cache_is_one_private_folder_per_user(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kv.tempfile, "tempdir", str(tmp_path))
    first = kv.fallback_cache_dir()
    assert first == kv.fallback_cache_dir() == tmp_path / f"auditor-cache-{os.getuid()}"
    assert first.stat().st_mode & 0o777 == 0o700
    first.chmod(0o777)  # as if planted, writable by anyone: never trusted
    other = kv.fallback_cache_dir()
    assert other != first and other.parent == tmp_path
