"""Persona prompts that fix the scores their judge may give (``judges.score_band``).

A persona's own prompt text may forbid some scores outright: ``Never 4-5.``, ``4 = Strictly
prohibited for your persona.``, ``never score above 3``. Its judge's scores then lie in the
band the decree leaves, whatever the evidence. Only a sentence with no condition counts
(``NEVER give a 5 unless the evidence is overwhelming`` still lets the evidence decide), and
only text of the persona's own (a piece every persona's prompt receives from the same line
is the shared template), in a sentence naming no other persona. A decree that forbids some
values but leaves both ends of the scale (``1, 3, or 5 ONLY (never 2 or 4)``) fixes no band.

A Prosecutor told to stay low and a Defense told to stay high are the contrarian and
forgiving instructions the rubric asks for, so a band on some personas is told as context
(neutral) and caps nothing; when every persona is banded the judges disagree by decree, not on
the evidence: a failure, no full marks. The
Chief Justice's rules are read against the bands too (`override_reads`): a test on a judge's
score its own prompt always satisfies holds whatever the evidence.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.common import split_loc
from automaton_auditor.forensics.code.judge_prompts import Prompt
from automaton_auditor.forensics.code.prompt_lines import persona_named
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.state import Finding

SCALE = frozenset(range(1, 6))
BANDED_CAP = 4  # every persona's band fixed by decree: no full marks
_SENTENCE = re.compile(r"[^\n.!?]+(?:[.!?]+|$)")
_CONDITION = re.compile(r"\b(?:unless|if|when|whenever|except|where|until|without)\b", re.I)
_NUMBER = r"([1-5])(?:\s*/\s*5)?"
_END = r"(?=\s*(?:$|[.,;:)!]|scores?\b|points?\b|for\b|under\b|in\b))"
# ``never 4-5``, ``never give a 5``, ``never 2 or 4``: the values named
_NEVER = re.compile(
    r"\b(?:never|do not|don't|must not|may not|cannot)\s+(?:ever\s+)?(?:give|assign|award|"
    r"use|output|return|score|rate)?\s*(?:an?\s+|scores?\s+(?:of\s+)?)?" + _NUMBER +
    r"(?:\s*(-|–|to|or|and|,)\s*" + _NUMBER + r")?" + _END, re.I)
# ``4 = Strictly prohibited``: one value
_PROHIBITED = re.compile(r"(?:^|[\s(])" + _NUMBER + r"\s*(?:[=:]|-|–)\s*(?:is\s+)?(?:strictly\s+|"
                         r"stricly\s+|absolutely\s+)?(?:prohibited|forbidden|not allowed|"
                         r"banned|off[- ]limits)", re.I)
# ``never score above 3``, ``do not give scores below 3``: a side of a value
_BEYOND = re.compile(
    r"\b(?:never|do not|don't|must not|may not|cannot)\s+(?:ever\s+)?(?:give|assign|award|"
    r"score|rate|go|output|return)?\s*(?:an?\s+|any\s+)?(?:scores?\s+|anything\s+)?"
    r"(above|higher than|more than|over|exceed(?:ing)?|greater than|below|lower than|"
    r"less than|under)\s+(?:an?\s+)?" + _NUMBER, re.I)
_LOW = ("below", "lower than", "less than", "under")
_COMPARE: dict[type, Callable[[int, int], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne}
_FLIP = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


class Band(NamedTuple):
    """The scores a persona's prompt leaves its judge, and the decrees that fix them."""

    lo: int
    hi: int
    forbidden: tuple[int, ...]
    where: tuple[tuple[str, str], ...]  # (path:line, the sentence) of each decree


def forbidden_by(sentence: str) -> set[int]:
    """The scores one sentence forbids outright (none when it states a condition)."""
    if _CONDITION.search(sentence):
        return set()
    out: set[int] = set()
    for m in _NEVER.finditer(sentence):
        first, joint, second = int(m.group(1)), m.group(2), m.group(3)
        if second is None:
            out.add(first)
        elif joint.lower() in ("-", "–", "to"):
            out |= set(range(min(first, int(second)), max(first, int(second)) + 1))
        else:
            out |= {first, int(second)}
    out |= {int(m.group(1)) for m in _PROHIBITED.finditer(sentence)}
    for m in _BEYOND.finditer(sentence):
        value = int(m.group(2))
        out |= set(range(1, value)) if m.group(1).lower() in _LOW else set(
            range(value + 1, 6))
    return out


def _sentences(piece: str, loc: str) -> list[tuple[str, str]]:
    """Each sentence of a piece with the line it is on (the piece's line plus the newlines
    before it)."""
    path, line = split_loc(loc)
    return [(m.group(0).strip(), f"{path}:{line + piece.count(chr(10), 0, m.start())}")
            for m in _SENTENCE.finditer(piece) if m.group(0).strip()]


def score_bands(prompts: dict[str, Prompt]) -> dict[str, Band]:
    """Per persona whose own prompt text forbids scores outright at one end of the scale or
    both, the band it leaves (see the module docstring)."""
    out: dict[str, Band] = {}
    for persona, prompt in prompts.items():
        others = [set(p.text.parts) for q, p in prompts.items() if q != persona]
        banned: set[int] = set()
        where: list[tuple[str, str]] = []
        for part in prompt.text.parts:
            if others and all(part in o for o in others):
                continue  # shared template, not the persona's own
            for sentence, loc in _sentences(*part):
                named = persona_named(sentence)
                values = forbidden_by(sentence) if named in (None, persona) else set()
                if values:
                    banned |= values
                    where.append((loc, sentence))
        left = SCALE - banned
        if left and (min(left), max(left)) != (1, 5):
            out[persona] = Band(min(left), max(left), tuple(sorted(banned)), tuple(where))
    return out


def band_finding(repo: Path, prompts: dict[str, Prompt],
                 bands: dict[str, Band]) -> list[Finding]:
    """``judges.score_band``: the personas whose prompts fix their score band (stated when
    the prompts of two or more personas' model calls were followed)."""
    if len(prompts) < 2:
        return []
    quotes = [f"[{p}] scores {b.lo}-{b.hi} only:\n" + "\n".join(
        line_at(repo, *split_loc(loc), limit=160) for loc, _s in b.where[:3])
        for p, b in bands.items()]
    every = len(bands) == len(prompts) >= 3
    free = [p for p in prompts if p not in bands]
    said = "; ".join(
        f"the {p}'s prompt forbids {_values(b.forbidden)} ("
        + ", ".join(f"{loc}: {s!r}" for loc, s in b.where[:3]) + f"): its scores can only be "
        f"{b.lo}-{b.hi}" for p, b in bands.items())
    rationale = (f"{said[0].upper()}{said[1:]}. Within that band the scores follow the decree, "
                 "not the evidence across the scale" + (
                     "; every persona is banded, so the judges disagree by decree."
                     if every else f"; the {', '.join(free)} prompt(s) fix no band.")
                 if bands else "No persona's own prompt forbids scores outright at either end "
                 "of the scale.")
    first = next(iter(bands.values())).where[0][0] if bands else "."
    return [Finding(
        facet="judges.score_band", goal="A persona's prompt fixes the scores its judge may "
        "give, whatever the evidence", found=bool(bands), location=first,
        # a contrarian or forgiving lens on some judges is no failure pattern of the rubric's
        pattern="failure" if every or not bands else "neutral",
        content="\n\n".join(quotes) or None, confidence=0.8, rationale=rationale,
        data={"bands": {p: [b.lo, b.hi] for p, b in bands.items()},
              "lines": {p: [loc for loc, _s in b.where[:6]] for p, b in bands.items()},
              "free": free, "cap": BANDED_CAP if every else None})]


def _values(values: tuple[int, ...]) -> str:
    """``4-5`` for a run, else ``2, 4``."""
    run = values == tuple(range(values[0], values[-1] + 1))
    return f"{values[0]}-{values[-1]}" if run and len(values) > 1 else ", ".join(
        str(v) for v in values)


def decreed(test: ast.expr, bands: dict[str, Band]) -> tuple[str, Band] | None:
    """The persona whose score `test` compares with a number (``scores["Prosecutor"] <= 3``,
    ``prosecutor_score < 4``), when every score its band leaves satisfies the comparison:
    the test holds whatever the evidence."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    if isinstance(left, ast.Constant):  # ``3 >= scores["Prosecutor"]``
        left, right, op = right, left, _FLIP.get(op, op)
    bound = right.value if isinstance(right, ast.Constant) else None
    if not isinstance(bound, int) or isinstance(bound, bool) or op not in _COMPARE or \
            "score" not in ast.unparse(left).lower():
        return None
    words = {n.value for n in ast.walk(left) if isinstance(n, ast.Constant) and
             isinstance(n.value, str)} | {n.id for n in ast.walk(left) if isinstance(
                 n, ast.Name)} | {n.attr for n in ast.walk(left) if isinstance(n, ast.Attribute)}
    named = {persona_named(w) for w in words} - {None}
    persona = next(iter(named)) if len(named) == 1 else None
    band = bands.get(persona or "")
    if persona is None or band is None or not all(
            _COMPARE[op](v, bound) for v in range(band.lo, band.hi + 1)):
        return None
    return persona, band
