"""Report statements about what a judge persona's prompt says, read against the code.

Two clear cases: words the report quotes as a persona's prompt ("a “Zero Tolerance” prompt",
"its prompt: “You are ...”") that no string of the audited code and no prompt file holds
(compared as lower-case words; an ellipsis splits a quote into parts, each of which must be
found; a template's field stands for a few words); and a persona whose prompt the report
says sends it after security flaws when no text that persona's model call receives names
security (`judges.personas`, its ``security`` map). A hedged sentence ("should", "the rubric
requires"), a denial, or a persona whose prompt was not read contradicts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from automaton_auditor.forensics.code.names import FIELD, normalised
from automaton_auditor.forensics.code.prompt_lines import persona_named
from automaton_auditor.forensics.pdf.claims import PROMPT_QUOTE, PROMPT_SECURITY
from automaton_auditor.forensics.usage import Misquote
from automaton_auditor.state import CodeNames, FeatureClaim, Finding

_HEDGE = re.compile(r"\b(?:should|could|would|will|must|may|might|needs?|requir\w*|expect\w*|"
                    r"ideal\w*|rubric|checks?|whether|if|plan\w*|todo|future|e\.g|example|"
                    r"instead|rather)\b", re.IGNORECASE)
_DENIED = re.compile(r"\b(?:not|no|never|without|lacks?|lacking|omits?|nothing)\b",
                     re.IGNORECASE)
_ELLIPSIS = re.compile(r"\.\s?\.\s?\.|\u2026|\[\s*\.\.\.\s*\]")
FIELD_WORDS = 6  # the most words a template's field is taken to stand for
MAX_QUOTED = 4


def _fits(quote: list[str], template: list[str]) -> bool:
    """Whether the quote's words are a run of some filling of the template's words, each
    `FIELD` standing for up to `FIELD_WORDS` words."""
    # memoised: a template of many fields would otherwise try FIELD_WORDS fillings per field
    @cache
    def match(i: int, j: int) -> bool:
        if i == len(quote):
            return True
        if j == len(template):
            return False
        if template[j] == FIELD:
            return any(match(i + k, j + 1) for k in range(min(FIELD_WORDS, len(quote) - i) + 1))
        return quote[i] == template[j] and match(i + 1, j + 1)
    return any(match(0, j) for j in range(len(template)))


def held(part: str, strings: Sequence[str], plain: str) -> bool:
    """Whether the code holds the quoted part: in a string's text (`plain`: the strings
    joined), or filling a template's fields."""
    if f" {part} " in plain:
        return True
    words = part.split()
    return any(_fits(words, s.split()) for s in strings
               if FIELD in s and any(w in s for w in words if len(w) > 3))


def _persona_prompt(code: Sequence[Finding], persona: str | None) -> list[str]:
    """The lines of the persona's prompt the `judges.personas` fact quotes."""
    fact = next((f for f in code if f.facet == "judges.personas" and f.content), None)
    for block in (fact.content or "").split("\n\n") if fact else []:
        if persona and block.startswith(f"[{persona}]"):
            return [line.strip() for line in block.splitlines() if line.strip()][:MAX_QUOTED]
    return []


def quote_misquotes(claim: FeatureClaim, names: CodeNames | None,
                    code: Sequence[Finding]) -> list[Misquote]:
    """Each quote the sentence gives of a persona's prompt that the code does not hold."""
    strings = names.strings if names else None
    # the prompt's own words ("You MUST ...", "if ...") hedge nothing the report says
    unquoted = re.sub(r"[\"\u201c][^\"\u201c\u201d]*[\"\u201d]", " ", claim.sentence)
    if not strings or _HEDGE.search(unquoted):
        return []
    plain = "\n".join(f" {s} " for s in strings)
    found = []
    for match in PROMPT_QUOTE.finditer(claim.sentence):
        quote = (match["q"] or match["q2"]).strip()
        parts = [p for p in (normalised(x) for x in _ELLIPSIS.split(quote))
                 if len(p.split()) >= 2]
        missing = [p for p in parts if not held(p, strings, plain)]
        if not missing:
            continue
        persona = persona_named(claim.sentence)
        found.append(Misquote(
            f"\u201c{quote}\u201d",
            f"The report quotes \u201c{quote}\u201d as a persona's prompt, but no string of "
            f"the audited code ({len(names.modules) if names else 0} Python files) and no "
            f"prompt file holds \u201c{missing[0]}\u201d.",
            _persona_prompt(code, persona) or
            [f"{len(strings)} strings of the code: none holds \u201c{missing[0]}\u201d"],
            {"quote": quote, "persona": persona}))
    return found


def security_misquotes(claim: FeatureClaim, code: Sequence[Finding]) -> list[Misquote]:
    """The persona the sentence says is prompted to look for security flaws, when the text
    its model call receives never names security."""
    match = PROMPT_SECURITY.search(claim.sentence)
    persona = persona_named(claim.sentence)
    before = claim.sentence[: match.end()] if match else ""
    if match is None or persona is None or _HEDGE.search(before) or \
            _DENIED.search(claim.sentence[match.start(): match.end()]):
        return []
    fact = next((f for f in code if f.facet == "judges.personas" and f.found), None)
    security = (fact.data.get("security") or {}) if fact else {}
    if security.get(persona) is not False:
        return []
    return [Misquote(
        f"{persona} prompted to look for security flaws",
        f"The report says the {persona}'s prompt sends it after security flaws; no text its "
        "model call receives names security (or vulnerabilities, unsafe calls, injection).",
        _persona_prompt(code, persona) or [f"{fact.location if fact else '.'}: {persona}"],
        {"persona": persona})]
