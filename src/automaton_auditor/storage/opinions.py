"""Opt-in reuse of the judges' model answers (`audit --reuse-opinions`).

A LangChain cache (`langchain_core.caches.BaseCache`) stored in ``opinions.sqlite``. The
key is the SHA-256 of LangChain's ``llm_string`` (the model, its parameters and the
structured-output schema, which lists the citable evidence ids) and of the serialised prompt
(persona, criterion and the evidence as quoted): that is (model, prompt hash, evidence
hash). The same question to the same model is answered from disk, so a re-run reproduces
its opinions; anything changed in the evidence, the rubric or the prompts misses.
"""

from __future__ import annotations

import hashlib
import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache

from automaton_auditor.storage.kv import KeyValueStore

OPINIONS_DB = "opinions.sqlite"
log = logging.getLogger(__name__)


def opinion_key(prompt: str, llm_string: str) -> str:
    """The cache key of one model call: hash of the model string and hash of the prompt."""
    model = hashlib.sha256(llm_string.encode("utf-8")).hexdigest()[:32]
    asked = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    return f"{model}:{asked}"


class OpinionCache(BaseCache):
    """Model answers on disk, keyed by (model, prompt); unreadable entries are misses."""

    def __init__(self, root: Path) -> None:
        self.store = KeyValueStore(root, OPINIONS_DB)
        self.hits = 0
        self.misses = 0

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        """The cached generations of this call, if any."""
        key = opinion_key(prompt, llm_string)
        body = self.store.get("llm", key)
        value = _decode(body) if body is not None else None
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        return value

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        """Store the generations of a call."""
        from langchain_core.load import dumps

        try:
            body = dumps(list(return_val))
        except (TypeError, ValueError):
            return  # an unserialisable answer is simply not cached
        self.store.put("llm", opinion_key(prompt, llm_string), body)

    def clear(self, **kwargs: Any) -> None:
        """Forget every cached answer."""
        self.store.clear()


def _decode(body: str) -> Sequence[Any] | None:
    from langchain_core.load import loads
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, Generation

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = loads(body, allowed_objects=[ChatGeneration, Generation, AIMessage])
    except Exception:  # a corrupt entry is a miss, never an error
        log.warning("cached model answer is unreadable; asking the model again")
        return None
    if not isinstance(value, list) or not all(isinstance(g, Generation) for g in value):
        return None
    return value


def enable(root: Path) -> OpinionCache:
    """Install the opinion cache for every chat model of this process."""
    from langchain_core.globals import set_llm_cache

    cache = OpinionCache(root)
    set_llm_cache(cache)
    return cache
