"""A history replayed with invented dates: most commits dated on whole minutes, each only
adding finished files, is the rubric's "no iterative development visible" (git.replayed_dates);
a real history, or a small synthetic one, is not."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_git_concentration import code, facet, judged
from tests.unit.test_git_hollow import audit, commit
from tests.unit.test_git_narrative import git

SLOT = 1_771_912_800  # 2026-02-24 06:00:00 UTC: a whole minute
assert SLOT % 60 == 0
SLOTS = (0, 9_000, 18_000, 27_000)  # 06:00, 08:30, 11:00, 13:30 each day
DAY = 86_400
MODULES = ["state", "repo_tools", "doc_tools", "detectives", "judges", "justice", "graph",
           "config", "llm", "rubric", "aggregator", "report", "vision", "main"]


def slot(index: int) -> int:
    """The `index`-th commit's date: four fixed clock times a day, on whole minutes."""
    return SLOT + (index // 4) * DAY + SLOTS[index % 4]


def replayed_repo(root: Path, count: int, real: int = 0, lines: int = 80,
                  real_lines: int = 10) -> Path:
    """`count` commits on the daily slots, each adding one finished module; then `real`
    commits at ordinary times that change an existing file."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for index in range(count):
        name = MODULES[index % len(MODULES)] + ("" if index < len(MODULES) else str(index))
        commit(root, f"feat(phase{index // 4 + 1}): add {name}",
               {f"src/{name}.py": code(lines, name)}, slot(index))
    for index in range(real):
        commit(root, f"fix: tune the state model ({index})",
               {"src/state.py": code(lines + (index + 1) * real_lines, "state")},
               slot(count) + 3 * DAY + index * 4_517 + 37)
    return root


def test_whole_minute_add_only_history_is_a_replay(tmp_path: Path) -> None:
    found = audit(tmp_path, replayed_repo(tmp_path / "t", 20, real=6))
    fact = facet(found, "git.replayed_dates")
    assert fact.found and fact.pattern == "failure" and fact.data["cap"] == 2
    assert len(fact.data["replayed"]) == 20 and fact.data["authored"] == 26
    assert fact.content is not None and "adds 1 file(s), changes none" in fact.content
    assert "20 of 26 authored commits" in fact.rationale
    result = judged(found)
    assert result.final_score == 2 and result.deciding_rule == "failure_pattern_cap"
    assert result.verdict_cap is not None  # an integrity failure, like a bulk upload


def test_replayed_part_bringing_under_half_the_code_caps_at_three(tmp_path: Path) -> None:
    # ten small replayed modules, then real work that grows one file by 120 lines at a time
    found = audit(tmp_path, replayed_repo(tmp_path / "t", 10, real=8, lines=20,
                                          real_lines=120))
    fact = facet(found, "git.replayed_dates")
    assert fact.found and fact.data["cap"] == 3 and fact.data["code_share"] < 0.5
    assert judged(found).final_score <= 3


def test_few_whole_minute_commits_say_nothing(tmp_path: Path) -> None:
    # a handful of whole-minute steps, as synthetic test repositories are dated
    found = audit(tmp_path, replayed_repo(tmp_path / "t", 9))
    fact = facet(found, "git.replayed_dates")
    assert not fact.found and fact.data["cap"] is None
    assert "9 of 9 authored commits" in fact.rationale


def test_commits_that_change_files_are_no_replay(tmp_path: Path) -> None:
    # twelve whole-minute commits, but each revises the same module: iterative work
    root = tmp_path / "t"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for index in range(12):
        commit(root, f"feat: grow the graph ({index})", {"src/graph.py": code(30 * (index + 1))},
               slot(index))
    fact = facet(audit(tmp_path, root), "git.replayed_dates")
    assert not fact.found and len(fact.data["replayed"]) == 1  # only the first adds a file


def test_replayed_commits_must_be_half_the_history(tmp_path: Path) -> None:
    found = audit(tmp_path, replayed_repo(tmp_path / "t", 10, real=12))
    fact = facet(found, "git.replayed_dates")
    assert not fact.found and len(fact.data["replayed"]) == 10 and fact.data["authored"] == 22
