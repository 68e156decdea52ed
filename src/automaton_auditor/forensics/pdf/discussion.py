"""Where a concept's discussion is, around the block that names it: the section a heading
opens, the run of blocks a run-in title leads, or the block with its neighbours."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

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


def leads(text: str, hit: Callable[[str], bool]) -> bool:
    """The block opens with a run-in title naming the concept."""
    title = run_in_title(text)
    return title is not None and hit(title)


def run_in_text(blocks: list[Block], index: int, others: Sequence[re.Pattern[str]]) -> str:
    """A block led by a run-in title with the body blocks after it in its section, up to
    the next run-in title naming another concept (a paragraph per concept, its code and
    lists following, is a subsection the layout did not mark as one); the block before it
    too, as for any block (`neighbours`)."""
    section = blocks[index].section
    before = beside(blocks, index, -1)
    texts = [*([before.text] if before else []), blocks[index].text]
    for block in blocks[index + 1:]:
        if block.kind == "furniture":
            continue
        title = run_in_title(block.text)
        if block.section != section or block.kind not in ("paragraph", "list") or (
                title and any(o.search(title) for o in others)):
            break
        texts.append(block.text)
    return "\n".join(texts)


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


def neighbours(blocks: list[Block], index: int) -> str:
    """The block's text with its neighbours in the same section (surrounding discussion)."""
    return "\n".join([blocks[index].text, *(other.text for step in (-1, 1)
                                             if (other := beside(blocks, index, step)))])
