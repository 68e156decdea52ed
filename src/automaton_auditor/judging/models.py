"""Chat models by configuration: a string for LangChain's `init_chat_model`.

A model is named ``provider:model`` (``openai:gpt-4o-mini``, ``openai:qwen2.5:7b``...) by
``--model`` / ``AUDITOR_MODEL``, one for the bench or one per persona. Only the providers
reached through the OpenAI SDK are called (``openai``, any OpenAI-compatible server through
``OPENAI_BASE_URL``, and ``azure_openai``): their HTTP clients are ours and bound every answer
in bytes and time (`judging.wire`); another provider's SDK brings its own, unbounded, client, so
it is refused with one line. Credentials and base URLs come from each provider's usual
environment variables (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``...), never from the auditor, so
an API key alone never starts calls.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import TYPE_CHECKING, Any, get_args

from automaton_auditor.retry import RetryPolicy
from automaton_auditor.settings import Settings, StructuredMethod

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

STRUCTURED_METHODS: tuple[str, ...] = get_args(StructuredMethod)
# Providers reached through the OpenAI SDK, whose HTTP client is ours (`judging.wire`): the
# only ones called.
OPENAI_SDK = ("openai", "azure_openai")
# How each provider enforces a schema best. OpenAI-compatible servers (vLLM, llama.cpp,
# LM Studio, Ollama's /v1) honour `response_format: json_schema`.
PROVIDER_METHODS: dict[str, str] = {"openai": "json_schema", "azure_openai": "json_schema"}
# Providers whose chat model takes a `seed` (same prompt, same seed, most often same answer).
SEEDED = OPENAI_SDK
SEED = 7
# Model-name prefixes init_chat_model infers a provider from when none is given.
INFERRED = (("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
            ("chatgpt", "openai"), ("claude", "anthropic"), ("gemini", "google_genai"),
            ("mistral", "mistralai"), ("deepseek", "deepseek"), ("grok", "xai"))

ENV_KEYS = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY",
            "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION")
_cache: dict[tuple[Any, ...], Any] = {}
_cache_lock = threading.Lock()


class UnsupportedProvider(ValueError):
    """A model string names (or LangChain would infer) a provider outside the OpenAI SDK."""


def split_model(name: str) -> tuple[str, str]:
    """(provider, model) of a model string: its ``provider:`` prefix and the rest, else the
    provider inferred from the name and the whole name."""
    prefix, sep, rest = name.partition(":")
    if sep and prefix and "/" not in prefix:
        return prefix.strip().lower(), rest
    lowered = name.lower()
    return next((p for start, p in INFERRED if lowered.startswith(start)), "openai"), name


def provider_of(name: str) -> str:
    """The provider of a model string: its ``provider:`` prefix, else inferred from the name."""
    return split_model(name)[0]


def check_provider(name: str) -> None:
    """Raise `UnsupportedProvider` unless `name` is called through the OpenAI SDK."""
    provider = provider_of(name)
    if provider in OPENAI_SDK:
        return
    hint = f"; for a model {name!r} on an OpenAI-compatible server write openai:{name}" \
        if ":" in name else ""
    raise UnsupportedProvider(
        f"provider {provider!r} is not supported: models are called through the OpenAI SDK "
        "only, whose answers the auditor bounds (openai:MODEL, with OPENAI_BASE_URL for any "
        f"OpenAI-compatible server such as vLLM, Ollama, llama.cpp or LM Studio, or "
        f"azure_openai:DEPLOYMENT){hint}")


def structured_method(name: str, settings: Settings) -> str:
    """The structured-output method for a model: the setting when given, else per provider."""
    if settings.structured_output_method:
        return settings.structured_output_method
    return PROVIDER_METHODS.get(provider_of(name), "function_calling")


def model_for(judge: str, settings: Settings) -> str:
    """The model string that judges as `judge` (a per-persona model wins over the bench's)."""
    name = settings.persona_models.get(judge) or settings.model
    if not name:
        raise ValueError(f"no model configured for the {judge}")
    return name


def endpoint_of(model_name: str) -> str:
    """The identity of the endpoint a model string reaches (its circuit key)."""
    if provider_of(model_name) == "openai":
        return f"{model_name}@{os.environ.get('OPENAI_BASE_URL', 'api.openai.com')}"
    return model_name


def retry_policy(settings: Settings) -> RetryPolicy:
    """The one retry policy of every model call (judges and vision) under these settings."""
    return RetryPolicy(attempts=1 + max(0, settings.max_retries),
                       backoff_s=settings.retry_backoff_s,
                       max_wait_s=min(RetryPolicy.max_wait_s, settings.call_timeout_s),
                       timeout_s=settings.call_timeout_s)


def _model_kwargs(name: str, settings: Settings) -> dict[str, Any]:
    provider = provider_of(name)
    # We own retries (`automaton_auditor.retry`); the client's own would hide them.
    kwargs: dict[str, Any] = {"temperature": 0, "timeout": settings.call_timeout_s,
                              "max_retries": 0}
    if provider in SEEDED:
        kwargs["seed"] = SEED
    if provider == "openai" and os.environ.get("OPENAI_BASE_URL"):
        # OpenAI-compatible servers (llama.cpp, vLLM) read `max_tokens`, not
        # `max_completion_tokens`, which langchain-openai sends for `max_tokens=`.
        kwargs["extra_body"] = {"max_tokens": settings.max_output_tokens}
    else:
        kwargs["max_tokens"] = settings.max_output_tokens
    return kwargs


def build_chat_model(name: str, settings: Settings) -> BaseChatModel:
    """A chat model for `name` (e.g. ``openai:gpt-4o-mini``) at temperature 0, with a seed
    where the provider takes one, a per-call timeout and no client-side retries.

    Models are cached per name and call settings, so one run shares its HTTP clients. The
    OpenAI SDK's clients bound every answer in bytes and time (`judging.wire`); any other
    provider raises `UnsupportedProvider`. The provider is given to LangChain, never inferred
    by it again (it read ``gpt-oss:20b`` as an OpenAI model, not as the provider ``gpt-oss``).
    """
    from langchain.chat_models import init_chat_model

    from automaton_auditor.judging.wire import bounded_clients

    check_provider(name)
    provider, model_name = split_model(name)
    kwargs = _model_kwargs(name, settings)
    # The environment is part of the key: a changed base URL or key needs a new client.
    env = tuple(os.environ.get(v, "") for v in ENV_KEYS)
    key = (name, hashlib.sha256(repr(env).encode()).hexdigest(), repr(sorted(kwargs.items())))
    with _cache_lock:
        cached = _cache.get(key)
        if cached is None:
            kwargs.update(bounded_clients(settings.call_timeout_s))
            cached = init_chat_model(model_name, model_provider=provider, **kwargs)
            _cache[key] = cached
    model: BaseChatModel = cached
    return model


def clear_model_cache() -> None:
    """Forget built models (tests change the environment between runs)."""
    with _cache_lock:
        _cache.clear()
