"""A queue worker fed hostile broker messages, with the real servers (PostgreSQL and Redis as
child processes on 127.0.0.1, as in `test_queue`): bytes that are not a message at all, tasks
of another shape, a job whose paths lead out of the worker's root (directly or through a
symlink), a traversal run id, settings that do not validate. The worker keeps running and
logs no traceback; every task is answered in one line (exit 2, refused) without being run and
nothing is written outside the root; a good task after them all is audited; SIGTERM stops it.

Skipped, with the reason, without the server binaries or the scale extra.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import make_auditee, make_report_pdf
from tests.integration.servers import postgres_server, redis_server, stop_pid
from tests.integration.test_queue import needs_servers

WAIT_S = 180
RUN_IDS = (f"20260101-000000-{n:06x}" for n in range(1, 1000))


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    with postgres_server() as database, redis_server() as broker:
        yield database, broker


def _answer(app: Any, task_id: str) -> dict[str, Any]:
    result = app.AsyncResult(task_id)
    deadline = time.monotonic() + WAIT_S
    while result.state in ("PENDING", "STARTED") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert result.state == "SUCCESS", (result.state, result.result)
    answer: dict[str, Any] = result.result
    return answer


@needs_servers
def test_a_worker_refuses_hostile_messages_and_goes_on(servers: tuple[str, str],
                                                       tmp_path: Path) -> None:
    import redis

    from automaton_auditor.queue.app import QUEUE_NAME, TASK_NAME, make_app

    database, broker = servers
    root, outside = tmp_path / "shared", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    repo, pdf = make_auditee(root / "repo"), make_report_pdf(root / "report.pdf")
    env = {**os.environ, "AUDITOR_DATABASE_URL": database, "HF_HUB_OFFLINE": "1",
           "AUDITOR_CACHE_DIR": str(tmp_path / "cache")}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "automaton_auditor", "worker", "--queue", broker,
             "--name", "hostile@test", "--root", str(root)],
            env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        app = make_app(broker)
        queue = redis.Redis.from_url(broker)
        for junk in (b"\x00not json{{", b"[1, 2]", b"{}", b'"a string"'):
            queue.lpush(QUEUE_NAME, junk)

        def job(**changes: Any) -> dict[str, Any]:
            return {"row": 1, "target": str(repo), "report": str(pdf),
                    "output_dir": str(root / "out"), "run_id": next(RUN_IDS), **changes}

        hostile = {
            "shape": ["notadict", 5], "arity": [],
            "unknown": [job(evil=1), {}],
            "out": [job(output_dir=str(outside / "out")), {}],
            "symlink": [job(output_dir=str(root / "link" / "out")), {}],
            "target": [job(target=str(outside)), {}],
            "run_id": [job(run_id="../../../tmp/evil"), {}],
            "settings": [job(), {"settings": {"call_timeout_s": "x"}}],
        }
        sent = {name: app.send_task(TASK_NAME, args=args).id for name, args in hostile.items()}
        good = app.send_task(TASK_NAME, args=[job(), {"settings": {}}]).id
        for name, task_id in sent.items():
            answer = _answer(app, task_id)
            assert (answer["exit_code"], answer["status"]) == (2, "refused"), (name, answer)
            assert answer["error"] and "\n" not in answer["error"], (name, answer)
        answer = _answer(app, good)
        assert answer["exit_code"] == 0, answer
        assert Path(answer["report_file"]).resolve().is_relative_to(root.resolve())
        assert worker.poll() is None, log.read_text(errors="replace")[-3000:]
        assert list(outside.iterdir()) == [], "a task wrote outside the worker's root"
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0
    finally:
        stop_pid(worker)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]
    assert "not a task (dropped)" in text
