"""`audit worker --queue URL`: a Celery worker that runs queued audits on this machine.

It refuses to start without a reachable shared run database (a run it starts must be
resumable from any other machine) and a reachable broker. With one process (the default) the
audit runs in the worker process itself (Celery's solo pool), so killing the worker kills its
audit, and the task is delivered again after the visibility timeout; with more, Celery's
prefork pool runs them, and a pool process that dies gives its task back at once.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any

from automaton_auditor.queue.app import (
    DEFAULT_VISIBILITY_TIMEOUT_S,
    QUEUE_NAME,
    QueueError,
    WorkerPlace,
    check_broker,
    make_app,
)
from automaton_auditor.queue.guard import Limits

log = logging.getLogger(__name__)
# Celery's consumer stops on a broker message it cannot even parse (not JSON, not a message
# envelope): the message is gone by then, so the worker consumes again, up to this many
# times a minute (past that something is wrong with the broker, not one message).
MAX_RESTARTS_PER_MINUTE = 5


def default_name() -> str:
    """A worker name unique on this machine: ``audit-<pid>@<host>``."""
    return f"audit-{os.getpid()}@{socket.gethostname()}"


def run_worker(broker_url: str, place: WorkerPlace, *, name: str | None = None,
               concurrency: int = 1,
               visibility_timeout_s: float = DEFAULT_VISIBILITY_TIMEOUT_S,
               loglevel: str = "INFO") -> None:
    """Check the database and the broker, then consume audits until stopped (SIGTERM or
    Ctrl-C: the running audit finishes first). Raises `QueueError` or `RunStoreError`."""
    from automaton_auditor.storage.postgres import postgres_checkpointer

    if not place.database_url:
        raise QueueError("a worker needs the shared run database: set AUDITOR_DATABASE_URL "
                         "(postgresql://…) so that any worker can resume its runs")
    with postgres_checkpointer(place.database_url):  # reachable, and its tables exist
        pass
    app = make_app(broker_url, visibility_timeout_s, place)
    check_broker(app, broker_url)
    _consume(app, {"hostname": name or default_name(),
                   "pool_cls": "solo" if concurrency == 1 else "prefork",
                   "concurrency": concurrency, "queues": [QUEUE_NAME], "loglevel": loglevel,
                   "without_gossip": True, "without_mingle": True})


class _OneLine(logging.Filter):
    """Celery's 'Unrecoverable error' record without its traceback: the cause is a message
    that is not a task, said in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Unrecoverable error"):
            record.exc_info, record.exc_text = None, None
        return True


def _consume(app: Any, options: dict[str, Any]) -> None:
    """Run Celery's worker until it is stopped by a signal; start it again when its
    consumer stopped on a message it could not parse."""
    from celery.signals import worker_shutting_down

    stopping: list[bool] = []

    def stop(**_: Any) -> None:
        stopping.append(True)

    worker_shutting_down.connect(stop, weak=False)
    logging.getLogger("celery.worker").addFilter(_OneLine())
    stops: list[float] = []
    while True:
        worker = app.Worker(**options)
        worker.start()
        if stopping or not worker.exitcode:
            return
        now = time.monotonic()
        stops = [t for t in stops if now - t < 60] + [now]
        if len(stops) > MAX_RESTARTS_PER_MINUTE:
            raise QueueError(f"the worker's consumer stopped {len(stops)} times within a "
                             "minute on broker messages it could not read")
        log.warning("the broker gave a message that is not a task (dropped); consuming again")


def worker_limits(roots: list[str], settings: dict[str, Any]) -> Limits:
    """The worker's `Limits`: its roots as real paths (each an existing folder; raises
    `QueueError`) and its own settings (`settings.to_state()`)."""
    real = []
    for root in roots:
        path = os.path.realpath(root)
        if not os.path.isdir(path):
            raise QueueError(f"worker root {root!r} is not a folder")
        real.append(path)
    return Limits(tuple(real), settings)
