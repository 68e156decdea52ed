"""The same compiled graph under LangGraph Server: start the in-memory dev server
(`langgraph dev`, from the dev dependency ``langgraph-cli[inmem]``) on 127.0.0.1 with
telemetry off, submit one audit through the LangGraph SDK and read its report."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from automaton_auditor.rubric import load_rubric
from automaton_auditor.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).parent / "langgraph"
# Everything that could reach the network from the dev server or the graph, switched off.
OFFLINE_ENV = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false",
               "LANGCHAIN_TRACING_V2": "false", "LANGSMITH_TRACING_V2": "false",
               "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1"}

pytestmark = pytest.mark.skipif(
    not LANGGRAPH.exists(), reason="langgraph-cli[inmem] (dev dependency) is not installed")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ok(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"langgraph dev did not answer in {timeout_s} s:\n{log.read_text()[-3000:]}")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """`langgraph dev` on a free 127.0.0.1 port, run from tmp_path (its state stays there)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))} | OFFLINE_ENV
    env["AUDITOR_CACHE_DIR"] = str(tmp_path / "cache")
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser",
             "--no-reload", "--config", str(ROOT / "langgraph.json")],
            cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ok(url, proc, log, timeout_s=180)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_one_audit_through_the_sdk(server: str, auditee_repo: Path, report_pdf: Path,
                                   tmp_path: Path) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server)
    assert [a["graph_id"] for a in client.assistants.search()] == ["auditor"]
    out = tmp_path / "out"
    audit_input = {"target": str(auditee_repo), "report_path": str(report_pdf),
                   "rubric": load_rubric().model_dump(), "run_id": "served-1",
                   "settings": Settings(output_dir=str(out)).to_state()}
    thread = client.threads.create()
    final = client.runs.wait(thread["thread_id"], "auditor", input=audit_input)
    assert isinstance(final, dict), final
    report = final["final_report"]
    assert report["run_id"] == "served-1"
    assert len(report["criteria"]) == 10
    assert report["bench"] == "offline bench (rule-based judges)"
    written = json.loads(Path(final["report_files"]["json"]).read_text(encoding="utf-8"))
    assert written["overall_score"] == report["overall_score"]
    assert "src/nodes/judges.py" in written["hallucinated_paths"]
    # The server keeps the run's state: the thread's values are the same final report.
    state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["final_report"]["overall_score"] == report["overall_score"]
