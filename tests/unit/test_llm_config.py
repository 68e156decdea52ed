"""Models by configuration, persona models, the dry-run plan and the trace config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from automaton_auditor.forensics.git.head import local_head
from automaton_auditor.judging.llm_plan import (
    missing_models,
    parse_persona_models,
    plan_calls,
    render_plan,
    trace_config,
)
from automaton_auditor.judging.llm_usage import slowest_call_s, usage_totals
from automaton_auditor.judging.models import (
    UnsupportedProvider,
    _model_kwargs,
    build_chat_model,
    clear_model_cache,
    model_for,
    provider_of,
    structured_method,
)
from automaton_auditor.rubric import load_rubric
from automaton_auditor.settings import Settings
from automaton_auditor.state import JudicialOpinion


def test_provider_from_prefix_or_name() -> None:
    assert provider_of("openai:gpt-4o-mini") == "openai"
    assert provider_of("anthropic:claude-sonnet-4") == "anthropic"
    assert provider_of("claude-3-5-haiku") == "anthropic"
    assert provider_of("ollama:qwen2.5:7b") == "ollama"


def test_structured_method_per_provider_and_override() -> None:
    assert structured_method("openai:x", Settings()) == "json_schema"
    assert structured_method("anthropic:x", Settings()) == "function_calling"
    assert structured_method("openai:x", Settings(
        structured_output_method="function_calling")) == "function_calling"


def test_persona_model_wins_over_bench_model() -> None:
    settings = Settings(model="openai:a", persona_models={"Prosecutor": "openai:b"})
    assert model_for("Prosecutor", settings) == "openai:b"
    assert model_for("Defense", settings) == "openai:a"
    assert "openai:a; Prosecutor=openai:b" in settings.bench_label
    with pytest.raises(ValueError, match="no model"):
        model_for("Defense", Settings())


def test_deterministic_call_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings = Settings(model="openai:x", call_timeout_s=33, max_output_tokens=321)
    plain = _model_kwargs("openai:gpt-4o-mini", settings)
    assert plain["temperature"] == 0 and plain["seed"] == 7 and plain["max_retries"] == 0
    assert plain["timeout"] == 33 and plain["max_tokens"] == 321 and "extra_body" not in plain
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    compatible = _model_kwargs("openai:local", settings)
    assert compatible["extra_body"] == {"max_tokens": 321} and "max_tokens" not in compatible
    assert "seed" not in _model_kwargs("anthropic:claude-x", settings)


def test_models_are_built_once_per_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k1")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    clear_model_cache()
    first = build_chat_model("openai:local", Settings())
    assert build_chat_model("openai:local", Settings()) is first
    monkeypatch.setenv("OPENAI_API_KEY", "k2")
    assert build_chat_model("openai:local", Settings()) is not first
    clear_model_cache()


@pytest.mark.parametrize("name", ["anthropic:claude-x", "claude-3-5-haiku", "ollama:qwen2.5:7b",
                                  "gpt-oss:20b", "mistral:7b", "gemini-2.0-flash"])
def test_only_models_behind_the_openai_sdk_are_built(monkeypatch: pytest.MonkeyPatch,
                                                     name: str) -> None:
    """Only the OpenAI SDK's clients are ours, bounded in bytes and time: another provider, or a
    name LangChain reads as one (`gpt-oss:20b` was built as an OpenAI model on an unbounded
    client), is refused with a message that says what to write instead."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY"):
        monkeypatch.setenv(key, "k")
    clear_model_cache()
    with pytest.raises(UnsupportedProvider, match=r"not supported.*openai:MODEL"):
        build_chat_model(name, Settings())
    clear_model_cache()


def test_an_ollama_tag_is_reached_through_the_openai_provider(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    clear_model_cache()
    model = build_chat_model("openai:gpt-oss:20b", Settings())
    assert model.model_name == "gpt-oss:20b"  # type: ignore[attr-defined]
    clear_model_cache()


def test_persona_model_options() -> None:
    assert parse_persona_models(["prosecutor=openai:a", "Tech_Lead=ollama:b"]) == {
        "Prosecutor": "openai:a", "TechLead": "ollama:b"}
    for bad in ("Judge=openai:a", "Prosecutor", "Defense="):
        with pytest.raises(ValueError, match="PERSONA=MODEL"):
            parse_persona_models([bad])
    assert missing_models(Settings(persona_models={"Defense": "openai:a"})) == [
        "Prosecutor", "TechLead"]
    assert missing_models(Settings(model="openai:a", persona_models={"Defense": "x"})) == []


def test_dry_run_plans_one_call_per_criterion_and_persona() -> None:
    rubric = load_rubric()
    settings = Settings(model="openai:a", persona_models={"TechLead": "anthropic:c"})
    calls = plan_calls(rubric, settings)
    assert len(calls) == 3 * len(rubric.dimensions)
    assert {c.method for c in calls if c.judge == "TechLead"} == {"function_calling"}
    assert all(c.input_tokens > 300 and c.max_output_tokens > 0 for c in calls)
    text = render_plan(rubric, settings)
    assert f"{len(calls)} calls in round 1" in text and "estimate" in text
    assert "no model calls" in render_plan(rubric, Settings())


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@x", "HOME": str(repo), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def test_trace_config_names_target_and_commit(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "a")
    head = _git(repo, "rev-parse", "HEAD")
    assert local_head(repo) == head
    _git(repo, "pack-refs", "--all")  # the ref now lives only in packed-refs
    assert local_head(repo) == head
    config = trace_config(str(repo), "r.pdf", Settings(), local_head(repo))
    assert config["run_name"] == "audit proj"
    assert f"commit:{head}" in config["tags"] and f"target:{repo}" in config["tags"]
    assert config["metadata"]["commit"] == head
    url = trace_config("https://github.com/o/r", "r.pdf", Settings(model="openai:a"))
    assert url["metadata"]["commit"] is None and "bench:llm" in url["tags"]


def test_usage_totals_and_slowest_call() -> None:
    def op(usage: dict[str, int] | None) -> JudicialOpinion:
        return JudicialOpinion(judge="Defense", criterion_id="c", score=3, argument="a",
                               usage=usage)

    opinions = [op({"input_tokens": 10, "output_tokens": 2, "total_tokens": 12, "calls": 1,
                    "latency_ms": 1500}),
                op({"input_tokens": 5, "output_tokens": 1, "total_tokens": 6, "calls": 2,
                    "latency_ms": 4000}), op(None)]
    assert usage_totals(opinions, {"calls": 1}) == {"input_tokens": 15, "output_tokens": 3,
                                                    "total_tokens": 18, "calls": 4}
    assert usage_totals([op(None)]) == {}
    assert slowest_call_s(opinions) == 4.0
