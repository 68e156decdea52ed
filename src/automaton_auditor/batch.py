"""Batches: many audits, a bounded number at a time, one summary (`audit batch PAIRS.csv`).

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
from typing import TYPE_CHECKING, Any

from automaton_auditor.safefile import UnsafeFile, read_bounded_text, write_atomic

if TYPE_CHECKING:
    from concurrent.futures import Future

    from automaton_auditor.service import Outcome


HEADER_WORDS = {"target", "repo", "repository", "url", "repo_url"}
# A batch file is read as hostile input: a regular file of at most this size (about
# 20,000 rows), never a FIFO or a device that would block or fill memory.
MAX_BATCH_BYTES = 5 * 1024 * 1024


class BatchFileError(ValueError):
    """The pairs file cannot be read; the message is one line."""


@dataclass(frozen=True)
class Job:
    """One audit of the batch (row numbers count data rows from 1); a queued row carries the
    run id it keeps wherever it runs."""

    row: int
    target: str
    report: str
    rubric: str | None = None
    output_dir: str = "audit"
    run_id: str | None = None


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
    # done, incomplete (criteria not judged), failed (exit 3), refused (exit 2), interrupted
    status: str = ""
    criteria: dict[str, int | None] = field(default_factory=dict)
    error: str = ""
    report_file: str = ""
    worker: str = ""  # the queue worker that ran the row ("" in a local batch)
    resumed_from: str = ""  # where the run had stopped when this worker took it over


def _resolve(value: str, base: Path) -> str:
    if "://" in value:
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def read_jobs(path: Path, output_dir: Path) -> list[Job]:
    """The audits listed in a CSV/TSV file; raises `BatchFileError` on an unusable file."""
    try:
        text = read_bounded_text(path, MAX_BATCH_BYTES, "batch file")
    except UnsafeFile as exc:
        raise BatchFileError(str(exc)) from None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    tab = path.suffix.lower() == ".tsv" or (bool(lines) and "\t" in lines[0])
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter="\t" if tab else ",")
    try:  # a field over the csv module's 128 KB limit, a NUL in a quoted field...
        rows = [[c.strip() for c in r] for r in reader]
    except csv.Error as exc:
        raise BatchFileError(f"{path.name} row {reader.line_num}: {exc}") from None
    if rows and rows[0] and rows[0][0].lower() in HEADER_WORDS:
        rows = rows[1:]
    jobs: list[Job] = []
    base = path.parent
    for number, row in enumerate(rows, start=1):
        if len(row) < 2 or not row[0] or not row[1]:
            raise BatchFileError(f"{path.name} row {number}: expected target and report, "
                                 f"got {row!r}")
        rubric = _resolve(row[2], base) if len(row) > 2 and row[2] else None
        jobs.append(Job(number, _resolve(row[0], base) if not is_url(row[0]) else row[0],
                        _resolve(row[1], base), rubric, str(output_dir)))
    if not jobs:
        raise BatchFileError(f"{path.name} lists no audits")
    return _separate_outputs(jobs, output_dir)


def is_url(value: str) -> bool:
    """Whether a target is a URL (or an scp-style git address), not a local path."""
    return "://" in value or value.startswith("git@")


def _separate_outputs(jobs: list[Job], output_dir: Path) -> list[Job]:
    """Targets that would write to the same report folder get a folder per row."""
    from automaton_auditor.output.files import target_slug

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
                         round(time.perf_counter() - started, 2), job.run_id or "",
                         status="failed",
                         error=f"{type(exc).__name__}: {exc}"[:500])


def _audit(job: Job, options: dict[str, Any], started: float) -> JobResult:
    import logging

    from automaton_auditor import service
    from automaton_auditor.settings import Settings

    logging.basicConfig(level=logging.CRITICAL)
    settings = Settings.from_state(options["settings"]).model_copy(update={
        "output_dir": job.output_dir,
        "rubric_path": job.rubric or options["settings"].get("rubric_path"),
        "database_url": options.get("database_url")})  # never in the state: passed aside

    def seconds() -> float:
        return round(time.perf_counter() - started, 2)

    try:
        rubric = service.load_rubric_or_refuse(job.target, job.report, settings)
    except service.RubricRefused as exc:
        return JobResult(job.row, job.target, job.report, 2, seconds(), status="refused",
                         error=str(exc))
    # An unchanged row (same commit, report, rubric, settings) is answered from its last run.
    outcome = service.run_audit(job.target, job.report, rubric, settings,
                                gates=service.Gates(options.get("fail_under")), prefetch=False,
                                run_id=job.run_id)
    return _result(job, outcome, seconds())


def _result(job: Job, outcome: Outcome, seconds: float) -> JobResult:
    from automaton_auditor.service import run_status

    report = outcome.final.get("final_report")
    error = outcome.message if outcome.code in (2, 3, 130) else "; ".join(outcome.warnings)
    criteria = {c.dimension_id: c.final_score if c.judged else None
                for c in report.criteria} if report else {}
    status = {2: "refused", 130: "interrupted"}.get(int(outcome.code)) or \
        run_status(outcome.final, True)
    return JobResult(job.row, job.target, job.report, int(outcome.code), seconds,
                     outcome.run_id, report.overall_score if report and report.criteria else None,
                     report.verdict if report else "", status, criteria, error,
                     (outcome.final.get("report_files") or {}).get("markdown", ""),
                     resumed_from=outcome.resumed_from)


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
                                         status="failed",
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


def _cell(score: int | str | None) -> str:
    return "not judged" if score is None else str(score)


# A cell a spreadsheet would read as a formula (OWASP's CSV injection list); the pairs file
# and the error lines that quote it are the submitter's text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _inert(value: object) -> object:
    """A summary cell as text a spreadsheet shows rather than runs (a leading quote)."""
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def write_summary(results: list[JobResult], output_dir: Path) -> dict[str, str]:
    """Write ``batch_summary.json`` and ``batch_summary.csv``; returns their paths."""
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": output_dir / "batch_summary.json", "csv": output_dir / "batch_summary.csv"}
    payload = {"exit_code": worst_exit(results), "audits": [asdict(r) for r in results]}
    ids = criteria_ids(results)
    table = io.StringIO(newline="")  # the csv module writes its own \r\n line ends
    writer = csv.writer(table)
    writer.writerow([_inert(head) for head in (
        "row", "target", "report", "overall", "verdict", "status", *ids, "seconds",
        "exit_code", "error", "run_id", "report_file", "worker", "resumed_from")])
    for r in results:
        overall = "" if r.overall is None else f"{r.overall:.2f}"
        writer.writerow([_inert(cell) for cell in (
            r.row, r.target, r.report, overall, r.verdict, r.status,
            *(_cell(r.criteria.get(i, "")) for i in ids), f"{r.seconds:.2f}", r.exit_code,
            r.error, r.run_id, r.report_file, r.worker, r.resumed_from)])
    write_atomic({paths["json"]: json.dumps(payload, indent=2) + "\n",
                  paths["csv"]: table.getvalue()})
    return {k: str(v) for k, v in paths.items()}
