"""`audit resume`, `audit replay` and `audit runs`: the checkpointed runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from automaton_auditor.cli.errors import fail, finish
from automaton_auditor.cli.flags import score_bound
from automaton_auditor.cli.outputs import check_output_dir
from automaton_auditor.exits import ExitCode
from automaton_auditor.text import printable


def run_database() -> str | None:
    """The shared run database of the layered settings (`database_url`, env
    AUDITOR_DATABASE_URL); None: ``runs.sqlite`` in the cache directory."""
    from automaton_auditor.cli.flags import resolve_from_flags

    return resolve_from_flags({}).settings.database_url


def resume(
    run_id: Annotated[str, typer.Argument(help="The run id (see `audit runs`).")],
    json_output: Annotated[bool, typer.Option("--json", help="Print only the JSON report.")
                           ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    fail_under: Annotated[float | None, typer.Option(
        min=0, max=5, callback=score_bound,
        help="Exit 1 when the overall score is below this.")] = None,
) -> None:
    """Resume an interrupted or failed audit from its last completed step."""
    from automaton_auditor import service
    from automaton_auditor.cli.run import progress_callback
    from automaton_auditor.storage.checkpoints import run_lock
    from automaton_auditor.storage.runs import RunError

    database_url = run_database()
    try:
        info = service.load_run(run_id, database_url=database_url)
    except RunError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    if not (quiet or json_output) and not info.finished:
        typer.echo(f"run {run_id}: resuming ({info.status})", err=True)
    elif not (quiet or json_output) and service.run_status(info.values, True) == "failed":
        typer.echo(f"run {run_id}: failed; running its detectives again", err=True)
    dims = len((info.values.get("rubric") or {}).get("dimensions") or [])
    progress, on_update = progress_callback(quiet or json_output, 3 * dims)
    try:  # a shared run that a worker has in hand is not run twice
        with run_lock(database_url, run_id, wait=False), progress:
            outcome = service.resume_audit(run_id, gates=service.Gates(fail_under),
                                           on_update=on_update, database_url=database_url)
    except RunError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    finish(outcome, json_output, quiet)


def replay(
    run_id: Annotated[str, typer.Argument(help="The run id (see `audit runs`).")],
    rubric: Annotated[Path | None, typer.Option(
        help="Rubric whose synthesis rules (and wording) to apply; same dimension ids.")] = None,
    output_dir: Annotated[Path | None, typer.Option(
        help="Where to write the re-rendered report (default: the run's).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print only the JSON report.")
                           ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary table.")] = False,
    fail_under: Annotated[float | None, typer.Option(
        min=0, max=5, callback=score_bound,
        help="Exit 1 when the overall score is below this.")] = None,
) -> None:
    """Re-rule and re-render a judged run's report from its checkpoint; calls no model."""
    from automaton_auditor import service
    from automaton_auditor.rubric import RubricError, load_rubric

    try:
        loaded = load_rubric(rubric) if rubric is not None else None
    except RubricError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    if output_dir is not None:
        check_output_dir(output_dir)
    outcome = service.replay_audit(run_id, loaded,
                                   str(output_dir) if output_dir is not None else None,
                                   gates=service.Gates(fail_under), database_url=run_database())
    finish(outcome, json_output, quiet)


def runs(limit: Annotated[int, typer.Option(min=1, help="How many runs to list.")] = 20) -> None:
    """List recent runs, newest first: the full run id, its status (done, incomplete,
    failed, interrupted), the overall score and the target. Plain columns: readable at 80
    columns and in pipes."""
    from automaton_auditor.service import recent_runs, run_status
    from automaton_auditor.state import final_report_of
    from automaton_auditor.storage.runs import RunError

    try:
        listed = recent_runs(limit, database_url=run_database())
    except RunError as exc:  # the shared run database cannot be reached
        raise fail(str(exc), ExitCode.INPUT) from None
    rows = [("run id", "status", "score", "target")]
    for info in listed:
        report = final_report_of(info.values)
        score = f"{report.overall_score:.2f}" if report is not None and report.criteria else "—"
        rows.append((info.run_id, run_status(info.values, info.finished), score, info.target))
    if len(rows) == 1:
        typer.echo("no runs recorded yet", err=True)
        return
    width = max(len(r[0]) for r in rows)
    for run_id, status, score, target in rows:
        # the target is as the run was given it (a path may hold a bidi control or a C1
        # byte), or as a shared run database holds it: shown by the one printable rule
        typer.echo(f"{run_id:<{width}}  {status:<11}  {score:>5}  "
                   f"{printable(target, one_line=True)}")
