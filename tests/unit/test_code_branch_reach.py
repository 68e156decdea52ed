"""Clone-helper branches chosen by a parameter, read with what the callers pass: a branch no
call site takes gives no fact (MamaMoh: a ``mkdtemp`` fallback every caller skips)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

FALLBACK = '''
import os
import subprocess
import tempfile


def _parent(target_dir):
    if target_dir is None or not target_dir.strip():
        return tempfile.mkdtemp()
    abs_path = os.path.abspath(target_dir)
    cwd = os.getcwd()
    if os.path.normpath(abs_path) == os.path.normpath(cwd):
        return tempfile.mkdtemp()
    return abs_path


def clone_repo(url, target_dir=None):
    path = os.path.join(_parent(target_dir), "repo")
    subprocess.run(["git", "clone", url, path], check=True, timeout=60)
    return path


def investigate(url):
    with tempfile.TemporaryDirectory() as tmpdir:
        return os.listdir(clone_repo(url, tmpdir))
'''


def test_a_temp_dir_made_in_a_branch_no_caller_takes_is_not_charged(tmp_path: Path) -> None:
    """MamaMoh: the ``mkdtemp`` fallbacks run only for None, "" or the working directory,
    and the one caller passes a TemporaryDirectory; it read "Never removed: ... made at
    :33, :38" and quoted the mkdtemp line as the sandbox."""
    files = write_repo(tmp_path / "a", {"tools.py": FALLBACK})
    found = code_findings(tmp_path / "a", files)[0]
    cleanup = by_facet(found, "safety.clone_cleanup")
    assert cleanup.found and "mkdtemp" not in (cleanup.content or "")
    sandbox = by_facet(found, "safety.clone_sandbox")
    assert sandbox.found and "TemporaryDirectory" in (sandbox.content or "")
    assert "mkdtemp" not in (sandbox.content or "")


def test_a_caller_that_leaves_the_default_keeps_the_branch(tmp_path: Path) -> None:
    """One caller that passes no directory takes the ``None`` branch: its temp dir, never
    removed, is charged as before."""
    text = FALLBACK + '''

def quick(url):
    return clone_repo(url)
'''
    files = write_repo(tmp_path / "b", {"tools.py": text})
    cleanup = by_facet(code_findings(tmp_path / "b", files)[0], "safety.clone_cleanup")
    assert not cleanup.found and "Never removed" in cleanup.rationale


SHALLOW = '''
import subprocess
import tempfile


def clone(url, dest, depth=None):
    if depth is None:
        subprocess.run(["git", "clone", url, dest], check=True, timeout=60)
        return dest
    subprocess.run(["git", "clone", "--depth", str(depth), url, dest], check=True)
    return dest


def investigate(url):
    with tempfile.TemporaryDirectory() as tmp:
        return clone(url, tmp)
'''


def test_a_clone_call_in_a_branch_no_caller_takes_is_not_counted(tmp_path: Path) -> None:
    """Beside the clone that runs, a clone call behind ``depth`` that no caller passes is
    neither charged a missing timeout nor counted in the sandbox."""
    files = write_repo(tmp_path / "c", {"tools.py": SHALLOW})
    found = code_findings(tmp_path / "c", files)[0]
    timeouts = by_facet(found, "safety.timeouts")
    assert timeouts.found and timeouts.data["total"] == 1
    sandbox = by_facet(found, "safety.clone_sandbox")
    assert sandbox.found and "branches no caller takes" in sandbox.rationale
