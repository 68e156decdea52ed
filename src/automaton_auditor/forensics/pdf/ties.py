"""What a concept's explanation must be about, beside naming some mechanism.

A discussion full of node names is not yet an explanation of *this* concept. The rubric's
Metacognition is "the system judging its own judgements": a section listing the Chief
Justice's rules (a variance threshold, a security cap) with no word of the system evaluating
or re-evaluating its own evaluation describes dialectics, not metacognition. State
Synchronization is how the writes of parallel branches are merged into the shared state: a
"synchronization node" at a fan-in that receives evidence is the fan-in's barrier, and is the
concept only where the state's merging is said beside it, or explained elsewhere in the report
(reducers merging what parallel nodes write).

`TIES` gives, per concept (by slug), what the discussion must say, a pattern for it, and
optionally a pattern a passage elsewhere in the report may satisfy the tie with; `windows` cuts
a text into the places where such a statement and its mechanism must meet.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from automaton_auditor.forensics.pdf.chunks import sentences

# The system's reflection on its own evaluation: "evaluates the quality of its own
# evaluation", "the swarm's own deliberation", "reasoning about its own reasoning",
# "self-audit", "re-evaluation", "second-order evaluation", "audits its own auditors".
_OWN = (r"(?:evaluat|judg|reason|think|thought|output|quality|audit|score|verdict|opinion|"
        r"decision|confidence|cognit|synthes|conclusion|assessment|mistake|error|repo|code|"
        r"report|performance|behaviou?r|result|deliberat|knowledge|gap|limit|blind)")
_REFLEXIVE = re.compile(
    r"\b(?:its|their|\w+['\u2019]s) own (?:[\w-]+ ){0,2}" + _OWN
    + r"|\bre-?evaluat\w*"
    r"|\bself[\s-]?(?:evaluat|audit|assess|check|correct|monitor|reflect|aware|critiq|"
    r"review|verif|improv|regulat|diagnos)\w*"
    r"|\b(?:audit|evaluat|assess|judg|critiqu|examin|review)\w* (?:it|them)sel(?:f|ves)\b"
    r"|\b(?:think|reason)\w* about (?:its |their )?(?:own )?(?:think|reason|thought)"
    r"|\breflect\w* on (?:why|how|whether|its|their)\b"
    r"|\bcognition about cognition|\bsecond[\s-]order\b|\bmeta[\s-]level\b"
    r"|\bevaluat\w* (?:of |the quality of )?(?:the )?evaluation"
    r"|\bquality of (?:the )?(?:judges'?|judicial|its|their) "
    r"|\b(?:judg|audit|evaluat)\w* (?:the|its own) (?:judg|auditor|evaluator)",
    re.IGNORECASE)

# The shared state's merging, said beside the synchronization: a reducer, a merge, the state.
_STATE = re.compile(
    r"(?<![a-z])(?:reducers?(?![a-z])|operator\.\w+|annotated|merg\w*|overwrit\w*|append\w*|"
    r"state(?![a-z])|\w*state\b)", re.IGNORECASE)
# Said elsewhere in the report, the merging itself must be explained: reducers, or parallel
# writes merged rather than overwritten.
_MERGING = re.compile(r"(?<![a-z])(?:reducers?(?![a-z])|operator\.(?:add|ior|or_)|merg\w*|"
                      r"overwrit\w*)", re.IGNORECASE)

TIES: dict[str, tuple[str, re.Pattern[str], re.Pattern[str] | None]] = {
    "metacognition": ("the system evaluating its own evaluation", _REFLEXIVE, None),
    "state_synchronization": ("the merging of the shared state", _STATE, _MERGING),
}

# A block ending mid-sentence, continued by one opening in lower case (or with a dash and a
# lower-case word, "- the agent reasoning about ..."): one sentence cut into lines.
_UNENDED = re.compile(r"[^.!?:;]$")
_CONTINUES = re.compile(r"^(?:[-\u2013\u2014]\s+)?[a-z(]")


def windows(text: str) -> list[str]:
    """The places in a text (blocks joined by newlines) where a statement and the mechanism
    it is tied to must meet: each sentence with the next in its block (a block cut into lines
    read whole); a sentence ending its block with a colon with the block after it."""
    blocks: list[str] = []
    for block in (b.strip() for b in text.split("\n") if b.strip()):
        if blocks and _UNENDED.search(blocks[-1]) and _CONTINUES.match(block):
            blocks[-1] = f"{blocks[-1]} {block}"
        else:
            blocks.append(block)
    found: list[str] = []
    for index, block in enumerate(blocks):
        parts = sentences(block)
        for position, sentence in enumerate(parts):
            after = parts[position + 1: position + 2]
            if not after and sentence.endswith(":") and index + 1 < len(blocks):
                after = [blocks[index + 1]]
            found.append(" ".join([sentence, *after]))
    return found


def untied(slug: str, context: str, names: Sequence[re.Pattern[str]],
           concrete: Callable[[str], bool], elsewhere: Callable[[], str]) -> str | None:
    """What the concept's discussion (`context`) fails to say with a mechanism (`concrete`,
    concept names aside), or None when it says it, or the concept needs no tie. `elsewhere`
    gives the report's body, read only for a concept whose tie another passage may make."""
    entry = TIES.get(slug)
    if entry is None:
        return None
    label, local, remote = entry
    if _said(context, local, names, concrete) or (
            remote is not None and _said(elsewhere(), remote, names, concrete)):
        return None
    return label


def _said(text: str, pattern: re.Pattern[str], names: Sequence[re.Pattern[str]],
          concrete: Callable[[str], bool]) -> bool:
    for window in windows(text):
        for name in names:  # concept names are not mechanisms
            window = name.sub(" ", window)
        if pattern.search(window) and concrete(window):
            return True
    return False
