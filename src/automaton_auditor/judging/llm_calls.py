"""Calls that behave: retries with backoff that honour Retry-After, no retry on client errors,
and a circuit that stops the bench when the provider is down or the key is invalid.

Errors are classified from the HTTP status the provider SDKs attach to their exceptions
(``status_code`` / ``response``), so this works for OpenAI-compatible servers and others alike.
"""

from __future__ import annotations

import email.utils
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

log = logging.getLogger(__name__)

ErrorKind = Literal["rate_limit", "transient", "fatal", "client", "parse"]
FATAL_STATUS = {401, 403, 404}  # bad key, forbidden, unknown model: no call can succeed
CIRCUIT_THRESHOLD = 3  # consecutive calls that exhausted their retries on provider errors
COOLDOWN_S = 300.0  # an open circuit lets one trial call through after this long
RETRY_AFTER_CAP_S = 60.0


class ProviderError(RuntimeError):
    """A call failed on the provider's side (or on the wire); the opinion is degraded."""


class CircuitOpen(ProviderError):
    """The bench stopped calling: the provider is down or rejects the credentials."""


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def classify(exc: BaseException) -> ErrorKind:
    """What kind of failure an exception from a model call is."""
    status = _status(exc)
    if status == 429:
        return "rate_limit"
    if status in FATAL_STATUS:
        return "fatal"
    if status is not None and 400 <= status < 500:
        return "client"
    if status is not None and status >= 500:
        return "transient"
    names = " ".join(c.__name__ for c in type(exc).__mro__).lower()
    if any(word in names for word in ("timeout", "connection", "connecterror", "network")):
        return "transient"
    # Validation, JSON and output-parser errors: the model answered, but not in the schema.
    return "parse"


def retry_after(exc: BaseException) -> float | None:
    """Seconds a 429 asks us to wait (``retry-after-ms`` / ``retry-after``), if it says."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000.0
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, KeyError):
        return None


def backoff_delay(exc: BaseException | None, attempt: int, base_s: float, cap_s: float) -> float:
    """How long to wait before retry `attempt` (0-based): Retry-After, else exponential."""
    hinted = retry_after(exc) if exc is not None else None
    delay = hinted if hinted is not None else base_s * (2 ** attempt)
    return min(delay, cap_s, RETRY_AFTER_CAP_S)


@dataclass
class Circuit:
    """A breaker shared by every call to one endpoint in this process."""

    reason: str | None = None
    opened_at: float | None = None
    failures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self) -> None:
        """Raise CircuitOpen while open (after the cooldown, one trial call goes through)."""
        with self.lock:
            if self.reason is None or self.opened_at is None:
                return
            if time.time() - self.opened_at < COOLDOWN_S:
                raise CircuitOpen(self.reason)
            self.opened_at = time.time()  # half-open: this call is the trial

    def success(self) -> None:
        """A call got an answer from the provider: close the circuit."""
        with self.lock:
            self.failures, self.reason, self.opened_at = 0, None, None

    def failure(self, reason: str, fatal: bool = False) -> None:
        """A call failed on the provider side; open after a fatal error or a streak."""
        with self.lock:
            self.failures += 1
            if fatal or self.failures >= CIRCUIT_THRESHOLD:
                if self.reason is None:
                    log.error("circuit opened: %s", reason)
                self.reason, self.opened_at = reason, time.time()

    def open_reason(self) -> str | None:
        """Why the circuit is open, or None when it is closed."""
        with self.lock:
            return self.reason


_circuits: dict[str, Circuit] = {}
_circuits_lock = threading.Lock()


def circuit_for(endpoint: str) -> Circuit:
    """The circuit of an endpoint (model string + base URL)."""
    with _circuits_lock:
        return _circuits.setdefault(endpoint, Circuit())


def open_circuits() -> dict[str, str]:
    """Endpoints whose circuit is open, with the reason."""
    with _circuits_lock:
        items = list(_circuits.items())
    return {k: c.reason for k, c in items if c.reason is not None}


def reset_circuits() -> None:
    """Close every circuit (a new run in the same process, or a test)."""
    with _circuits_lock:
        _circuits.clear()


def describe(exc: BaseException) -> str:
    """A short, key-free description of a failure."""
    status = _status(exc)
    text = " ".join(str(exc).split())[:300]
    prefix = f"HTTP {status}" if status is not None else type(exc).__name__
    return f"{prefix}: {text}" if text else prefix


def usage_of(raw: Any) -> dict[str, int]:
    """Token counts of one response (``usage_metadata`` of an AIMessage), zeros when absent."""
    meta = getattr(raw, "usage_metadata", None) or {}
    return {"input_tokens": int(meta.get("input_tokens") or 0),
            "output_tokens": int(meta.get("output_tokens") or 0),
            "total_tokens": int(meta.get("total_tokens") or 0)}
