"""The bulk-upload charge rests on the code's lines, not its file count, and an upload in two
goes with no steps around them is the failure pattern."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_git_concentration import DAY, HOUR, code, facet, findings, judged
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


def test_two_goes_with_no_steps_around_them_are_the_failure_pattern(tmp_path: Path) -> None:
    # Two goes days apart bring 480 + 420 of 1,000 lines (90%); only two small commits bring
    # the rest: four commits bring code, no step-by-step build.
    history = [
        (BASE, "Initial Commit", {f"src/{part}.py": code(120, part.replace("/", "_"))
                                  for part in PARTS[:4]}),
        (BASE + HOUR, "add the cli", {"src/cli.py": code(60, "cli")}),
        (BASE + 3 * DAY, "Added justice system", {f"src/{part}.py": code(105, part[6:])
                                                  for part in PARTS[4:7]} |
         {"src/nodes/aggregator.py": code(105, "agg")}),
        (BASE + 4 * DAY, "Fix", {"src/report.py": code(40, "report")}),
    ]
    found = findings(tmp_path, history)
    assert facet(found, "git.bulk_upload").found is False  # 4 of 10 files, 48% of lines
    fact = facet(found, "git.concentration")
    assert fact.data["two_largest_share"] == 0.9 and fact.data["commits_with_code"] == 4
    assert fact.data["cap"] == 2
    assert fact.rationale.startswith("Uploaded in two goes (no better than 2)")
    assert "only 2 other commit(s) add code, the remaining 10%" in fact.rationale
    result = judged(found)
    assert (result.final_score, result.deciding_rule) == (2, "failure_pattern_cap")
    # one more small step commit: the goes are steps of a history (no better than 3 or 4)
    history.append((BASE + 5 * DAY, "feat: logging", {"src/log.py": code(40, "log")}))
    assert facet(findings(tmp_path / "more", history), "git.concentration").data["cap"] != 2
