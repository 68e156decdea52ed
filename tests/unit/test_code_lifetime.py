"""A clone whose TemporaryDirectory is removed as its function returns the path: deleted
before use, never "removed after use" (`forensics.code.lifetime`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# Bnobody47/The-Auditor@interim src/tools/repo_tools.py, shortened: the object is a local
DROPPED = '''
import subprocess
import tempfile
from pathlib import Path


def clone(url):
    tmp_dir = tempfile.TemporaryDirectory()
    target = Path(tmp_dir.name) / "repo"
    subprocess.run(["git", "clone", url, str(target)], check=True)
    return target
'''

# Azazh/the-automaton-auditor@interim src/tools/repo_tools.py, shortened
WITH_BLOCK = '''
import subprocess
import tempfile


def clone(url):
    with tempfile.TemporaryDirectory() as temp_dir:
        try:
            subprocess.run(["git", "clone", url, temp_dir], check=True)
            return temp_dir
        except subprocess.CalledProcessError as e:
            raise RuntimeError(e.stderr)
'''


def _facets(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"tools.py": text})
    findings = code_findings(tmp_path, names)[0]
    return (by_facet(findings, "safety.clone_cleanup"),
            by_facet(findings, "safety.clone_deleted_early"))


def test_a_returned_path_of_a_dropped_temporary_directory_is_deleted_before_use(
        tmp_path: Path) -> None:
    for name, text, made, ret in (("dropped", DROPPED, 8, 11), ("with", WITH_BLOCK, 7, 10)):
        cleanup, early = _facets(tmp_path / name, text)
        assert not cleanup.found, name
        assert cleanup.rationale.startswith("Removed before use"), name
        assert early.found and early.pattern == "failure" and not early.security, name
        assert early.data["early"] == sorted([f"tools.py:{made}", f"tools.py:{ret}"]), name
        assert f"tools.py:{ret}: return" in (early.content or ""), name


def test_a_directory_that_lives_while_the_caller_uses_it_is_not_deleted_early(
        tmp_path: Path) -> None:
    kept_alive = {
        # a context manager yields the path: the caller works inside the with
        "yielded": WITH_BLOCK.replace("import tempfile\n",
                                      "import tempfile\nfrom contextlib import contextmanager"
                                      "\n").replace("def clone", "@contextmanager\ndef clone"
                                                    ).replace("return temp_dir",
                                                              "yield temp_dir"),
        # the object goes back with the path: it lives as long as the caller keeps it
        "handed": DROPPED.replace("return target", "return tmp_dir, target"),
        # the clone is used inside the block, only its summary leaves
        "used": WITH_BLOCK.replace("return temp_dir", "return len(temp_dir)"),
    }
    for name, text in kept_alive.items():
        cleanup, early = _facets(tmp_path / name, text)
        assert not early.found, name
        assert cleanup.found and cleanup.data["early"] == [], name
