"""A hostile OpenAI-compatible model server on 127.0.0.1 (started and stopped by each test).

Answers that never end (one byte every so often, which no read timeout catches), answers of
tens of megabytes or a gzip body that inflates to them, and a redirect elsewhere: each call
ends within its call timeout with a bounded read, and nothing follows the redirect. The last
case is a whole audit against a dripping server: exit 3, one `error:` line, a partial report,
and a process that exits (an abandoned call's thread used to hold it for ever).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpcore2
import pytest

from automaton_auditor.judging import wire_net
from automaton_auditor.judging.models import build_chat_model, clear_model_cache
from automaton_auditor.retry import classify, describe
from automaton_auditor.settings import Settings
from tests.hostile.harness import Case, audit, check
from tests.integration.test_llm_wire import auto_opinion

PREFIX = b'{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,' \
         b'"finish_reason":"stop","message":{"role":"assistant","content":"'
SUFFIX = b'"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = mode
        self.hits = 0
        self.redirect_to = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.hits += 1
        mode, headers = self.server.mode, {"Content-Type": "application/json"}
        if mode == "usage":  # valid opinions, token counts past 64 bits
            self._usage(json.loads(raw))
            return
        if mode == "header-drip":  # the status line, then a header line that never ends
            self._drip(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            return
        if mode == "redirect":
            self.send_response(307)
            self.send_header("Location", self.server.redirect_to + "/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = PREFIX + b"a" * (40 << 20) + SUFFIX
        if mode == "gzip":
            body, headers["Content-Encoding"] = gzip.compress(body, 1), "gzip"
        self.send_response(200)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(1 << 40 if mode == "drip" else len(body)))
        self.end_headers()
        if mode == "drip":
            self._drip(PREFIX)
            return
        with contextlib.suppress(OSError):
            self.wfile.write(body)

    def _usage(self, request: dict[str, Any]) -> None:
        answer = auto_opinion(request)
        body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                           "choices": [{"index": 0, "finish_reason": "stop", "message": {
                               "role": "assistant", "content": json.dumps(answer)}}],
                           "usage": {"prompt_tokens": 10**30, "completion_tokens": 10**30,
                                     "total_tokens": 2 * 10**30}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _drip(self, start: bytes) -> None:
        """`start`, then a byte every 0.2 s for ever: every read returns within its timeout."""
        with contextlib.suppress(OSError):
            self.wfile.write(start)
            while True:
                self.wfile.write(b"a")
                self.wfile.flush()
                time.sleep(0.2)


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Server]]:
    servers: list[Server] = []

    def start(mode: str) -> Server:
        server = Server(mode)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        monkeypatch.setenv("OPENAI_BASE_URL", servers[0].url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        return server

    clear_model_cache()
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
    clear_model_cache()


def _call(seconds: float, asynchronous: bool = False) -> tuple[bool, BaseException | None]:
    """One chat call with a 2 s call timeout, run in a thread given `seconds` to finish:
    (finished, the error it raised). `asynchronous`: through the async client, under
    `asyncio.run` as the vision reader calls it."""
    model = build_chat_model("openai:m", Settings(model="openai:m", call_timeout_s=2.0))
    box: dict[str, BaseException] = {}

    def run() -> None:
        try:
            if asynchronous:
                asyncio.run(model.ainvoke("hello"))
            else:
                model.invoke("hello")
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive(), box.get("error")


@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize("mode", ["drip", "header-drip"])
def test_an_answer_that_drips_for_ever_ends_at_the_call_timeout(
        serve: Callable[[str], Server], mode: str, asynchronous: bool) -> None:
    """In the body or in the headers (before httpx hands the response back)."""
    serve(mode)
    finished, error = _call(10.0, asynchronous)
    assert finished, "the call was still reading a dripping answer after 10 s"
    assert error is not None and "within 2s" in describe(error)


@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize("mode", ["huge", "gzip"])
def test_a_huge_answer_is_not_read_whole(serve: Callable[[str], Server], mode: str,
                                         asynchronous: bool) -> None:
    """40 MB of content, sent as is or gzipped to 40 KB: refused, not parsed."""
    serve(mode)
    finished, error = _call(20.0, asynchronous)
    assert finished and error is not None, "a 40 MB answer was read and parsed"
    assert ("longer than" if mode == "huge" else "compressed") in describe(error)


def test_a_host_name_is_looked_up_and_each_address_tried(
        serve: Callable[[str], Server], monkeypatch: pytest.MonkeyPatch) -> None:
    """A base URL by name reaches the server: every address the name resolves to is tried
    in turn (the first one here refuses the connection)."""
    server, real = serve("huge"), socket.getaddrinfo
    port = server.server_address[1]

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "model.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port)),
                    (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://model.test:{port}/v1")
    finished, error = _call(20.0)
    assert finished and error is not None and "longer than" in describe(error)


def test_a_redirect_is_not_followed(serve: Callable[[str], Server]) -> None:
    server, elsewhere = serve("redirect"), serve("huge")
    server.redirect_to = elsewhere.url
    finished, error = _call(10.0)
    assert finished and error is not None
    assert elsewhere.hits == 0, "the call followed the redirect to another server"
    assert "HTTP 307" in describe(error)
    assert classify(error) == "fatal"  # the circuit opens at once: every call would redirect


@pytest.fixture
def slow_dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A model host name whose lookup blocks (a resolver that never answers) until the test
    ends; other names resolve as usual."""
    name, release, real = "slow-dns.invalid", threading.Event(), socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in (name, name.encode()):
            release.wait(60)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://{name}:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    clear_model_cache()
    yield name
    release.set()
    clear_model_cache()


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_host_name_that_never_resolves_ends_at_the_call_timeout(
        slow_dns: str, asynchronous: bool) -> None:
    """The name lookup is part of the call: the deadline covers it too (a blocked
    getaddrinfo held the judge, and `asyncio.run` waited on its thread at exit)."""
    finished, error = _call(10.0, asynchronous)
    assert finished, "the call was still resolving the model host name after 10 s"
    assert error is not None and "within 2s" in describe(error)
    assert classify(error) == "transient"


def test_unanswered_lookups_park_a_bounded_number_of_threads(
        slow_dns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each unanswered lookup parks a daemon thread; past `MAX_LOOKUPS` a call waits for a
    place until its deadline and parks none."""
    monkeypatch.setattr(wire_net, "_lookups", threading.BoundedSemaphore(2))
    for _ in range(2):
        with pytest.raises(httpcore2.ConnectTimeout, match="not resolved"):
            wire_net.resolve(slow_dns, 9, 0.2)
    before = threading.active_count()
    with pytest.raises(httpcore2.ConnectTimeout, match="lookups unanswered"):
        wire_net.resolve(slow_dns, 9, 0.2)
    assert threading.active_count() == before


def test_an_audit_against_a_dripping_server_ends(case: Case, good_repo: Path, good_pdf: Path,
                                                 serve: Callable[[str], Server]) -> None:
    server = serve("drip")
    case.extra_env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="test-key",
                          AUDITOR_MAX_RETRIES="0")
    result = audit(case, good_repo, good_pdf, "--model", "openai:m", "--call-timeout", "2")
    check(result, 3, needle="within 2s", report=True)
    assert json.loads(next(case.out.rglob("report.json")).read_text())["criteria"]


def test_token_counts_past_64_bits_do_not_fail_the_audit(
        case: Case, good_repo: Path, good_pdf: Path, serve: Callable[[str], Server]) -> None:
    """The server says how many tokens it used: 10**30 could not be checkpointed (msgpack),
    and the audit failed (exit 3, every criterion not judged) on valid opinions."""
    server = serve("usage")
    case.extra_env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="test-key")
    result = audit(case, good_repo, good_pdf, "--model", "openai:m")
    check(result, 0, "any", report=True)
    report = json.loads(next(case.out.rglob("report.json")).read_text())
    assert all(c["judged"] for c in report["criteria"])
