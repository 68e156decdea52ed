"""Where a concept's discussion is, around the block that names it: the section a heading
opens, the run of blocks a run-in title leads, or the block with its neighbours."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from automaton_auditor.forensics.pdf.chunks import sentences
from automaton_auditor.forensics.pdf.model import Block


def section_body(blocks: list[Block], index: int) -> list[Block]:
    """Body blocks of the section a heading opens (until a heading of the same or a higher
    level)."""
    level = blocks[index].level
    body = []
    for block in blocks[index + 1:]:
        if block.kind == "heading" and block.level <= level:
            break
        if block.kind in ("paragraph", "list"):
            body.append(block)
    return body


# A run-in title opening a block: a short label (after a bullet or a number) and a colon.
_RUN_IN = re.compile(r"^\s*(?:[-\u2022*]|\d+(?:\.\d+)*[.)])?\s*([^:\n]{2,80}?):(?:\s|$)")


def run_in_title(text: str) -> str | None:
    """The short label a block opens with before a colon ("Gaps:", "1. Persona drift:")."""
    match = _RUN_IN.match(text)
    return match.group(1) if match and len(match.group(1).split()) <= 8 else None


# A title line the layout set as body text ("The Dialectical Bench Design"): a few words in
# title case, no closing punctuation, no table cells.
_TITLE_LINE = re.compile(r"^\s*(?:The |A |An |Our )?[A-Z][\w-]*(?:\s+(?:[A-Z&][\w&-]*|of|and|for|"
                         r"in|on|to|the|vs\.?))*\s*$")


def title_line(text: str) -> bool:
    """A block that is a title line of its own: at most eight words in title case, with no
    closing punctuation (a subsection heading the layout set in the body font)."""
    return len(text.split()) <= 8 and "|" not in text and bool(_TITLE_LINE.match(text))


def leads(text: str, hit: Callable[[str], bool]) -> bool:
    """The block opens with a run-in title naming the concept, or is a title line naming it."""
    title = run_in_title(text) or (text if title_line(text) else None)
    return title is not None and hit(title)


# The marker a list item opens with: a bullet, or a number ("2.", "3)", "1.2.").
_MARKER = re.compile(r"^\s*(?:([-\u2022\u25cf\u25aa*o\uf0b7])|\d+(?:\.\d+)*[.)])\s")


def _marker(text: str) -> str | None:
    """The kind of list marker a block opens with ('1.' for any number), None without one."""
    match = _MARKER.match(text)
    return None if match is None else match.group(1) or "1."


def plan_item(text: str) -> bool:
    """A list item with a run-in title of its own ("\u2022 Tie-Breaker Mechanism: ..."): in a
    plan, a piece of work whose sibling items are other work (`run_in_text`)."""
    return _marker(text) is not None and run_in_title(text) is not None


def _sibling(text: str, marker: str | None, hit: Callable[[str], bool]) -> bool:
    """Another item of the same list, with its own run-in title ("3. Final Formatting:"
    after "2. Dialectical Synthesis:"): its own subject, not this item's discussion; an item
    whose title names the same concept ("Evidence Fan-In:" after "Detective Fan-Out:")
    goes on with it."""
    title = run_in_title(text)
    return marker is not None and _marker(text) == marker and title is not None \
        and not hit(title)


def _titled_other(text: str, others: Sequence[re.Pattern[str]]) -> bool:
    """The block opens with a run-in title naming another concept."""
    title = run_in_title(text)
    return title is not None and any(o.search(title) for o in others)


def run_in_text(blocks: list[Block], index: int, others: Sequence[re.Pattern[str]],
                hit: Callable[[str], bool], tasks: bool = False) -> str:
    """A block led by a run-in title with the body blocks after it in its section, up to
    the next run-in title naming another concept (a paragraph per concept, its code and
    lists following, is a subsection the layout did not mark as one); the block before it
    too, as for any block (`neighbours`). In a list of `tasks` (a plan: each item a piece
    of work of its own), the item stops at its sibling items, unless their titles name the
    same concept (`hit`); in a design section the items describe one architecture."""
    section = blocks[index].section
    marker = _marker(blocks[index].text) if tasks else None
    # a title line opens its own passage: the block before it ends the one before
    before = None if title_line(blocks[index].text) else beside(blocks, index, -1)
    # the item before, titled with another concept ("Fan-In/Fan-Out: ..." above
    # "Dialectical Synthesis: ..."), is that concept's discussion, not this one's
    if before and (_sibling(before.text, marker, hit) or _titled_other(before.text, others)):
        before = None
    texts = [*([before.text] if before else []), blocks[index].text]
    for block in blocks[index + 1:]:
        if block.kind == "furniture":
            continue
        if block.section != section or block.kind not in ("paragraph", "list") or \
                _titled_other(block.text, others) or _sibling(block.text, marker, hit):
            break
        texts.append(block.text)
    return "\n".join(texts)


# A sentence opening with a demonstrative ("This implements Dialectical Synthesis - not via
# ...") sums up the passage before it: that passage is its discussion.
_BACK = re.compile(r"^\s*(?:this|these|together,? these|all of this)\b", re.IGNORECASE)
_MAX_BACK = 12  # blocks read back: a section's passage, not a whole chapter


def sums_up(blocks: list[Block], index: int, sentence: str) -> str | None:
    """For a block opening with a sentence that refers back ("This implements ..."), the
    body blocks before it in its section with the block itself; None otherwise."""
    if not _BACK.match(sentence) or not blocks[index].text.lstrip().startswith(
            sentence.lstrip()[:40]):
        return None
    first = index
    while index - first < _MAX_BACK and beside(blocks, first, -1) is not None:
        first -= 1
    return "\n".join(b.text for b in blocks[first:index + 1] if b.kind in ("paragraph", "list"))


def section_text(blocks: list[Block], block: Block, cache: dict[tuple[str, ...], str]) -> str:
    """The body text of the block's section (cached per section path)."""
    if block.section not in cache:
        cache[block.section] = "\n".join(
            b.text for b in blocks
            if b.kind in ("paragraph", "list") and b.section == block.section)
    return cache[block.section]


def beside(blocks: list[Block], index: int, step: int) -> Block | None:
    """The body block `step` places from `index`, when it is in the same section."""
    others = blocks[index + step: index + step + 1] if index + step >= 0 else []
    return next((o for o in others if o.kind in ("paragraph", "list")
                 and o.section == blocks[index].section), None)


def opening_after(blocks: list[Block], index: int) -> list[str]:
    """The first sentence of the body block after `index` in its section; [] when none."""
    after = beside(blocks, index, 1)
    return [] if after is None else [next(iter(sentences(after.text)), after.text)]


# A block ending mid-sentence, continued by one opening in lower case: one line of a
# paragraph the layout cut into lines ("o Annotated reducers (operator.add ...)" then "safely
# merge data across concurrent agents, ...").
_UNENDED = re.compile(r"[^.!?:;]\s*$")
_CONTINUES = re.compile(r"^\s*[a-z(]")
_MAX_LINES = 6  # a run longer than this is no line-broken sentence
_MAX_ITEMS = 12  # the items a colon opens that are read with it


def _line_run(blocks: list[Block], index: int) -> tuple[int, int]:
    """First and last index of the sentence the block is a line of (itself when whole)."""
    first = last = index
    while first > 0 and index - first < _MAX_LINES and (
            prev := beside(blocks, first, -1)) is not None and \
            _UNENDED.search(prev.text) and _CONTINUES.match(blocks[first].text):
        first -= 1
    while last - index < _MAX_LINES and (nxt := beside(blocks, last, 1)) is not None and \
            _UNENDED.search(blocks[last].text) and _CONTINUES.match(nxt.text):
        last += 1
    return first, last


def neighbours(blocks: list[Block], index: int) -> str:
    """The block's text with its neighbours in the same section (surrounding discussion);
    a block that is one line of a sentence stands for the whole sentence, and so does each
    neighbour. A block ending with a colon goes on in the list it opens (every item, across
    a page break: "follows a fan-out / fan-in pattern:" then what runs in parallel)."""
    first, last = _line_run(blocks, index)
    runs = [(first, last)]
    if beside(blocks, first, -1) is not None:
        runs.append(_line_run(blocks, first - 1))
    end = last
    while end - last < _MAX_ITEMS and (nxt := beside(blocks, end, 1)) is not None and (
            nxt.kind == "list" and blocks[last].text.rstrip().endswith(":")):
        end += 1
    if end > last:
        runs.append((last + 1, end))
    elif beside(blocks, last, 1) is not None:
        runs.append(_line_run(blocks, last + 1))
    return "\n".join(" ".join(b.text for b in blocks[a:z + 1]) for a, z in sorted(runs))
