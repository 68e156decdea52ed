"""Box diagrams drawn with characters, read as layered flows.

A report may draw its graph with box-drawing characters (``┌──┐ │ Name │ └──┘`` or ASCII
``+----+ | Name |``), top to bottom: a row of boxes side by side is one layer, and the flow
goes from each layer to the next (``START`` -> three detectives -> an aggregator -> three
judges -> ...). A PDF's text layer keeps the rows but collapses the spaces between boxes, so
columns cannot be matched: each box of a layer is read as connected to each box of the next,
which is what a fan-out (one box above several) and a fan-in (several above one) draw. Rows
of several boxes are marked as groups drawn in parallel.

Pure string work: deterministic, bounded, never raises on odd input.
"""

from __future__ import annotations

import re
from itertools import pairwise

from automaton_auditor.forensics.diagrams.flow import ParsedFlow
from automaton_auditor.forensics.diagrams.parse import MAX_BLOCK_LINES, MAX_TEXT_CHARS, Block

_WALL = "│┃║|"
# A border or connector line: box corners, rules, walls and arrow heads only.
_BORDER = re.compile(r"^[\s┌┐└┘├┤┬┴┼╔╗╚╝╠╣╦╩╬─━═│┃║|+\-=▼▲►◄↓↑v^<>.:/\\]+$")
_CORNER = re.compile(r"[┌┐└┘╔╗╚╝]|\+[-=]{3,}")
_RULE = re.compile(r"[├┤┼╠╣╬]|[-=─━═]{3,}")
# The top or bottom border of boxes drawn inside other boxes: every piece of border stands
# between the outer boxes' walls (``│ ┌──┐ │ │ ┌──┐ │``); a row of boxes hung off a trunk
# line (``│ ┌──┐ ┌──┐ │``) has no wall between its pieces.
_INNER = re.compile(r"^\s*[│┃║|][\s│┃║|]*(?:[┌└╔╚][─━═]*[┐┘╗╝]\s*[│┃║|][\s│┃║|]*)+$")
_NAME = re.compile(r"[A-Za-z][\w .:/()&'-]{0,60}")
MIN_LAYERS = 2
MAX_ROW = 12  # boxes side by side: a wider row is no architecture drawing (and bounds the work)
MAX_EDGES = 300


def _cells(line: str) -> list[str]:
    """The texts inside the boxes of one content line (``│ A │ │ B │ (note)`` -> A, B): the
    named segments between the first wall and the last."""
    stripped = line.strip()
    if not stripped or stripped[0] not in _WALL:
        return []
    parts = re.split(f"[{re.escape(_WALL)}]", stripped)
    # parts[0] is before the first wall, parts[-1] after the last (a note beside the row);
    # between walls, the gap between two boxes holds no name (a text layer may also have
    # merged two boxes' adjacent walls into one)
    return [" ".join(p.split()) for p in parts[1:-1] if _NAME.search(p)]


def _is_art(line: str) -> bool:
    return bool(_BORDER.match(line)) and any(c in line for c in "┌┐└┘│┃║─━═+|▼↓")


def drawing_line(line: str) -> bool:
    """A line of a box drawing: a border or connector, a row of box contents (named or not:
    ``│ (1-5) │``), or a short label beside the drawing's lines (``YES NO │ │``)."""
    stripped = line.strip()
    if _is_art(line) or bool(_cells(line)):
        return True
    if len(stripped) < 2 or stripped[-1] not in _WALL:
        return False
    first = min(stripped.index(c) for c in _WALL if c in stripped)
    return first == 0 or (len(stripped[:first].split()) <= 3
                          and sum(stripped.count(c) for c in _WALL) >= 2)


def _layers(lines: list[str]) -> list[list[str]]:
    """The rows of boxes of one drawing, top to bottom: a row's names come from its first
    content line (the lines after it, up to the next box border, describe the boxes). A
    table (rows parted by one rule line, ``├──┼──┤`` or ``+---+---+``, where stacked boxes
    have a bottom and a top border) is no flow: no layers."""
    layers: list[list[str]] = []
    open_row, borders, seen = False, 0, False
    for line in lines:
        if open_row and _INNER.match(line):
            continue  # a box inside the open row's boxes: part of their description
        if _BORDER.match(line):
            open_row = open_row and not _CORNER.search(line) and not _RULE.search(line)
            borders += 1
            continue
        cells = _cells(line)
        if not cells:
            continue
        if seen and borders == 1 and not open_row:
            return []
        if not open_row:
            layers.append(cells)
        open_row, borders, seen = True, 0, True
    return layers


def _blocks(text: str) -> list[tuple[int, int, list[str]]]:
    """Runs of drawing lines (borders, connectors, box rows) with their character span; a
    run needs two box corners to be a drawing."""
    runs: list[tuple[int, int, list[str]]] = []
    offset, start = 0, -1
    body: list[str] = []
    for line in [*text.split("\n"), ""]:
        if body and line.strip().isdigit() and len(line.strip()) <= 3:
            offset += len(line) + 1  # a page number where the drawing crosses a page break
            continue
        drawing = drawing_line(line)
        if drawing and len(body) < MAX_BLOCK_LINES:
            start = offset if start < 0 else start
            body.append(line)
        elif body:
            if sum(1 for b in body if _CORNER.search(b)) >= 2:
                runs.append((start, offset, body))
            start, body = -1, []
        offset += len(line) + 1
    return runs


def parse_boxes(text: str) -> list[Block]:
    """Every box drawing of at least two rows in the text, as (start, end, flow): each box
    of a row flows into each box of the next row, and rows of several boxes are drawn in
    parallel."""
    found: list[Block] = []
    for start, end, body in _blocks(text[:MAX_TEXT_CHARS]):
        layers = _layers(body)
        if len(layers) < MIN_LAYERS or max(map(len, layers)) > MAX_ROW:
            continue
        flow = ParsedFlow(kind="text_art")
        pairs = [(s, d) for upper, lower in pairwise(layers) for s in upper for d in lower]
        for src, dst in pairs[:MAX_EDGES]:
            flow.add(src, dst)
        if flow.edges:
            found.append((start, end, flow))
    return found
