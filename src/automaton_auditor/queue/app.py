"""The Celery application of the queue and its one task, an audit of one batch row.

Delivery settings, and why:

- ``task_acks_late`` with ``task_reject_on_worker_lost``: a task is acknowledged after it
  ran, so a worker that dies mid-audit does not lose it (a killed pool process gives it
  back at once; a killed machine leaves it unacknowledged in Redis);
- ``visibility_timeout`` (Redis transport): an unacknowledged task is delivered again after
  this many seconds. It must be longer than the longest audit, or a live audit gets a twin;
  the twin is harmless (it waits on the run's lock, then finds the row's answer stored and
  drops out) but holds a worker slot meanwhile;
- ``worker_prefetch_multiplier=1``: a worker reserves one task per process, so a dead worker
  holds back one task, not a handful.

A row in hand shows in the result backend as STARTED with the worker's name (set by the task
itself: Celery's ``task_track_started`` would also overwrite a finished row's answer when a
twin starts).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, replace
from typing import Any

from automaton_auditor.queue.guard import BadTask, Limits, named, read_task

TASK_NAME = "automaton_auditor.audit_row"
QUEUE_NAME = "automaton-auditor"
# Longer than an audit with model judges and every retry (30 calls, bounded timeouts).
DEFAULT_VISIBILITY_TIMEOUT_S = 3600
RESULTS_KEPT_S = 7 * 24 * 3600
log = logging.getLogger(__name__)
SCALE_EXTRA_HINT = ("the queue needs the scale extra: uv sync --extra scale "
                    "(or pip install 'automaton-auditor[scale]')")


class QueueError(RuntimeError):
    """The queue cannot be used (missing extra, unreachable broker); the message is one
    line."""


@dataclass(frozen=True)
class WorkerPlace:
    """What belongs to the machine a worker runs on, not to the batch that sent the task:
    its run database, its cache, and what it lets a task do (`queue.guard`)."""

    database_url: str
    cache_dir: str | None
    limits: Limits


def make_app(broker_url: str, visibility_timeout_s: float = DEFAULT_VISIBILITY_TIMEOUT_S,
             place: WorkerPlace | None = None) -> Any:
    """The Celery app on `broker_url` (Redis: broker and result backend), with the audit task
    registered; `place` is set on workers only."""
    try:
        from celery import Celery
    except ImportError:
        raise QueueError(SCALE_EXTRA_HINT) from None
    app = Celery("automaton_auditor", broker=broker_url, backend=broker_url,
                 set_as_current=False)
    # Sweep for abandoned tasks often enough to honour a short timeout (kombu's default
    # sweep runs every 100 s).
    sweep = max(1, min(10, int(visibility_timeout_s // 6)))
    app.conf.update(
        task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
        task_default_queue=QUEUE_NAME,
        task_serializer="json", result_serializer="json", accept_content=["json"],
        result_expires=RESULTS_KEPT_S, broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": visibility_timeout_s,
                                  "unacked_restore_interval": sweep,
                                  "unacked_restore_throttle": 1},
        worker_hijack_root_logger=False)
    app.auditor_place = place
    app.task(name=TASK_NAME, bind=True)(audit_row)
    return app


def check_broker(app: Any, url: str) -> None:
    """Raise `QueueError` unless the broker answers."""
    from automaton_auditor.settings import redact_url

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=5)
    except Exception as exc:  # kombu raises the transport's own errors
        raise QueueError(f"cannot reach the queue {redact_url(url)}: "
                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                         ) from None


def audit_row(task: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The task: audit one row on this worker, under the run's lock, and return its summary
    line (a `JobResult` as a dict) naming this worker. A twin delivery of a row whose answer
    is stored drops out without touching it; a task that fails `queue.guard`'s checks is
    refused (exit 2) without being run."""
    from celery import states
    from celery.exceptions import Ignore

    from automaton_auditor.batch import JobResult, run_job
    from automaton_auditor.storage.checkpoints import run_lock
    from automaton_auditor.storage.postgres import RunStoreError

    place: WorkerPlace = task.app.auditor_place
    worker = str(task.request.hostname or "")
    try:
        row, options = read_task(args, kwargs, place.limits)
    except BadTask as exc:
        log.warning("refused task %s: %s", str(task.request.id)[:80], exc)
        return asdict(JobResult(*named(args), 2, 0.0, "", status="refused", error=str(exc),
                                worker=worker))
    stored = task.AsyncResult(task.request.id)
    if stored.state == states.SUCCESS:
        raise Ignore()
    task.update_state(state=states.STARTED, meta={"hostname": worker})
    settings = dict(options["settings"])
    if settings.get("cache_dir") is not None:  # caches are the worker's own (None: no cache)
        settings["cache_dir"] = place.cache_dir
    local = {**options, "settings": settings, "database_url": place.database_url}
    try:
        # One machine at a time per run: a twin waits here, then finds the answer stored.
        with run_lock(place.database_url, row.run_id or ""):
            if stored.state == states.SUCCESS:
                raise Ignore()
            result = asdict(replace(run_job(row, local), worker=worker))
            # Stored before the lock is let go, so a twin waiting on it sees the answer.
            task.backend.store_result(task.request.id, result, states.SUCCESS)
    except RunStoreError as exc:
        result = asdict(JobResult(row.row, row.target, row.report, 2, 0.0, row.run_id or "",
                                  status="refused", error=str(exc), worker=worker))
    return result
