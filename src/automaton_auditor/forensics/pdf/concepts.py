"""Depth, not keywords: is a rubric concept explained in the report, or only dropped?

Every occurrence of a concept (its generic spelling variants included) is classified:
*explained* when it sits outside summary/contents sections and its paragraph or section
ties it to mechanisms (node names, files, edges, reducers, code identifiers) with enough
surrounding discussion; *dropped* when it only appears in a summary, a list or a sentence
with no mechanism. The deciding sentences are kept with their pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

from automaton_auditor.forensics.pdf.chunks import sentences
from automaton_auditor.forensics.pdf.discussion import (
    beside,
    leads,
    neighbours,
    opening_after,
    plan_item,
    run_in_text,
    section_body,
    section_text,
    sums_up,
)
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.substance import substance
from automaton_auditor.forensics.pdf.ties import untied
from automaton_auditor.forensics.pdf.variants import (
    about_hit,
    apart,
    close,
    concept_pattern,
    word_patterns,
)
from automaton_auditor.forensics.pdf.variants import slug as slug

_SUMMARY = re.compile(r"\b(executive summary|summary|abstract|table of contents|contents|"
                      r"conclusions?|glossary|references|appendix|introduction|tl;?dr|"
                      r"overview of scores|key takeaways|self[- ]audit|criterion[- ]by[- ]"
                      r"criterion|criterion breakdown|rubric (?:dimension )?coverage)\b",
                      re.IGNORECASE)
# A table of contents, by its heading ("Contents", "Table of Contents", "Table of content").
CONTENTS = re.compile(r"\bcontents\b|\btable\s+of\s+content\b", re.IGNORECASE)
# (Self-audit and rubric-coverage sections echo the rubric's own terms: an occurrence there
# restates a criterion.) An opening summary's titled subsections are the report's body.
_OPENING = re.compile(r"\b(executive summary|abstract|tl;?dr)\b", re.IGNORECASE)
# Which sections make the most convincing quotes: design sections over retrospectives.
_DESIGN = re.compile(r"architect|design|implement|framework|concept|deep dive|component|"
                     r"layer|node|graph|state|engine|pipeline|flow|mechanism", re.IGNORECASE)
_RETRO = re.compile(r"feedback|peer|reflection|changes|remediation|lesson|future|gap|"
                    r"limitation|roadmap|plan\b", re.IGNORECASE)
# A plan's items are separate pieces of work ("1. Judicial Logic: ...", "2. Dialectical
# Synthesis: Configure the Chief Justice ..."): one item is not discussed by the next.
PLANNED = "discussed as planned work"  # the reason of an explanation written as a plan
_PLAN = re.compile(r"\b(?:plans?|roadmap|next steps?|future work|to-?do)\b", re.IGNORECASE)
_MECHANISM_WORDS = re.compile(
    r"\b(nodes?|edges?|reducers?|stategraph|graph|send|fan[\s-]?(?:in|out)|parallel|"
    r"concurren\w*|branch\w*|aggregat\w*|merg\w*|operator\.\w+|typeddict|basemodel|pydantic|"
    r"schema|prompts?|functions?|class(?:es)?|modules?|invok\w*|conditional|router|routes?|"
    r"state|persona\w*|judges?|scores?|variance|rules?|evidence|pipeline|loop|workflow)\b",
    re.IGNORECASE)
_CODE_SIGNAL = re.compile(
    r"`[^`]+`|\b[\w-]+/[\w./-]+\.[A-Za-z]\w*\b|\b\w+\.py\b|\b[a-z]+_[a-z_]+\b|"
    r"\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\b|\b\w+\(\)")


@dataclass
class Occurrence:
    """One sentence mentioning the concept, with its verdict and why."""

    page: int | None
    heading: str | None
    sentence: str
    explained: bool
    reason: str
    strength: int = 0  # how concrete the evidence is: ranks the deciding quotes


@dataclass
class ConceptVerdict:
    """All occurrences of one concept and the overall verdict."""

    term: str
    verdict: str  # explained | dropped | absent
    occurrences: list[Occurrence] = field(default_factory=list)
    loose: bool = False  # found through its words, not the exact phrase
    by_substance: bool = False  # explained through its mechanism, without its name
    note: str = ""  # how it was found when not by its exact phrase

    def deciding(self, limit: int = 3) -> list[Occurrence]:
        """The occurrences that decide the verdict (explained ones first when explained)."""
        wanted = self.verdict == "explained"
        picked: list[Occurrence] = []
        for occurrence in self.occurrences:
            if occurrence.explained == wanted and all(
                    (o.page, o.sentence) != (occurrence.page, occurrence.sentence)
                    for o in picked):
                picked.append(occurrence)
        # The most concrete first; a run-in title ("Metacognition.") decides less than a
        # full sentence. Stable sort: document order breaks ties.
        picked.sort(key=lambda o: (len(o.sentence.split()) < 6, -o.strength))
        return picked[:limit]


def mechanism_signals(text: str) -> list[str]:
    """Distinct mechanism cues in a text: code identifiers, files, graph vocabulary."""
    found = {m.group(0).lower().strip("`") for m in _CODE_SIGNAL.finditer(text)}
    found |= {m.group(0).lower() for m in _MECHANISM_WORDS.finditer(text)}
    return sorted(found)


def _section_bonus(block: Block) -> int:
    """Ranks quotes: +3 in a design section, -3 in a retrospective or plan (judged by the
    innermost heading: a parent "Architecture Decisions" covers too much)."""
    path = block.heading or ""
    return (3 if _DESIGN.search(path) else 0) - (3 if _RETRO.search(path) else 0)


def report_title(blocks: Sequence[Block]) -> str | None:
    """The heading every section of the report sits under: the document's title ("... &
    Self-Audit Final Report"), which names the document, not a section of it. A table of
    contents set before the title at the same level does not hide it."""
    firsts = {b.section[0] for b in blocks if b.section and b.kind != "furniture"
              and not CONTENTS.search(b.section[0])}
    nested = any(len(b.section) > 1 for b in blocks)
    return next(iter(firsts)) if len(firsts) == 1 and nested else None


def _in_summary(path: Sequence[str], title: str | None,
                hit: Callable[[str], bool] | None = None) -> bool:
    """A path through a summary-like section (the title and `_OPENING`'s subsections aside).
    With `hit`, a heading that names the concept is that concept's own section, read on its
    body ("Metacognition and Self-Audit"), unless it opens the report or lists its contents."""
    return any(_SUMMARY.search(h) and not (_OPENING.search(h) and i < len(path) - 1)
               and not (hit is not None and hit(h) and not _OPENING.search(h)
                        and not CONTENTS.search(h))
               for i, h in enumerate(path) if not (i == 0 and h == title))


def classify(term: str, blocks: list[Block], others: Sequence[str] = ()) -> ConceptVerdict:
    """Classify every occurrence of `term` in the report's blocks. When the exact phrase
    (or a variant) never appears, a multi-word term is looked for loosely: all its words in
    one block or its section headings (e.g. "synthesis" in a section titled "Dialectical
    Judicial Engine"); such a verdict is marked `loose`.

    `others` are the rubric's other concepts: their names are no mechanism, so a sentence
    whose only graph vocabulary is concept names ("our design embodies Fan-In / Fan-Out and
    State Synchronization") is a roll-call, not an explanation."""
    pattern = concept_pattern(term)
    names = [pattern, *(concept_pattern(other) for other in others if other != term)]
    about = about_hit(term)

    def named(text: str) -> bool:  # the phrase, or its key word used about its mechanism
        return bool(pattern.search(text)) or (about is not None and about[1](text))

    verdict = _classify(term, blocks, lambda text, _: named(text), named, names=names)
    by_word = about is not None and verdict.verdict != "absent" and not any(
        pattern.search(f"{o.sentence} {o.heading or ''}") for o in verdict.occurrences)
    if by_word and about is not None:
        verdict.loose, verdict.note = True, f"The exact phrase never appears; {about[0]}."
    words = word_patterns(term)
    # Found by its key word alone and not explained there: the co-occurrence reading
    # below may still find it explained (the better of the two readings stands).
    if ((verdict.verdict != "absent" and not (by_word and verdict.verdict != "explained"))
            or len(words) < 2):
        return with_substance(verdict, blocks, names[1:])

    def block_hit(text: str, headings: str = "") -> bool:
        # in a plan each sentence is a piece of work of its own: one sentence holds them
        return close(words, text, headings, span=1 if _PLAN.search(headings) else 3)

    def sentence_hit(text: str) -> bool:
        return any(w.search(text) for w in words)

    loose = _classify(term, blocks, block_hit, sentence_hit, with_sections=True, names=names)
    loose.loose = loose.verdict != "absent"
    loose.note = "The exact phrase never appears; its words co-occur in the same section."
    if verdict.verdict != "absent" and loose.verdict != "explained":
        return with_substance(verdict, blocks, names[1:])  # the key word's reading says more
    found = with_substance(loose, blocks, names[1:])
    if found.verdict == "absent":  # say where its words do appear, apart
        found.note = apart(words, [(b.page, b.text) for b in blocks if b.kind != "furniture"])
    return found


def _classify(term: str, blocks: list[Block], block_hit: Callable[[str, str], bool],
              sentence_hit: Callable[[str], bool], with_sections: bool = False,
              names: Sequence[re.Pattern[str]] = ()) -> ConceptVerdict:
    occurrences: list[Occurrence] = []
    texts: dict[tuple[str, ...], str] = {}  # section text cache
    title = report_title(blocks)

    # the report outside its summaries, read once, for a tie another passage makes
    body = cache(lambda: "\n".join(b.text for b in blocks if b.kind in ("paragraph", "list")
                                   and not _in_summary(b.section, title)))

    def tied(context: str, occurrence: Occurrence) -> Occurrence:
        label = untied(slug(term), context, names, _concrete, body) \
            if occurrence.explained else None
        return occurrence if label is None else Occurrence(
            occurrence.page, occurrence.heading, occurrence.sentence, False,
            f"discussed in '{occurrence.heading or 'untitled section'}' but never tied to "
            f"{label} with a mechanism")
    for index, block in enumerate(blocks):
        headings = "\n".join(block.section) if with_sections else ""
        if block.kind == "furniture" or not block_hit(block.text, headings):
            continue
        if block.kind == "heading":
            section = "\n".join(b.text for b in section_body(blocks, index))
            occurrences.append(tied(section, _heading_occurrence(
                blocks, index, sentence_hit, title)))
            continue
        # Inside a section titled with the concept, the whole section is the discussion;
        # after a run-in title naming it ("Metacognition (...): ..."), the blocks it leads.
        titled = block.heading is not None and sentence_hit(block.heading)
        led = not titled and leads(block.text, sentence_hit)
        tasks = any(_PLAN.search(h) for h in block.section)  # a plan item: work of its own
        context = (section_text(blocks, block, texts) if titled
                   else run_in_text(blocks, index, names[1:], sentence_hit, tasks)
                   if led or (tasks and plan_item(block.text)) else neighbours(blocks, index))
        titled = titled or led
        parts = sentences(block.text)
        for position, sentence in enumerate(parts):
            if sentence_hit(sentence):
                # A run-in title ("State Synchronization.") or title line: quoted with the next
                more = parts[position + 1: position + 2] or (opening_after(blocks, index) * led)
                if len(sentence.split()) < 6 and more:
                    sentence = f"{sentence}{'' if sentence[-1] in '.:;!?' else ':'} {more[0]}"
                if _quoted_mention(sentence, sentence_hit):
                    occurrences.append(Occurrence(
                        block.page, block.heading, sentence, False,
                        "quoted in a list of terms (a word searched for), not explained"))
                    continue
                # A last sentence ending with a colon goes on in the list it opens.
                after = [b.text for b in [beside(blocks, index, 1)] if b and sentence[-1] == ":"]
                near = " ".join([parts[position], *(parts[position + 1: position + 2] or after)])
                unnamed, own = near, block.text if led else ""
                for name in names:  # concept names are not mechanisms
                    unnamed, own = name.sub(" ", unnamed), name.sub(" ", own)
                back = None if titled else sums_up(blocks, index, parts[position])
                occurrences.append(tied(back or context, _body_occurrence(
                    block, sentence, back or context, titled or _concrete(unnamed), title,
                    sentence_hit, _itself(own))))
    if not occurrences:
        return ConceptVerdict(term, "absent")
    verdict = "explained" if any(o.explained for o in occurrences) else "dropped"
    return ConceptVerdict(term, verdict, occurrences)


_QUOTED = re.compile(r"[\"\u201c\u201d\u2018\u2019]([^\"\u201c\u201d\u2018\u2019]{2,60})"
                     r"[\"\u201c\u201d\u2018\u2019]")


# "searches for key rubric concepts such as Dialectical Synthesis and Fan-In/Fan-Out": the
# list of terms a detective looks for, up to the next comma.
# Also "AST-based inspection verifies structural patterns in the graph (fan-out, conditional
# routing)": the patterns a check verifies, listed in brackets.
_SEARCHED = re.compile(
    r"\b(?:search|scan|look|check|detect|grep|match|quer|find|flag|verif)\w*\b[^.;]{0,60}?"
    r"\b(?:terms?|keywords?|concepts?|phrases?|words?|buzzwords?|patterns?)\s+(?:"
    r"(?:such as|like|including|e\.g\.,?)\s+[^,.;]{0,120}|(?:in [\w ]{1,30})?\([^()]{0,120}\))",
    re.IGNORECASE)


def _quoted_mention(sentence: str, hit: Callable[[str], bool]) -> bool:
    """The concept appears only as one of several quoted terms ('finds anchor terms
    ("Dialectical Synthesis", "Fan-In / Fan-Out", "StateGraph")') or in a list of terms the
    code looks for ('searches for key rubric concepts such as Dialectical Synthesis and
    Fan-In/Fan-Out'): the word is mentioned, as a string searched for, not used to explain
    anything."""
    if _SEARCHED.search(sentence) and not hit(_SEARCHED.sub(" ", sentence)):
        return True
    if len(_QUOTED.findall(sentence)) < 2:
        return False
    return not hit(_QUOTED.sub(" ", sentence))


def _concrete(text: str) -> bool:
    """The sentence (with the next one) itself names a mechanism: a code artifact, or two
    pieces of graph vocabulary. A buzzword beside a good paragraph is still dropped."""
    return bool(_CODE_SIGNAL.search(text)) or len(
        {m.group(0).lower() for m in _MECHANISM_WORDS.finditer(text)}) >= 2


def _itself(own: str) -> list[str]:
    """The cues of an item titled with the concept, read alone without concept names:
    three or more, concrete, make the item its own explanation ("Fan-In/Fan-Out: Concurrent
    Detectives harvest evidence into a central EvidenceAggregator"); fewer, none."""
    signals = mechanism_signals(own)
    return signals if len(signals) >= 3 and _concrete(own) else []


def _body_occurrence(block: Block, sentence: str, context: str, concrete: bool,
                     title: str | None, hit: Callable[[str], bool],
                     itself: Sequence[str] = ()) -> Occurrence:
    signals = mechanism_signals(context)
    words = len(context.split())
    where = block.heading or "untitled section"
    # work to do, not how the system works (the report's title names the document)
    planned = any(_PLAN.search(h) for h in block.section if h != title)
    if block.kind == "toc":
        return Occurrence(block.page, block.heading, sentence, False,
                          "a table-of-contents entry")
    if _in_summary(block.section, title, hit):
        return Occurrence(block.page, block.heading, sentence, False,
                          f"only in a summary/contents section ({where})")
    if len(signals) >= 3 and words >= 40 and concrete:
        # an explanation written as a plan still explains the concept (said as planned)
        how = PLANNED if planned else "discussed"
        return Occurrence(block.page, block.heading, sentence, True,
                          f"{how} in '{where}' with mechanisms: {', '.join(signals[:6])}",
                          strength=len(mechanism_signals(sentence)) + _section_bonus(block))
    if itself and not planned:  # a plan's item is a task, read alone a name (`run_in_text`)
        return Occurrence(block.page, block.heading, sentence, True,
                          f"an item titled with it in '{where}', with mechanisms: "
                          f"{', '.join(itself[:6])}",
                          strength=len(itself) + _section_bonus(block))
    if block.kind == "list" and words < 40:
        return Occurrence(block.page, block.heading, sentence, False,
                          "a list item without surrounding discussion")
    if planned:
        return Occurrence(block.page, block.heading, sentence, False,
                          f"named only as planned work in '{where}'")
    return Occurrence(block.page, block.heading, sentence, False,
                      f"named in '{where}' without mechanism ({len(signals)} cues, "
                      f"{words} words around it)")


def _heading_occurrence(blocks: list[Block], index: int, hit: Callable[[str], bool],
                        title: str | None) -> Occurrence:
    """A section titled with the concept is an explanation when its body is substantial
    and mechanistic; the deciding sentence is the body's first concrete one."""
    heading = blocks[index]
    body = section_body(blocks, index)
    text = "\n".join(b.text for b in body)
    signals = mechanism_signals(text)
    words = len(text.split())
    body_sentences = [s for b in body for s in sentences(b.text)]
    # Quote a real sentence (tables leave short cell fragments) that names the concept or
    # a code artifact.
    prose = [s for s in body_sentences if len(s.split()) >= 8] or body_sentences
    quote = next((s for s in prose if hit(s)), None) or next(
        (s for s in prose if _CODE_SIGNAL.search(s)), prose[0] if prose else heading.text)
    page = next((b.page for b in body if quote in b.text), heading.page)
    named = hit(quote)
    if not named:  # show the tie: the heading names the concept, the quote the mechanism
        quote = f"{heading.text}: {quote}"
    if _in_summary((*heading.section, heading.text), title, hit):
        return Occurrence(page, heading.text, quote, False, "a summary/contents heading")
    if words >= 40 and len(signals) >= 3:
        return Occurrence(page, heading.text, quote, True,
                          f"a section of {words} words titled with the concept, with "
                          f"mechanisms: {', '.join(signals[:6])}",
                          strength=len(signals) + (5 if named else 0)
                          + _section_bonus(heading))
    return Occurrence(page, heading.text, quote, False,
                      f"a heading whose section is thin ({words} words, {len(signals)} cues)")


# --- substance over labels -------------------------------------------------------------------
# The rubric's defence instruction: "credit the substance over the labels" (`substance`).


def with_substance(verdict: ConceptVerdict, blocks: list[Block],
                   names: Sequence[re.Pattern[str]] = ()) -> ConceptVerdict:
    """An unexplained concept (dropped or absent) becomes explained when the report describes
    the mechanism the rubric ties it to (`substance`); the passage is quoted. `names` are
    the rubric's other concepts."""
    if verdict.verdict == "explained":
        return verdict
    title = report_title(blocks)

    def skip(path: Sequence[str]) -> bool:
        # A plan or a retrospective describes what is to be built, not how it works.
        return _in_summary(path, title) or any(_RETRO.search(h) for h in path)
    found = substance(slug(verdict.term), blocks, skip, names, title)
    if found is None:
        return verdict
    occurrence = Occurrence(found.page, found.heading, found.quote, True,
                            _where_named(found.reason, verdict.occurrences),
                            strength=found.strength)
    return ConceptVerdict(verdict.term, "explained", [occurrence, *verdict.occurrences],
                          by_substance=True)


def _where_named(reason: str, named: Sequence[Occurrence]) -> str:
    """A reason "... without the term" that says where the term does appear, when it does:
    only as planned work ("Implement multi-speaker dialogue between judges (Dialectical
    Synthesis)" in a forward plan) or only without a mechanism."""
    if not named or not reason.endswith(" without the term"):
        return reason
    planned = all(o.reason.startswith("named only as planned work") for o in named)
    pages = ", ".join(f"p.{p}" for p in sorted({o.page for o in named if o.page}))
    return (reason.removesuffix(" without the term") + "; the term itself appears only "
            + ("as planned work" if planned else "where nothing explains it")
            + (f" ({pages})" if pages else ""))
