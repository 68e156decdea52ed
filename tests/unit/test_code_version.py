"""One recursive code-version digest: a change to any source file of any package of the
auditor changes it, so no cache serves facts computed by older code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from automaton_auditor.storage.kv import code_version, code_version_of, detective_version

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "automaton_auditor"
ANALYSIS = ["forensics/git", "forensics/code", "forensics/pdf", "forensics/vision",
            "forensics/diagrams", "judging", "nodes", "storage", "output"]


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "automaton_auditor"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_installed_digest_is_the_package_digest() -> None:
    assert code_version() == code_version_of(PACKAGE)
    assert detective_version() != code_version()  # library versions are mixed in


@pytest.mark.parametrize("package", ANALYSIS)
def test_a_changed_source_file_anywhere_changes_the_digest(copy: Path, package: str) -> None:
    before = code_version_of(copy)
    module = sorted(p for p in (copy / package).glob("*.py") if p.name != "__init__.py")[-1]
    module.write_text(module.read_text() + "\n# changed\n")
    assert code_version_of(copy) != before


def test_a_new_module_in_a_subpackage_changes_the_digest(copy: Path) -> None:
    before = code_version_of(copy)
    (copy / "forensics" / "code" / "extra_rule.py").write_text("X = 1\n")
    assert code_version_of(copy) != before


def test_bytecode_does_not_change_the_digest(copy: Path) -> None:
    before = code_version_of(copy)
    cache = copy / "forensics" / "code" / "__pycache__"
    cache.mkdir()
    (cache / "walk.cpython-311.pyc").write_bytes(b"\x00" * 16)
    assert code_version_of(copy) == before
