"""Batches past one machine, with the real servers: PostgreSQL and Redis as child processes on
free 127.0.0.1 ports, two `audit worker`s standing in for two machines (each with its own
cache directory), twelve fixture audits, and one worker SIGKILLed while it has an audit in
hand. Every audit finishes, the killed one resumed from its checkpoint by the other worker;
each report equals a single-machine run's apart from dates and run ids; `audit runs` from a
third "machine" lists them. Everything started is stopped by PID.

Skipped (with the reason) without the server binaries (`.ci/install-servers` installs them)
or without the scale extra (`uv sync --extra scale`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
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
from tests.integration.servers import (
    free_port,
    missing_servers,
    postgres_server,
    redis_server,
    stop_pid,
)

ROWS = 12
# Short, so the killed worker's task comes back within the test. A live audit that outlasts
# it gets a twin delivery, which waits on the run's lock and drops out: harmless.
VISIBILITY_S = 20
WAIT_S = 900

_MISSING_EXTRA = [m for m in ("celery", "psycopg", "langgraph.checkpoint.postgres")
                  if importlib.util.find_spec(m) is None]
_EXTRA = f"the scale extra (uv sync --extra scale; missing {', '.join(_MISSING_EXTRA)})"
_SERVERS = f"the servers' binaries (.ci/install-servers; missing {', '.join(missing_servers())})"
_NEEDED = [need for need, missing in ((_SERVERS, missing_servers()), (_EXTRA, _MISSING_EXTRA))
           if missing]
needs_servers = pytest.mark.skipif(bool(_NEEDED), reason="needs " + " and ".join(_NEEDED))
needs_extra = pytest.mark.skipif(bool(_MISSING_EXTRA), reason=f"needs {_EXTRA}")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "automaton_auditor", *args]


def _machine(tmp_path: Path, name: str, database_url: str | None) -> dict[str, str]:
    """The environment of one "machine": its own cache directory, the shared database."""
    env = {**os.environ, "AUDITOR_CACHE_DIR": str(tmp_path / f"cache-{name}"),
           "HF_HUB_OFFLINE": "1", "COLUMNS": "250"}
    env.pop("AUDITOR_DATABASE_URL", None)
    if database_url:
        env["AUDITOR_DATABASE_URL"] = database_url
    return env


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    from automaton_auditor.storage.postgres import postgres_checkpointer

    with postgres_server() as database, redis_server() as broker:
        with postgres_checkpointer(database):
            pass  # the tables exist from here on, for the tests' own queries
        yield database, broker


def _pairs(tmp_path: Path) -> Path:
    """Twelve rows: twelve repositories (each its own commit) over two reports."""
    reports = [make_report_pdf(tmp_path / f"report-{n}.pdf", f"Architecture Report {n}")
               for n in (1, 2)]
    lines = ["target,report"]
    for row in range(1, ROWS + 1):
        repo = make_auditee(tmp_path / "repos" / f"team-{row:02d}", variant=row)
        lines.append(f"{repo},{reports[row % 2]}")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return pairs


@contextlib.contextmanager
def _started(processes: dict[str, subprocess.Popen[bytes]]) -> Iterator[None]:
    """Stop every process this test started, by PID, whatever happens."""
    try:
        yield
    finally:
        for process in processes.values():
            stop_pid(process)


def _worker(name: str, broker: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(_cli("worker", "--queue", broker, "--name", name,
                                     "--visibility-timeout", str(VISIBILITY_S),
                                     "--root", str(log.parent)),
                                env=env, stdout=out, stderr=subprocess.STDOUT)


def _in_hand(database: str, broker: str, worker: str,
             batch: subprocess.Popen[bytes]) -> str:
    """The run id of an audit `worker` has in hand with at least one step checkpointed."""
    from automaton_auditor.queue.app import make_app

    app = make_app(broker)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        assert batch.poll() is None, "the batch ended before a worker had an audit in hand"
        for run_id in _started_runs(database):
            result = app.AsyncResult(run_id)
            if result.state == "STARTED" and (result.info or {}).get("hostname") == worker:
                return run_id
        time.sleep(0.2)
    raise AssertionError(f"{worker} never had an audit in hand")


def _failed_rows(stdout: bytes, stderr: bytes) -> str:
    """The rows of a `batch --json` run that did not exit 0, with their errors."""
    try:
        audits = json.loads(stdout)["audits"]
    except (ValueError, KeyError):
        return stderr.decode()[-3000:]
    return "; ".join(f"row {a['row']} exit {a['exit_code']}: {a['error']}"
                     for a in audits if a["exit_code"])


def _report(path: str | Path) -> dict[str, Any]:
    """report.json without what differs between any two runs (date, run id)."""
    data = json.loads((Path(path).parent / "report.json").read_text(encoding="utf-8"))
    for volatile in ("generated_at", "run_id"):
        data.pop(volatile, None)
    return data


@needs_servers
def test_a_batch_survives_a_killed_worker_and_matches_one_machine(
        servers: tuple[str, str], tmp_path: Path) -> None:
    from automaton_auditor.service import load_run

    database, broker = servers
    pairs, out = _pairs(tmp_path), tmp_path / "queued"
    names = {m: f"{m}@queue-test" for m in ("a", "b")}
    processes: dict[str, subprocess.Popen[bytes]] = {}
    with _started(processes):
        for machine, name in names.items():
            processes[machine] = _worker(name, broker, _machine(tmp_path, machine, database),
                                         tmp_path / f"worker-{machine}.log")
        processes["batch"] = subprocess.Popen(
            _cli("batch", str(pairs), "--queue", broker, "--output-dir", str(out), "--json"),
            env=_machine(tmp_path, "c", None), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        victim = _in_hand(database, broker, names["a"], processes["batch"])
        os.kill(processes["a"].pid, signal.SIGKILL)
        processes["a"].wait(timeout=30)
        assert not load_run(victim, database_url=database).finished  # killed mid-audit
        stdout, stderr = processes["batch"].communicate(timeout=WAIT_S)
    assert processes["batch"].returncode == 0, _failed_rows(stdout, stderr)
    audits = json.loads(stdout)["audits"]
    assert [a["exit_code"] for a in audits] == [0] * ROWS
    assert {a["worker"] for a in audits} <= set(names.values())
    taken_over = next(a for a in audits if a["run_id"] == victim)
    assert taken_over["worker"] == names["b"]
    assert taken_over["resumed_from"].startswith("stopped before"), taken_over

    # The same rows on one machine, with the local process pool and runs.sqlite.
    local = subprocess.run(_cli("batch", str(pairs), "-j", "2", "--output-dir",
                                str(tmp_path / "local"), "--json"),
                           env=_machine(tmp_path, "d", None), capture_output=True, timeout=WAIT_S)
    assert local.returncode == 0, _failed_rows(local.stdout, local.stderr)
    for queued, alone in zip(audits, json.loads(local.stdout)["audits"], strict=True):
        assert _report(queued["report_file"]) == _report(alone["report_file"])

    # Another shell, another cache directory, the same database: every run is listed.
    listed = subprocess.run(_cli("runs", "--limit", "50"), capture_output=True, text=True,
                            env=_machine(tmp_path, "e", database), timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert all(a["run_id"] in listed.stdout for a in audits)


@needs_servers
def test_a_run_whose_machine_died_resumes_on_another(servers: tuple[str, str],
                                                     tmp_path: Path) -> None:
    """`audit run` on one machine, killed (SIGKILL) after its first steps; `audit resume` on
    another machine (its own cache directory, the same database) finishes it."""
    database, _broker = servers
    repo = make_auditee(tmp_path / "resumed", variant=99)
    report = make_report_pdf(tmp_path / "resumed.pdf")
    before = set(_started_runs(database))
    run = subprocess.Popen(_cli(str(repo), str(report), "--output-dir", str(tmp_path / "one"),
                                "-q"), env=_machine(tmp_path, "one", database),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with _started({"run": run}):
        deadline = time.monotonic() + WAIT_S
        while run.poll() is None and time.monotonic() < deadline:
            if set(_started_runs(database)) - before:
                break
            time.sleep(0.2)
        run.kill()  # SIGKILL: the machine is gone, nothing is cleaned up
        run.wait(timeout=30)
    (run_id,) = set(_started_runs(database)) - before
    resumed = subprocess.run(_cli("resume", run_id, "-q"), capture_output=True, text=True,
                             env=_machine(tmp_path, "two", database), timeout=WAIT_S)
    assert resumed.returncode == 0, resumed.stderr
    written = json.loads(next((tmp_path / "one").glob("*/report.json")).read_text())
    assert written["run_id"] == run_id and written["overall_score"] > 0


def _started_runs(database: str) -> list[str]:
    """Runs with at least one step checkpointed (a finished run keeps one checkpoint)."""
    import psycopg

    with psycopg.connect(database, autocommit=True) as conn:
        rows = conn.execute("SELECT thread_id FROM checkpoints GROUP BY thread_id "
                            "HAVING COUNT(*) >= 2").fetchall()
    return [str(r[0]) for r in rows]


@needs_servers
def test_a_run_in_hand_elsewhere_is_not_resumed_twice(servers: tuple[str, str]) -> None:
    from automaton_auditor.storage.checkpoints import run_lock
    from automaton_auditor.storage.postgres import RunStoreError

    database, _broker = servers
    with run_lock(database, "20260101-000000-abcdef"), pytest.raises(
            RunStoreError, match="running on another machine"), \
            run_lock(database, "20260101-000000-abcdef", wait=False):
        pass
    with run_lock(database, "20260101-000000-abcdef", wait=False):
        pass  # free again once its holder is done


@needs_extra
def test_an_unreachable_broker_or_database_is_one_error_line(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(f"{tmp_path},{tmp_path / 'r.pdf'}\n", encoding="utf-8")
    nowhere = f"127.0.0.1:{free_port()}"
    cases = [
        (_cli("batch", str(pairs), "--queue", f"redis://{nowhere}/0"), None,
         "cannot reach the queue"),
        (_cli("runs"), f"postgresql://auditor@{nowhere}/db", "cannot reach the run database"),
        (_cli("worker", "--queue", f"redis://{nowhere}/0"), None,
         "needs the shared run database"),
    ]
    for args, database, needle in cases:
        result = subprocess.run(args, capture_output=True, text=True, timeout=120,
                                env=_machine(tmp_path, "x", database))
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], lines


def test_without_the_scale_extra_the_queue_is_one_error_line(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(f"{tmp_path},{tmp_path / 'r.pdf'}\n", encoding="utf-8")
    # As if celery were not installed (the default install).
    code = ("import sys; sys.modules['celery'] = None; sys.argv = ['audit', 'batch', "
            f"{str(pairs)!r}, '--queue', 'redis://127.0.0.1:6399/0']; "
            "from automaton_auditor.cli import main; main()")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env=_machine(tmp_path, "x", None))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: the queue needs the scale extra: uv sync --extra scale "
        "(or pip install 'automaton-auditor[scale]')"]
