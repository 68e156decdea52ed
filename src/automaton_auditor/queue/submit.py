"""`audit batch PAIRS.csv --queue URL`: one task per row, each with the run id it keeps, and
the results collected into the same summary as a local batch.

Paths travel as they are: targets, reports and the output folder must be reachable under the
same absolute paths on every worker (a shared file system), or be URLs. The submitter needs
the broker only; the workers need the broker and the shared run database.

The wait is bounded (`wait_limit`): rows no worker finished in time are failed rows of the
summary, and their tasks expire at the same moment, so a worker that starts later discards
them instead of auditing rows the batch already gave up on. Ctrl-C ends the wait the same
way (the rows still out are interrupted rows; their tasks go on until they expire).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from automaton_auditor.batch import Job, JobResult
from automaton_auditor.queue.app import TASK_NAME, check_broker, make_app

POLL_S = 0.5
# How long the submitter waits for a worker to answer a ping before it warns that none did.
PING_S = 1.0
NO_WORKER = ("no worker answered a ping within {s:g} s: the rows wait for an `audit worker` "
             "on this queue (one busy with an audit answers only when it is done)")


@dataclass
class Waited:
    """A queued batch's rows in row order, and why the wait ended before every row finished
    ("": it did not): the wait's limit passed, or Ctrl-C (`interrupted`)."""

    results: list[JobResult]
    stopped: str = ""
    interrupted: bool = False


def wait_limit(timeout_s: float | None, visibility_timeout_s: float, rows: int) -> float:
    """How long a batch waits for its rows: `timeout_s` when set, else as long as one worker
    process needs for every row at the longest audit (the visibility timeout is longer than
    that), plus one redelivery of a task whose machine died."""
    return timeout_s if timeout_s is not None else visibility_timeout_s * (rows + 1)


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


def run_queued(jobs: list[Job], options: dict[str, Any], broker_url: str, wait_s: float,
               on_done: Callable[[JobResult], None] | None = None,
               on_warning: Callable[[str], None] | None = None) -> Waited:
    """Enqueue every job and wait for them, at most `wait_s` seconds; results in row order.
    A row not finished by then is a failed row (exit 3), one not finished when Ctrl-C comes
    an interrupted row (exit 130). Raises `QueueError` when the broker cannot be reached."""
    app = make_app(broker_url)
    from celery.exceptions import TimeoutError as WaitExpired  # the extra is there

    check_broker(app, broker_url)
    # Asked before the tasks are sent: an idle worker that takes one stops answering.
    if on_warning is not None and workers_answer(app) is False:
        on_warning(NO_WORKER.format(s=PING_S))
    queued = queued_jobs(jobs)
    results: dict[int, JobResult] = {}
    started = time.monotonic()
    try:
        # The task id is the run id: `audit runs` and the result backend name a row alike.
        for job in queued:
            app.send_task(TASK_NAME, args=[asdict(job), options], task_id=job.run_id,
                          expires=wait_s)
        by_id = {str(job.run_id): job for job in queued}
        for task_id, meta in app.backend.get_many(
                set(by_id), interval=POLL_S,
                timeout=max(0.0, wait_s - (time.monotonic() - started))):
            job = by_id[task_id]
            results[job.row] = result_of(job, meta)
            if on_done is not None:
                on_done(results[job.row])
    except WaitExpired:
        return _unfinished(queued, results, started, wait_s)
    except KeyboardInterrupt:
        return _unfinished(queued, results, started, None)
    except broker_errors() as exc:  # the broker is the result backend: the answers are lost
        return _unfinished(queued, results, started, wait_s, lost=" ".join(str(exc).split()))
    return Waited([results[job.row] for job in queued])


def broker_errors() -> tuple[type[BaseException], ...]:
    """What the result backend raises when the broker stops answering mid-wait (redis-py's
    connection errors are not OSErrors; kombu wraps some in its OperationalError)."""
    from kombu.exceptions import OperationalError
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeout

    return OSError, OperationalError, RedisConnectionError, RedisTimeout


def _unfinished(queued: list[Job], results: dict[int, JobResult], started: float,
                wait_s: float | None, lost: str = "") -> Waited:
    """Every row, those without an answer as failed rows (exit 3: the wait of `wait_s`
    seconds passed, or the broker was `lost` while waiting) or interrupted ones (130:
    `wait_s` None, Ctrl-C)."""
    waited = round(time.monotonic() - started, 2)
    if wait_s is None:
        code, status, error = 130, "interrupted", "interrupted before a worker finished it"
    elif lost:
        code, status = 3, "failed"
        error = f"lost the broker before a worker's answer came: {lost}"[:500]
    else:
        code, status = 3, "failed"
        error = f"no worker finished this task within {wait_s:g} s"
    rows = [results.get(job.row) or JobResult(job.row, job.target, job.report, code, waited,
                                              job.run_id or "", status=status, error=error)
            for job in queued]
    missing = f"{sum(job.row not in results for job in queued)} of {len(queued)} queued audits"
    if wait_s is None:
        return Waited(rows, f"{missing} not finished; their tasks stay queued until they "
                            "expire (see `audit runs`)", interrupted=True)
    if lost:
        return Waited(rows, f"lost the broker while waiting ({lost[:200]}): {missing} have "
                            "no answer; see `audit runs` once it is back")
    return Waited(rows, f"no worker finished {missing} within {wait_s:g} s; those not "
                        "started expire unrun")


def workers_answer(app: Any) -> bool | None:
    """Whether a worker answers a ping within `PING_S` (None: the broker cannot tell, as a
    transport without broadcast cannot, or the ping failed)."""
    try:
        with app.connection_for_write() as conn:
            if "fanout" not in conn.transport.implements.exchange_type:
                return None
            return bool(app.control.ping(timeout=PING_S, limit=1, connection=conn))
    except Exception:  # a warning only: whatever the transport raises, the batch goes on
        return None


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
