"""`audit worker --queue URL`: a Celery worker that runs queued audits on this machine.

It refuses to start without a reachable shared run database (a run it starts must be
resumable from any other machine) and a reachable broker. With one process (the default) the
audit runs in the worker process itself (Celery's solo pool), so killing the worker kills its
audit, and the task is delivered again after the visibility timeout; with more, Celery's
prefork pool runs them, and a pool process that dies gives its task back at once.
"""

from __future__ import annotations

import os
import socket

from automaton_auditor.queue.app import (
    DEFAULT_VISIBILITY_TIMEOUT_S,
    QUEUE_NAME,
    QueueError,
    WorkerPlace,
    check_broker,
    make_app,
)


def default_name() -> str:
    """A worker name unique on this machine: ``audit-<pid>@<host>``."""
    return f"audit-{os.getpid()}@{socket.gethostname()}"


def run_worker(broker_url: str, database_url: str | None, cache_dir: str | None, *,
               name: str | None = None, concurrency: int = 1,
               visibility_timeout_s: float = DEFAULT_VISIBILITY_TIMEOUT_S,
               loglevel: str = "INFO") -> None:
    """Check the database and the broker, then consume audits until stopped (SIGTERM or
    Ctrl-C: the running audit finishes first). Raises `QueueError` or `RunStoreError`."""
    from automaton_auditor.storage.postgres import postgres_checkpointer

    if not database_url:
        raise QueueError("a worker needs the shared run database: set AUDITOR_DATABASE_URL "
                         "(postgresql://…) so that any worker can resume its runs")
    with postgres_checkpointer(database_url):  # reachable, and its tables exist
        pass
    app = make_app(broker_url, visibility_timeout_s, WorkerPlace(database_url, cache_dir))
    check_broker(app, broker_url)
    app.worker_main(["worker", "--hostname", name or default_name(),
                     "--pool", "solo" if concurrency == 1 else "prefork",
                     "--concurrency", str(concurrency), "--queues", QUEUE_NAME,
                     "--loglevel", loglevel, "--without-gossip", "--without-mingle"])
