"""Chat models by configuration: a string for LangChain's `init_chat_model`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from automaton_auditor.config import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


def build_chat_model(name: str, settings: Settings) -> BaseChatModel:
    """A chat model for `name` (e.g. ``openai:gpt-4o-mini``) at temperature 0.

    Provider credentials and base URLs come from the standard environment variables
    (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``...), never from the auditor itself.
    """
    from langchain.chat_models import init_chat_model

    kwargs: dict[str, Any] = {"temperature": 0, "timeout": settings.call_timeout_s,
                              "max_retries": 0}
    model: BaseChatModel = init_chat_model(name, **kwargs)
    return model
