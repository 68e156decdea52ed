"""The `audit` command group: `audit TARGET REPORT` (the default command, `run`) beside the
subcommands `batch`, `resume`, `replay`, `runs` and `cache`.

`DefaultGroup` sends any first argument that is not a subcommand name to `run`, so
``audit <repo> <pdf>`` keeps working exactly as before; ``audit run <repo> <pdf>`` is the
same thing spelled out (use it, or ``./batch``, for a local folder named like a subcommand).
Only Typer is imported here; every command imports what it needs when it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

DEFAULT_COMMAND = "run"
APP_HELP = (
    "Audit a LangGraph repository and its architecture report like a court.\n\n"
    "audit TARGET REPORT [OPTIONS] runs one audit (the default command, `run`; "
    "`audit run --help` lists its options). Other commands: batch (many audits from a CSV/TSV "
    "file), resume / replay / runs (checkpointed runs), cache (show or clear the caches)."
)


class DefaultGroup(TyperGroup):
    """A group whose unknown first argument (a target, or an option of the default command)
    falls through to the default command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Insert the default command's name unless a subcommand or help is asked for."""
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)


def _cli() -> Any:
    from automaton_auditor import cli

    return cli


def resume(
    run_id: Annotated[str, typer.Argument(help="The run id (see `audit runs`).")],
    json_output: Annotated[bool, typer.Option("--json", help="Print only the JSON report.")
                           ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    fail_under: Annotated[float | None, typer.Option(
        min=0, max=5, help="Exit 1 when the overall score is below this.")] = None,
) -> None:
    """Resume an interrupted or failed audit from its last completed step."""
    from automaton_auditor.config import Settings
    from automaton_auditor.runs import RunError, load_run

    cli = _cli()
    try:
        info = load_run(run_id)
    except RunError as exc:
        raise cli._fail(str(exc), cli.EXIT_INPUT) from None
    if info.finished:
        raise cli._fail(f"run {run_id} is finished; use `audit replay {run_id}` to re-render "
                        "its report", cli.EXIT_INPUT)
    settings = Settings.from_state(info.values.get("settings"))
    if not (quiet or json_output):
        typer.echo(f"run {run_id}: resuming ({info.status})", err=True)
    dims = len((info.values.get("rubric") or {}).get("dimensions") or [])
    final = cli._run_or_fail(info.values, settings, quiet or json_output, 3 * dims, run_id,
                             resume=True)
    cli._finish(final, json_output, quiet, fail_under)


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
        min=0, max=5, help="Exit 1 when the overall score is below this.")] = None,
) -> None:
    """Re-rule and re-render a judged run's report from its checkpoint; calls no model."""
    from automaton_auditor.rubric import RubricError, load_rubric
    from automaton_auditor.runs import RunError, load_run, replay_state

    cli = _cli()
    try:
        loaded = load_rubric(rubric) if rubric is not None else None
        final = replay_state(load_run(run_id), loaded,
                             str(output_dir) if output_dir is not None else None)
    except (RunError, RubricError) as exc:
        raise cli._fail(str(exc), cli.EXIT_INPUT) from None
    cli._finish(final, json_output, quiet, fail_under)


def runs(limit: Annotated[int, typer.Option(min=1, help="How many runs to list.")] = 20) -> None:
    """List recent runs (newest first) with where each stopped."""
    from rich.console import Console
    from rich.table import Table

    from automaton_auditor.runs import recent_runs

    table = Table("run id", "target", "status", "score")
    for info in recent_runs(limit):
        report = info.values.get("final_report")
        score = f"{report.overall_score:.2f}" if report is not None else ""
        table.add_row(info.run_id, info.target, info.status, score)
    Console().print(table)


cache_app = typer.Typer(help="Show or clear the caches (env AUDITOR_CACHE_DIR moves them).",
                        no_args_is_help=True)


@cache_app.command("show")
def cache_show() -> None:
    """Where the caches live, and what each file holds."""
    from rich.console import Console
    from rich.table import Table

    from automaton_auditor.cache import cache_files, default_cache_dir

    root = default_cache_dir()
    table = Table("file", "holds", "entries", "size", title=str(root))
    for item in cache_files(root):
        entries = "" if item.entries is None else str(item.entries)
        table.add_row(item.name, item.what, entries, f"{item.bytes / 1e6:.1f} MB")
    Console().print(table)


@cache_app.command("clear")
def cache_clear(
    keep_runs: Annotated[bool, typer.Option(
        "--keep-runs", help="Keep run checkpoints (resume/replay still work).")] = False,
) -> None:
    """Delete the cached facts, opinions and (unless --keep-runs) run checkpoints."""
    from automaton_auditor.cache import KNOWN_FILES, clear_cache, default_cache_dir

    root = default_cache_dir()
    names = [n for n in KNOWN_FILES if not (keep_runs and n == "runs.sqlite")]
    removed = clear_cache(root, names)
    typer.echo(f"removed {', '.join(removed) or 'nothing'} from {root}", err=True)


def register(app: typer.Typer) -> None:
    """Add the subcommands to the `audit` app (the default `run` is defined in `cli`)."""
    from automaton_auditor.batch import batch

    app.command("batch")(batch)
    app.command("resume")(resume)
    app.command("replay")(replay)
    app.command("runs")(runs)
    app.add_typer(cache_app, name="cache")
