"""Headings the PDF outline leaves out, recovered from the outline's own typography.

A word processor bookmarks only the paragraphs styled as headings; a heading set by hand in
the same font and size ("Dialectical Synthesis" in 12 pt bold, like the outlined "State
Management" next to it) never reaches the outline, and its text would be read as part of
the section above it. A line set exactly like an outlined heading, larger than body text,
is a heading at that outlined heading's level.
"""

from __future__ import annotations

from collections import Counter

from automaton_auditor.forensics.pdf.model import Line
from automaton_auditor.forensics.pdf.structure import LARGER_THAN_BODY, body_size, font_headings

Style = tuple[float, bool]


def _style(line: Line) -> Style:
    return line.size_class, line.bold


def _outline_styles(lines: list[Line], marks: dict[int, tuple[int, str]]) -> dict[Style, int]:
    """Each typography the outline's headings use (clearly larger than body text), with the
    level it most often carries (the higher level on a tie)."""
    body = body_size(lines)
    levels: dict[Style, Counter[int]] = {}
    for line in lines:
        mark = marks.get(id(line))
        if mark is not None and mark[0] > 0 and line.size >= body * LARGER_THAN_BODY:
            levels.setdefault(_style(line), Counter())[mark[0]] += 1
    return {style: min(count, key=lambda level: (-count[level], level))
            for style, count in levels.items()}


def fill_outline(lines: list[Line], marks: dict[int, tuple[int, str]], skip: set[int]
                 ) -> dict[int, tuple[int, str]]:
    """`marks` (outline headings) plus every typographic heading set in the same font, size
    and weight as an outlined heading, at that heading's level; wrapped lines follow it."""
    styles = _outline_styles(lines, marks)
    if not styles:
        return marks
    typed = font_headings(lines, skip | set(marks))
    filled = dict(marks)
    keep = False  # whether the heading a continuation line belongs to was kept
    for line in lines:
        mark = typed.get(id(line))
        if mark is None or id(line) in marks:
            continue
        if mark[0] == -1:
            if keep:
                filled[id(line)] = mark
            continue
        level = styles.get(_style(line))
        keep = level is not None
        if level is not None:
            filled[id(line)] = (level, mark[1])
    return filled
