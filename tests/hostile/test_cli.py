"""Misusing the command line: usage errors are ONE `error:` line and exit 2 with no report
(nothing was checked); help and version answer on stdout with exit 0."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.hostile.builders import special, special_at
from tests.hostile.harness import REFUSE_TIMEOUT_S, Case, audit, check, params, run_audit

# (id, arguments after TARGET REPORT, what the error line names, marks)
BAD_OPTIONS = [
    ("unknown-option", ["--bogus"], "--bogus", ()),
    ("fail-under-9", ["--fail-under", "9"], "--fail-under", ()),
    ("fail-under-negative", ["--fail-under", "-1"], "--fail-under", ()),
    ("fail-under-text", ["--fail-under", "abc"], "--fail-under", ()),
    # NaN passed Typer's 0..5 range and the gate never fired (exit 0 whatever the score)
    ("fail-under-nan", ["--fail-under", "nan"], "not a number between 0 and 5", ()),
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


# An --output-dir that cannot hold reports: (id, builder, what the error line says, marks).
# Before, a loop was a RuntimeError traceback (exit 1, the gate's code) and a dangling link
# ran the whole audit, then failed to write its report (exit 3; `audit batch`: a traceback).
BROKEN_OUTPUT_DIRS = [
    ("loop", special_at("reports", "loop"), "is a symlink loop", ()),
    ("dangling", special_at("reports", "dangling"), "is a dangling symlink", ()),
    ("under-loop", lambda case: special(case.sandbox / "reports", "loop") / "sub",
     "is a symlink loop", ()),
    ("under-dangling", lambda case: special(case.sandbox / "reports", "dangling") / "sub",
     "is a dangling symlink", ()),
    # a folder no file system takes, under one not there yet: lstat says only "no such file"
    ("name-too-long", lambda case: case.sandbox / "new" / ("x" * 300), "longer than", ()),
]


@pytest.mark.parametrize("mode", [[], ["--dry-run"]], ids=["run", "dry-run"])
@pytest.mark.parametrize(("build", "rule"), params(BROKEN_OUTPUT_DIRS))
def test_output_dir_is_a_broken_link(case: Case, good_repo: Path, good_pdf: Path,
                                     build: Callable[[Case], Path], rule: str,
                                     mode: list[str]) -> None:
    """Refused before anything is cloned, as an --output-dir that is a file is."""
    out = build(case)
    result = run_audit(case, str(good_repo), str(good_pdf), "--output-dir", str(out), "-q",
                       *mode, timeout=REFUSE_TIMEOUT_S)
    check(result, 2, needle=rule, report=False)
    assert str(out) in result.lines()[0], result.describe()


@pytest.mark.parametrize(("build", "rule"), params(BROKEN_OUTPUT_DIRS[:2]))
def test_batch_output_dir_is_a_broken_link(case: Case, good_repo: Path, good_pdf: Path,
                                           build: Callable[[Case], Path], rule: str) -> None:
    pairs = case.sandbox / "pairs.csv"
    pairs.write_text(f"target,report\n{good_repo},{good_pdf}\n")
    result = run_audit(case, "batch", str(pairs), "--output-dir", str(build(case)), "-q",
                       timeout=REFUSE_TIMEOUT_S)
    check(result, 2, needle=rule, report=False)


@pytest.mark.parametrize("command", ["run", "batch"])
def test_a_home_that_does_not_exist_is_not_created(case: Case, good_repo: Path,
                                                   good_pdf: Path, command: str) -> None:
    """HOME=/nonexistent (a container's root, a service user) with no AUDITOR_CACHE_DIR: the
    platform cache lies under a home that is not there. The audit (and a batch) falls back
    as for a read-only home (one warning line, the cache under TMPDIR) and creates no home."""
    home = case.root / "no-home"
    case.extra_env.update(HOME=str(home), AUDITOR_CACHE_DIR="", XDG_CACHE_HOME="")
    if command == "run":
        result = audit(case, good_repo, good_pdf)
    else:
        pairs = case.sandbox / "pairs.csv"
        pairs.write_text(f"target,report\n{good_repo},{good_pdf}\n")
        result = run_audit(case, "batch", str(pairs), "--output-dir", str(case.out), "-q")
    check(result, 0, "warning", needle="the home directory does not exist", report=True)
    assert not home.exists(), result.describe()
    assert f"using {case.root / 'tmp'}" in result.lines()[0], result.describe()


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


def _deep_report(case: Case) -> Path:
    path = case.sandbox / "report.json"
    path.write_text('{"criteria": ' + "[" * 200_000 + "]" * 200_000 + "}")
    return path


# A report.json read back is hostile input like a rubric: (id, builder, the rule named,
# marks).
# Before, a deep one was a RecursionError traceback, a FIFO hung in open() and /dev/zero
# was read until memory ran out.
BAD_REPORT_JSON = [
    ("deep", _deep_report, "nested deeper than", ()),
    ("fifo", special_at("report.json", "fifo"), "not a regular file", ()),
    ("dev-zero", special_at("report.json", "dev-zero"), "not a regular file", ()),
    ("two-gib", special_at("report.json", "sparse"), "larger than", ()),
]


@pytest.mark.parametrize(("build", "rule"), params(BAD_REPORT_JSON))
def test_baseline_is_hostile_input(case: Case, good_repo: Path, good_pdf: Path,
                                   build: Callable[[Case], Path], rule: str) -> None:
    """`--baseline FILE` is read before the audit starts: a bad one is refused at once."""
    baseline = build(case)
    result = audit(case, good_repo, good_pdf, "--baseline", str(baseline),
                   timeout=REFUSE_TIMEOUT_S)
    check(result, 2, needle=rule, report=False)
    assert str(baseline) in result.lines()[0], result.describe()


@pytest.mark.parametrize(("build", "rule"), params(BAD_REPORT_JSON))
def test_diff_input_is_hostile_input(case: Case, build: Callable[[Case], Path],
                                     rule: str) -> None:
    """`audit diff OLD NEW` reads both files the same way."""
    old = build(case)
    result = run_audit(case, "diff", str(old), str(old), timeout=REFUSE_TIMEOUT_S)
    check(result, 2, needle=rule, report=False)


@pytest.mark.parametrize(("kind", "rule"), [("fifo", "is a FIFO"), ("dev-zero", "is a device"),
                                            ("loop", "is a symlink loop")])
def test_sarif_to_a_special_file(case: Case, good_repo: Path, good_pdf: Path, kind: str,
                                 rule: str) -> None:
    """`--sarif` naming a FIFO is refused before the audit: it used to run the whole audit,
    then block forever opening the FIFO to write (a symlink loop: then exit 3)."""
    sarif = special_at("out.sarif", kind)(case)
    result = audit(case, good_repo, good_pdf, "--sarif", str(sarif), timeout=REFUSE_TIMEOUT_S)
    check(result, 2, needle=rule, report=False)
