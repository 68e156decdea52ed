"""`audit batch PAIRS.csv`: many audits, a bounded number at a time, one summary.

The file has one (target, report[, rubric]) row per audit, comma- or tab-separated (``.tsv``
or a tab in the first line), with an optional header row and ``#`` comment lines. Relative
paths are read against the file's own folder. Audits run in worker processes (at most
``--parallel`` at once; each worker imports the auditor once and runs many audits), a failed
audit is recorded and the batch goes on, and a worker that dies is replaced. The summary is
printed as one Rich table and written as ``batch_summary.json`` and ``batch_summary.csv``;
the exit code is the worst of the audits' exit codes (3 > 2 > 1 > 0).
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

if TYPE_CHECKING:
    from concurrent.futures import Future

import typer

HEADER_WORDS = {"target", "repo", "repository", "url", "repo_url"}


class BatchFileError(ValueError):
    """The pairs file cannot be read; the message is one line."""


@dataclass(frozen=True)
class Job:
    """One audit of the batch (row numbers count data rows from 1)."""

    row: int
    target: str
    report: str
    rubric: str | None = None
    output_dir: str = "audit"


@dataclass
class JobResult:
    """One line of the summary."""

    row: int
    target: str
    report: str
    exit_code: int
    seconds: float
    run_id: str = ""
    overall: float | None = None
    verdict: str = ""
    criteria: dict[str, int] = field(default_factory=dict)
    error: str = ""
    report_file: str = ""


def _resolve(value: str, base: Path) -> str:
    if "://" in value:
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def read_jobs(path: Path, output_dir: Path) -> list[Job]:
    """The audits listed in a CSV/TSV file; raises `BatchFileError` on an unusable file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BatchFileError(f"cannot read {path}: {exc}") from None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    tab = path.suffix.lower() == ".tsv" or (bool(lines) and "\t" in lines[0])
    rows = [[c.strip() for c in r] for r in csv.reader(io.StringIO("\n".join(lines)),
                                                         delimiter="\t" if tab else ",")]
    if rows and rows[0] and rows[0][0].lower() in HEADER_WORDS:
        rows = rows[1:]
    jobs: list[Job] = []
    base = path.parent
    for number, row in enumerate(rows, start=1):
        if len(row) < 2 or not row[0] or not row[1]:
            raise BatchFileError(f"{path.name} row {number}: expected target and report, "
                                 f"got {row!r}")
        rubric = _resolve(row[2], base) if len(row) > 2 and row[2] else None
        jobs.append(Job(number, _resolve(row[0], base) if not _is_url(row[0]) else row[0],
                        _resolve(row[1], base), rubric, str(output_dir)))
    if not jobs:
        raise BatchFileError(f"{path.name} lists no audits")
    return _separate_outputs(jobs, output_dir)


def _is_url(value: str) -> bool:
    return "://" in value or value.startswith("git@")


def _separate_outputs(jobs: list[Job], output_dir: Path) -> list[Job]:
    """Targets that would write to the same report folder get a folder per row."""
    from automaton_auditor.report.files import target_slug

    counts = Counter(target_slug(j.target) for j in jobs)
    return [j if counts[target_slug(j.target)] == 1 else
            Job(j.row, j.target, j.report, j.rubric, str(output_dir / f"row-{j.row:03d}"))
            for j in jobs]


def run_job(job: Job, options: dict[str, Any]) -> JobResult:
    """One audit, in a worker process; never raises (a crash becomes exit code 3)."""
    started = time.perf_counter()
    try:
        return _audit(job, options, started)
    except Exception as exc:  # one audit's failure must not end the batch
        return JobResult(job.row, job.target, job.report, 3,
                         round(time.perf_counter() - started, 2),
                         error=f"{type(exc).__name__}: {exc}"[:500])


def _audit(job: Job, options: dict[str, Any], started: float) -> JobResult:
    import logging
    from dataclasses import replace

    from automaton_auditor import cli
    from automaton_auditor.config import Settings
    from automaton_auditor.rubric import RubricError, load_rubric
    from automaton_auditor.runs import new_run_id, stream_audit

    logging.basicConfig(level=logging.CRITICAL)
    settings = replace(Settings.from_state(options["settings"]), output_dir=job.output_dir,
                       rubric_path=job.rubric or options["settings"].get("rubric_path"))

    def seconds() -> float:
        return round(time.perf_counter() - started, 2)

    try:
        rubric = load_rubric(Path(settings.rubric_path) if settings.rubric_path else None)
    except RubricError as exc:
        return JobResult(job.row, job.target, job.report, 2, seconds(),
                         error=f"bad rubric: {exc}")
    from automaton_auditor import cache_results

    rubric_data = rubric.model_dump()
    # An unchanged row (same commit, report, rubric, settings) is answered from its last run.
    final = cache_results.reuse(job.target, job.report, rubric_data, settings)
    if final is None:
        run_id = new_run_id()
        state = {"target": job.target, "report_path": job.report, "rubric": rubric_data,
                 "settings": settings.to_state(), "run_id": run_id}
        final = stream_audit(state, settings, run_id)
        cache_results.remember(final, rubric_data, settings)
    code = cli._exit_code(final, options.get("fail_under"))
    return _result(job, final, code, seconds(), str(final.get("run_id") or ""))


def _result(job: Job, final: dict[str, Any], code: int, seconds: float,
            run_id: str) -> JobResult:
    report = final.get("final_report")
    error = ""
    if code == 2:
        error = str(final.get("input_error") or "invalid input")
    elif code == 3:
        statuses = final.get("detective_status") or {}
        error = str(final.get("aborted") or "; ".join(
            f"{k} {v}" for k, v in sorted(statuses.items()) if str(v).startswith("failed")))
    criteria = {c.dimension_id: c.final_score for c in report.criteria} if report else {}
    return JobResult(job.row, job.target, job.report, code, seconds, run_id,
                     report.overall_score if report and report.criteria else None,
                     report.verdict if report else "", criteria, error,
                     (final.get("report_files") or {}).get("markdown", ""))


def _waves(jobs: list[Job], share_reports: bool) -> tuple[list[Job], dict[int, list[Job]]]:
    """Jobs to start at once, and the jobs each of them unlocks. With the cache on, only the
    first row of each report starts; the rows sharing its report wait for it, so the report
    is parsed once and read from the cache by the others (not parsed by every worker)."""
    if not share_reports:
        return list(jobs), {}
    leaders: dict[str, Job] = {}
    followers: dict[int, list[Job]] = {}
    for job in jobs:
        leader = leaders.setdefault(job.report, job)
        if leader is not job:
            followers.setdefault(leader.row, []).append(job)
    return list(leaders.values()), followers


def run_batch(jobs: list[Job], options: dict[str, Any], parallel: int,
              on_done: Any = None) -> list[JobResult]:
    """Run every job with at most `parallel` worker processes; results in row order.

    A worker that dies (a crash in native code, memory) breaks the pool: unfinished jobs are
    retried once in a fresh pool, then recorded as failed."""
    results: dict[int, JobResult] = {}
    pending, tries = list(jobs), Counter[int]()
    while pending:
        retry = _run_pool(pending, options, parallel, results, tries, on_done)
        pending = [j for j in retry if tries[j.row] < 2]
        for job in (j for j in retry if tries[j.row] >= 2):
            results[job.row] = JobResult(job.row, job.target, job.report, 3, 0.0,
                                         error="the audit's worker process died")
            if on_done is not None:
                on_done(results[job.row])
    return [results[j.row] for j in jobs]


def _run_pool(pending: list[Job], options: dict[str, Any], parallel: int,
              results: dict[int, JobResult], tries: Counter[int], on_done: Any) -> list[Job]:
    """One process pool over `pending`; returns the jobs left unfinished by a broken pool."""
    # Imported here: `audit --help` should not pay for multiprocessing.
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    start, unlocks = _waves(pending, bool(options["settings"].get("cache_dir")))
    running: dict[Future[JobResult], Job] = {}
    retry: list[Job] = []
    # spawn: never fork a process that may hold threads
    with ProcessPoolExecutor(max_workers=min(parallel, len(pending)),
                             mp_context=get_context("spawn")) as pool:
        queue = list(start)
        while queue or running:
            for job in queue:
                if retry:  # the pool is broken: keep the job for the next pool
                    retry.append(job)
                    continue
                tries[job.row] += 1
                running[pool.submit(run_job, job, options)] = job
            queue = []
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                job = running.pop(future)
                try:
                    results[job.row] = future.result()
                except BrokenProcessPool:
                    retry.append(job)
                    continue
                if on_done is not None:
                    on_done(results[job.row])
                queue += unlocks.pop(job.row, [])
    # Rows still waiting on a leader when the pool broke are retried too.
    return retry + [j for waiting in unlocks.values() for j in waiting]


def worst_exit(results: list[JobResult]) -> int:
    """The batch's exit code: the most severe of its audits' (3 > 2 > 1 > 0)."""
    return max((r.exit_code for r in results), default=0)


def criteria_ids(results: list[JobResult]) -> list[str]:
    """Every criterion id seen, in first-seen order."""
    return list(dict.fromkeys(c for r in results for c in r.criteria))


def write_summary(results: list[JobResult], output_dir: Path) -> dict[str, str]:
    """Write ``batch_summary.json`` and ``batch_summary.csv``; returns their paths."""
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": output_dir / "batch_summary.json", "csv": output_dir / "batch_summary.csv"}
    payload = {"exit_code": worst_exit(results), "audits": [asdict(r) for r in results]}
    paths["json"].write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    ids = criteria_ids(results)
    with paths["csv"].open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["row", "target", "report", "overall", "verdict", *ids, "seconds",
                         "exit_code", "error", "run_id", "report_file"])
        for r in results:
            overall = "" if r.overall is None else f"{r.overall:.2f}"
            writer.writerow([r.row, r.target, r.report, overall, r.verdict,
                             *(r.criteria.get(i, "") for i in ids), f"{r.seconds:.2f}",
                             r.exit_code, r.error, r.run_id, r.report_file])
    return {k: str(v) for k, v in paths.items()}


def _short(target: str) -> str:
    from automaton_auditor.report.files import target_slug

    return target_slug(target)


def summary_table(results: list[JobResult]) -> Any:
    """The Rich table of a batch: one row per audit, one column per criterion (C1..Cn, named
    in the caption)."""
    from rich.table import Table

    ids = criteria_ids(results)
    heads = [f"C{n}" for n in range(1, len(ids) + 1)]
    legend = " · ".join(f"{h} {i}" for h, i in zip(heads, ids, strict=True))
    table = Table(title=f"batch: {len(results)} audits, exit {worst_exit(results)}",
                  caption=legend or None)
    for name in ("#", "target", "overall", *heads, "verdict", "time", "exit", "error"):
        table.add_column(name, overflow="fold", justify="right" if name in heads else "left")
    for r in results:
        overall = "—" if r.overall is None else f"{r.overall:.2f}"
        table.add_row(str(r.row), _short(r.target), overall,
                      *(str(r.criteria.get(i, "")) for i in ids), r.verdict,
                      f"{r.seconds:.1f}s", str(r.exit_code), r.error)
    return table


def batch(
    pairs: Annotated[Path, typer.Argument(
        help="CSV or TSV file: target, report[, rubric] per row (header and # lines optional; "
             "relative paths are read against the file's folder).")],
    parallel: Annotated[int, typer.Option("--parallel", "-j", min=1,
                                          help="Audits run at once.")] = 2,
    output_dir: Annotated[Path, typer.Option(help="Where reports and the summary go.")
    ] = Path("audit"),
    rubric: Annotated[Path | None, typer.Option(help="Rubric for rows without one.")] = None,
    model: Annotated[str | None, typer.Option(help="Judge model (env AUDITOR_MODEL).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the caches.")] = False,
    reuse_opinions: Annotated[bool, typer.Option(
        "--reuse-opinions", help="Reuse cached model answers.")] = False,
    fail_under: Annotated[float | None, typer.Option(
        min=0, max=5, help="An audit below this score counts as exit 1.")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print only the JSON summary on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No table, no progress.")] = False,
) -> None:
    """Audit many (target, report) pairs from a CSV/TSV file, a few at a time."""
    from automaton_auditor import cli
    from automaton_auditor.cache import default_cache_dir
    from automaton_auditor.config import load_dotenv_if_present

    load_dotenv_if_present()
    try:
        jobs = read_jobs(pairs, output_dir)
    except BatchFileError as exc:
        raise cli._fail(str(exc), cli.EXIT_INPUT) from None
    settings = cli._bench_settings(output_dir, rubric, model, [], None, 8, None, [], None)
    state = settings.to_state()
    state.update(cache_dir=None if no_cache else str(default_cache_dir()),
                 reuse_opinions=reuse_opinions)
    options = {"settings": state, "fail_under": fail_under}

    def progress(result: JobResult) -> None:
        if not (quiet or json_output):
            typer.echo(f"[{result.row}/{len(jobs)}] exit {result.exit_code} "
                       f"{result.seconds:.1f}s {result.target}", err=True)

    results = run_batch(jobs, options, parallel, progress)
    files = write_summary(results, output_dir)
    if json_output:
        typer.echo(Path(files["json"]).read_text(encoding="utf-8"), nl=False)
    elif not quiet:
        from rich.console import Console

        Console().print(summary_table(results))
        typer.echo(f"summary: {files['csv']} and {files['json']}", err=True)
    raise typer.Exit(worst_exit(results))
