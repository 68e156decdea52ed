"""Drawings made of characters that cross a page break.

A report printed from a browser or a word processor puts its running header and footer
lines (a date and title, a file path, "42/50") between the last row of a page and the first
row of the next. A box drawing that continues over the break is then cut in two, and each
half is read as a small diagram of its own. Here the running lines standing between two
pages of one drawing are taken out, so the drawing is read whole.

Pure string work: deterministic, bounded, never raises on odd input.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable

from automaton_auditor.forensics.diagrams.boxes import drawing_line

EDGE_LINES = 3  # header or footer lines looked at, at each end of a page
MIN_PAGES = 3  # pages a line must recur on to be a running header or footer
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-(]?\s*\d{1,4}\s*[-)]?(?:\s*(?:/|of)\s*\d{1,4})?$",
                          re.IGNORECASE)


def _key(line: str) -> str:
    """A line with its numbers (page number, date) blanked: how a running line recurs."""
    return " ".join(re.sub(r"\d+", "#", line.lower()).split())


def _edges(lines: list[str]) -> list[str]:
    """The non-blank lines at the top and the bottom of a page."""
    kept = [line for line in lines if line.strip()]
    return kept[:EDGE_LINES] + kept[-EDGE_LINES:]


def running_keys(page_texts: list[str]) -> set[str]:
    """Keys (`_key`) of the lines that recur at the top or bottom of at least `MIN_PAGES`
    pages (all of them in a shorter report): running headers and footers. A line of a
    drawing ("│ │") may recur there too, and is none."""
    pages: dict[str, set[int]] = {}
    for number, text in enumerate(page_texts):
        for line in _edges(text.split("\n")):
            if not drawing_line(line) and re.search(r"[A-Za-z]{2}", line):
                pages.setdefault(_key(line), set()).add(number)
    needed = min(MIN_PAGES, len(page_texts))
    return {key for key, seen in pages.items() if len(seen) >= max(needed, 2)}


def running_line(line: str, keys: set[str]) -> bool:
    """A blank line, a page number, or a running header or footer (its key in `keys`)."""
    stripped = line.strip()
    return not stripped or _key(stripped) in keys or bool(_PAGE_NUMBER.match(stripped))


def running_test(page_texts: list[str]) -> Callable[[str], bool]:
    """Whether a line is a blank line, a page number, or a running header or footer of
    these pages: the lines standing between the two parts of a block cut by a page break."""
    keys = running_keys(page_texts)
    return functools.partial(running_line, keys=keys)


def join_broken_drawings(page_texts: list[str]) -> list[str]:
    """The pages' texts with the running header and footer lines taken out wherever a
    drawing made of characters continues from one page to the next (the last line left on
    the page and the first left on the next are both drawing lines); every other page
    keeps its text."""
    keys = running_keys(page_texts)
    pages = [text.split("\n") for text in page_texts]
    for upper, lower in itertools.pairwise(pages):
        tail = len(upper)
        while tail > 0 and len(upper) - tail < 2 * EDGE_LINES \
                and running_line(upper[tail - 1], keys):
            tail -= 1
        head = 0
        while head < len(lower) and head < 2 * EDGE_LINES and running_line(lower[head], keys):
            head += 1
        if tail > 0 and head < len(lower) and drawing_line(upper[tail - 1]) \
                and drawing_line(lower[head]):
            del upper[tail:]
            del lower[:head]
    return ["\n".join(lines) for lines in pages]
