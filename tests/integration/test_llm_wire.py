"""The real wire path: langchain-openai against a stdlib OpenAI-compatible server on 127.0.0.1.

The server answers each request from a script (status codes, delays, raw content), or, when the
script is empty, with an opinion built from the request's own JSON schema: it cites the first
evidence id the enum allows and scores by persona (Prosecutor 1, Defense 5, TechLead 3), so
every criterion with evidence is disputed and goes to the re-evaluation round.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from automaton_auditor import retry
from automaton_auditor.cli import app
from automaton_auditor.judging import llm
from automaton_auditor.judging.models import clear_model_cache, endpoint_of
from automaton_auditor.retry import CircuitOpen, ProviderError, circuit_for, reset_circuits
from automaton_auditor.rubric import load_rubric
from automaton_auditor.settings import Settings
from tests.conftest import make_evidence

Step = tuple[Any, ...]
PERSONA_SCORES = {"Prosecutor of a code-audit": 1, "Defense Counsel": 5, "Tech Lead on": 3}


def _dir(out: Path) -> Path:
    """The one report folder under `out` (folders are named per target, with a hash)."""
    found = sorted(out.glob("**/report.json"))
    return found[0].parent if found else out / "no-report"


def auto_opinion(body: dict[str, Any]) -> dict[str, Any]:
    """An opinion that fits the request's schema."""
    schema = body["response_format"]["json_schema"]["schema"]
    props = schema["properties"]
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    enum = props["cited_evidence"]["items"].get("enum", [])
    score = next((s for key, s in PERSONA_SCORES.items() if key in system), 3)
    if "Re-evaluation round" in user:
        score = 3
    answer: dict[str, Any] = {"argument": f"Scripted {score}.", "cited_evidence": enum[:1],
                              "score": score}
    for key in ("charges", "mitigations"):
        if key in props:
            answer[key] = []
    if "remediation" in props:
        answer["remediation"] = "fix it"
    return answer


def completion(content: str | None, tool_calls: list[dict[str, Any]] | None = None
               ) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "test",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


class FakeProvider(ThreadingHTTPServer):
    """The scripted server and what it received."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.steps: deque[Step] = deque()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.fallback: Step = ("auto",)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_step(self, body: dict[str, Any], auth: str | None) -> Step:
        with self.lock:
            self.requests.append({"body": body, "auth": auth})
            return self.steps.popleft() if self.steps else self.fallback


class Handler(BaseHTTPRequestHandler):
    server: FakeProvider

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        step = self.server.next_step(body, self.headers.get("Authorization"))
        kind = step[0]
        if kind == "status":
            _, status, headers = step
            error = {"error": {"message": f"scripted {status}", "type": "x", "code": None}}
            self._send(status, error, headers)
        elif kind == "sleep":
            time.sleep(step[1])
            self._send(200, completion(json.dumps(auto_opinion(body))))
        elif kind == "content":
            self._send(200, completion(step[1]))
        elif kind == "object":
            self._send(200, completion(json.dumps(step[1])))
        elif kind == "no_tool_call":
            self._send(200, completion("I would give it a 4."))
        else:
            self._send(200, completion(json.dumps(auto_opinion(body))))


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    server = FakeProvider()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "AUDITOR_MODEL"):
        monkeypatch.delenv(var, raising=False)
    reset_circuits()
    clear_model_cache()
    yield server
    server.shutdown()
    server.server_close()
    reset_circuits()
    clear_model_cache()


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    recorded: list[float] = []
    monkeypatch.setattr(retry, "_sleep", recorded.append)
    return recorded


DIM = load_rubric().dimension("graph_orchestration")
SETTINGS = Settings(model="openai:test-model", max_retries=2, call_timeout_s=5.0,
                    max_output_tokens=512)


def dossier() -> list[Any]:
    return [make_evidence("fan-out", dimension=DIM.id),
            make_evidence("no conditional edge", dimension=DIM.id, found=False,
                          location="src/graph.py:9")]


def test_scripted_opinion_and_what_goes_on_the_wire(provider: FakeProvider) -> None:
    ev = dossier()
    opinion = llm.llm_opinion("TechLead", DIM, ev, SETTINGS)
    assert (opinion.score, opinion.degraded, opinion.judge) == (3, False, "TechLead")
    assert opinion.cited_evidence == [sorted(ev, key=lambda e: (-e.confidence,
                                                                 e.evidence_id))[0].evidence_id]
    assert opinion.usage is not None and opinion.usage["total_tokens"] == 120
    [request] = provider.requests
    body = request["body"]
    assert request["auth"] == "Bearer test-key"
    assert body["temperature"] == 0 and body["seed"] == 7 and body["max_tokens"] == 512
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert sorted(schema["properties"]["cited_evidence"]["items"]["enum"]) == sorted(
        e.evidence_id for e in ev)
    assert schema["properties"]["argument"]["maxLength"] > 0


def test_429_is_retried_after_its_retry_after(provider: FakeProvider,
                                              waits: list[float]) -> None:
    provider.steps.append(("status", 429, {"Retry-After": "3"}))
    opinion = llm.llm_opinion("Defense", DIM, dossier(), SETTINGS)
    assert opinion.score == 5 and not opinion.degraded
    assert len(provider.requests) == 2 and waits == [3.0]


def test_500_is_retried_then_the_opinion_fails(provider: FakeProvider,
                                               waits: list[float]) -> None:
    provider.fallback = ("status", 500, {})
    with pytest.raises(ProviderError, match="HTTP 500"):
        llm.llm_opinion("Defense", DIM, dossier(), SETTINGS)
    assert len(provider.requests) == 3 and len(waits) == 2


def test_a_timeout_is_retried(provider: FakeProvider, waits: list[float]) -> None:
    provider.steps.append(("sleep", 2.0))
    fast = Settings(model="openai:test-model", max_retries=1, call_timeout_s=0.3)
    opinion = llm.llm_opinion("Prosecutor", DIM, dossier(), fast)
    assert opinion.score == 1 and not opinion.degraded
    assert len(provider.requests) == 2


def test_malformed_json_degrades_after_retries(provider: FakeProvider,
                                               waits: list[float]) -> None:
    provider.fallback = ("content", '{"argument": "unterminated')
    opinion = llm.llm_opinion("Prosecutor", DIM, dossier(), SETTINGS)
    assert opinion.degraded and "unparseable" in opinion.argument
    assert len(provider.requests) == 3
    assert opinion.usage is not None and opinion.usage["calls"] == 3


def test_schema_violating_object_degrades(provider: FakeProvider, waits: list[float]) -> None:
    provider.fallback = ("object", {"argument": "x", "cited_evidence": ["made-up"],
                                    "mitigations": [], "score": 9})
    opinion = llm.llm_opinion("Defense", DIM, dossier(), SETTINGS)
    assert opinion.degraded and len(provider.requests) == 3


def test_none_parse_from_function_calling_degrades(provider: FakeProvider,
                                                   waits: list[float]) -> None:
    provider.fallback = ("no_tool_call",)
    tools = Settings(model="openai:test-model", max_retries=1,
                     structured_output_method="function_calling")
    opinion = llm.llm_opinion("TechLead", DIM, dossier(), tools)
    assert opinion.degraded and "no object" in opinion.argument
    assert provider.requests[0]["body"]["tools"][0]["function"]["name"] == "JudicialOpinion"
    assert len(provider.requests) == 2


def test_invalid_key_opens_the_circuit(provider: FakeProvider) -> None:
    provider.fallback = ("status", 401, {})
    with pytest.raises(CircuitOpen):
        llm.llm_opinion("TechLead", DIM, dossier(), SETTINGS)
    with pytest.raises(CircuitOpen):
        llm.llm_opinion("Defense", DIM, dossier(), SETTINGS)
    assert len(provider.requests) == 1
    assert "HTTP 401" in (circuit_for(endpoint_of("openai:test-model")).reason or "")


def audit(repo: Path, pdf: Path, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(app, [str(repo), str(pdf), "--output-dir", str(out), "--quiet",
                                    "--model", "openai:test-model", *extra])


def read(out: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    folder = _dir(out)
    return ((folder / "report.md").read_text(encoding="utf-8"),
            json.loads((folder / "report.json").read_text(encoding="utf-8")),
            json.loads((folder / "run_manifest.json").read_text(encoding="utf-8")))


def test_full_audit_with_dialectics_and_token_totals(
        provider: FakeProvider, waits: list[float], auditee_repo: Path, report_pdf: Path,
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = audit(auditee_repo, report_pdf, out)
    assert result.exit_code == 0, result.output
    markdown, report, manifest = read(out)
    assert report["bench"] == "LLM bench (openai:test-model)"
    rounds = [o["round"] for c in report["criteria"] for o in c["judge_opinions"]]
    disputed = [c for c in report["criteria"] if c["earlier_opinions"]]
    assert disputed and rounds.count(2) == 3 * len(disputed)
    assert "Round 1, before the re-evaluation" in markdown
    calls = len(provider.requests)
    assert calls == 30 + 3 * len(disputed)
    assert manifest["usage"] == {"calls": calls, "input_tokens": 100 * calls,
                                 "output_tokens": 20 * calls, "total_tokens": 120 * calls}
    assert report["usage"]["total_tokens"] == 120 * calls
    assert f"{120 * calls:,} total, over {calls} model calls" in markdown


def test_some_bad_answers_are_marked_degraded_and_excluded(
        provider: FakeProvider, waits: list[float], auditee_repo: Path, report_pdf: Path,
        tmp_path: Path) -> None:
    provider.steps.extend([("content", "not json at all")] * 3)  # the first call's 3 attempts
    out = tmp_path / "out"
    result = audit(auditee_repo, report_pdf, out, "--max-concurrency", "1")
    assert result.exit_code == 0, result.output
    markdown, report, manifest = read(out)
    assert manifest["degraded_opinions"] == 1
    assert "(degraded, excluded)" in markdown
    first = report["criteria"][0]
    assert any("degraded opinion excluded" in note for note in first["overruled"])


def from_evidence_alone(report: dict[str, Any]) -> bool:
    """No opinion survived: every score starts from the evidence alone (a confirmed failure
    pattern, such as the fixture report's hallucinated path, may then cap it)."""
    return all(c["rules_applied"][0]["rule"] == "evidence_baseline"
               and c["deciding_rule"] in ("evidence_baseline", "failure_pattern_cap")
               for c in report["criteria"])


def test_invalid_key_stops_the_run_with_a_partial_report_and_exit_3(
        provider: FakeProvider, auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    provider.fallback = ("status", 401, {})
    out = tmp_path / "out"
    result = audit(auditee_repo, report_pdf, out)
    assert result.exit_code == 3
    assert "partial report written" in result.output
    markdown, report, manifest = read(out)
    # only the calls already in flight (max concurrency 8) reached the server: the open
    # circuit stopped the 22+ later ones
    assert len(provider.requests) <= 8
    assert "HTTP 401" in (manifest["aborted"] or "")
    assert "stopped early" in report["executive_summary"]
    assert markdown.count("(degraded, excluded)") == 30
    assert from_evidence_alone(report)


def test_provider_down_stops_the_run(provider: FakeProvider, waits: list[float],
                                     auditee_repo: Path, report_pdf: Path,
                                     tmp_path: Path) -> None:
    provider.fallback = ("status", 503, {})
    out = tmp_path / "out"
    result = audit(auditee_repo, report_pdf, out, "--max-concurrency", "2")
    assert result.exit_code == 3
    _, _, manifest = read(out)
    assert "provider unavailable" in manifest["aborted"]
    # three calls exhausted their attempts; the open circuit spared the rest
    assert len(provider.requests) <= 3 * 3 + 2 * 3


def test_dry_run_calls_nothing(provider: FakeProvider, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["https://github.com/o/r", str(tmp_path / "r.pdf"),
                                      "--model", "openai:test-model", "--dry-run",
                                      "--persona-model", "Defense=openai:other"])
    assert result.exit_code == 0, result.output
    assert "30 calls in round 1" in result.output
    assert "openai:other" in result.output and "token" in result.output
    assert provider.requests == []
    assert not (tmp_path / "audit").exists()


class TraceSink(ThreadingHTTPServer):
    """A stand-in LangSmith endpoint that keeps the runs it is sent."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), SinkHandler)
        self.posts: list[tuple[str, bytes]] = []

    def runs(self) -> list[dict[str, Any]]:
        """The run objects of every multipart batch (``post.<id>`` parts)."""
        from email import policy
        from email.parser import BytesParser

        runs = []
        for content_type, body in self.posts:
            message = BytesParser(policy=policy.HTTP).parsebytes(
                b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition") or ""
                if name.startswith("post.") and name.count(".") == 1:
                    payload = part.get_payload(decode=True)
                    runs.append(json.loads(payload))
        return runs


class SinkHandler(BaseHTTPRequestHandler):
    server: TraceSink

    def log_message(self, *args: Any) -> None:
        pass

    def _ok(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def do_GET(self) -> None:
        self._ok()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posts.append((self.headers.get("Content-Type", ""), body))
        self._ok()

    do_PATCH = do_POST


def test_langsmith_gets_one_root_run_per_audit_tagged_with_target_and_commit(
        provider: FakeProvider, auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    sink = TraceSink()
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    env = {**os.environ, "LANGSMITH_TRACING": "true", "LANGSMITH_API_KEY": "test",
           "LANGSMITH_ENDPOINT": f"http://127.0.0.1:{sink.server_address[1]}"}
    try:
        done = subprocess.run([sys.executable, "-m", "automaton_auditor", str(auditee_repo),
                               str(report_pdf), "--output-dir", str(tmp_path / "out"),
                               "--quiet", "--model", "openai:test-model"],
                              env=env, capture_output=True, text=True, timeout=300)
    finally:
        sink.shutdown()
        sink.server_close()
    assert done.returncode == 0, done.stderr[-2000:]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=auditee_repo, text=True,
                            capture_output=True, check=True).stdout.strip()
    runs = sink.runs()
    roots = [r for r in runs if r.get("parent_run_id") is None]
    assert [r["name"] for r in roots] == ["audit auditee"]
    assert f"target:{auditee_repo}" in roots[0]["tags"]
    assert f"commit:{commit}" in roots[0]["tags"]
    judge_runs = [r for r in runs if str(r.get("name", "")).startswith("Prosecutor on ")]
    assert judge_runs and all(r["trace_id"] == roots[0]["id"] for r in judge_runs)


def test_connection_refused_is_retried_and_opens_the_circuit(
        provider: FakeProvider, waits: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    clear_model_cache()
    for _ in range(3):
        with pytest.raises(ProviderError, match="Connection"):
            llm.llm_opinion("Defense", DIM, dossier(), SETTINGS)
    assert len(waits) == 3 * 2
    assert "provider unavailable" in (circuit_for(endpoint_of("openai:test-model")).reason
                                      or "")


def test_a_provider_that_always_answers_429_is_waited_for_and_the_run_ends_degraded(
        provider: FakeProvider, waits: list[float], auditee_repo: Path, report_pdf: Path,
        tmp_path: Path) -> None:
    provider.fallback = ("status", 429, {"Retry-After": "1"})
    out = tmp_path / "out"
    result = audit(auditee_repo, report_pdf, out, "--max-concurrency", "1")
    assert result.exit_code == 3, result.output
    assert "partial report written" in result.output and "Traceback" not in result.output
    markdown, report, manifest = read(out)
    # three calls spent their three attempts, each retry after the server's Retry-After;
    # the third failure in a row opened the circuit, which spared the other 27 calls
    assert len(provider.requests) == 9
    assert waits == [1.0] * 6
    assert "provider unavailable (HTTP 429" in manifest["aborted"]
    assert markdown.count("(degraded, excluded)") == 30
    assert from_evidence_alone(report)


VISION_ANSWER = {"kind": "state_machine", "parallel_detectives": True, "aggregation": True,
                 "parallel_judges": True, "synthesis": True, "described_flow": "A -> [B | C]",
                 "node_labels": ["A", "B", "C"]}


def _vision(count: int, policy: Any) -> list[Any]:
    """`count` diagrams read by a ChatOpenAI vision model on the fake provider."""
    import asyncio
    import io

    from langchain_openai import ChatOpenAI
    from PIL import Image

    from automaton_auditor.forensics.vision.inspector import analyze_with_model
    from automaton_auditor.state import DiagramFacts

    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), "white").save(buffer, format="PNG")
    model = ChatOpenAI(model="vision-test", max_retries=0, timeout=5)
    diagrams = [DiagramFacts(page=i + 1) for i in range(count)]
    return asyncio.run(analyze_with_model(diagrams, [buffer.getvalue()] * count, model,
                                          max_concurrency=1, policy=policy))


def test_the_vision_reader_waits_for_retry_after_and_does_not_retry_a_400(
        provider: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    from automaton_auditor.retry import RetryPolicy

    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(retry, "_asleep", record)
    provider.steps.extend([("status", 429, {"Retry-After": "1"}),
                           ("content", json.dumps(VISION_ANSWER))])
    [read_] = _vision(1, RetryPolicy(attempts=3))
    assert read_.analysis["degraded"] is False and read_.analysis["attempts"] == 2
    assert waits == [1.0]
    provider.steps.append(("status", 400, {}))
    [refused] = _vision(1, RetryPolicy(attempts=3))
    assert refused.analysis["degraded"] is True and "not retried" in refused.analysis["error"]
    assert len(provider.requests) == 3 and waits == [1.0]


def test_the_vision_readers_circuit_opens_and_spares_the_other_diagrams(
        provider: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    from automaton_auditor.retry import RetryPolicy

    async def no_wait(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "_asleep", no_wait)
    provider.fallback = ("status", 503, {})
    out = _vision(5, RetryPolicy(attempts=2, circuit_threshold=3))
    assert all(d.analysis["degraded"] for d in out)
    assert len(provider.requests) == 3 * 2  # three diagrams spent two attempts each
    assert [d.analysis["attempts"] for d in out] == [2, 2, 2, 0, 0]
    assert "provider unavailable" in out[-1].analysis["error"]
