"""Text helpers shared by every layer: the one way to cut text short, the one way to make
text from hostile input serialisable, and the one way to make it safe to show."""

from __future__ import annotations

import re
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


# What must not reach a terminal or a Markdown file from outside the auditor: C0 controls
# (tab and newline apart), DEL, C1 controls (0x9b is a one-byte CSI on some terminals) and
# the Unicode bidi controls that reorder what a reader sees (Trojan Source).
_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# The other Unicode format characters (category Cf; `test_output_escape` holds the list to
# the running Python's Unicode data): zero-width spaces and joiners, the word joiner, the
# BOM, the soft hyphen, tag characters. They show as nothing, so dropping them would show
# ``src/jud\u200bges.py`` as the ``src/judges.py`` it passes for: they are shown escaped.
_INVISIBLE = re.compile("[\u00ad\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200d"
                        "\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
                        "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                        "\U000e0001\U000e0020-\U000e007f]")


def hides(text: str) -> bool:
    """Whether `text` holds a character `printable` drops (a control character other than
    tab and newline, DEL, a C1 control, a bidi control): shown, it would drive the terminal
    or reorder what a reader sees."""
    return _UNSHOWN.search(text) is not None


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str, one_line: bool = False) -> str:
    """`text` from outside the auditor (a file name, a quote, a rubric name, a path the user
    typed) as it may be shown on a terminal or in Markdown: without control characters (ESC
    sequences lose their ESC and so do nothing) nor bidi controls (the text then shows in
    the order it is stored); the other invisible format characters (a zero-width space, a
    BOM) are shown as their escape (``\\u200b``), so a name that holds one does not pass
    for the name without it. Line ends become newlines; with `one_line`, every run of
    whitespace, newlines included, becomes one space."""
    text = _UNSHOWN.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _INVISIBLE.sub(_escape, text)
    return " ".join(text.split()) if one_line else text
