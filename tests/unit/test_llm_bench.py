"""The LLM bench with scripted fake chat models: schema, retries, degradation, the circuit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import Field, ValidationError

from automaton_auditor import retry
from automaton_auditor.judging import llm
from automaton_auditor.judging.llm_schema import ARGUMENT_MAX, opinion_schema
from automaton_auditor.judging.models import retry_policy
from automaton_auditor.retry import (
    CircuitOpen,
    ProviderError,
    RetryPolicy,
    circuit_for,
    classify,
    reset_circuits,
    retry_after,
)
from automaton_auditor.rubric import load_rubric
from automaton_auditor.settings import Settings
from automaton_auditor.state import Evidence
from tests.conftest import make_evidence

SETTINGS = Settings(model="openai:fake", max_retries=2, retry_backoff_s=0.5)


class ToolFakeModel(GenericFakeChatModel):
    """GenericFakeChatModel cannot do structured output; binding tools is enough for
    BaseChatModel's tool-calling implementation, which then parses the scripted tool calls."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self

    def with_structured_output(self, schema: Any, *, method: str | None = None,
                               include_raw: bool = False, **kwargs: Any) -> Any:
        return super().with_structured_output(schema, include_raw=include_raw)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(messages)
        return super()._generate(messages, *args, **kwargs)


def answer(**args: Any) -> AIMessage:
    """A scripted tool call carrying an opinion, with token usage."""
    return AIMessage(content="", tool_calls=[{"name": "JudicialOpinion", "args": args,
                                              "id": "call-1"}],
                     usage_metadata={"input_tokens": 100, "output_tokens": 20,
                                     "total_tokens": 120})


class HTTPError(Exception):
    """An SDK-like error carrying a status and headers."""

    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"status {status}")
        self.status_code = status
        self.response = type("R", (), {"status_code": status, "headers": headers or {}})()


class RaisingModel(ToolFakeModel):
    """Raises the scripted exceptions, then answers."""

    errors: list[Exception] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(messages)
        if self.errors:
            raise self.errors.pop(0)
        return super()._generate(messages, *args, **kwargs)


class NoJitter:
    """Stands in for the policy's random source: waits become exactly exponential."""

    def random(self) -> float:
        return 0.0


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    reset_circuits()
    waits: list[float] = []
    monkeypatch.setattr(retry, "_sleep", waits.append)
    monkeypatch.setattr(retry, "_random", NoJitter())
    yield waits
    reset_circuits()


def circuit_reason(settings: Settings, scope: str = "") -> str | None:
    """Why the bench's circuit is open in a run (None: closed)."""
    from automaton_auditor.judging.models import endpoint_of

    return circuit_for(endpoint_of(settings.model or ""), scope).reason


def use(monkeypatch: pytest.MonkeyPatch, model: ToolFakeModel) -> ToolFakeModel:
    monkeypatch.setattr(llm, "build_chat_model", lambda name, settings: model)
    return model


def dossier() -> list[Evidence]:
    return [make_evidence("fan-out found", dimension="graph_orchestration"),
            make_evidence("no conditional edge", dimension="graph_orchestration",
                          found=False, location="src/graph.py:9")]


DIM = load_rubric().dimension("graph_orchestration")


def test_schema_only_accepts_the_criterion_evidence_ids_and_bounded_strings() -> None:
    schema = opinion_schema("Prosecutor", ["rep-a", "rep-b"])
    props = schema.model_json_schema()["properties"]
    assert props["cited_evidence"]["items"]["enum"] == ["rep-a", "rep-b"]
    assert props["argument"]["maxLength"] == ARGUMENT_MAX
    assert props["charges"]["items"]["maxLength"] > 0
    assert "mitigations" not in props  # the Prosecutor charges, the Defense mitigates
    assert "mitigations" in opinion_schema("Defense", ["rep-a"]).model_json_schema()["properties"]
    with pytest.raises(ValidationError):
        schema(argument="x", cited_evidence=["rep-zzz"], charges=[], remediation="", score=3)
    with pytest.raises(ValidationError):
        schema(argument="x", cited_evidence=["rep-a"], charges=[], remediation="", score=9)
    with pytest.raises(ValidationError):
        schema(argument="x" * (ARGUMENT_MAX + 1), cited_evidence=[], charges=[],
               remediation="", score=3)


def test_valid_answer_becomes_the_judge_opinion(monkeypatch: pytest.MonkeyPatch) -> None:
    ev = dossier()
    model = use(monkeypatch, ToolFakeModel(messages=iter([answer(
        argument="The fan-out exists.", cited_evidence=[ev[0].evidence_id],
        remediation="add a conditional edge", score=4)])))
    opinion = llm.llm_opinion("TechLead", DIM, ev, SETTINGS)
    assert (opinion.judge, opinion.criterion_id, opinion.score) == ("TechLead", DIM.id, 4)
    assert opinion.cited_evidence == [ev[0].evidence_id]
    assert not opinion.degraded and opinion.round == 1
    assert opinion.usage is not None and opinion.usage["total_tokens"] == 120
    assert opinion.usage["calls"] == 1
    # the judge saw its persona, the criterion and the evidence ids
    system, human = model.prompts[0]
    assert "Tech Lead" in str(system.content)
    assert DIM.forensic_instruction in str(human.content)
    assert ev[1].evidence_id in str(human.content)


def test_none_parse_is_retried_with_backoff(monkeypatch: pytest.MonkeyPatch,
                                            _fresh: list[float]) -> None:
    ev = dossier()
    use(monkeypatch, ToolFakeModel(messages=iter([
        AIMessage(content="I think it deserves a 4."),  # no tool call: parsed is None
        answer(argument="ok", cited_evidence=[ev[0].evidence_id], mitigations=[], score=4)])))
    opinion = llm.llm_opinion("Defense", DIM, ev, SETTINGS)
    assert not opinion.degraded and opinion.score == 4
    assert opinion.usage is not None and opinion.usage["calls"] == 2
    assert _fresh == [0.5]


def test_parse_failures_exhaust_retries_then_degrade(monkeypatch: pytest.MonkeyPatch,
                                                     _fresh: list[float]) -> None:
    ev = dossier()
    bad = [answer(argument="x", cited_evidence=["invented-id"], mitigations=[], score=5),
           answer(argument="x", cited_evidence=[], mitigations=[], score=9),
           AIMessage(content="no tool call")]
    use(monkeypatch, ToolFakeModel(messages=iter(bad)))
    opinion = llm.llm_opinion("Defense", DIM, ev, SETTINGS)
    assert opinion.degraded and opinion.argument.startswith("Degraded: unparseable answer")
    assert opinion.usage is not None and opinion.usage["calls"] == 3
    assert _fresh == [0.5, 1.0]  # exponential backoff between the three attempts


def test_rate_limit_waits_for_retry_after(monkeypatch: pytest.MonkeyPatch,
                                          _fresh: list[float]) -> None:
    ev = dossier()
    model = RaisingModel(messages=iter([answer(argument="ok", cited_evidence=[],
                                               charges=[], remediation="", score=2)]))
    model.errors = [HTTPError(429, {"retry-after": "7"})]
    use(monkeypatch, model)
    opinion = llm.llm_opinion("Prosecutor", DIM, ev, SETTINGS)
    assert opinion.score == 2 and not opinion.degraded
    assert _fresh == [7.0]


def test_client_error_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    model = RaisingModel(messages=iter([]))
    model.errors = [HTTPError(400)]
    use(monkeypatch, model)
    with pytest.raises(ProviderError, match="not retried") as raised:
        llm.llm_opinion("Prosecutor", DIM, dossier(), SETTINGS)
    assert len(model.prompts) == 1
    assert not raised.value.stops_bench and circuit_reason(SETTINGS) is None


def test_invalid_key_opens_the_circuit_and_later_calls_fail_fast(
        monkeypatch: pytest.MonkeyPatch) -> None:
    model = RaisingModel(messages=iter([]))
    model.errors = [HTTPError(401)]
    use(monkeypatch, model)
    with pytest.raises(CircuitOpen):
        llm.llm_opinion("Prosecutor", DIM, dossier(), SETTINGS)
    with pytest.raises(CircuitOpen):
        llm.llm_opinion("Defense", DIM, dossier(), SETTINGS)
    assert len(model.prompts) == 1  # the second judge never reached the provider
    assert "HTTP 401" in (circuit_reason(SETTINGS) or "")


def test_server_errors_are_retried_then_open_the_circuit(monkeypatch: pytest.MonkeyPatch,
                                                         _fresh: list[float]) -> None:
    model = RaisingModel(messages=iter([]))
    model.errors = [HTTPError(503) for _ in range(9)]
    use(monkeypatch, model)
    stops = []
    for _ in range(3):
        with pytest.raises(ProviderError) as raised:
            llm.llm_opinion("TechLead", DIM, dossier(), SETTINGS)
        stops.append(raised.value.stops_bench)
    assert len(model.prompts) == 9  # three calls × three attempts
    assert stops == [False, False, True]  # the third failure in a row opened the circuit
    with pytest.raises(CircuitOpen):
        llm.llm_opinion("TechLead", DIM, dossier(), SETTINGS)
    assert len(model.prompts) == 9  # refused without calling
    # another run has its own circuit
    model.errors = []
    model.messages = iter([answer(argument="ok", cited_evidence=[], remediation="", score=3)])
    assert llm.llm_opinion("TechLead", DIM, dossier(), SETTINGS, scope="run-2").score == 3


def test_timeouts_are_transient() -> None:
    class APITimeoutError(Exception):
        pass

    assert classify(APITimeoutError("timed out")) == "transient"
    assert classify(ValueError("bad json")) == "parse"
    assert classify(HTTPError(404)) == "fatal"
    assert classify(HTTPError(422)) == "client"
    assert classify(HTTPError(408)) == "transient"


def test_retry_after_forms_and_caps() -> None:
    assert retry_after(HTTPError(429, {"retry-after-ms": "250"})) == 0.25
    assert retry_after(HTTPError(429, {"retry-after": "3"})) == 3.0
    assert retry_after(HTTPError(429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0
    assert retry_after(HTTPError(429)) is None
    policy = RetryPolicy(backoff_s=1.0, max_wait_s=30.0)
    assert policy.wait_s(HTTPError(429, {"retry-after": "999"}), 0) == 30.0
    assert policy.wait_s(None, 2) == 4.0


def test_the_judges_policy_comes_from_the_settings() -> None:
    policy = retry_policy(Settings(max_retries=4, retry_backoff_s=0.25, call_timeout_s=20))
    assert (policy.attempts, policy.backoff_s, policy.timeout_s, policy.max_wait_s) == (
        5, 0.25, 20, 20)


def test_openai_proper_gets_no_length_keywords_but_answers_are_still_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    schema = opinion_schema("Defense", ["rep-a"])
    wire = llm.wire_schema(schema, "openai:gpt-4o-mini", "json_schema")
    assert "maxLength" not in str(wire) and wire["properties"]["cited_evidence"]["items"][
        "enum"] == ["rep-a"]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert llm.wire_schema(schema, "openai:local", "json_schema") is schema
    monkeypatch.delenv("OPENAI_BASE_URL")
    ev = dossier()
    use(monkeypatch, ToolFakeModel(messages=iter([
        answer(argument="x" * (ARGUMENT_MAX + 50), cited_evidence=[], mitigations=[], score=5),
        answer(argument="short", cited_evidence=[ev[0].evidence_id], mitigations=[], score=5),
    ])))
    opinion = llm.llm_opinion("Defense", DIM, ev, Settings(model="openai:gpt-4o-mini",
                                                            retry_backoff_s=0.1))
    assert not opinion.degraded and opinion.argument == "short"
    assert opinion.usage is not None and opinion.usage["calls"] == 2
