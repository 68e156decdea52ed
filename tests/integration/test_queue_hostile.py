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


def _unserved_batch(broker: str, tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """A two-row `audit batch --queue --json` command and its environment (no database)."""
    repo, pdf = make_auditee(tmp_path / "repo"), make_report_pdf(tmp_path / "report.pdf")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(f"{repo},{pdf}\n{repo},{pdf}\n", encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "AUDITOR_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("AUDITOR_DATABASE_URL", None)
    return [sys.executable, "-m", "automaton_auditor", "batch", str(pairs), "--queue", broker,
            "--output-dir", str(tmp_path / "out"), "--json"], env


@needs_servers
@pytest.mark.parametrize("bound", ["flag", "env"])
def test_a_batch_with_no_worker_ends_at_its_timeout(servers: tuple[str, str], tmp_path: Path,
                                                    bound: str) -> None:
    """No worker on the queue: the batch ends on its own after --queue-timeout (or
    AUDITOR_QUEUE_TIMEOUT_S) with every row a failed row, the summary written, one error line
    and exit 3. The subprocess timeout turns a batch that waits forever into a failure."""
    import json

    args, env = _unserved_batch(servers[1], tmp_path)
    if bound == "flag":
        args += ["--queue-timeout", "2"]
    else:
        env["AUDITOR_QUEUE_TIMEOUT_S"] = "2"
    result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 3, result.stderr[-3000:]
    audits = json.loads(result.stdout)["audits"]
    assert [(a["exit_code"], a["status"]) for a in audits] == [(3, "failed")] * 2
    assert all(a["error"] == "no worker finished this task within 2 s" for a in audits)
    written = json.loads((tmp_path / "out" / "batch_summary.json").read_text(encoding="utf-8"))
    assert written["exit_code"] == 3 and len(written["audits"]) == 2
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert errors == ["error: no worker finished 2 of 2 queued audits within 2 s; those not "
                      "started expire unrun"], result.stderr
    assert "Traceback" not in result.stderr


@needs_servers
def test_ctrl_c_while_a_batch_waits_writes_the_summary(servers: tuple[str, str],
                                                       tmp_path: Path) -> None:
    """Ctrl-C once the rows are queued: the summary is written with the rows interrupted,
    one error line, exit 130."""
    import json

    import redis

    from automaton_auditor.queue.app import QUEUE_NAME

    broker = servers[1]
    queue = redis.Redis.from_url(broker)
    queue.delete(QUEUE_NAME)  # tasks the tests before left unrun
    args, env = _unserved_batch(broker, tmp_path)
    with (tmp_path / "stdout").open("wb") as out, (tmp_path / "stderr").open("wb") as err:
        batch = subprocess.Popen([*args, "--queue-timeout", "600"], env=env, stdout=out,
                                 stderr=err)
    try:
        deadline = time.monotonic() + WAIT_S
        while queue.llen(QUEUE_NAME) < 2 and batch.poll() is None:
            assert time.monotonic() < deadline, "the rows were never queued"
            time.sleep(0.1)
        batch.send_signal(signal.SIGINT)
        assert batch.wait(timeout=60) == 130
    finally:
        stop_pid(batch)
    stderr = (tmp_path / "stderr").read_text(errors="replace")
    audits = json.loads((tmp_path / "stdout").read_text())["audits"]
    assert [(a["exit_code"], a["status"]) for a in audits] == [(130, "interrupted")] * 2
    assert (tmp_path / "out" / "batch_summary.csv").is_file()
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error: ")]
    assert errors == ["error: interrupted; 2 of 2 queued audits not finished; their tasks "
                      "stay queued until they expire (see `audit runs`)"], stderr
    assert "Traceback" not in stderr


@needs_servers
def test_a_batch_whose_broker_dies_while_it_waits_ends_in_one_line(tmp_path: Path) -> None:
    """The broker (also the result backend) stops while the batch waits for its rows: the
    batch ends without a traceback, with the summary written, every row failed, one error
    line naming the lost broker, and exit 3."""
    import json

    import redis

    from automaton_auditor.queue.app import QUEUE_NAME

    with redis_server() as broker:
        args, env = _unserved_batch(broker, tmp_path)
        queue = redis.Redis.from_url(broker)
        with (tmp_path / "stdout").open("wb") as out, (tmp_path / "stderr").open("wb") as err:
            batch = subprocess.Popen([*args, "--queue-timeout", "600"], env=env, stdout=out,
                                     stderr=err)
            deadline = time.monotonic() + WAIT_S
            while queue.llen(QUEUE_NAME) < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert queue.llen(QUEUE_NAME) == 2
    try:  # the server is stopped here, with the batch still waiting on it
        code = batch.wait(timeout=120)
    finally:
        if batch.poll() is None:
            batch.kill()
    stderr = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert code == 3, stderr[-3000:]
    assert "Traceback" not in stderr
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "lost the broker" in errors[0], stderr[-3000:]
    audits = json.loads((tmp_path / "stdout").read_text(encoding="utf-8"))["audits"]
    assert [a["status"] for a in audits] == ["failed", "failed"]
    written = json.loads((tmp_path / "out" / "batch_summary.json").read_text(encoding="utf-8"))
    assert len(written["audits"]) == 2
