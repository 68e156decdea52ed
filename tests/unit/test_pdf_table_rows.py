"""A table's header row, set in the headings' font, is no heading."""

from __future__ import annotations

from automaton_auditor.forensics.pdf.model import Line
from automaton_auditor.forensics.pdf.structure import font_headings

BODY = "The solution keeps every detective's evidence in typed models with reducers."


def _line(text: str, x0: float, top: float, size: float = 12, bold: bool = False,
          page: int = 2) -> Line:
    return Line(page=page, text=text, x0=x0, top=top, x1=x0 + 5.5 * len(text) * size / 12,
                bottom=top + size, size=size, bold=bold)


def _table_page() -> list[Line]:
    return [
        _line("1. State Management", 72, 60, size=16, bold=True),
        _line(BODY, 72, 90), _line(BODY, 72, 104),
        # header row in the section headings' 16 pt bold, and a 12 pt bold cell beside it
        _line("Aspect", 78, 130, size=16, bold=True),
        _line("Python Dicts", 276, 130, size=16, bold=True),
        _line("Pydantic Models", 410, 131, bold=True),
        _line("Parallel Safety", 78, 150), _line("Data overwrites", 276, 150),
        _line("operator.ior merges", 410, 150),
        _line("Type Enforcement", 78, 170), _line("None", 276, 170),
        _line("Field validation", 410, 170),
        _line(BODY, 72, 200), _line(BODY, 72, 214), _line(BODY, 72, 228),
        _line("2. Evidence Collection", 72, 260, size=16, bold=True),
        _line(BODY, 72, 290),
    ]


def test_a_table_header_row_is_not_a_heading() -> None:
    lines = _table_page()
    headings = [text for _level, text in font_headings(lines, set()).values()]
    assert headings == ["1. State Management", "2. Evidence Collection"]


def test_a_heading_beside_the_other_column_stays_a_heading() -> None:
    """Two columns: a larger heading in the left one shares its row with body text."""
    lines = [_line("Design Overview", 72, 60, size=16, bold=True),
             _line("and the graph then fans out to", 320, 62),
             _line("The detectives run first.", 72, 84), _line("three judges at once.", 320, 84),
             _line(BODY, 72, 100), _line(BODY, 72, 114), _line(BODY, 72, 128)]
    headings = [text for _level, text in font_headings(lines, set()).values()]
    assert headings == ["Design Overview"]
