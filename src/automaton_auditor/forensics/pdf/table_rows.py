"""Table header rows, which typography alone would take for headings.

A report's table often sets its header row in the headings' font (16 pt bold, like the
section titles) or in bold: each header cell is then a short, large or bold line, just as a
heading is, and read as one it would open a section ("Aspect", "Python Dicts") that takes
the text after it away from the section it belongs to. A header row is told apart by its
place: two or more cells on one baseline, all set as headings are, over a row of cells that
starts at the same left edges.
"""

from __future__ import annotations

import itertools

from automaton_auditor.forensics.pdf.model import Line

SAME_ROW = 0.5  # share of the shorter line's height two cells of one row overlap by
SAME_EDGE = 6.0  # points between the left edges of two cells of one column
LARGER = 1.15  # a line this much larger than body text is set as a heading


def _one_row(first: Line, line: Line) -> bool:
    """Two lines side by side: same page, their heights overlapping by `SAME_ROW` of the
    shorter (a 16 pt header cell beside a 12 pt one shares its top, not its baseline)."""
    overlap = min(first.bottom, line.bottom) - max(first.top, line.top)
    shorter = min(first.bottom - first.top, line.bottom - line.top)
    return first.page == line.page and shorter > 0 and overlap >= SAME_ROW * shorter


def _rows(lines: list[Line]) -> list[list[Line]]:
    """Lines grouped into rows side by side, page by page, top to bottom."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda x: (x.page, x.top, x.x0)):
        if rows and _one_row(rows[-1][0], line):
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


def _aligned(header: list[Line], row: list[Line]) -> int:
    """How many of the header's cells have a cell of `row` starting at their left edge."""
    return sum(1 for cell in header if any(abs(cell.x0 - other.x0) <= SAME_EDGE
                                           for other in row))


def table_header_cells(lines: list[Line], body: float) -> set[int]:
    """Ids (`id(line)`) of the cells of table header rows: rows of two or more disjoint
    lines, each bold or larger than `body`, whose next row holds two or more cells starting
    at the header cells' left edges. A heading beside the other column of a two-column page
    has body text beside it, not a second heading, and is kept."""
    rows = _rows(lines)
    found: set[int] = set()
    for row, below in itertools.pairwise(rows):
        cells = sorted(row, key=lambda x: x.x0)
        disjoint = all(a.x1 <= b.x0 for a, b in itertools.pairwise(cells))
        styled = all(c.bold or c.size >= body * LARGER for c in cells)
        if len(cells) >= 2 and disjoint and styled and below[0].page == row[0].page \
                and len(below) >= 2 and _aligned(cells, below) >= 2:
            found.update(id(c) for c in cells)
    return found
