"""The one retry policy for every model call: the judges' and the vision reader's.

A call is attempted up to `RetryPolicy.attempts` times. Each attempt is bounded by the per-call
timeout. Failures are classified from the HTTP status the provider SDKs attach to their
exceptions (``status_code`` / ``response``), so any OpenAI-compatible server and other providers
behave alike:

- 429 (rate limit): retried after its ``Retry-After`` / ``retry-after-ms`` (capped);
- 408, 5xx, timeouts, connection errors (transient): retried after the Retry-After a 503 may
  give, else with exponential backoff plus jitter, bounded by `RetryPolicy.max_wait_s`;
- 401, 403, 404 (fatal: bad key, forbidden, unknown model) and a 3xx redirect (never
  followed, `judging.wire`): never retried; the endpoint's circuit opens at once, since no
  later call can succeed;
- any other 4xx (client error): never retried;
- an answer that does not fit the schema (parse): retried with backoff; the provider answered,
  so it counts as a success for the circuit.

The circuit of an endpoint opens after `RetryPolicy.circuit_threshold` consecutive calls that
exhausted their attempts on provider errors; while open, calls fail at once with `CircuitOpen`
(the callers degrade what is left). Circuits are per run (`scope`) and endpoint.

Built on tenacity, the library behind LangChain's `Runnable.with_retry`: `with_retry` only offers
a fixed exponential wait, and a 429's Retry-After must decide the wait.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

ErrorKind = Literal["rate_limit", "transient", "fatal", "client", "parse"]
FATAL_STATUS = frozenset({401, 403, 404})  # bad key, forbidden, unknown model
TRANSIENT_STATUS = frozenset({408})  # request timeout: the only 4xx besides 429 worth retrying
RETRIED: frozenset[ErrorKind] = frozenset({"rate_limit", "transient", "parse"})
RETRY_AFTER_CAP_S = 60.0
COOLDOWN_S = 300.0  # an open circuit lets one trial call through after this long
MAX_CIRCUITS = 256  # circuits kept per process (oldest runs forgotten first)

# The waits between attempts (tests record them instead of waiting).
_sleep: Callable[[float], None] = time.sleep
_asleep: Callable[[float], Awaitable[None]] = asyncio.sleep
_random = random.Random()  # noqa: S311 -- jitter spreads retries; no secret depends on it


class ProviderError(RuntimeError):
    """A call failed on the provider's side (or on the wire); its answer is degraded.

    `kind` is how it failed ("rate_limit", "transient", "fatal", "client"); `stops_bench` is
    True when no later call to this endpoint can succeed in this run (the circuit is open).
    """

    def __init__(self, message: str, kind: ErrorKind = "transient",
                 stops_bench: bool = False) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.stops_bench = stops_bench


class CircuitOpen(ProviderError):
    """The endpoint's circuit is open: the provider is down or rejects the credentials."""

    def __init__(self, message: str, kind: ErrorKind = "fatal", refused: bool = False) -> None:
        super().__init__(message, kind, stops_bench=True)
        # True when the call was refused before reaching the provider (the circuit was open)
        self.refused = refused


class Unparsed(Exception):
    """An answer that does not fit the schema (raised inside an attempt to retry it)."""


class CallTimeout(TimeoutError):
    """An attempt got no answer within the per-call timeout."""


@dataclass(frozen=True)
class RetryPolicy:
    """How every model call is retried (built from the run's settings by the callers)."""

    attempts: int = 3
    backoff_s: float = 1.0  # first exponential wait, doubled each time
    max_wait_s: float = RETRY_AFTER_CAP_S  # no single wait is longer (Retry-After included)
    timeout_s: float = 120.0  # per attempt
    jitter: float = 0.25  # exponential waits grow by up to this fraction, at random
    circuit_threshold: int = 3

    def wait_s(self, exc: BaseException | None, attempt: int) -> float:
        """The wait before retry `attempt` (0-based): the response's Retry-After when it gives
        one (429, 503), else exponential backoff with jitter; never longer than `max_wait_s`."""
        hinted = retry_after(exc) if exc is not None else None
        if hinted is not None:
            return min(hinted, self.max_wait_s)
        delay = self.backoff_s * 2.0 ** attempt
        return min(delay * (1.0 + self.jitter * _random.random()), self.max_wait_s)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK exception carries, if any."""
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def classify(exc: BaseException) -> ErrorKind:
    """What kind of failure an exception from a model call is."""
    status = status_of(exc)
    if status == 429:
        return "rate_limit"
    if status in FATAL_STATUS:
        return "fatal"
    if status is not None and (status in TRANSIENT_STATUS or status >= 500):
        return "transient"
    if status is not None and 300 <= status < 400:  # not followed: no call there can succeed
        return "fatal"
    if status is not None and 400 <= status < 500:
        return "client"
    names = " ".join(c.__name__ for c in type(exc).__mro__).lower()
    if any(word in names for word in ("timeout", "connection", "connecterror", "network")):
        return "transient"
    # Validation, JSON and output-parser errors: the model answered, but not in the schema.
    return "parse"


def retry_after(exc: BaseException) -> float | None:
    """Seconds a response asks us to wait (``retry-after-ms`` / ``retry-after``), if it says."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000.0)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, KeyError, IndexError):
        return None


def describe(exc: BaseException) -> str:
    """A short, key-free description of a failure; an SDK's generic wrapper ("Connection
    error.") is followed by the error it wraps, which says what went wrong."""
    status = status_of(exc)
    text = " ".join(str(exc).split())
    cause = _root_cause(exc)
    if status is None and cause is not None and str(cause) not in text:
        text = f"{text} ({type(cause).__name__}: {' '.join(str(cause).split())})"
    text = text[:300]
    prefix = f"HTTP {status}" if status is not None else type(exc).__name__
    return f"{prefix}: {text}" if text else prefix


def _root_cause(exc: BaseException) -> BaseException | None:
    """The innermost error an exception was raised from (`raise ... from`) that says
    something, a few levels deep at most."""
    found, seen = None, exc.__cause__
    for _ in range(8):
        if seen is None:
            break
        if str(seen):
            found = seen
        seen = seen.__cause__
    return found


@dataclass
class Circuit:
    """A breaker shared by every call to one endpoint in one run."""

    threshold: int = 3
    reason: str | None = None
    opened_at: float | None = None
    failures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self) -> None:
        """Raise CircuitOpen while open (after the cooldown, one trial call goes through)."""
        with self.lock:
            if self.reason is None or self.opened_at is None:
                return
            if time.monotonic() - self.opened_at < COOLDOWN_S:
                raise CircuitOpen(self.reason, refused=True)
            self.opened_at = time.monotonic()  # half-open: this call is the trial

    def success(self) -> None:
        """A call got an answer from the provider: close the circuit."""
        with self.lock:
            self.failures, self.reason, self.opened_at = 0, None, None

    def failure(self, reason: str, fatal: bool = False) -> bool:
        """A call failed on the provider side; open after a fatal error or a streak of
        `threshold` failures. Returns True when the circuit is open."""
        with self.lock:
            self.failures += 1
            if fatal or self.failures >= self.threshold:
                if self.reason is None:
                    log.error("circuit opened: %s", reason)
                self.reason, self.opened_at = reason, time.monotonic()
            return self.reason is not None


_circuits: dict[tuple[str, str], Circuit] = {}
_circuits_lock = threading.Lock()


def circuit_for(endpoint: str, scope: str = "", threshold: int = 3) -> Circuit:
    """The circuit of an endpoint within one run (`scope`, the run id)."""
    with _circuits_lock:
        key = (scope, endpoint)
        if key not in _circuits:
            while len(_circuits) >= MAX_CIRCUITS:
                del _circuits[next(iter(_circuits))]
            _circuits[key] = Circuit(threshold=threshold)
        return _circuits[key]


def reset_circuits() -> None:
    """Close and forget every circuit (tests)."""
    with _circuits_lock:
        _circuits.clear()


def _on_final(exc: BaseException, circuit: Circuit, attempts: int) -> BaseException:
    """The error a call ends with once its attempts are spent (or not retried)."""
    if isinstance(exc, CircuitOpen | Unparsed):
        return exc
    kind = classify(exc)
    what = describe(exc)
    if kind == "fatal":
        reason = f"the provider rejected the call ({what})"
        circuit.failure(reason, fatal=True)
        return CircuitOpen(reason)
    if kind == "client":
        return ProviderError(f"{what} (not retried)", "client")
    if kind == "parse":  # an unexpected exception while reading the answer
        return Unparsed(what)
    if circuit.failure(f"provider unavailable ({what})"):
        return CircuitOpen(f"provider unavailable ({what} after {attempts} attempt(s))",
                           kind)
    return ProviderError(f"{what} after {attempts} attempt(s)", kind)


def _answered(exc: BaseException, circuit: Circuit) -> None:
    """A bad answer is still an answer: the provider is up, so its circuit closes."""
    if isinstance(exc, Unparsed) or (not isinstance(exc, ProviderError)
                                     and classify(exc) == "parse"):
        circuit.success()


def _retried(exc: BaseException) -> bool:
    if not isinstance(exc, Exception) or isinstance(exc, CircuitOpen):
        return False  # Ctrl-C and exits are never retried, an open circuit never called
    return isinstance(exc, Unparsed) or classify(exc) in RETRIED


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        delay = policy.wait_s(exc, state.attempt_number - 1)
        log.warning("model call failed (%s); retry in %.2fs",
                    describe(exc) if exc else "no answer", delay)
        return delay
    return wait


def _bounded(fn: Callable[[], T], timeout_s: float) -> T:
    """`fn()` in a daemon thread (with this context, so traces nest), bounded in time; a
    call still hanging is abandoned, never waited for at exit."""
    context = contextvars.copy_context()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = context.run(fn)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="model-call", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise CallTimeout(f"no answer within {timeout_s:g}s")
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def call(attempt: Callable[[], T], policy: RetryPolicy, circuit: Circuit) -> T:
    """Run `attempt` under the policy. It may raise `Unparsed` to have a bad answer retried.

    Returns the first successful result. Raises `Unparsed` when every attempt's answer was
    bad, `CircuitOpen` when the endpoint's circuit is (or just became) open, and
    `ProviderError` for any other provider failure.
    """
    def one() -> T:
        circuit.check()
        try:
            result = _bounded(attempt, policy.timeout_s)
        except Exception as exc:
            _answered(exc, circuit)
            raise
        circuit.success()
        return result

    retrying = Retrying(stop=stop_after_attempt(max(1, policy.attempts)), wait=_wait(policy),
                        retry=retry_if_exception(_retried), sleep=lambda s: _sleep(s),
                        reraise=True)
    try:
        return retrying(one)
    except Exception as exc:  # classified once the attempts are spent
        raise _on_final(exc, circuit, policy.attempts) from exc


async def acall(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy,
                circuit: Circuit) -> T:
    """`call` for coroutines (the vision reader runs its calls concurrently)."""
    async def one() -> T:
        circuit.check()
        try:
            result = await asyncio.wait_for(attempt(), policy.timeout_s)
        except TimeoutError:
            raise CallTimeout(f"no answer within {policy.timeout_s:g}s") from None
        except Exception as exc:
            _answered(exc, circuit)
            raise
        circuit.success()
        return result

    retrying = AsyncRetrying(stop=stop_after_attempt(max(1, policy.attempts)),
                             wait=_wait(policy), retry=retry_if_exception(_retried),
                             sleep=lambda s: _asleep(s), reraise=True)
    try:
        return await retrying(one)
    except Exception as exc:  # classified once the attempts are spent
        raise _on_final(exc, circuit, policy.attempts) from exc
