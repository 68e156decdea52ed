"""The one retry policy (`automaton_auditor.retry`) on plain callables: what is retried, how
long it waits, the per-call timeout and the circuit. The judges' and the vision reader's own
tests drive the same policy through fake chat models and a server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from automaton_auditor import retry
from automaton_auditor.retry import (
    COOLDOWN_S,
    Circuit,
    CircuitOpen,
    ProviderError,
    RetryPolicy,
    Unparsed,
    acall,
    call,
)
from tests.unit.test_llm_bench import HTTPError


@pytest.fixture(autouse=True)
def waits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    recorded: list[float] = []

    async def arecord(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(retry, "_sleep", recorded.append)
    monkeypatch.setattr(retry, "_asleep", arecord)
    yield recorded


def scripted(*outcomes: Any) -> tuple[Callable[[], Any], list[int]]:
    """An attempt that raises or returns the next outcome (the last one repeats)."""
    calls: list[int] = []

    def attempt() -> Any:
        outcome = outcomes[min(len(calls), len(outcomes) - 1)]
        calls.append(1)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return attempt, calls


def test_a_429_waits_its_retry_after_then_succeeds(waits: list[float]) -> None:
    attempt, calls = scripted(HTTPError(429, {"retry-after": "1"}), "answer")
    assert call(attempt, RetryPolicy(), Circuit()) == "answer"
    assert waits == [1.0] and len(calls) == 2


def test_client_errors_are_not_retried_but_408_is(waits: list[float]) -> None:
    attempt, calls = scripted(HTTPError(400))
    with pytest.raises(ProviderError, match="not retried") as raised:
        call(attempt, RetryPolicy(), Circuit())
    assert len(calls) == 1 and waits == [] and raised.value.kind == "client"
    attempt, calls = scripted(HTTPError(408), "answer")
    assert call(attempt, RetryPolicy(), Circuit()) == "answer" and len(calls) == 2


def test_backoff_is_exponential_with_bounded_jitter() -> None:
    policy = RetryPolicy(backoff_s=1.0, jitter=0.25, max_wait_s=5.0)
    for attempt, base in ((0, 1.0), (1, 2.0), (2, 4.0)):
        waits = {policy.wait_s(HTTPError(503), attempt) for _ in range(50)}
        assert all(base <= w <= base * 1.25 for w in waits)
        assert len(waits) > 1  # jittered, so parallel calls do not retry in step
    assert policy.wait_s(HTTPError(503), 10) == 5.0  # bounded
    # a Retry-After (429, or 503) decides the wait, capped like any other
    assert policy.wait_s(HTTPError(429, {"retry-after": "3"}), 0) == 3.0
    assert policy.wait_s(HTTPError(503, {"retry-after": "2"}), 2) == 2.0
    assert policy.wait_s(HTTPError(429, {"retry-after": "600"}), 0) == 5.0


def test_bad_answers_are_retried_and_keep_the_circuit_closed(waits: list[float]) -> None:
    circuit = Circuit(threshold=1)
    attempt, calls = scripted(Unparsed("no object"))
    with pytest.raises(Unparsed, match="no object"):
        call(attempt, RetryPolicy(attempts=3), circuit)
    assert len(calls) == 3 and len(waits) == 2
    assert circuit.reason is None  # the provider answered every time


def test_the_circuit_opens_after_n_consecutive_failures_and_refuses_calls() -> None:
    circuit = Circuit(threshold=2)
    policy = RetryPolicy(attempts=2)
    attempt, calls = scripted(HTTPError(503))
    with pytest.raises(ProviderError) as first:
        call(attempt, policy, circuit)
    assert not first.value.stops_bench
    with pytest.raises(CircuitOpen) as second:
        call(attempt, policy, circuit)
    assert second.value.stops_bench and not second.value.refused
    assert "HTTP 503" in str(second.value) and len(calls) == 4
    with pytest.raises(CircuitOpen) as third:
        call(attempt, policy, circuit)
    assert third.value.refused and len(calls) == 4  # refused without calling


def test_a_success_resets_the_streak() -> None:
    circuit = Circuit(threshold=2)
    policy = RetryPolicy(attempts=1)
    for outcome in (HTTPError(500), "ok", HTTPError(500)):
        attempt, _ = scripted(outcome)
        try:
            call(attempt, policy, circuit)
        except CircuitOpen:
            pytest.fail("two failures that are not consecutive opened the circuit")
        except ProviderError:
            pass
    assert circuit.reason is None


def test_a_rejected_key_opens_the_circuit_at_once(waits: list[float]) -> None:
    circuit = Circuit(threshold=5)
    attempt, calls = scripted(HTTPError(401))
    with pytest.raises(CircuitOpen, match="rejected"):
        call(attempt, RetryPolicy(), circuit)
    assert len(calls) == 1 and waits == []


def test_an_open_circuit_lets_one_trial_through_after_the_cooldown(
        monkeypatch: pytest.MonkeyPatch) -> None:
    circuit = Circuit(threshold=1)
    circuit.failure("provider unavailable (HTTP 503)")
    with pytest.raises(CircuitOpen):
        circuit.check()
    assert circuit.opened_at is not None
    opened = circuit.opened_at
    monkeypatch.setattr(retry.time, "monotonic", lambda: opened + COOLDOWN_S + 1)
    circuit.check()  # half-open: this call is the trial
    circuit.success()
    assert circuit.reason is None


def test_each_attempt_is_bounded_by_the_call_timeout(waits: list[float]) -> None:
    release = threading.Event()
    calls: list[int] = []

    def hangs() -> str:
        calls.append(1)
        release.wait(30)
        return "too late"

    try:
        with pytest.raises(ProviderError, match=r"no answer within 0\.05s") as raised:
            call(hangs, RetryPolicy(attempts=2, timeout_s=0.05), Circuit())
    finally:
        release.set()
    assert len(calls) == 2 and raised.value.kind == "transient"


def test_async_calls_follow_the_same_policy(waits: list[float]) -> None:
    outcomes: list[Any] = [HTTPError(429, {"retry-after-ms": "1500"}), "answer"]

    async def attempt() -> Any:
        outcome = outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    assert asyncio.run(acall(attempt, RetryPolicy(), Circuit())) == "answer"
    assert waits == [1.5]

    async def hangs() -> str:
        await asyncio.sleep(30)
        return "too late"

    with pytest.raises(ProviderError, match=r"no answer within 0\.05s"):
        asyncio.run(acall(hangs, RetryPolicy(attempts=1, timeout_s=0.05), Circuit()))


def test_an_interrupt_is_never_retried(waits: list[float]) -> None:
    attempt, calls = scripted(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        call(attempt, RetryPolicy(), Circuit())
    assert len(calls) == 1 and waits == []
