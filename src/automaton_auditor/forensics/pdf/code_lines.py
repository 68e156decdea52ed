"""The lines of a report that are code: a fenced block, or a Mermaid block's source.

A report printed from Markdown shows its code in a monospaced font a little taller than the
body text, so a line such as ``JI -->|valid| CJ["ChiefJustice"]`` looks like a heading to the
typography (`structure.font_headings`), and the prose after the block would be filed under it.
A line of code is never a heading. A Mermaid block is its header line (``flowchart TD``) and
the statement lines after it (`diagrams.parse.mermaid_line`, the diagram reader's own test),
running on past page furniture; fenced blocks count only when their closing fence is there.
"""

from __future__ import annotations

import re

from automaton_auditor.forensics.diagrams.parse import mermaid_head, mermaid_line, unclosed
from automaton_auditor.forensics.pdf.model import Line

_FENCE = re.compile(r"^(?:```|~~~)")


def _fenced(lines: list[Line]) -> set[int]:
    """ids of the lines from an opening fence to its closing one; a fence left open (its
    closing line lost) marks nothing, or it would take the rest of the report."""
    fences = [index for index, line in enumerate(lines) if _FENCE.match(line.text.strip())]
    marked: set[int] = set()
    for start, stop in zip(fences[::2], fences[1::2], strict=False):
        marked.update(id(line) for line in lines[start: stop + 1])
    return marked


def code_lines(lines: list[Line], skip: set[int]) -> set[int]:
    """ids of the lines inside a fenced code block or a Mermaid block. Lines in `skip`
    (running headers and footers) neither belong to a block nor end one."""
    kept = [line for line in lines if id(line) not in skip]
    marked = _fenced(kept)
    diagram: str | None = None  # the type of the Mermaid block being read, if any
    previous: Line | None = None  # the block's last line
    statement = ""  # the statement that line belongs to, joined when a label wraps
    for line in kept:
        text = line.text.strip()
        head = mermaid_head(text)
        row = previous is not None and _same_row(previous, line)
        if head or (diagram and (row or unclosed(statement) or mermaid_line(text, diagram))):
            diagram = head or diagram
            marked.add(id(line))
            statement = f"{statement} {text}" if row or unclosed(statement) else text
            previous = line
        else:
            diagram, previous, statement = None, None, ""
    return marked


def _same_row(previous: Line, line: Line) -> bool:
    """A piece of the previous line's row: the PDF reader cuts a code line where an
    underscore is drawn apart (``P -->|clone`` ``_`` ``failure| CF[...]``)."""
    return previous.page == line.page and line.top < previous.bottom \
        and line.bottom > previous.top
