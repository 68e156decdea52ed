"""The HTTP clients of OpenAI-compatible model calls: every answer is bounded in bytes and in
time.

A model server is hostile input like the repository and the report. httpx bounds each read of
a socket by the call timeout, never a whole answer: a server that drips one byte a second is
read for ever (and a call abandoned at its timeout keeps its thread, which holds the process
at exit), and one that sends a gigabyte, or a gzip body that inflates to one, is read whole
into memory, once per judge running at once. The transport below ends a response once it has
given `MAX_ANSWER_BYTES` or once `deadline_s` has passed since the request went out, with
httpx's own errors (ReadError, ReadTimeout), which the SDK turns into its connection and
timeout errors and `automaton_auditor.retry` retries as transient failures. The deadline
bounds every step of the exchange (the host name's lookup, connect, the request, the status
line and headers, the body): each one's timeout is cut to the time left, through the network
backend given to httpcore's connection pool (`judging.wire_net`). Answers are asked for
uncompressed; a compressed one is refused before it is inflated.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpcore2
import httpx2

from automaton_auditor.judging import wire_net

# A judge's opinion is a few kilobytes (`max_output_tokens` 1024 by default); a vision reader's
# answer is no bigger. Far above any honest answer, far below what eight at once can cost.
MAX_ANSWER_BYTES = 4 << 20


# httpcore's errors as httpx's, the leaves before their bases (the SDK maps httpx's errors
# to its own connection and timeout errors).
_ERRORS = tuple((getattr(httpcore2, name), getattr(httpx2, name)) for name in (
    "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "ConnectError",
    "ReadError", "WriteError", "ProxyError", "UnsupportedProtocol",
    "RemoteProtocolError", "LocalProtocolError", "TimeoutException", "NetworkError",
    "ProtocolError"))
# httpx's own transport defaults (`httpx.HTTPTransport()`).
_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20)


@contextlib.contextmanager
def _as_httpx() -> Iterator[None]:
    """Raise httpcore's errors as the httpx errors of the same name."""
    try:
        yield
    except Exception as exc:
        mapped = next((theirs for ours, theirs in _ERRORS if isinstance(exc, ours)), None)
        if mapped is None:
            raise
        raise mapped(str(exc)) from exc


def _pool_options() -> dict[str, Any]:
    """httpcore's pool as `httpx.HTTPTransport()` sets it up (certificates, limits)."""
    return {"ssl_context": httpx2.create_ssl_context(),
            "max_connections": _LIMITS.max_connections,
            "max_keepalive_connections": _LIMITS.max_keepalive_connections,
            "keepalive_expiry": _LIMITS.keepalive_expiry}


def _core_request(request: httpx2.Request) -> httpcore2.Request:
    """The httpcore request of an httpx one, asked for an uncompressed answer."""
    request.headers["Accept-Encoding"] = "identity"
    url = request.url
    return httpcore2.Request(
        method=request.method,
        url=httpcore2.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port,
                          target=url.raw_path),
        headers=request.headers.raw, content=request.stream, extensions=request.extensions)


class _Budget:
    """What one response may still cost in bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.left = max_bytes
        self.max_bytes = max_bytes

    def spend(self, chunk: bytes) -> bytes:
        self.left -= len(chunk)
        if self.left < 0:
            raise httpx2.ReadError(f"model answer longer than {self.max_bytes >> 20} MB")
        return chunk


def _checked(response: httpx2.Response) -> None:
    """Refuse an answer the client would inflate (asked for uncompressed)."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise httpx2.ReadError(f"model answer compressed ({encoding[:40]}) though not asked")


class _BoundedStream(httpx2.SyncByteStream):
    def __init__(self, stream: Any, budget: _Budget) -> None:
        self._stream, self._budget = stream, budget

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx():
            for chunk in self._stream:
                yield self._budget.spend(chunk)

    def close(self) -> None:
        with _as_httpx():
            self._stream.close()


class _AsyncBoundedStream(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, budget: _Budget) -> None:
        self._stream, self._budget = stream, budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx():
            async for chunk in self._stream:
                yield self._budget.spend(chunk)

    async def aclose(self) -> None:
        with _as_httpx():
            await self._stream.aclose()


class BoundedTransport(httpx2.BaseTransport):
    """httpx's transport on httpcore's pool, with every exchange held to `deadline_s` (the
    pool's network backend) and every response bounded by `_Budget`."""

    def __init__(self, deadline_s: float, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.deadline_s, self.max_bytes = deadline_s, max_bytes
        self._pool = httpcore2.ConnectionPool(network_backend=wire_net.Backend(),
                                              **_pool_options())

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        wire_net.deadline.set((time.monotonic() + self.deadline_s, self.deadline_s))
        with _as_httpx():
            answer = self._pool.handle_request(_core_request(request))
        response = httpx2.Response(
            status_code=answer.status, headers=answer.headers, extensions=answer.extensions,
            stream=_BoundedStream(answer.stream, _Budget(self.max_bytes)))
        try:
            _checked(response)
        except httpx2.ReadError:
            response.close()
            raise
        return response

    def close(self) -> None:
        self._pool.close()


class AsyncBoundedTransport(httpx2.AsyncBaseTransport):
    """The async twin of `BoundedTransport` (the vision reader's concurrent calls)."""

    def __init__(self, deadline_s: float, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.deadline_s, self.max_bytes = deadline_s, max_bytes
        self._pool = httpcore2.AsyncConnectionPool(network_backend=wire_net.AsyncBackend(),
                                                   **_pool_options())

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        wire_net.deadline.set((time.monotonic() + self.deadline_s, self.deadline_s))
        with _as_httpx():
            answer = await self._pool.handle_async_request(_core_request(request))
        response = httpx2.Response(
            status_code=answer.status, headers=answer.headers, extensions=answer.extensions,
            stream=_AsyncBoundedStream(answer.stream, _Budget(self.max_bytes)))
        try:
            _checked(response)
        except httpx2.ReadError:
            await response.aclose()
            raise
        return response

    async def aclose(self) -> None:
        await self._pool.aclose()


def bounded_clients(deadline_s: float) -> dict[str, Any]:
    """`http_client` / `http_async_client` keyword arguments for an OpenAI chat model: the
    SDK's own defaults (connection limits, timeouts) on the bounded transports, and no
    redirect followed (an API answers where it is asked; the prompt holds the audited code)."""
    from openai import DefaultAsyncHttpxClient, DefaultHttpxClient

    return {"http_client": DefaultHttpxClient(transport=BoundedTransport(deadline_s),
                                              follow_redirects=False),
            "http_async_client": DefaultAsyncHttpxClient(
                transport=AsyncBoundedTransport(deadline_s), follow_redirects=False)}
