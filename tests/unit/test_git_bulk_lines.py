"""The bulk-upload charge rests on the code's lines, not its file count."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_git_concentration import DAY, code, facet, findings
from tests.unit.test_git_narrative import BASE

PARTS = ["state", "graph", "tools/repo_tools", "tools/doc_tools", "nodes/detectives",
         "nodes/judges", "nodes/justice", "cli"]


def skeleton_first() -> list[tuple[int, str, dict[str, str]]]:
    """A first commit adds eight of the nine code files (50 lines each, 400 lines), then
    five commits a day apart grow four of them and add the ninth by 100 lines each."""
    files = {f"src/{part}.py": code(50, part.replace("/", "_")) for part in PARTS}
    history = [(BASE, "first commit", dict(files))]
    for step, part in enumerate(PARTS[4:], start=1):
        path = f"src/{part}.py"
        files[path] = files[path] + code(100, f"more{step}")
        history.append((BASE + step * DAY, f"feat: grow {part}", {path: files[path]}))
    history.append((BASE + 5 * DAY, "feat: add the report writer",
                    {"src/report.py": code(100, "report")}))
    return history


def test_most_files_with_under_half_the_lines_is_no_bulk_upload(tmp_path: Path) -> None:
    # 8 of 9 code files (89%) but 400 of 900 lines (44%): the code grew in later commits.
    found = findings(tmp_path, skeleton_first())
    bulk = facet(found, "git.bulk_upload")
    assert bulk.data["largest_share"] == round(8 / 9, 3)
    assert bulk.data["largest_lines_share"] == round(400 / 900, 3)
    assert bulk.found is False
    assert "but brought 400 code lines, 44% of the code" in bulk.rationale
    assert "not most of it" in bulk.rationale
    # nor does it make the two largest commits a bulk: large steps, no better than 4
    assert facet(found, "git.concentration").data["cap"] == 4


def test_most_files_with_most_of_the_lines_is_a_bulk_upload(tmp_path: Path) -> None:
    # The same first commit at 150 lines a file: 1,200 of 1,700 lines (71%).
    history = skeleton_first()
    history[0] = (BASE, "first commit",
                  {f"src/{part}.py": code(150, part.replace("/", "_")) for part in PARTS})
    bulk = facet(findings(tmp_path, history), "git.bulk_upload")
    assert bulk.found and "added 89% of the 9 code files" in bulk.rationale

