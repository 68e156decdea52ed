"""Text helpers shared by every layer: the one way to cut text short."""

from __future__ import annotations

ELLIPSIS = "…"


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending with an ellipsis when it was cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS
