"""What `audit run` writes and gates beyond the report folder: `--sarif FILE`, `--format`
and `--baseline FILE` (checked before the audit starts, applied after it ends)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from automaton_auditor.cli.errors import fail
from automaton_auditor.exits import ExitCode
from automaton_auditor.safefile import kind_of

if TYPE_CHECKING:
    from automaton_auditor.service import Outcome
    from automaton_auditor.state import AuditReport

OutputFormat = Literal["text", "json", "sarif"]
FORMATS: tuple[OutputFormat, ...] = ("text", "json", "sarif")


def check_format(value: str | None, json_output: bool) -> OutputFormat:
    """The stdout format: `--format`, or json for `--json`; a bad one is a usage error."""
    chosen = value or ("json" if json_output else "text")
    if chosen not in FORMATS or (json_output and chosen != "json"):
        why = ("--json and --format disagree" if chosen in FORMATS
               else f"unknown --format {chosen!r} (choose text, json or sarif)")
        raise fail(why, ExitCode.INPUT)
    return chosen


def check_sarif_path(path: Path | None) -> None:
    """Refuse a `--sarif` path that cannot be written, before any work."""
    if path is None:
        return
    if path.is_dir():
        raise fail(f"--sarif {path}: is a folder, not a file", ExitCode.INPUT)
    try:
        kind = kind_of(path.stat().st_mode)
    except OSError:
        kind = ""  # not there yet: it is created
    if kind:  # a FIFO would block the write after the whole audit ran, forever
        raise fail(f"--sarif {path}: is {kind}, not a regular file", ExitCode.INPUT)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(f"--sarif {path}: cannot create its folder ({exc.strerror})",
                   ExitCode.INPUT) from None


def check_output_dir(path: Path) -> None:
    """Refuse an output folder that cannot hold reports (a file, or a file on its way, or a
    folder this user cannot write), before any work: otherwise the whole audit would run
    and then fail to write its report."""
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None:
        return
    if not existing.is_dir():
        where = "is a file" if existing == path else f"{existing} is a file"
        raise fail(f"--output-dir {path}: {where}, not a folder", ExitCode.INPUT)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise fail(f"--output-dir {path}: {existing} is not writable", ExitCode.INPUT)


def load_baseline(path: Path | None) -> AuditReport | None:
    """The `--baseline` report, read before the audit (a bad file is exit 2)."""
    if path is None:
        return None
    from automaton_auditor.cli.diff import load_audit

    return load_audit(str(path))


def write_sarif(outcome: Outcome, path: Path | None) -> None:
    """Write the run's SARIF to `path` (nothing for a run refused as bad input)."""
    from automaton_auditor.output.document import sarif_json
    from automaton_auditor.state import final_report_of

    report = final_report_of(outcome.final)
    if path is None or report is None or outcome.code == ExitCode.INPUT:
        return
    try:  # non-blocking: a FIFO put there since the check fails at once (ENXIO), never hangs
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            if kind_of(os.fstat(fd).st_mode):
                raise fail(f"--sarif {path}: not a regular file", ExitCode.FAILED)
            out.write(sarif_json(report))
    except OSError as exc:
        raise fail(f"--sarif {path}: cannot write ({exc.strerror})", ExitCode.FAILED) from None


def apply_baseline(outcome: Outcome, baseline: AuditReport | None, name: str) -> Outcome:
    """A finished run that regressed against the baseline exits 1, saying why in one line."""
    from automaton_auditor.output.diff import diff_reports
    from automaton_auditor.state import final_report_of

    report = final_report_of(outcome.final)
    if baseline is None or report is None or outcome.code != ExitCode.OK:
        return outcome
    result = diff_reports(baseline, report)
    if not result.regression:
        return outcome
    written = (outcome.final.get("report_files") or {}).get("json", "<report.json>")
    return replace(outcome, code=ExitCode.FAIL_UNDER, message=(
        f"regression against the baseline {name}: {'; '.join(result.reasons)} "
        f"(details: audit diff {name} {written})"))
