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
bounds every socket operation of the exchange (connect, the request, the status line and
headers, the body): each one's timeout is cut to the time left, through the connection
pool's network backend. Answers are asked for uncompressed; a compressed one is refused
before it is inflated.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpcore2
import httpx2

# A judge's opinion is a few kilobytes (`max_output_tokens` 1024 by default); a vision reader's
# answer is no bigger. Far above any honest answer, far below what eight at once can cost.
MAX_ANSWER_BYTES = 4 << 20


# (monotonic deadline, its length in seconds) of the exchange under way in this context: set
# by the transport when a request goes out, read by every socket operation that serves it.
_deadline: contextvars.ContextVar[tuple[float, float]] = contextvars.ContextVar("deadline")


def _left(timeout: float | None) -> float | None:
    """`timeout` cut to the time left before the exchange's deadline (raises once past it)."""
    deadline = _deadline.get(None)
    if deadline is None:
        return timeout
    left = deadline[0] - time.monotonic()
    if left <= 0:
        raise httpcore2.ReadTimeout(f"model answer not complete within {deadline[1]:g}s")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return self._inner.read(max_bytes, _left(timeout))
        except httpcore2.ReadTimeout:
            _left(None)  # past the deadline: say so
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    """The pool's own backend, with every stream it opens held to the deadline."""

    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> httpcore2.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _left(timeout), local_address,
                                               socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore2.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _AsyncStream(httpcore2.AsyncNetworkStream):
    def __init__(self, inner: httpcore2.AsyncNetworkStream) -> None:
        self._inner = inner

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return await self._inner.read(max_bytes, _left(timeout))
        except httpcore2.ReadTimeout:
            _left(None)  # past the deadline: say so
            raise

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, _left(timeout))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore2.AsyncNetworkStream:
        return _AsyncStream(await self._inner.start_tls(ssl_context, server_hostname,
                                                        _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _AsyncBackend(httpcore2.AsyncNetworkBackend):
    def __init__(self, inner: httpcore2.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Any = None) -> httpcore2.AsyncNetworkStream:
        return _AsyncStream(await self._inner.connect_tcp(host, port, _left(timeout),
                                                          local_address, socket_options))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore2.AsyncNetworkStream:
        return _AsyncStream(await self._inner.connect_unix_socket(path, _left(timeout),
                                                                  socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _held_to_deadlines(pool: Any, wrap: Any) -> None:
    """Put `wrap` around the network backend of httpx's connection pool (before it has
    opened any connection)."""
    if not hasattr(pool, "_network_backend"):
        raise RuntimeError("httpcore's connection pool has no network backend to bound")
    pool._network_backend = wrap(pool._network_backend)


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
        for chunk in self._stream:
            yield self._budget.spend(chunk)

    def close(self) -> None:
        self._stream.close()


class _AsyncBoundedStream(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, budget: _Budget) -> None:
        self._stream, self._budget = stream, budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield self._budget.spend(chunk)

    async def aclose(self) -> None:
        await self._stream.aclose()


class BoundedTransport(httpx2.HTTPTransport):
    """httpx's transport, with every response bounded by `_Budget`."""

    def __init__(self, deadline_s: float, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        super().__init__()
        self.deadline_s, self.max_bytes = deadline_s, max_bytes
        _held_to_deadlines(self._pool, _Backend)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        _deadline.set((time.monotonic() + self.deadline_s, self.deadline_s))
        budget = _Budget(self.max_bytes)
        request.headers["Accept-Encoding"] = "identity"
        response = super().handle_request(request)
        try:
            _checked(response)
        except httpx2.ReadError:
            response.close()
            raise
        response.stream = _BoundedStream(response.stream, budget)
        return response


class AsyncBoundedTransport(httpx2.AsyncHTTPTransport):
    """The async twin of `BoundedTransport` (the vision reader's concurrent calls)."""

    def __init__(self, deadline_s: float, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        super().__init__()
        self.deadline_s, self.max_bytes = deadline_s, max_bytes
        _held_to_deadlines(self._pool, _AsyncBackend)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        _deadline.set((time.monotonic() + self.deadline_s, self.deadline_s))
        budget = _Budget(self.max_bytes)
        request.headers["Accept-Encoding"] = "identity"
        response = await super().handle_async_request(request)
        try:
            _checked(response)
        except httpx2.ReadError:
            await response.aclose()
            raise
        response.stream = _AsyncBoundedStream(response.stream, budget)
        return response


def bounded_clients(deadline_s: float) -> dict[str, Any]:
    """`http_client` / `http_async_client` keyword arguments for an OpenAI chat model: the
    SDK's own defaults (connection limits, timeouts) on the bounded transports, and no
    redirect followed (an API answers where it is asked; the prompt holds the audited code)."""
    from openai import DefaultAsyncHttpxClient, DefaultHttpxClient

    return {"http_client": DefaultHttpxClient(transport=BoundedTransport(deadline_s),
                                              follow_redirects=False),
            "http_async_client": DefaultAsyncHttpxClient(
                transport=AsyncBoundedTransport(deadline_s), follow_redirects=False)}
