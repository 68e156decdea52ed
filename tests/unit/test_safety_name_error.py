"""A clone made through a name the module never defines or imports raises NameError before
it clones (Addisu-Taye: ``import git`` then ``Repo.clone_from(...)``): it sandboxes nothing."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

CLONE = '''
import tempfile
import IMPORT


def clone_repo_sandboxed(repo_url):
    temp_dir = tempfile.TemporaryDirectory(prefix="auditor_repo_")
    try:
        Repo.clone_from(repo_url, temp_dir.name)
        return temp_dir.name
    except Exception as e:
        temp_dir.cleanup()
        raise Exception(f"Git Clone Failed: {str(e)}")
'''


def test_a_clone_through_a_name_never_imported_sandboxes_nothing(tmp_path: Path) -> None:
    files = write_repo(tmp_path / "a", {"tools.py": CLONE.replace("IMPORT", "git")})
    sandbox = by_facet(code_findings(tmp_path / "a", files)[0], "safety.clone_sandbox")
    assert not sandbox.found and sandbox.rationale.startswith("No clone runs, so none is ")
    assert ("The clone at tools.py:9 raises NameError: `Repo` is never defined or imported "
            "there, so it clones nothing.") in sandbox.rationale


def test_the_same_clone_with_the_name_imported_is_sandboxed(tmp_path: Path) -> None:
    files = write_repo(tmp_path / "b", {"tools.py": CLONE.replace("import IMPORT",
                                                                  "from git import Repo")})
    sandbox = by_facet(code_findings(tmp_path / "b", files)[0], "safety.clone_sandbox")
    assert sandbox.found and "NameError" not in sandbox.rationale
