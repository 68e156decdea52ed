"""Report descriptions the code's own facts bear out (a clone in a temporary directory, its
removal, a library the code uses) confirmed with the code's lines, as a parallel claim the
graph bears out is."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.names import code_names
from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.state import CodeNames, FeatureClaim, Finding, ReportFacts

CLONE = ("app/clone.py:15: temp_dir = tempfile.TemporaryDirectory()\n"
         "app/clone.py:18: subprocess.run(")


def _fact(facet: str, found: bool, content: str | None = None, confidence: float = 0.9,
          **data: object) -> Finding:
    return Finding(facet=facet, goal=facet, found=found, pattern="success", content=content,
                   location="app/clone.py:18", confidence=confidence,
                   rationale=f"{facet} rationale.", data=data)


SANDBOX = _fact("safety.clone_sandbox", True, CLONE, tempdir_calls=["app/clone.py:15"],
                unproved=[], never_run=[])
EARLY = _fact("safety.clone_deleted_early", False, early=[])
CLEANUP = _fact("safety.clone_cleanup", True, "app/clone.py:28: temp_dir.cleanup()", 0.7,
                kept=[], removed=["app/clone.py:28"], partial=[], alive=[], early=[],
                on_error=[], through_state=False)


def _confirmed(sentence: str, feature: str, code: list[Finding],
               names: CodeNames | None = None) -> list[Finding]:
    facts = ReportFacts(readable=True, claims=[FeatureClaim(feature=feature, page=1,
                                                            sentence=sentence)])
    return [f for f in cross_check(facts, [], None, code=code, names=names).findings
            if f.facet == "claims.features" and f.data.get("verdict") == "confirmed"]


def test_a_clone_said_to_run_in_a_temporary_directory_that_the_code_makes() -> None:
    said = ("Sandboxing Strategy: All repository cloning and analysis is performed inside a "
            "tempfile.TemporaryDirectory() context.")
    found = _confirmed(said, "sandbox_claim", [SANDBOX, EARLY])
    assert len(found) == 1 and found[0].pattern == "success"
    assert "app/clone.py:15: temp_dir = tempfile.TemporaryDirectory()" in (found[0].content
                                                                            or "")
    assert found[0].data["feature"] == "sandbox_claim"
    # a clone not proved sandboxed, a directory removed before use, or another kind of
    # directory than the sentence names: nothing confirmed
    unproved = SANDBOX.model_copy(update={"found": False, "data": {
        **SANDBOX.data, "unproved": ["app/other.py:9"]}})
    assert _confirmed(said, "sandbox_claim", [unproved, EARLY]) == []
    idle = SANDBOX.model_copy(update={"data": {**SANDBOX.data, "never_run": ["app/x.py:70"]}})
    assert _confirmed(said, "sandbox_claim", [idle, EARLY]) == []
    early = EARLY.model_copy(update={"found": True})
    assert _confirmed(said, "sandbox_claim", [SANDBOX, early]) == []
    mkdtemp = SANDBOX.model_copy(update={"content": "app/clone.py:15: d = tempfile.mkdtemp()"})
    assert not [f for f in _confirmed(said, "sandbox_claim", [mkdtemp, EARLY])]
    # a sentence that says the directory is removed needs the removal too
    removed = said + " It is cleaned up automatically."
    assert _confirmed(removed, "sandbox_claim", [SANDBOX, EARLY]) == []
    assert len(_confirmed(removed, "sandbox_claim", [SANDBOX, EARLY, CLEANUP])) == 1
    # a plan, or what the system rewards in the code it audits, confirms nothing
    assert _confirmed("We will clone into a tempfile.TemporaryDirectory().", "sandbox_claim",
                      [SANDBOX, EARLY]) == []
    assert _confirmed("Security Scanner: detects os.system calls and rewards sandboxed git "
                      "operations (tempfile).", "sandbox_claim", [SANDBOX, EARLY]) == []


def test_a_cleanup_said_that_every_path_of_the_code_makes() -> None:
    said = "The cloned repository's temporary directory is purged after auditing."
    found = _confirmed(said, "cleanup_claim", [SANDBOX, EARLY, CLEANUP])
    assert len(found) == 1 and "temp_dir.cleanup()" in (found[0].content or "")
    kept = CLEANUP.model_copy(update={"data": {**CLEANUP.data, "kept": ["app/git.py:12"]}})
    assert _confirmed(said, "cleanup_claim", [SANDBOX, EARLY, kept]) == []
    # a removal by a mechanism the code does not use (mkdtemp and atexit, where the code
    # removes a TemporaryDirectory)
    assert _confirmed("Git clone isolation | tempfile.mkdtemp() - unique per run, "
                      "auto-cleanup registered via atexit", "cleanup_claim",
                      [SANDBOX, EARLY, CLEANUP]) == []


def test_a_library_said_to_be_used_that_the_code_uses_for_the_job(tmp_path: Path) -> None:
    (tmp_path / "scan.py").write_text(
        "import ast\n\n\ndef scan(text):\n    tree = ast.parse(text)\n"
        "    return [n for n in ast.walk(tree)]\n")
    (tmp_path / "hint.py").write_text("import ast\n\n\ndef f(tree: ast.AST) -> None:\n"
                                      "    return None\n")
    said = "AST Parsing: instead of regex, we use Python's built-in ast module to analyze code."
    names = code_names(tmp_path, ["scan.py"])
    found = _confirmed(said, "library_use", [], names)
    assert len(found) == 1 and "scan.py:5: tree = ast.parse(text)" in (found[0].content or "")
    # an annotation of ast.AST parses nothing
    assert _confirmed(said, "library_use", [], code_names(tmp_path, ["hint.py"])) == []
    assert _confirmed("We could use Python's ast module.", "library_use", [], names) == []
