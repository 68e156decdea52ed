"""Trunk drawings made of characters, read as layered flows.

A report may draw its graph as rows of node names joined by trunk lines, without boxes::

    context_builder (Superstep 1)
    │
    ├──────┬──────┐
    ▼      ▼      ▼
    repo   doc    vision   (Superstep 2 — PARALLEL)
    │      │      │
    └──────┴──────┘
    ▼
    evidence_aggregator

A row of names between connector lines is one layer, and the flow goes from each layer to the
next. A PDF's text layer collapses the spaces between names, so how many names a row holds is
read from the connector line drawn just above it (three arrow heads, or ``├──┬──┐``: three
branches); a row whose words do not add up to that count is not read (a name may have
several words), and neither is a row of prose. Each node of a layer joins each node of the
next (a fan-out under one node, a fan-in above one), except that two rows of the same width
joined only by vertical lines are parallel lanes (column i joins column i).

Pure string work: deterministic, bounded, never raises on odd input.
"""

from __future__ import annotations

import re
from itertools import pairwise

from automaton_auditor.forensics.diagrams.boxes import MAX_EDGES, MAX_ROW, parse_boxes
from automaton_auditor.forensics.diagrams.flow import ParsedFlow
from automaton_auditor.forensics.diagrams.parse import MAX_BLOCK_LINES, MAX_TEXT_CHARS, Block

# A connector line holds trunk, branch and arrow-head characters only, at least one of them
# vertical (a line of dashes alone is a Markdown rule, not a connector).
_CONNECTOR = re.compile(r"^[\s│┃║|▼↓vV├┤┬┴┼┌┐└┘─━═]+$")
_VERTICAL = "│┃║|▼↓├┤┬┴┼┌┐└┘"
_MARKS = re.compile(r"[│┃║|▼↓├┬┼┌┐┤└┴┘]|(?<!\S)[vV](?!\S)")  # one per branch drawn
_HORIZONTAL = re.compile(r"[─━═]")
_NOTE = re.compile(r"\([^()]{0,80}\)")  # "(Superstep 2 — PARALLEL)": a comment, no node
# a branch off a trunk or a box's border or row: a drawing the other readers take
_DRAWN = re.compile(r"^\s*(?:[+├└┌╔`\\|│┃║]\s*[-─━═]|[|│┃║].*[|│┃║]\s*$)")
_WORD = re.compile(r"[A-Za-z_][\w.\-]{0,60}")
MIN_LAYERS = 3
MAX_NAME_WORDS = 3  # a single node's label: "Evidence Aggregator", not a sentence
MAX_LABEL_CHARS = 120


def _connector(line: str) -> bool:
    if not _CONNECTOR.match(line):
        return False
    return any(c in line for c in _VERTICAL) or set(line.split()) <= {"v", "V"}


def _words(line: str) -> list[str] | None:
    """The words of a row once its notes are dropped, or None when it is no row of names:
    prose (punctuation, numbers, a long line) or a table row."""
    text = line.strip()
    for _ in range(2):
        text = _NOTE.sub(" ", text)
    words = text.split()
    if not words or len(line.strip()) > MAX_LABEL_CHARS \
            or not all(_WORD.fullmatch(w) for w in words):
        return None
    return words


def _names(line: str, width: int) -> list[str] | None:
    """The node names of a row drawn under `width` branches, or None when the row cannot be
    read as names (`_words`, or a count that does not match)."""
    words = _words(line)
    if words is None:
        return None
    if width <= 1:
        return [" ".join(w.rstrip(".") for w in words)] if len(words) <= MAX_NAME_WORDS \
            else None
    return [w.rstrip(".") for w in words] if len(words) == width else None


def _width(gap: list[str], above: bool) -> int:
    """How many branches the connector line next to a row draws: the line just above it,
    or (for the drawing's first row) the line just below."""
    if not gap:
        return 1
    return max(len(_MARKS.findall(gap[-1 if above else 0])), 1)


def _flow(layers: list[tuple[list[str], list[str]]]) -> ParsedFlow | None:
    """Edges between successive layers (``(names, connector lines above them)``)."""
    widest = max((len(names) for names, _ in layers), default=0)
    if len(layers) < MIN_LAYERS or widest > MAX_ROW:
        return None
    if widest == 1 and any(len(_MARKS.findall(g)) > 1 for _, gap in layers for g in gap):
        return None  # branches drawn, but no row of several names read: not a chain
    flow = ParsedFlow(kind="text_art")
    for (upper, _gap), (lower, gap) in pairwise(layers):
        lanes = len(upper) == len(lower) > 1 and not any(_HORIZONTAL.search(g) for g in gap)
        pairs = list(zip(upper, lower, strict=True)) if lanes else \
            [(s, d) for s in upper for d in lower]
        for src, dst in pairs[:MAX_EDGES]:
            flow.add(src, dst)
    return flow if flow.edges else None


Row = tuple[int, int, str, list[str]]  # span, label line, the connector lines above it


def _read(rows: list[Row], found: list[Block]) -> None:
    """Read one run of rows (each after a gap of connector lines but the first) into a
    drawing. A row whose names cannot be read (branch names of several words) drops the
    whole run: its readable rows alone would draw a chain the picture does not have."""
    layers: list[tuple[list[str], list[str]]] = []
    for index, (_start, _end, line, gap) in enumerate(rows):
        below = rows[index + 1][3] if index + 1 < len(rows) else []
        names = _names(line, _width(gap, True) if index else _width(below, False))
        if names is None:
            return
        layers.append((names, gap))
    flow = _flow(layers)
    if flow is not None:
        found.append((rows[0][0], rows[-1][1], flow))


def parse_trees(text: str) -> list[Block]:
    """Every trunk drawing of at least three rows of names in the text, as (start, end,
    flow). Rows next to a branch line or a box (``+---> A``, ``│ A │``) are a piece of a
    drawing of another kind (`arrows`, `boxes`), not a drawing of their own."""
    found: list[Block] = []
    rows: list[Row] = []
    gap: list[str] = []
    offset, before = 0, ""
    for line in text[:MAX_TEXT_CHARS].split("\n"):
        line_start, offset = offset, offset + len(line) + 1
        if not line.strip():
            continue
        if _connector(line) and (not rows or len(gap) < MAX_BLOCK_LINES):
            gap.append(line)  # (a trunk above any row is no part of a drawing read here)
            continue
        label = _words(line) is not None
        # a label right after a label, or prose, ends the run; so does its length bound
        if not (label and (gap or not rows)) or len(rows) >= MAX_BLOCK_LINES:
            if not _DRAWN.match(before) and not _DRAWN.match(line):
                _read(rows, found)
            rows, before = [], rows[-1][2] if rows and label else line
        if label:
            rows.append((line_start, line_start + len(line), line, gap if rows else []))
        gap = []
    if not _DRAWN.match(before):
        _read(rows, found)
    return found


def parse_char_drawings(text: str) -> list[Block]:
    """Box drawings (`boxes.parse_boxes`), then trunk drawings outside them."""
    boxes = parse_boxes(text)
    trees = [b for b in parse_trees(text)
             if not any(b[0] < end and start < b[1] for start, end, _ in boxes)]
    return sorted([*boxes, *trees], key=lambda block: block[0])
