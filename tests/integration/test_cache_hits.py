"""The detectives' caches: hits skip the work and give identical evidence; a new commit, a
changed report or a changed rubric misses exactly the caches it should; corrupt entries are
rebuilt."""

from __future__ import annotations

import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.nodes import detectives
from automaton_auditor.rubric import concept_terms, load_rubric
from automaton_auditor.settings import Settings
from automaton_auditor.storage.kv import FACTS_DB

NODES = {"repo": detectives.repo_investigator, "doc": detectives.doc_analyst,
         "vision": detectives.vision_inspector}


def _dir(out: Path) -> Path:
    """The one report folder under `out` (folders are named per target, with a hash)."""
    found = sorted(out.glob("**/report.json"))
    return found[0].parent if found else out / "no-report"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the expensive steps: cloning, report ingestion, diagram extraction (the two
    reads of the report run in a child process; counted where the detectives ask for them)."""
    seams = {"acquire": (detectives, "acquire"),
             "ingest_report": (detectives.cache_prefetch, "doc_facts"),
             "find_diagrams": (detectives.cache_prefetch, "diagrams")}
    counts = dict.fromkeys(seams, 0)
    for name, (module, attr) in seams.items():
        real = getattr(module, attr)

        def spy(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            counts[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, attr, spy)
    return counts


def _state(repo: Path, pdf: Path, cache: Path | None, rubric: Any = None) -> dict[str, Any]:
    rubric = rubric or load_rubric()
    return {"target": str(repo), "report_path": str(pdf), "rubric": rubric.model_dump(),
            "settings": Settings(cache_dir=str(cache) if cache else None).to_state()}


def _run(state: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for source, node in NODES.items():
        update = node(state)  # type: ignore[arg-type]
        assert update["detective_status"][source].ok, update
        update.pop("timings")
        out[source] = update
    return out


def _ids(run: dict[str, Any]) -> dict[str, list[str]]:
    return {s: [e.evidence_id for e in u["evidences"][s]] for s, u in run.items()}


def test_warm_run_skips_the_work_and_gives_identical_facts(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path, calls: dict[str, int]) -> None:
    cache = tmp_path / "cache"
    uncached = _run(_state(auditee_repo, report_pdf, None))
    cold = _run(_state(auditee_repo, report_pdf, cache))
    assert calls == {"acquire": 2, "ingest_report": 2, "find_diagrams": 2}
    warm = _run(_state(auditee_repo, report_pdf, cache))
    assert calls == {"acquire": 2, "ingest_report": 2, "find_diagrams": 2}  # nothing redone
    assert warm == cold  # same evidence (ids, content, data), commit, files, graph, facts
    assert _ids(uncached) == _ids(cold)
    assert warm["repo"]["commit"] == cold["repo"]["commit"]


def _commit(repo: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "HOME": str(repo),
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
           "PATH": "/usr/bin:/bin:/usr/local/bin"}
    (repo / "src" / "extra.py").write_text("import os\nos.system(input())\n", encoding="utf-8")
    for args in (["add", "src/extra.py"], ["commit", "-q", "-m", "Add a shell call"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def test_new_commit_misses_only_the_repository_cache(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path, calls: dict[str, int]) -> None:
    cache = tmp_path / "cache"
    before = _run(_state(auditee_repo, report_pdf, cache))
    _commit(auditee_repo)
    after = _run(_state(auditee_repo, report_pdf, cache))
    assert calls == {"acquire": 2, "ingest_report": 1, "find_diagrams": 1}
    assert after["repo"]["commit"] != before["repo"]["commit"]
    assert "src/extra.py" in after["repo"]["repo_files"]


def test_changed_report_misses_only_the_report_caches(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path, calls: dict[str, int]) -> None:
    cache = tmp_path / "cache"
    _run(_state(auditee_repo, report_pdf, cache))
    changed = tmp_path / "changed.pdf"
    changed.write_bytes(report_pdf.read_bytes() + b"\n%changed\n")
    _run(_state(auditee_repo, changed, cache))
    assert calls == {"acquire": 1, "ingest_report": 2, "find_diagrams": 2}


def test_changed_rubric_concepts_miss_only_the_doc_cache(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path, calls: dict[str, int]) -> None:
    cache = tmp_path / "cache"
    rubric = load_rubric()
    _run(_state(auditee_repo, report_pdf, cache, rubric))
    data = rubric.model_dump()
    doc = next(d for d in data["dimensions"] if d["target_artifact"] == "pdf_report"
               and d.get("concepts"))
    doc["concepts"] = [*doc["concepts"], "Quantum Entanglement Routing"]
    other = type(rubric).model_validate(data)
    assert concept_terms(other) != concept_terms(rubric)
    _run(_state(auditee_repo, report_pdf, cache, other))
    assert calls == {"acquire": 1, "ingest_report": 2, "find_diagrams": 1}


def test_corrupt_entries_are_rebuilt(auditee_repo: Path, report_pdf: Path, tmp_path: Path,
                                     calls: dict[str, int]) -> None:
    cache = tmp_path / "cache"
    cold = _run(_state(auditee_repo, report_pdf, cache))
    with closing(sqlite3.connect(cache / FACTS_DB)) as conn, conn:
        conn.execute("UPDATE entries SET body = '{not json'")
    rebuilt = _run(_state(auditee_repo, report_pdf, cache))
    assert calls == {"acquire": 2, "ingest_report": 2, "find_diagrams": 2}
    # (The repo's parse finding counts per-file AST cache hits in its rationale, so only
    # its evidence ids are compared.)
    assert _ids(rebuilt) == _ids(cold)
    assert rebuilt["doc"] == cold["doc"] and rebuilt["vision"] == cold["vision"]
    (cache / FACTS_DB).write_bytes(b"this is not a database" * 100)
    assert _ids(_run(_state(auditee_repo, report_pdf, cache))) == _ids(cold)
    assert _ids(_run(_state(auditee_repo, report_pdf, cache))) == _ids(cold)  # cached again
    assert calls == {"acquire": 3, "ingest_report": 3, "find_diagrams": 3}


def _cli(args: list[str]) -> Any:
    from typer.testing import CliRunner

    from automaton_auditor.cli import app

    return CliRunner().invoke(app, args)


def _files(out: Path) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    import json

    report = json.loads((_dir(out) / "report.json").read_text(encoding="utf-8"))
    report.pop("generated_at")
    markdown = [line for line in (_dir(out) / "report.md").read_text().splitlines()
                if not line.startswith("| Date |")]
    manifest = json.loads((_dir(out) / "run_manifest.json").read_text(encoding="utf-8"))
    return report, markdown, manifest


def test_unchanged_audit_is_answered_without_the_graph(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from automaton_auditor import graph

    args = [str(auditee_repo), str(report_pdf), "-q", "--output-dir"]
    assert _cli([*args, str(tmp_path / "cold")]).exit_code == 0
    cold_report, cold_md, cold_manifest = _files(tmp_path / "cold")

    def no_graph(*_: Any, **__: Any) -> Any:
        raise AssertionError("the graph ran")

    monkeypatch.setattr(graph, "compile_graph", no_graph)
    assert _cli([*args, str(tmp_path / "warm")]).exit_code == 0
    warm_report, warm_md, warm_manifest = _files(tmp_path / "warm")
    assert warm_report == cold_report  # same evidence ids, scores, run id: the same result
    assert warm_md == cold_md
    assert warm_manifest["reused_result"] is True and "reused_result" not in cold_manifest
    assert warm_manifest["run_id"] == cold_manifest["run_id"] == cold_report["run_id"]

    # --no-cache, a changed rubric and a new commit all run the graph again.
    assert _cli([*args, str(tmp_path / "nc"), "--no-cache"]).exit_code == 3
    rubric = load_rubric().model_dump()
    rubric["dimensions"][0]["name"] = "Renamed"
    path = tmp_path / "rubric.json"
    path.write_text(__import__("json").dumps(rubric), encoding="utf-8")
    assert _cli([*args, str(tmp_path / "r"), "--rubric", str(path)]).exit_code == 3
    _commit(auditee_repo)
    assert _cli([*args, str(tmp_path / "c")]).exit_code == 3


def test_head_read_without_git_is_the_commit_a_clone_audits(auditee_repo: Path,
                                                            tmp_path: Path) -> None:
    from automaton_auditor.forensics.git.acquire import GitLimits, acquire, parse_target
    from automaton_auditor.forensics.git.head import local_head

    limits = GitLimits()
    for step, checkout in enumerate((None, ["checkout", "-q", "--detach", "HEAD~1"])):
        if checkout:
            subprocess.run(["git", *checkout], cwd=auditee_repo, check=True,
                           capture_output=True)
        cloned = acquire(parse_target(str(auditee_repo), limits), tmp_path / str(step), limits)
        assert local_head(auditee_repo) == cloned.commit


def test_report_read_in_a_second_process_gives_the_same_evidence(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from automaton_auditor.forensics import sandbox
    from automaton_auditor.forensics.pdf import prefetch as cache_prefetch
    from automaton_auditor.nodes.limits import reader_bounds, report_limits, vision_limits
    from automaton_auditor.rubric import concept_terms

    rubric = load_rubric()
    state = _state(auditee_repo, report_pdf, None, rubric)
    settings = Settings()
    on_demand = detectives.doc_analyst(state)  # type: ignore[arg-type]
    started: list[str] = []
    real_start = sandbox.start

    def counted(task: str, *args: Any) -> Any:
        started.append(task)
        return real_start(task, *args)

    monkeypatch.setattr(sandbox, "start", counted)

    def prefetch(path: Path) -> None:
        cache_prefetch.prefetch_report(str(path), concept_terms(rubric), report_limits(settings),
                                       vision_limits(settings), reader_bounds(settings), None)

    prefetch(report_pdf)
    assert started == ["doc", "vision"]
    prefetched = detectives.doc_analyst(state)  # type: ignore[arg-type]
    assert started == ["doc", "vision"]  # the detective took the prefetched read
    for update in (on_demand, prefetched):
        update.pop("timings")
    assert prefetched == on_demand
    cache_prefetch.cancel_all()

    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 200)
    prefetch(broken)
    bad_state = _state(auditee_repo, broken, None, rubric)
    degraded = detectives.doc_analyst(bad_state)  # type: ignore[arg-type]
    assert started == ["doc", "vision"] * 2
    assert degraded["detective_status"]["doc"].state == "degraded"
    assert any(e.found is False and "broken.pdf" in e.rationale
               for e in degraded["evidences"]["doc"])
    cache_prefetch.cancel_all()
