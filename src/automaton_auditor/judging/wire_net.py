"""The sockets of a model call, held to the call's deadline (`judging.wire` sets it).

httpcore gives each socket operation its own timeout, never the exchange as a whole, and its
connect resolves the host name with a blocking `getaddrinfo` that no timeout covers: a
resolver that never answers held a judge past its deadline (and, in the async client,
`asyncio.run` waited at exit on the executor thread stuck in the lookup). The network backends
below are httpcore's public `network_backend` hook: each operation's timeout is cut to the time
left before the deadline, and the host name is looked up in a daemon thread that is waited
for only until then (`resolve`), so an unanswered lookup costs a parked thread (at most
`MAX_LOOKUPS` at once), never the audit.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
import threading
import time
from typing import Any

import httpcore2

# (monotonic deadline, its length in seconds) of the exchange under way in this context: set
# by the transport when a request goes out, read by every socket operation that serves it.
deadline: contextvars.ContextVar[tuple[float, float]] = contextvars.ContextVar("deadline")
# Lookups under way at once (a resolver that never answers parks one thread each until it
# gives up): past this many, a call waits for a place until its deadline, never for ever.
MAX_LOOKUPS = 32
_lookups = threading.BoundedSemaphore(MAX_LOOKUPS)


def left(timeout: float | None) -> float | None:
    """`timeout` cut to the time left before the exchange's deadline (raises once past it)."""
    current = deadline.get(None)
    if current is None:
        return timeout
    remaining = current[0] - time.monotonic()
    if remaining <= 0:
        raise httpcore2.ReadTimeout(f"model answer not complete within {current[1]:g}s")
    return remaining if timeout is None else min(timeout, remaining)


class _Lookup:
    """One `getaddrinfo` in a daemon thread: its addresses or its error once it returns."""

    def __init__(self, host: str, port: int, slots: threading.BoundedSemaphore) -> None:
        self.done, self._slots = threading.Event(), slots
        self.addresses: list[str] = []
        self.error: OSError | None = None
        threading.Thread(target=self._run, args=(host, port), daemon=True,
                         name="model-host-lookup").start()

    def _run(self, host: str, port: int) -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            self.addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        except OSError as exc:
            self.error = exc
        finally:
            self._slots.release()
            self.done.set()


def resolve(host: str, port: int, timeout: float | None) -> list[str]:
    """The addresses of `host`, looked up in a daemon thread that is waited for at most
    `timeout` seconds (a place among `MAX_LOOKUPS` included); an IP address as it is."""
    if _literal(host):
        return [host]
    current = deadline.get(None)
    within = f" within {current[1]:g}s" if current else ""
    ends = None if timeout is None else time.monotonic() + timeout
    slots = _lookups
    if not slots.acquire(timeout=-1 if timeout is None else timeout):
        raise httpcore2.ConnectTimeout(f"model host {host[:80]!r} not resolved{within} "
                                       f"({MAX_LOOKUPS} lookups unanswered)")
    lookup = _Lookup(host, port, slots)
    lookup.done.wait(None if ends is None else max(0.0, ends - time.monotonic()))
    if not lookup.done.is_set():
        raise httpcore2.ConnectTimeout(f"model host {host[:80]!r} not resolved{within}")
    if lookup.error is not None or not lookup.addresses:
        raise httpcore2.ConnectError(f"model host {host[:80]!r} not resolved: {lookup.error}")
    return lookup.addresses


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


class _Stream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return self._inner.read(max_bytes, left(timeout))
        except httpcore2.ReadTimeout:
            left(None)  # past the deadline: say so
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class Backend(httpcore2.NetworkBackend):
    """httpcore's sync backend with every stream it opens held to the deadline, and the host
    name looked up within it."""

    def __init__(self, inner: httpcore2.NetworkBackend | None = None) -> None:
        self._inner = inner or httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> httpcore2.NetworkStream:
        addresses = resolve(host, port, left(timeout))
        error: Exception | None = None
        for address in addresses:  # in the resolver's order, as socket.create_connection
            try:
                return _Stream(self._inner.connect_tcp(address, port, left(timeout),
                                                       local_address, socket_options))
            except httpcore2.ConnectError as exc:
                error = exc
        assert error is not None
        raise error

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore2.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _AsyncStream(httpcore2.AsyncNetworkStream):
    def __init__(self, inner: httpcore2.AsyncNetworkStream) -> None:
        self._inner = inner

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return await self._inner.read(max_bytes, left(timeout))
        except httpcore2.ReadTimeout:
            left(None)  # past the deadline: say so
            raise

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, left(timeout))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore2.AsyncNetworkStream:
        return _AsyncStream(await self._inner.start_tls(ssl_context, server_hostname,
                                                        left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class AsyncBackend(httpcore2.AsyncNetworkBackend):
    """The async twin of `Backend` (httpcore's asyncio/trio backend inside)."""

    def __init__(self, inner: httpcore2.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or httpcore2.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Any = None) -> httpcore2.AsyncNetworkStream:
        import anyio.to_thread

        addresses = [host]
        if not _literal(host):
            # In a worker thread that waits at most until the deadline: the event loop's
            # executor never holds a thread stuck in the resolver.
            addresses = await anyio.to_thread.run_sync(resolve, host, port, left(timeout))
        error: Exception | None = None
        for address in addresses:
            try:
                return _AsyncStream(await self._inner.connect_tcp(
                    address, port, left(timeout), local_address, socket_options))
            except httpcore2.ConnectError as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore2.AsyncNetworkStream:
        return _AsyncStream(await self._inner.connect_unix_socket(path, left(timeout),
                                                                  socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
