"""Lines of a code or Mermaid block are never headings, however their font sets them."""

from __future__ import annotations

from automaton_auditor.forensics.pdf.code_lines import code_lines
from automaton_auditor.forensics.pdf.model import Line
from automaton_auditor.forensics.pdf.structure import font_headings

BODY = "Three judges evaluate each criterion in parallel and return structured opinions."


def _line(text: str, top: float, size: float = 10, x0: float = 72, page: int = 4) -> Line:
    return Line(page=page, text=text, x0=x0, top=top, x1=x0 + 5 * len(text) * size / 10,
                bottom=top + size, size=size, bold=False)


def _report() -> list[Line]:
    """A printed Markdown export: the code font's lines are taller than the body's, and an
    underscore drawn apart cuts one code line into three pieces on one row."""
    return [
        _line("3.2 Final Flow (End-to-End)", 60, size=14),
        _line(BODY, 80), _line(BODY, 92), _line(BODY, 104),
        _line("flowchart TD", 120),
        _line('S["START"] --> R["RepoInvestigator"]', 134, size=12.5),
        _line("P -->|clone", 148, size=12.5),
        _line("_", 157, size=0.8, x0=130),
        _line('failure| CF["CloneFailureHandler"]', 148, size=12.5, x0=136),
        _line('JP --> JI["JudicialIntegrityCheck"]', 162, size=12.5),
        _line('JI -->|valid| CJ["ChiefJustice"]', 40, size=12.5, page=5),
        _line("4. Criterion Breakdown", 70, size=14, page=5),
        _line(BODY, 90, page=5), _line(BODY, 102, page=5), _line(BODY, 114, page=5),
    ]


def test_mermaid_source_lines_are_no_headings() -> None:
    lines = _report()
    headings = [text for _level, text in font_headings(lines, set()).values()]
    assert headings == ["3.2 Final Flow (End-to-End)", "4. Criterion Breakdown"]


def test_a_block_ends_at_prose_and_only_closed_fences_count() -> None:
    lines = _report()
    code = {line.text for line in lines if id(line) in code_lines(lines, set())}
    assert code == {"flowchart TD", 'S["START"] --> R["RepoInvestigator"]', "P -->|clone", "_",
                    'failure| CF["CloneFailureHandler"]', 'JP --> JI["JudicialIntegrityCheck"]',
                    'JI -->|valid| CJ["ChiefJustice"]'}
    fenced = [_line("```python", 10), _line("# Detective fan-out", 22, size=13),
              _line("```", 34), _line("Design Overview", 50, size=13), _line("```", 70),
              _line("Final Words", 90, size=13)]
    code = {line.text for line in fenced if id(line) in code_lines(fenced, set())}
    assert code == {"```python", "# Detective fan-out", "```"}
