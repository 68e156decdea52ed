"""Text helpers shared by every layer: the one way to cut text short, and the one way to make
text from hostile input serialisable."""

from __future__ import annotations

from typing import Any

ELLIPSIS = "…"


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending with an ellipsis when it was cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS


def encodable(text: str) -> str:
    """`text` made encodable as UTF-8: a lone surrogate (which a Python string may hold, as
    ``ast`` gives it for the literal ``"\\ud800"``, but UTF-8 and JSON cannot carry) becomes
    its visible escape, so the evidence survives and serialising it never fails."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def encodable_tree(value: Any) -> Any:
    """`value` (dicts, lists, tuples, sets and scalars) with every string in it, dictionary
    keys included, made `encodable`."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable_tree(k): encodable_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return type(value)(encodable_tree(v) for v in value)
    return value
