"""The HTTP clients of OpenAI-compatible model calls: every answer is bounded in bytes and in
time.

A model server is hostile input like the repository and the report. httpx bounds each read of
a socket by the call timeout, never a whole answer: a server that drips one byte a second is
read for ever (and a call abandoned at its timeout keeps its thread, which holds the process
at exit), and one that sends a gigabyte, or a gzip body that inflates to one, is read whole
into memory, once per judge running at once. The transport below ends a response once it has
given `MAX_ANSWER_BYTES` or once `deadline_s` has passed since the request went out, with
httpx's own errors (ReadError, ReadTimeout), which the SDK turns into its connection and
timeout errors and `automaton_auditor.retry` retries as transient failures. Answers are asked
for uncompressed; a compressed one is refused before it is inflated.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2

# A judge's opinion is a few kilobytes (`max_output_tokens` 1024 by default); a vision reader's
# answer is no bigger. Far above any honest answer, far below what eight at once can cost.
MAX_ANSWER_BYTES = 4 << 20


class _Budget:
    """What one response may still cost: bytes, and the time until its deadline."""

    def __init__(self, deadline_s: float, max_bytes: int) -> None:
        self.deadline = time.monotonic() + deadline_s
        self.deadline_s = deadline_s
        self.left = max_bytes
        self.max_bytes = max_bytes

    def spend(self, chunk: bytes) -> bytes:
        self.left -= len(chunk)
        if self.left < 0:
            raise httpx2.ReadError(f"model answer longer than {self.max_bytes >> 20} MB")
        if time.monotonic() > self.deadline:
            raise httpx2.ReadTimeout(f"model answer not complete within {self.deadline_s:g}s")
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

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        budget = _Budget(self.deadline_s, self.max_bytes)
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

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        budget = _Budget(self.deadline_s, self.max_bytes)
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
