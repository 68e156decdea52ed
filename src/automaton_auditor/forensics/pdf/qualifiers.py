"""What the section around a report sentence says that qualifies it.

A sentence that admits a gap or denies a feature is read with its section, never alone
(`forensics.contradictions`). Two readings need it: a gap listed under a heading or lead-in
that tells what a review caught or what was since fixed ("5.1 What Peer Feedback Caught —
Peer feedback correctly highlighted: Missing explicit conditional edge coverage") is history,
not a gap the report still claims; and a lead sentence that says the system works without
something ("deterministic rules, not averaging:") is qualified by what follows it in its
section (a rule table whose "IF variance ≤ 1 THEN Use average" row states the mean).
`lead_in` and `around` collect that text per block when the doc detective reads the report;
`retrospective` and `stated` read it. What the report says is not built yet qualifies its
descriptions of behaviour anywhere in it (`not_disclosed`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from automaton_auditor.forensics.pdf.discussion import run_in_title
from automaton_auditor.forensics.pdf.model import Block

# Words of a heading or lead-in that make the gaps under it history: what a review found
# ("What Peer Feedback Caught", "highlighted:"), what has been closed ("Fixed", "DONE"), or
# how earlier runs scored ("Score Progression");
# "added", "updated" and the like only with a verb saying it happened ("the system was
# upgraded to:", "We added:"), since "Updated Architecture" names a version, not a fix.
_RETRO = re.compile(
    r"\b(?:caught|highlighted|fixed|resolved|addressed)\b|(?-i:\bDONE\b)"
    # a table of earlier runs ("5.2 Score Progression": "Initial ... - no parallel judges")
    r"|\b(?:score|run|version|release)\s+(?:progression|history)\b|\bchangelog\b"
    r"|\b(?:was|were|been|is\s+now|are\s+now|since|already|we|I)\s+(?:\w+\s+)?"
    r"(?:added|updated|upgraded|closed|implemented|extended)\b", re.IGNORECASE)
# ... unless the word is what is still to happen ("Gaps to be addressed:", "not yet fixed")
# or how the system works ("Conflicts are resolved by the ChiefJustice").
_PENDING_BEFORE = re.compile(r"\b(?:to|will|should|must|shall|can|could|would|needs?|not|"
                             r"never|yet)\s+(?:yet\s+)?(?:be\s+|been\s+)?(?:\w+\s+)?$"
                             r"|\b(?:is|are|be|being|gets?)\s+$", re.IGNORECASE)
# A gap item marked closed ("No conditional edges: DONE", "(fixed)", "now resolved").
_CLOSED_ITEM = re.compile(r"(?-i:\bDONE\b)|\u2705|\((?:fixed|resolved|done|closed)\)|"
                          r"\b(?:now|since|already)\s+(?:been\s+)?(?:fixed|resolved|closed)\b",
                          re.IGNORECASE)
# A gap the sentence itself says is open now stays a gap, whatever its section says.
_STILL_OPEN = re.compile(r"\b(?:still|remains?|remaining|not\s+yet|yet\s+to|today|currently|"
                         r"pending|outstanding|known|planned|todo)\b", re.IGNORECASE)
# A statement of the feature negated in words the denial patterns do not read ("never
# uses the average").
_NEGATED_BEFORE = re.compile(r"(?:\b(?:not|never|no|without|instead\s+of|rather\s+than)|"
                             r"n't)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
LEAD_CHARS, BEFORE_CHARS, AFTER_CHARS = 300, 600, 1200
# How far back a lead-in line may be ("highlighted:" over a list of a few items).
_LEAD_BLOCKS = 8
_BODY = ("paragraph", "list")
_LABEL_WORDS = 3


def still_open(text: str) -> bool:
    """Whether the text says the gap it names is open now ("still", "known gap", "today")."""
    return bool(_STILL_OPEN.search(text))


def retrospective(lead: str, sentence: str) -> bool:
    """Whether the heading and lead-in of a sentence (`lead`) tell of gaps a review caught
    or that were since fixed, or the sentence marks its gap closed, and neither says the
    gap is still open."""
    if still_open(sentence) or still_open(lead):
        return False
    if _CLOSED_ITEM.search(sentence):
        return True
    return any(not _PENDING_BEFORE.search(lead[max(0, m.start() - 30): m.start()])
               for m in _RETRO.finditer(lead))


# A feature named as a shortfall: an item of a list of weaknesses, limitations or future work
# ("exposes weaknesses such as the stubbed VisionInspector or limited conditional edges"), or
# qualified as falling short right before it ("limited", "lacks", "without") or after it
# ("conditional edges are still limited", "... left for future work"). The sentence says the
# code falls short there, not that it has the feature.
_SHORTFALL_LIST = re.compile(
    r"\b(?:weakness(?:es)?|limitations?|shortcomings?|drawbacks?|gaps?|weak\s+(?:spots?|"
    r"points?)|areas?\s+(?:for|of|needing)\s+improvement|future\s+work)\b[^.;]{0,20}?"
    r"(?:\bsuch\s+as\b|\blike\b|\binclud\w*|:|\(\s*e\.\s?g\.)[^.;]*$"
    # "the issues I had missed (conditional edges, format assumptions)": found problems, listed
    r"|\b(?:issues|problems|flaws|bugs|defects|mistakes)\s+(?:\w+\s+){0,4}?"
    r"(?:missed|overlooked|found|caught|flagged|raised)\s*\([^)]*$", re.IGNORECASE)
_SHORT_BEFORE = re.compile(r"\b(?:limited|lacks?|lacking|insufficient|incomplete|partial|weak|"
                           r"without|(?:absence|lack)\s+of|missing)\s+(?:[\w-]+\s+){0,2}$",
                           re.IGNORECASE)
_SHORT_AFTER = re.compile(
    r"^\s*(?:[\w-]+\s+){0,3}?(?:(?:is|are|was|were|remains?)\s+(?:still\s+)?(?:limited|"
    r"lacking|incomplete|partial|weak|missing|absent)|lacks?|lacking|(?:left|deferred)\s+"
    r"(?:as|for|to)\s+future\s+work)\b", re.IGNORECASE)


# A feature named as planned right before it, in a sentence that tells the current part
# too ("the current detective fan-out, followed by the planned judicial fan-out", "the
# planned Phase 2: Judicial Layer"): that feature is a plan, the others are claims.
_PLANNED_BEFORE = re.compile(r"\b(?:planned|proposed|upcoming|future)\s+(?:[\w:-]+\s+){0,3}$",
                             re.IGNORECASE)


def as_shortfall(sentence: str, start: int, end: int) -> bool:
    """Whether sentence[start:end], a feature the sentence names, is named as a weakness,
    a limitation, future work or a plan, not as something the code has."""
    before = sentence[:start]
    return bool(_SHORTFALL_LIST.search(before) or _SHORT_BEFORE.search(before)
                or _PLANNED_BEFORE.search(before) or _SHORT_AFTER.match(sentence[end:]))


def stated(near: str, denial: re.Pattern[str], affirmed: re.Pattern[str]) -> bool:
    """Whether the text around a sentence (`near`) states the feature the sentence denies:
    `affirmed` found, not negated, once every denial of it (`denial`) is taken out."""
    text = denial.sub(" ", near)
    return any(not _NEGATED_BEFORE.search(text[max(0, m.start() - 40): m.start()])
               for m in affirmed.finditer(text))


def lead_in(blocks: list[Block], index: int) -> str:
    """What introduces the block: its section's innermost heading, the nearest line before
    it in the section that ends with a colon ("Peer feedback correctly highlighted:"), and
    its own run-in title."""
    block = blocks[index]
    parts = [block.section[-1]] if block.section else []
    for other in reversed(blocks[max(0, index - _LEAD_BLOCKS): index]):
        if other.kind == "furniture":
            continue
        if other.section != block.section or other.kind not in _BODY:
            break
        if other.text.rstrip().endswith(":"):
            parts.append(other.text)
            break
    # a short label ("Fixed:") introduces the block; a longer run-in is its first sentence
    title = run_in_title(block.text) or ""
    parts.append(title if len(title.split()) <= _LABEL_WORDS else "")
    return " ".join(" ".join(parts).split())[:LEAD_CHARS]


def around(blocks: list[Block], index: int) -> str:
    """The block with the text of its section around it (some of what comes before, more of
    what follows) and the block right after the section; a block that ends with a colon
    leads into what follows it, so the text runs on past the section's end (a rule table
    the layout read as a section of its own)."""
    block = blocks[index]
    before = [b.text for b in blocks[:index] if b.kind in _BODY and b.section == block.section]
    leads = block.text.rstrip().endswith(":")
    after: list[str] = []
    for other in blocks[index + 1:]:
        if other.kind not in _BODY:
            continue
        after.append(other.text)
        if (other.section != block.section and not leads) \
                or sum(len(a) for a in after) > AFTER_CHARS:
            break
    return "\n".join(["\n".join(before)[-BEFORE_CHARS:], block.text,
                      "\n".join(after)[:AFTER_CHARS]])


# A section on what is not built ("2 Known Gaps and Forward Plan", "Limitations") and a
# sentence of it saying a part is missing ("2.1 Missing Full Judicial Reasoning
# Implementation", "The Judges are not implemented yet").
_GAPS = re.compile(r"\b(?:gaps?|limitations?|known\s+issues|open\s+issues|shortcomings)\b",
                   re.IGNORECASE)
_UNBUILT = re.compile(r"\b(?:missing|absent|unimplemented|not\s+(?:yet\s+)?(?:fully\s+)?"
                      r"(?:implemented|built|wired|operational|functional|started)|"
                      r"(?:yet|remains?)\s+to\s+be\s+(?:built|implemented|wired))\b",
                      re.IGNORECASE)
# The part of the system each behaviour belongs to: a model reply is retried by the judges
# that ask for it ("If validation fails -> automatic retry (max 2 attempts)").
_ASIDE = re.compile(r"\([^()]*\)")
_LAYER = {"retry_claim": re.compile(r"\b(?:judges?|judicial|judiciary|personas?|"
                                    r"prosecutors?|tech\s?leads?)\b", re.IGNORECASE)}


def not_disclosed(kinds: dict[str, tuple[re.Pattern[str], int]], blocks: Iterable[Block],
                  unbuilt: re.Pattern[str], splitter: re.Pattern[str]
                  ) -> dict[str, tuple[re.Pattern[str], int]]:
    """`kinds` without the behaviours the report discloses as not built: a sentence lists
    the behaviour as not built yet (`unbuilt`: "what remains is building the judges with
    structured output and retry logic"), or a gaps section says the part it belongs to is
    missing ("2.1 Missing Full Judicial Reasoning Implementation" under "Known Gaps"). Its
    design prose elsewhere ("or the call retries") then describes a plan, not the code."""
    pending: list[str] = []
    gaps: list[str] = []
    for block in blocks:
        heads = (*block.section, block.text) if block.kind == "heading" else block.section
        for sentence in splitter.split(block.text):
            if unbuilt.search(sentence):
                pending.append(sentence)
            # a bracketed aside lists examples ("Conditional edges (..., judge parse
            # failure) are not fully wired"), not the part said to be missing
            if _UNBUILT.search(sentence) and any(_GAPS.search(h) for h in heads):
                gaps.append(_ASIDE.sub(" ", sentence))
    return {kind: value for kind, value in kinds.items()
            if not any(value[0].search(sentence) for sentence in pending)
            and not (kind in _LAYER and any(_LAYER[kind].search(s) for s in gaps))}
