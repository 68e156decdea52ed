"""How a rubric concept is recognised in a report's text: its spelling variants, its words
for the loose match, and the concept named by its mechanism's own vocabulary.

A report may explain a concept without its exact name: "fan-in synchronization points
(EvidenceAggregator, Judge Collector)" or "reducers merge what the parallel branches
return, synchronising the state" is state synchronization. `about_hit` accepts such a
sentence: the concept's key word used, in the same sentence, about the mechanism it names.
The key word alone ("synchronization" of clocks, of a repository) is not the concept.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from automaton_auditor.forensics.pdf.chunks import sentences

_SUFFIXES = ("isations", "izations", "isation", "ization", "ations", "ation", "itions",
             "ition", "ically", "ical", "ics", "ive", "ions", "ion", "ing", "ed", "es", "s")


def _stem(word: str) -> str:
    return next((word[: -len(suffix)] for suffix in _SUFFIXES
                 if word.endswith(suffix) and len(word) - len(suffix) >= 5), word)


def _word_rx(word: str, final: bool = True) -> str:
    """A word with light inflection; only the phrase's last word must end at a word
    boundary, so joined spellings ("fanin") still match."""
    word = word.lower()
    stem = _stem(word)
    if stem != word:
        return re.escape(stem) + r"[a-z]*"
    return re.escape(word) + r"(?:s|es)?" + (r"(?![a-z])" if final else "")


def concept_pattern(term: str) -> re.Pattern[str]:
    """A regex matching a concept and its generic variants: any case; words joined by
    spaces, hyphens, underscores or nothing; light inflection (synthesis/synthesize,
    synchronization/synchronisation); and each side of "A / B" or "A and B" alone."""
    parts = [p for p in re.split(r"\s*/\s*|\s+(?:and|or|&)\s+", term) if p.strip()]
    alternatives = []
    for part in sorted(set(parts) | {term}, key=len, reverse=True):
        words = re.findall(r"[A-Za-z0-9]+", part)
        if words:
            alternatives.append(r"[\s\-_/]*".join(
                _word_rx(w, final=i == len(words) - 1) for i, w in enumerate(words)))
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(alternatives) + ")", re.IGNORECASE)


def slug(term: str) -> str:
    """Facet suffix for a concept: 'Fan-In / Fan-Out' -> 'fan_in_fan_out'."""
    return re.sub(r"[^a-z0-9]+", "_", term.lower()).strip("_") or "concept"


def word_patterns(term: str) -> list[re.Pattern[str]]:
    """One pattern per distinctive word of a multi-word term (for the loose match)."""
    words = [w for w in re.findall(r"[A-Za-z0-9]+", term) if len(w) > 2]
    return [re.compile(r"(?<![A-Za-z0-9])" + _word_rx(w), re.IGNORECASE) for w in words]



def close(words: list[re.Pattern[str]], text: str, headings: str = "", span: int = 3) -> bool:
    """A multi-word concept's words found together: those not in the section's `headings`
    within `span` consecutive sentences of the text (one thought: "... Fan-In
    (Synchronization) points. I realized ... overwrite each other. This necessitated custom
    state reducers"); words further apart in a long paragraph are separate topics."""
    missing = [w for w in words if not w.search(headings)]
    if not missing:
        return True
    parts = sentences(text) or [text]
    runs = [" ".join(parts[i: i + span]) for i in range(max(len(parts) - span + 1, 1))]
    return any(all(w.search(run) for w in missing) for run in runs)


_DISTINCT = 6  # shorter words ("fan", "out", "state") are everyday words, not the concept's


def apart(words: list[re.Pattern[str]], texts: list[tuple[int | None, str]]) -> str:
    """For a multi-word concept never found: where its distinctive words appear apart ("its
    words never appear together: 'dialectical' on p.7 (...)"), or "" when none does. A report
    that writes "full dialectical governance" has not left the word out."""
    said = []
    for word in words:
        hit = next(((page, m) for page, text in texts if (m := word.search(text))), None)
        if hit is not None and len(hit[1].group(0)) >= _DISTINCT:
            page, match = hit
            where = f"p.{page}" if page else "the report"
            text = match.string
            clip = " ".join(text[max(match.start() - 60, 0): match.end() + 60].split())
            said.append(f"'{match.group(0).lower()}' on {where} (\"...{clip}...\")")
    if not said:
        return ""
    return f"Its words never appear together: {'; '.join(said)}."


# Per concept (by slug): what the note says, the key word, and the mechanism it must be used
# about in the same sentence (the rubric's "State Synchronization": parallel branches whose
# writes reducers merge into the shared state at a fan-in).
ABOUT: dict[str, tuple[str, re.Pattern[str], re.Pattern[str]]] = {
    "state_synchronization": (
        "'synchroniz…' is used about state, reducers, fan-in, merging or parallel branches",
        re.compile(r"(?<![a-z])synchroni[sz]\w*", re.IGNORECASE),
        re.compile(r"(?<![a-z])(?:state(?![a-z])|reducers?(?![a-z])|fan[\s_-]?in(?![a-z])|"
                   r"parallel|merg\w*|concurren\w*|operator\.(?:add|or_|ior))", re.IGNORECASE)),
    # "The Dialectical Bench Design", "a dialectical judicial bench renders conflicting
    # opinions": the rubric's dialectics is the judges' opposing opinions, synthesised.
    "dialectical_synthesis": (
        "'dialectic…' is used about the judges, their personas or their opposing opinions",
        # (the rubric's criterion "Judicial Nuance and Dialectics" names a criterion)
        re.compile(r"(?<![a-z])(?<!nuance and )dialectic\w*", re.IGNORECASE),
        re.compile(r"(?<![a-z])(?:judg\w*|judicial|bench|personas?|prosecutor|defen[cs]e|"
                   r"(?:anti)?thes[ie]s|opinions?|debat\w*|courtroom)(?![a-z])", re.IGNORECASE)),
}


def about_hit(term: str) -> tuple[str, Callable[[str], bool]] | None:
    """For a concept in `ABOUT`: the note naming the variant, and a test that a text has a
    sentence using the concept's key word about its mechanism; None for other concepts."""
    entry = ABOUT.get(slug(term))
    if entry is None:
        return None
    note, key, mechanism = entry

    def hit(text: str) -> bool:
        return bool(key.search(text)) and any(
            key.search(s) and mechanism.search(s) for s in sentences(text))
    return note, hit
