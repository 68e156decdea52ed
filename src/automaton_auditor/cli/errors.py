"""How a command ends: one `error:` line on stderr and the contract's exit code
(`automaton_auditor.exits`), or the report's summary and exit 0/1."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from automaton_auditor.exits import ExitCode, error_line, note_error, warning_line
from automaton_auditor.text import printable

if TYPE_CHECKING:
    from automaton_auditor.service import Outcome


def fail(message: str, code: int) -> typer.Exit:
    """Print one `error:` line; the caller raises the returned exit."""
    typer.echo(error_line(message), err=True)
    note_error()
    return typer.Exit(code)


def finish(outcome: Outcome, json_output: bool, quiet: bool, *,
           sarif_output: bool = False) -> None:
    """Print what a run produced (JSON or SARIF, or the summary table and the report's path)
    and end the command with the outcome's exit code."""
    from automaton_auditor.output.document import report_json, sarif_json
    from automaton_auditor.state import final_report_of

    final = outcome.final
    report = final_report_of(final)
    if (json_output or sarif_output) and report is not None:
        sys.stdout.write(sarif_json(report) if sarif_output else report_json(report))
        json_output = True  # stdout is for the machine: no summary, no report line
    elif not quiet and report is not None and report.criteria:
        from rich.console import Console

        from automaton_auditor.cli.console import summary_table

        Console().print(summary_table(report))
    for entry in final.get("errors") or []:  # "<source>: warning: <text>"
        source, _, text = str(entry).partition(": ")
        if text.startswith("warning: "):
            typer.echo(warning_line(f"{source}: {text[len('warning: '):]}"), err=True)
    files = final.get("report_files") or {}
    if outcome.code == ExitCode.INPUT:
        raise fail(outcome.message, outcome.code)
    if files and not json_output and not quiet:
        run = f" (run {final['run_id']})" if final.get("run_id") else ""
        # the path is the user's --output-dir, which may hold any character
        typer.echo(f"report: {printable(str(files.get('markdown')), one_line=True)}{run}",
                   err=True)
    for warning in outcome.warnings:  # printed even with --quiet: they change the meaning
        typer.echo(warning_line(warning), err=True)
    if outcome.code in (ExitCode.FAILED, ExitCode.INTERRUPTED):
        raise fail(outcome.message, outcome.code)
    if outcome.code == ExitCode.FAIL_UNDER:
        typer.echo(f"gate failed: {outcome.message}", err=True)
    raise typer.Exit(outcome.code)
