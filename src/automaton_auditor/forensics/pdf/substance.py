"""Substance over labels: a rubric concept explained through its mechanism, without its name.

The rubric's defence instruction is "credit the substance over the labels". Two readings:

* a design section (a heading with no subsections) whose text holds every cue group the
  rubric's success pattern names (`SUBSTANCE`: Dialectical Synthesis is three personas, a
  step that synthesises their opinions, and a rule by which it resolves their conflict);
* State Synchronization said as what the state's reducers prevent: "Without these reducers,
  the last node to complete would silently overwrite the results of the other two", in a
  section about parallel writes to the state (`counterfactual`). Saying *what goes wrong
  without* the merge is the explanation; "reducers ensure parallel agents append safely"
  only names the merge, and is not enough.

The caller says which sections do not count (`skip`: summaries, plans, retrospectives).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from automaton_auditor.forensics.pdf.chunks import sentences
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.ties import windows

Cues = tuple[tuple[str, re.Pattern[str]], ...]
Path = tuple[str, ...]

SUBSTANCE: dict[str, Cues] = {
    # "Dialectical Synthesis is implemented via three parallel judge personas": the three
    # personas, the step that synthesises their opinions, and the rule by which it resolves
    # their conflict.
    "dialectical_synthesis": (
        ("the Prosecutor", re.compile(r"\bprosecutor", re.IGNORECASE)),
        ("the Defense", re.compile(r"\bdefen[cs]e\b", re.IGNORECASE)),
        ("the Tech Lead", re.compile(r"\btech[\s_-]?lead\b", re.IGNORECASE)),
        ("a synthesis step", re.compile(r"\b(?:chief[\s_-]?justice|synthes\w+|resolv\w+|"
                                        r"reconcil\w+)", re.IGNORECASE)),
        ("a conflict rule", re.compile(r"\b(?:overrid\w+|weight\w*|varian\w+|dissent\w*|"
                                       r"conflict\w*|tie[\s-]?break\w*)", re.IGNORECASE)),
    ),
}
_SUBSTANCE_WORDS = 80  # a section shorter than this names things, it does not explain them

# "Without (these) reducers, ..." / "Without operator.ior, ...": the merge taken away ...
_WITHOUT = re.compile(
    r"\bwithout (?:(?:the|these|this|a|an|such|any|those|that|proper) )?(?:[\w.-]+ ){0,2}?"
    r"(?:reducers?|operator\.\w+|annotated\w*|them|it|this)\b", re.IGNORECASE)
# ... and what is then lost: "the last node to finish would overwrite the others".
_LOSS = re.compile(r"(?<![a-z])(?:overwr\w*|clobber\w*|eras\w*|lost|los(?:e|es|ing)\b|"
                   r"race\w*|discard\w*|last[- ]writ\w*)", re.IGNORECASE)
_REDUCER = re.compile(r"(?<![a-z])(?:reducers?(?![a-z])|operator\.(?:add|ior|or_)|annotated)",
                      re.IGNORECASE)
# The section is about parallel writers.
_PARALLEL = re.compile(r"(?<![a-z])(?:parallel|concurren\w*|simultaneous\w*|fan[\s_-]?in"
                       r"(?![a-z])|branch\w*|at the same time)", re.IGNORECASE)


@dataclass(frozen=True)
class Found:
    """Where a concept's mechanism is described: the section, the quote, why."""

    heading: str
    quote: str
    page: int | None
    reason: str
    strength: int


def substance(slug: str, blocks: list[Block], skip: Callable[[Path], bool],
              others: Sequence[re.Pattern[str]] = (), title: str | None = None) -> Found | None:
    """The passage describing concept `slug`'s mechanism without its name, or None. `others`
    are the rubric's other concepts: a section titled with one (the report's `title` aside)
    is that concept's discussion, not this one's."""
    cues = SUBSTANCE.get(slug)
    if cues is not None:
        return _section_with(blocks, cues, skip)
    if slug == "state_synchronization":
        return counterfactual(blocks, skip, others, title)
    return None


def _by_section(blocks: list[Block]) -> dict[Path, list[Block]]:
    found: dict[Path, list[Block]] = {}
    for block in blocks:
        if block.kind in ("paragraph", "list"):
            found.setdefault(block.section, []).append(block)
    return found


def counterfactual(blocks: list[Block], skip: Callable[[Path], bool],
                   others: Sequence[re.Pattern[str]] = (), title: str | None = None
                   ) -> Found | None:
    """The first passage saying what is lost without the state's reducers ("Without reducers:
    one branch could overwrite another"), in a section about parallel writers and reducers
    that is not skipped nor titled with another concept."""
    for path, inside in _by_section(blocks).items():
        if not path or skip(path) or any(
                o.search(h) for o in others for h in path if h != title):
            continue
        text = "\n".join(b.text for b in inside)
        if not (_PARALLEL.search(text) and _REDUCER.search(text)):
            continue
        for window in windows(text):
            if _WITHOUT.search(window) and _LOSS.search(window) and _REDUCER.search(window):
                # the window may join two blocks: its page is the one its opening is on
                page = next((b.page for size in (60, 30, 15) for b in inside
                             if window[:size] in b.text), inside[0].page)
                return Found(path[-1], window[:400], page,
                             f"its mechanism is described in '{path[-1]}': what the "
                             f"reducers prevent when parallel branches write to the shared "
                             f"state, without the term", strength=3)
    return None


def _section_with(blocks: list[Block], cues: Cues, skip: Callable[[Path], bool]
                  ) -> Found | None:
    """The first, smallest section without subsections (not skipped, and not most of the
    document) whose text holds every cue group."""
    by_section = _by_section(blocks)
    # a chapter whose subsections each name a piece explains no mechanism: leaves only
    chapters = {section[:cut] for section in by_section for cut in range(1, len(section))}
    best: Found | None = None
    # a section holding most of the report is the report
    best_size = sum(map(len, by_section.values())) // 2 + 1
    for heading in blocks:
        path = (*heading.section, heading.text)
        if heading.kind != "heading" or path in chapters or skip(path):
            continue
        inside = by_section.get(path, [])
        text = "\n".join([heading.text, *(b.text for b in inside)])
        words = len(text.split())
        if len(inside) >= best_size or words < _SUBSTANCE_WORDS or \
                not all(rx.search(text) for _, rx in cues):
            continue
        said = [s for b in inside for s in sentences(b.text) if len(s.split()) >= 6]
        # Quote the sentence that carries most of the mechanism (the first such one).
        quote = max(said, key=lambda s: sum(bool(rx.search(s)) for _, rx in cues),
                    default=heading.text)
        page = next((b.page for b in inside if quote in b.text), heading.page)
        best = Found(heading.text, quote[:400], page,
                     f"its mechanism is described in '{heading.text}' ({words} words: "
                     f"{', '.join(label for label, _ in cues)}) without the term",
                     strength=len(cues))
        best_size = len(inside)
    return best
