"""How long `audit batch --queue` waits (`queue.submit`): a bounded wait whose unfinished rows
are failed rows, Ctrl-C giving the rows so far, and a ping that warns when no worker answers
and never fails the batch. Celery's in-memory broker and result store stand in for Redis."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from automaton_auditor.batch import Job
from automaton_auditor.settings import default

pytest.importorskip("celery", reason="needs the scale extra (uv sync --extra scale)")

JOBS = [Job(1, "/shared/a", "/shared/a.pdf"), Job(2, "/shared/b", "/shared/b.pdf")]


@pytest.fixture
def memory_app(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`run_queued` on an in-memory broker and result store, with no worker."""
    from celery import Celery

    from automaton_auditor.queue import submit

    app = Celery("test", broker="memory://", backend="cache+memory://", set_as_current=False)
    monkeypatch.setattr(submit, "make_app", lambda url: app)
    yield app


def test_the_wait_is_bounded_by_the_setting_or_by_the_visibility_timeout_per_row() -> None:
    from automaton_auditor.queue.submit import wait_limit

    visibility = default("queue_visibility_timeout_s")
    assert default("queue_timeout_s") is None
    assert wait_limit(None, visibility, 3) == visibility * 4
    assert wait_limit(30.0, visibility, 3) == 30.0


def test_rows_no_worker_finished_in_time_are_failed_rows(memory_app: Any) -> None:
    from automaton_auditor.queue.submit import NO_WORKER, PING_S, run_queued

    warnings: list[str] = []
    waited = run_queued(JOBS, {"settings": {}}, "memory://", 0.2, on_warning=warnings.append)
    assert [(r.row, r.exit_code, r.status) for r in waited.results] == \
        [(1, 3, "failed"), (2, 3, "failed")]
    assert {r.error for r in waited.results} == {"no worker finished this task within 0.2 s"}
    assert all(r.run_id for r in waited.results)  # `audit runs` and a later look find them
    assert waited.stopped.startswith("no worker finished 2 of 2 queued audits within 0.2 s")
    assert not waited.interrupted
    assert warnings == [NO_WORKER.format(s=PING_S)]


def test_ctrl_c_during_the_wait_gives_the_rows_so_far(memory_app: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from automaton_auditor.queue.submit import run_queued

    answer = {"row": 1, "target": "x", "report": "y", "exit_code": 0, "seconds": 1.0,
              "status": "done", "overall": 3.0}

    def first_then_ctrl_c(ids: set[str], **_: Any) -> Iterator[tuple[str, dict[str, Any]]]:
        yield next(iter(ids)), {"status": "SUCCESS", "result": answer}
        raise KeyboardInterrupt

    monkeypatch.setattr(memory_app.backend, "get_many", first_then_ctrl_c)
    done: list[int] = []
    waited = run_queued(JOBS, {"settings": {}}, "memory://", 60,
                        on_done=lambda r: done.append(r.row))
    assert waited.interrupted and waited.stopped.startswith("1 of 2 queued audits not finished")
    (finished,) = done
    assert [(r.row, r.exit_code, r.status) for r in waited.results] == \
        [(row, 0, "done") if row == finished else (row, 130, "interrupted") for row in (1, 2)]


class _Transport:
    def __init__(self, kinds: set[str]) -> None:
        self.implements = type("Implements", (), {"exchange_type": frozenset(kinds)})()


class _Conn:
    def __init__(self, kinds: set[str]) -> None:
        self.transport = _Transport(kinds)

    def __enter__(self) -> _Conn:
        return self

    def __exit__(self, *_: object) -> None:
        return None


class _App:
    """An app whose broker broadcasts (or not) and whose ping answers `replies` (or
    raises)."""

    def __init__(self, kinds: set[str], replies: Any) -> None:
        self.kinds, self.replies, self.pinged = kinds, replies, False
        self.control = self

    def connection_for_write(self) -> _Conn:
        return _Conn(self.kinds)

    def ping(self, **_: Any) -> Any:
        self.pinged = True
        if isinstance(self.replies, Exception):
            raise self.replies
        return self.replies


def test_the_ping_warns_only_when_a_broadcasting_broker_gets_no_answer() -> None:
    from automaton_auditor.queue.submit import workers_answer

    assert workers_answer(_App({"direct", "fanout"}, [])) is False
    assert workers_answer(_App({"direct", "fanout"}, [{"w@h": {"ok": "pong"}}])) is True
    # A transport without broadcast (no remote control) is not asked at all.
    silent = _App({"direct", "topic"}, [])
    assert workers_answer(silent) is None and not silent.pinged
    assert workers_answer(_App({"fanout"}, NotImplementedError("no pidbox"))) is None
