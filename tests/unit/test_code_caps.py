"""The code pass is bounded by a count and a size of Python files, taken in path order, and
says when it read only part of them; module look-ups are indexed, not scanned."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.forensics.code import analyze
from automaton_auditor.forensics.code.analyze import code_findings, code_warnings, within_caps
from automaton_auditor.forensics.code.callgraph import CallGraph

from .test_code_ast_graph import write_repo

MODULE = "import subprocess\n\ndef run(x):\n    return subprocess.run(['git', x])\n"


def test_python_files_past_the_count_cap_are_left_out_in_path_order(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"b.py": MODULE, "a.py": MODULE, "c.py": MODULE,
                                  "README.md": "# r\n", "tests/test_x.py": MODULE})
    kept, total = within_caps(tmp_path, files, max_files=2)
    assert total == 3  # tests are never audited, so never counted
    assert sorted(kept) == ["README.md", "a.py", "b.py", "tests/test_x.py"]
    assert within_caps(tmp_path, files, max_files=3) == (files, 3)


def test_python_files_past_the_size_cap_are_left_out(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"a.py": MODULE, "b.py": MODULE * 3, "c.py": MODULE})
    kept, total = within_caps(tmp_path, files, max_bytes=len(MODULE) * 2)
    assert (sorted(kept), total) == (["a.py"], 3)  # b.py passes the size: it and c.py out


def test_a_capped_code_pass_is_a_warning_and_the_same_facts_each_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = write_repo(tmp_path, {f"pkg/m{i}.py": MODULE for i in range(5)})
    monkeypatch.setattr(analyze, "within_caps", lambda repo, files: within_caps(
        repo, files, max_files=3))
    findings, _ = code_findings(tmp_path, files)
    parsed = next(f for f in findings if f.goal == "Every Python file parses")
    assert (parsed.data["python_files"], parsed.data["python_total"]) == (3, 5)
    assert "2 more were not analysed" in parsed.rationale
    [line] = code_warnings(findings)
    assert line.startswith("warning: the repository has 5 Python files to audit; only the "
                           "first 3 in path order were analysed")
    assert code_findings(tmp_path, files)[0] == findings
    assert code_warnings(code_findings(tmp_path, files[:3])[0]) == []


class _Scanned(dict[str, str]):
    """A module table that counts full scans of itself (one per look-up is quadratic)."""

    scans = 0

    def items(self):  # type: ignore[no-untyped-def]
        _Scanned.scans += 1
        return super().items()


def test_imports_are_resolved_without_scanning_every_module() -> None:
    facts = {f"src/pkg/m{i}.py": {"imports": {"prev": f"pkg.m{i - 1}.run"}}
             for i in range(400)}
    graph = CallGraph(facts)
    graph.modules = _Scanned(graph.modules)
    for i in range(400):
        assert graph.module_files(f"pkg.m{i}", f"src/pkg/m{i}.py") == (f"src/pkg/m{i}.py",)
        assert graph.module_files(f"src.pkg.m{i}", "x.py") == (f"src/pkg/m{i}.py",)
    assert graph.module_files("m3", "x.py") == ("src/pkg/m3.py",)
    assert graph.module_files("nowhere.m3", "x.py") == ()
    assert _Scanned.scans == 0  # answered from the index built once
