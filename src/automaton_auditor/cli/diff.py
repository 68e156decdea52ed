"""`audit diff OLD NEW`: two audits compared (run ids, report.json files or the folders that
hold them); exit 1 on a regression. Also how `audit run --baseline FILE` reads and judges
its baseline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from automaton_auditor.cli.errors import fail
from automaton_auditor.exits import ExitCode

if TYPE_CHECKING:
    from automaton_auditor.state import AuditReport

MIN_WIDTH, MAX_WIDTH = 60, 120


def load_audit(ref: str) -> AuditReport:
    """The audit `ref` names: a report.json, a folder holding one, or a run id; an
    unusable ref ends the command with one `error:` line (exit 2)."""
    from automaton_auditor.output.document import ReportFileError, load_report

    path = Path(ref)
    if path.is_dir():
        path = path / "report.json"
    try:
        if path.suffix == ".json" or path.exists():
            return load_report(path)
        return _run_report(ref)
    except ReportFileError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None


def _run_report(run_id: str) -> AuditReport:
    from automaton_auditor import service
    from automaton_auditor.state import final_report_of
    from automaton_auditor.storage.runs import RunError

    try:
        info = service.load_run(run_id)
    except RunError as exc:
        raise fail(f"{exc} (nor a report.json file)", ExitCode.INPUT) from None
    report = final_report_of(info.values)
    if report is None or not info.finished:
        raise fail(f"run {run_id} has no finished report ({info.status})", ExitCode.INPUT)
    return report


def terminal_width() -> int:
    """The terminal's width, kept between 60 and 120 columns (80 in pipes)."""
    return max(MIN_WIDTH, min(MAX_WIDTH, shutil.get_terminal_size((80, 24)).columns))


def diff(
    old: Annotated[str, typer.Argument(help="The baseline: a run id, a report.json, or its "
                                            "folder.")],
    new: Annotated[str, typer.Argument(help="The audit to compare with it (same forms).")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")
                           ] = False,
) -> None:
    """Compare two audits: changed scores, new and resolved failure facts. Exit 1 when NEW
    regressed (a criterion lower, or a new failure fact at least as confident as the
    baseline)."""
    from automaton_auditor.output.diff import diff_document, diff_reports, render_diff

    result = diff_reports(load_audit(old), load_audit(new))
    if json_output:
        typer.echo(json.dumps(diff_document(result), indent=2, ensure_ascii=False))
    else:
        typer.echo(render_diff(result, terminal_width()), nl=False)
    raise typer.Exit(ExitCode.FAIL_UNDER if result.regression else ExitCode.OK)
