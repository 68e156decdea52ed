"""`audit batch PAIRS.csv`: many audits from a CSV/TSV file, a few at a time, one summary
table (the batch itself runs in `automaton_auditor.batch`, or on `audit worker`s through a
queue, `automaton_auditor.queue`, with `--queue URL`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from automaton_auditor.batch import (
    BatchFileError,
    Job,
    JobResult,
    criteria_ids,
    read_jobs,
    run_batch,
    worst_exit,
    write_summary,
)
from automaton_auditor.cli.errors import fail
from automaton_auditor.cli.flags import score_bound
from automaton_auditor.cli.outputs import check_output_dir
from automaton_auditor.exits import ExitCode
from automaton_auditor.text import printable

if TYPE_CHECKING:
    from automaton_auditor.settings import Settings


def _short(target: str) -> str:
    """owner/name for URLs, the folder name for local paths."""
    from automaton_auditor.output.files import target_slug

    return target_slug(target) if "://" in target else Path(target).name or target


def summary_table(results: list[JobResult], width: int = 80) -> Table:
    """The Rich table of a batch: one row per audit. Criterion columns (C1..Cn, named in the
    caption) are shown only when they fit in `width`; the CSV and JSON always hold them."""
    from automaton_auditor.cli.console import shown  # here: `audit --help` loads no pydantic

    ids = criteria_ids(results)
    heads = [f"C{n}" for n in range(1, len(ids) + 1)]
    show = 60 + 4 * len(ids) <= width
    legend = " · ".join(f"{h} {i}" for h, i in zip(heads, ids, strict=True)) if show else \
        "criterion scores: batch_summary.csv"
    table = Table(title=f"batch: {len(results)} audits, exit {worst_exit(results)}",
                  caption=legend or None)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("target", overflow="fold", min_width=12, ratio=2)
    table.add_column("overall", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for head in heads if show else []:
        table.add_column(head, justify="right", no_wrap=True)
    for name in ("time", "exit"):
        table.add_column(name, justify="right", no_wrap=True)
    queued = any(r.worker for r in results)  # a queued batch names each row's worker
    if queued:
        table.add_column("worker", overflow="fold", min_width=8, ratio=1)
    table.add_column("error", overflow="fold", min_width=10, ratio=1)
    for r in results:
        # a failed audit's partial score is no verdict on the submission
        overall = "—" if r.overall is None or r.status == "failed" else f"{r.overall:.2f}"
        scores = [_score(r.criteria.get(i, "")) for i in ids] if show else []
        worker = [r.worker + (" (resumed)" if r.resumed_from else "")] if queued else []
        # the target and its error come from the pairs file: shown, not obeyed
        table.add_row(str(r.row), shown(_short(r.target)), overall, r.status, *scores,
                      f"{r.seconds:.0f}s", str(r.exit_code), *worker, shown(r.error))
    return table


def _score(value: int | str | None) -> str:
    return "—" if value is None else str(value)


def batch(
    pairs: Annotated[Path, typer.Argument(
        help="CSV or TSV file: target, report[, rubric] per row (header and # lines optional; "
             "relative paths are read against the file's folder).")],
    parallel: Annotated[int, typer.Option("--parallel", "-j", min=1,
                                          help="Audits run at once.")] = 2,
    output_dir: Annotated[Path | None, typer.Option(
        help="Where reports and the summary go (default and config: `audit config`).")
    ] = None,
    rubric: Annotated[Path | None, typer.Option(help="Rubric for rows without one.")] = None,
    model: Annotated[str | None, typer.Option(help="Judge model (env AUDITOR_MODEL).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the caches.")] = False,
    ocr: Annotated[bool, typer.Option(
        "--ocr", help="Read scanned reports by offline OCR (the 'ocr' extra).")] = False,
    reuse_opinions: Annotated[bool, typer.Option(
        "--reuse-opinions", help="Reuse cached model answers.")] = False,
    fail_under: Annotated[float | None, typer.Option(
        min=0, max=5, callback=score_bound,
        help="An audit below this score counts as exit 1.")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print only the JSON summary on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No table, no progress.")] = False,
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Run the rows on `audit worker`s through this Redis broker "
                        "(redis://host:6379/0; config queue_url). Paths must be the same on "
                        "every worker.")] = None,
    queue_timeout: Annotated[float | None, typer.Option(
        "--queue-timeout",
        help="With --queue: seconds to wait for the rows; rows no worker finished by then "
             "are failed rows (exit 3) and their tasks expire (config queue_timeout_s; "
             "default: the visibility timeout times rows + 1).")] = None,
) -> None:
    """Audit many (target, report) pairs from a CSV/TSV file, a few at a time."""
    from automaton_auditor.cli.flags import resolve_from_flags, writable_cache

    try:
        jobs = read_jobs(pairs, output_dir or Path("audit"))
    except BatchFileError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    flags = {"output_dir": str(output_dir) if output_dir else None,
             "rubric_path": str(rubric) if rubric else None, "model": model,
             "no_cache": no_cache, "reuse_opinions": reuse_opinions, "queue_url": queue,
             "queue_timeout_s": queue_timeout, "ocr": ocr}
    settings = resolve_from_flags(flags, [j.target for j in jobs]).settings
    if output_dir is None:  # rows were placed under the default; follow the settings
        jobs = read_jobs(pairs, Path(settings.output_dir))
    output_dir = Path(settings.output_dir)
    check_output_dir(output_dir)  # before any row runs, as `audit run` does
    if not settings.queue_url:  # queued rows use their workers' own caches
        settings = writable_cache(settings)
    options = {"settings": settings.to_state(), "fail_under": fail_under,
               "database_url": settings.database_url}

    def progress(result: JobResult) -> None:
        if not (quiet or json_output):
            typer.echo(f"[{result.row}/{len(jobs)}] exit {result.exit_code} "
                       f"{result.seconds:.1f}s {printable(result.target, one_line=True)}",
                       err=True)

    results, stopped, code = _run(jobs, options, parallel, settings, progress)
    try:
        files = write_summary(results, output_dir)
    except OSError as exc:  # a full disk: the audits' own reports are written already
        raise fail(f"cannot write the batch summary under {output_dir} ({exc.strerror})",
                   ExitCode.FAILED) from None
    if json_output:
        typer.echo(Path(files["json"]).read_text(encoding="utf-8"), nl=False)
    elif not quiet:
        from rich.console import Console

        console = Console()
        console.print(summary_table(results, console.width))
        # under the user's --output-dir, which may hold any character (as `report:` is)
        typer.echo(f"summary: {printable(files['csv'], one_line=True)} and "
                   f"{printable(files['json'], one_line=True)}", err=True)
    if stopped:  # the summary holds every row, those the wait gave up on included
        raise fail(stopped, code)
    raise typer.Exit(worst_exit(results))


def _run(jobs: list[Job], options: dict[str, Any], parallel: int, settings: Settings,
         progress: Any) -> tuple[list[JobResult], str, int]:
    """The batch in local worker processes, or on the queue's workers when one is set; with
    why a queued batch stopped waiting before every row finished ("": it did not) and the
    exit code that goes with it."""
    if not settings.queue_url:
        return run_batch(jobs, options, parallel, progress), "", 0
    from automaton_auditor.exits import interruption, warning_line
    from automaton_auditor.queue.app import QueueError
    from automaton_auditor.queue.submit import run_queued, wait_limit

    # Workers use their own database and caches; the submitter's URL stays here.
    queued = {**options, "database_url": None}
    wait_s = wait_limit(settings.queue_timeout_s, settings.queue_visibility_timeout_s,
                        len(jobs))
    try:
        waited = run_queued(jobs, queued, settings.queue_url, wait_s, progress,
                            lambda text: typer.echo(warning_line(text), err=True))
    except QueueError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    if waited.interrupted:  # 130 here; the exit path makes it 143 after SIGTERM
        return waited.results, f"{interruption()}; {waited.stopped}", ExitCode.INTERRUPTED
    return waited.results, waited.stopped, ExitCode.FAILED
