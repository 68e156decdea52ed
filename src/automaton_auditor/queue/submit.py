"""`audit batch PAIRS.csv --queue URL`: one task per row, each with the run id it keeps, and
the results collected into the same summary as a local batch.

Paths travel as they are: targets, reports and the output folder must be reachable under the
same absolute paths on every worker (a shared file system), or be URLs. The submitter needs
the broker only; the workers need the broker and the shared run database.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from automaton_auditor.batch import Job, JobResult
from automaton_auditor.queue.app import TASK_NAME, check_broker, make_app

POLL_S = 0.5


def _absolute(value: str) -> str:
    """A local path made absolute (workers have other working directories); URLs as given."""
    path = Path(value).expanduser()
    return str(path.resolve()) if path.exists() else value


def queued_jobs(jobs: list[Job]) -> list[Job]:
    """The jobs with absolute paths and a run id each, unique within the batch."""
    from automaton_auditor.storage.runs import new_run_id

    taken: set[str] = set()
    out = []
    for job in jobs:
        run_id = new_run_id()
        while run_id in taken:  # 24 random bits per second: rows enqueued together may clash
            run_id = new_run_id()
        taken.add(run_id)
        out.append(replace(job, target=_absolute(job.target), report=_absolute(job.report),
                           rubric=_absolute(job.rubric) if job.rubric else None,
                           output_dir=str(Path(job.output_dir).resolve()), run_id=run_id))
    return out


def run_queued(jobs: list[Job], options: dict[str, Any], broker_url: str,
               on_done: Callable[[JobResult], None] | None = None) -> list[JobResult]:
    """Enqueue every job and wait for all of them; results in row order. Raises `QueueError`
    when the broker cannot be reached."""
    app = make_app(broker_url)
    check_broker(app, broker_url)
    queued = queued_jobs(jobs)
    # The task id is the run id: `audit runs` and the result backend name a row alike.
    for job in queued:
        app.send_task(TASK_NAME, args=[asdict(job), options], task_id=job.run_id)
    by_id = {str(job.run_id): job for job in queued}
    results: dict[int, JobResult] = {}
    for task_id, meta in app.backend.get_many(set(by_id), interval=POLL_S):
        job = by_id[task_id]
        results[job.row] = result_of(job, meta)
        if on_done is not None:
            on_done(results[job.row])
    return [results[job.row] for job in queued]


def result_of(job: Job, meta: dict[str, Any]) -> JobResult:
    """The summary line a finished task sent back (a task that raised: exit 3). The result
    backend is the broker, which anyone who reaches it can write: an answer of the wrong types
    is the row's failure, and the row keeps its own number, target and report."""
    value = meta.get("result")
    if meta.get("status") == "SUCCESS" and isinstance(value, dict):
        known = {f.name for f in fields(JobResult)}  # a newer worker may send more
        answer = {k: v for k, v in value.items() if k in known}
        problem = _malformed(answer)
        if not problem:
            return JobResult(**{**answer, "row": job.row, "target": job.target,
                                "report": job.report})
        value = f"the worker's answer is malformed ({problem})"
    return JobResult(job.row, job.target, job.report, 3, 0.0, job.run_id or "",
                     status="failed", error=f"the task failed: {value!r}"[:500])


def _number(value: Any, optional: bool = False) -> bool:
    if value is None:
        return optional
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


def _malformed(answer: dict[str, Any]) -> str:
    """What is wrong with a worker's answer ("" when nothing)."""
    exit_code, criteria = answer.get("exit_code"), answer.get("criteria", {})
    if not isinstance(exit_code, int) or isinstance(exit_code, bool) or exit_code < 0:
        return "exit_code"
    if not _number(answer.get("seconds")) or not _number(answer.get("overall"), True):
        return "seconds or overall"
    if not isinstance(criteria, dict) or not all(
            isinstance(k, str) and (v is None or (_number(v) and isinstance(v, int)))
            for k, v in criteria.items()):
        return "criteria"
    texts = ("run_id", "verdict", "status", "error", "report_file", "worker", "resumed_from")
    return next((name for name in texts if not isinstance(answer.get(name, ""), str)), "")
