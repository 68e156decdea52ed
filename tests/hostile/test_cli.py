"""Misusing the command line: usage errors are ONE `error:` line and exit 2 with no report
(nothing was checked); help and version answer on stdout with exit 0."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from tests.hostile.harness import Case, audit, check, run_audit

# (id, arguments after TARGET REPORT, what the error line names, marks)
BAD_OPTIONS = [
    ("unknown-option", ["--bogus"], "--bogus", ()),
    ("fail-under-9", ["--fail-under", "9"], "--fail-under", ()),
    ("fail-under-negative", ["--fail-under", "-1"], "--fail-under", ()),
    ("fail-under-text", ["--fail-under", "abc"], "--fail-under", ()),
    ("max-concurrency-negative", ["--max-concurrency", "-1"], "--max-concurrency", ()),
    ("max-concurrency-zero", ["--max-concurrency", "0"], "--max-concurrency", ()),
    ("depth-negative", ["--depth", "-1"], "--depth", ()),
    ("rubric-without-value", ["--rubric"], "--rubric", ()),
]


@pytest.mark.parametrize(("extra", "needle"),
                         [pytest.param(e, n, id=i, marks=m) for i, e, n, m in BAD_OPTIONS])
def test_bad_option(case: Case, good_repo: Path, good_pdf: Path, extra: list[str],
                    needle: str) -> None:
    check(audit(case, good_repo, good_pdf, *extra), 2, needle=needle, report=False)


def test_upload_pack_option(case: Case, good_pdf: Path) -> None:
    result = run_audit(case, f"--upload-pack=touch {case.canary}", str(good_pdf))
    check(result, 2, needle="--upload-pack", report=False)


def test_target_looks_like_an_option(case: Case, good_pdf: Path) -> None:
    result = run_audit(case, f"-oProxyCommand=touch {case.canary}", str(good_pdf),
                       "--output-dir", str(case.out))
    check(result, 2, report=False)


def test_missing_argument(case: Case, good_repo: Path) -> None:
    result = run_audit(case, str(good_repo), "--output-dir", str(case.out))
    check(result, 2, needle="REPORT", report=False)


@pytest.mark.parametrize("flag", [
    "-h", "--help"])
def test_help(case: Case, flag: str) -> None:
    result = run_audit(case, flag)
    check(result, 0, "quiet", report=False)
    assert "Usage" in result.stdout and "TARGET" in result.stdout, result.describe()


def test_version(case: Case) -> None:
    result = run_audit(case, "--version")
    check(result, 0, "quiet", report=False)
    assert version("automaton-auditor") in result.stdout, result.describe()


def test_output_dir_is_a_file(case: Case, good_repo: Path, good_pdf: Path) -> None:
    blocker = case.root / "out" / "taken"
    blocker.write_text("a file where the reports should go\n")
    result = run_audit(case, str(good_repo), str(good_pdf), "--output-dir", str(blocker), "-q")
    check(result, 2, needle=str(blocker), report=False)


def test_unknown_model_provider(case: Case, good_repo: Path, good_pdf: Path) -> None:
    """A model the auditor cannot reach is an input error before any work (never the
    offline bench in disguise)."""
    check(audit(case, good_repo, good_pdf, "--model", "foo:bar"), 2, needle="foo", report=None)


@pytest.mark.parametrize("command", [["resume", "no-such-run"], ["replay", "no-such-run"],
                                     ["batch", "no-such-pairs.csv"]],
                         ids=["resume", "replay", "batch"])
def test_other_commands_on_missing_input(case: Case, command: list[str]) -> None:
    check(run_audit(case, *command), 2, needle=command[1], report=False)


def test_fail_under_exits_1(case: Case, good_repo: Path, good_pdf: Path) -> None:
    """The only gate: below --fail-under is exit 1, with the full report written."""
    result = audit(case, good_repo, good_pdf, "--fail-under", "5")
    check(result, 1, "any", needle="--fail-under", report=True)
