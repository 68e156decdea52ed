"""`audit worker`: run the audits that `audit batch --queue` enqueues, on this machine, until
stopped (the queue itself lives in `automaton_auditor.queue`)."""

from __future__ import annotations

from typing import Annotated

import typer

from automaton_auditor.cli.errors import fail
from automaton_auditor.exits import ExitCode


def worker(
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Redis broker URL, e.g. redis://host:6379/0 (config queue_url, env "
                        "AUDITOR_QUEUE_URL).")] = None,
    name: Annotated[str | None, typer.Option(
        help="Worker name shown in batch summaries (default audit-<pid>@<host>).")] = None,
    concurrency: Annotated[int, typer.Option(
        min=1, help="Audits run at once (1: in the worker process itself).")] = 1,
    visibility_timeout: Annotated[float | None, typer.Option(
        min=1, help="Seconds after which a task of a dead worker is delivered again; longer "
                    "than the longest audit (config queue_visibility_timeout_s; default "
                    "3600).")] = None,
    root: Annotated[list[str] | None, typer.Option(
        help="A folder a task's paths (targets, reports, rubrics, output folders) must lie "
             "under; repeatable (default: the current folder). Other paths are refused.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Log warnings only.")] = False,
) -> None:
    """Run queued audits (from `audit batch --queue`) until stopped.

    Needs the scale extra and the shared run database (AUDITOR_DATABASE_URL), so that any
    worker can resume a run another one started."""
    import os

    from automaton_auditor.cli.flags import resolve_from_flags, writable_cache
    from automaton_auditor.queue.app import QueueError, WorkerPlace
    from automaton_auditor.queue.worker import run_worker, worker_limits
    from automaton_auditor.storage.runs import RunError

    settings = resolve_from_flags({"queue_url": queue,
                                   "queue_visibility_timeout_s": visibility_timeout}).settings
    broker = settings.queue_url
    if not broker:
        raise fail("no queue: give --queue redis://host:6379/0 (or set AUDITOR_QUEUE_URL)",
                   ExitCode.INPUT)
    settings = writable_cache(settings)  # a worker under a missing or read-only HOME too
    try:
        limits = worker_limits(root or [os.getcwd()], settings.to_state())
        place = WorkerPlace(settings.database_url or "", settings.cache_dir, limits)
        run_worker(broker, place, name=name, concurrency=concurrency,
                   visibility_timeout_s=settings.queue_visibility_timeout_s,
                   loglevel="WARNING" if quiet else "INFO")
    except (QueueError, RunError) as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
