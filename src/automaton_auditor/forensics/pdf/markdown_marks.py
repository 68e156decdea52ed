"""Headings of a report that is a Markdown file printed as plain text.

Some reports are the Markdown source itself, printed in one monospaced font: no outline, no
larger or bold headings, only `## 2) Known Gaps` and `### 2.2 Implementation plan` lines.
Without their headings every paragraph sits in no section, so a plan's section reads as
claims about the code. A document with at least two `##`-or-deeper lines outside fenced code
is such a dump; its `#` lines (outside fences) are its headings, at the depth of their marks.
A rendered report never shows those marks, and a code comment (`# Detective fan-out`) is one
`#` inside a code block, so neither passes for a dump.
"""

from __future__ import annotations

import re

from automaton_auditor.forensics.pdf.model import Line

_ATX = re.compile(r"^(#{1,6})[ \t]+(\S.{0,119}?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^(?:```|~~~)")
MIN_DEEP_MARKS = 2  # `##`-or-deeper lines that make a document a Markdown dump


def markdown_headings(lines: list[Line], skip: set[int]) -> dict[int, tuple[int, str]]:
    """`{id(line): (level, text)}` for the ATX heading lines of a printed Markdown source,
    empty when the document is not one. Lines in `skip` (running headers, footers) and lines
    inside fenced code are never headings."""
    marks: dict[int, tuple[int, str]] = {}
    fenced = False
    for line in lines:
        if id(line) in skip:
            continue
        text = line.text.strip()
        if _FENCE.match(text):
            fenced = not fenced
            continue
        match = None if fenced else _ATX.match(text)
        if match:
            marks[id(line)] = (len(match.group(1)), match.group(2))
    deep = sum(1 for level, _text in marks.values() if level >= 2)
    return marks if deep >= MIN_DEEP_MARKS else {}
