"""Persona prompts read line by line: a line (or sentence) that two or more persona prompts
hold, once case, spacing and punctuation are set aside, is template, wherever each copy is
written (three constants that repeat one scoring guide share it as surely as one template
filled three times); the rest is each persona's own text (`judge_prompts.own_text`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

WORD = re.compile(r"[A-Za-z0-9_']+")
# a line ends at a newline; a sentence at ., ! or ? followed by a space
_BREAK = re.compile(r"\n|(?<=[.!?])[ \t]+")
# a persona's name, in a line otherwise the same for each persona, gives no philosophy
_NAME = re.compile(r"\b(?:prosecut\w*|defen[cs]e|tech[ _-]?lead)\b")

Part = tuple[str, str]  # a piece of text and the line it comes from
Piece = tuple[str, int]  # a cut of a part, and the part's index
PERSONAS = {"Prosecutor": re.compile(r"prosecut", re.I),
            "Defense": re.compile(r"defen[cs]e", re.I),
            "TechLead": re.compile(r"tech[\s_-]?lead", re.I)}
NAME_WORDS = 3  # a piece this short that names a persona is its name, not its philosophy


def persona_named(text: str) -> str | None:
    """The one persona a short name or literal stands for (None for none or several)."""
    hits = [p for p, pattern in PERSONAS.items() if pattern.search(text)]
    return hits[0] if len(hits) == 1 else None


def is_persona_name(text: str) -> bool:
    """A piece this short that names one persona: its name, not its philosophy."""
    words = WORD.findall(text)
    return 0 < len(words) <= NAME_WORDS and persona_named(text) is not None


def units(parts: Sequence[Part]) -> list[list[Piece]]:
    """The prompt's lines and sentences, each as the pieces (cuts of the parts, at the
    unit's ends) it is made of, so a unit keeps which part every piece comes from."""
    text = "".join(p[0] for p in parts)
    cuts = sorted({0, len(text), *(m.end() for m in _BREAK.finditer(text))})
    out: list[list[Piece]] = [[] for _ in cuts[:-1]]
    start = 0
    for index, (piece, _) in enumerate(parts):
        end = start + len(piece)
        # the units this part overlaps: from the one holding its first character on
        for i in range(max(bisect_right(cuts, start) - 1, 0), len(out)):
            lo, hi = max(cuts[i], start), min(cuts[i + 1], end)
            if cuts[i] >= end:
                break
            if lo < hi:
                out[i].append((piece[lo - start:hi - start], index))
        start = end
    return [u for u in out if u]


def norm(unit: Sequence[Piece]) -> str:
    """A unit's words, lower-cased, one space apart (punctuation, quotes and spacing
    dropped), a persona's name read as "persona"."""
    words = (w.strip("'") for w in WORD.findall("".join(p[0] for p in unit).lower()))
    return _NAME.sub("persona", " ".join(w for w in words if w))


def template(texts: dict[str, set[str]]) -> set[str]:
    """The normalised lines that two or more personas' prompts hold."""
    seen: dict[str, int] = {}
    for lines in texts.values():
        for line in lines - {""}:
            seen[line] = seen.get(line, 0) + 1
    return {line for line, n in seen.items() if n >= 2}
