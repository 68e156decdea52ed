"""Every run of commits minutes apart that adds a third of the code is named (not only the
largest, which alone decides), each git fact says which measure of "largest" it uses, and the
cap a graded concentration puts on git forensics names the pattern it found."""

from __future__ import annotations

from datetime import UTC, datetime

from automaton_auditor.forensics.git.bursts import burst_finding
from automaton_auditor.forensics.git.concentration import concentration_finding
from automaton_auditor.forensics.git.history import Commit
from automaton_auditor.forensics.git.story import story_findings
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import Evidence, Finding

DAY, HOUR = 86_400, 3600
START = 1_700_000_000


def commit(n: int, when: int, lines: int, path: str) -> Commit:
    """A commit adding `path` with `lines` code lines (net and written alike)."""
    date = datetime.fromtimestamp(START + when, tz=UTC).isoformat()
    return Commit(f"{n:02d}" + "a" * 38, START + when, date, f"feat: add {path}", added=[path],
                  lines=lines, written=lines, kept=lines)


def two_runs() -> list[Commit]:
    """Setup, a run of 3 commits one minute apart (+450, 44%), two steps hours apart, a
    second run two days later (+360, 35%): neither run adds half of the 1020 lines."""
    run_a = [commit(1 + i, DAY + 60 * i, 150, f"src/a{i}.py") for i in range(3)]
    steps = [commit(4, DAY + 5 * HOUR, 100, "src/s1.py"),
             commit(5, 2 * DAY, 100, "src/s2.py")]
    run_b = [commit(6 + i, 3 * DAY + 60 * i, 120, f"src/b{i}.py") for i in range(3)]
    return [commit(0, 0, 10, "src/setup.py"), *run_a, *steps, *run_b]


def test_a_second_run_of_commits_minutes_apart_is_named_by_the_burst_fact() -> None:
    commits = two_runs()
    fact = burst_finding(commits, set(), {c.added[0] for c in commits})
    assert not fact.found  # the largest run alone decides, as before: 44% is no burst
    assert [(r["commits"], r["added"]) for r in fact.data["runs"]] == [(3, 450), (3, 360)]
    assert fact.data["runs_share"] == round(810 / 1020, 3)
    assert "3 commits in 2 minutes (01aaaaaa 2023-11-15T22:13:20+00:00 to " \
           "22:15:20+00:00, +450, 44%); 3 commits in 2 minutes (06aaaaaa " \
           "2023-11-17T22:13:20+00:00 to 22:15:20+00:00, +360, 35%); together 79%" \
           in fact.rationale
    assert "added minus removed" in fact.rationale
    assert fact.content is not None and len(fact.content.splitlines()) == 6


def test_a_second_run_is_named_by_the_concentration_fact() -> None:
    fact = concentration_finding(two_runs())
    assert fact.data["cap"] == 4 and fact.data["kind"] == "run"
    assert [(r["commits"], r["lines"]) for r in fact.data["runs"]] == [(3, 450), (3, 360)]
    assert fact.rationale.startswith("Partly clustered (no better than 4): the two runs of "
                                     "commits minutes apart that each add a third or more of "
                                     "the code lines, in time order: 3 commits in 2 minutes")
    assert "+360, 35%" in fact.rationale
    assert "rewrites included, not net of removals" in fact.rationale
    assert fact.content is not None and len(fact.content.splitlines()) == 6


def test_the_bulk_fact_says_its_largest_commit_is_counted_in_files() -> None:
    commits = two_runs()
    bulk = next(f for f in story_findings(commits, [c.added[0] for c in commits])
                if f.facet == "git.bulk_upload")
    assert not bulk.found
    assert bulk.rationale.startswith("No bulk upload: the commit adding the most of today's "
                                     "code files (00aaaaaa, counted in files) added")


def _graded(kind: str) -> Evidence:
    fact = Finding(facet="git.concentration", goal="g", found=True, pattern="failure",
                   location="commit 1", rationale="r", confidence=0.8,
                   data={"cap": 4, "kind": kind})
    return Evidence(**fact.model_dump(), source="repo", dimension="git_forensic_analysis")


def test_the_cap_names_large_steps_or_a_clustered_history_as_the_fact_found() -> None:
    steps = confirmed_caps("git_forensic_analysis", [_graded("steps")])
    assert [(row.cap, row.pattern.split(" (")[0]) for row, _ in steps] == \
        [(4, "a history built in a few large steps")]
    for kind in ("run", "batches"):
        clustered = confirmed_caps("git_forensic_analysis", [_graded(kind)])
        assert [(row.cap, row.pattern.split(" (")[0]) for row, _ in clustered] == \
            [(4, "a history partly clustered within minutes")]


def test_the_run_a_no_burst_fact_names_is_the_one_adding_most_not_the_longest() -> None:
    """Five small commits seconds apart and three large ones minutes apart: the fact names
    the three (they add the most), so it must not call them the largest run."""
    small = [commit(1 + i, DAY + 10 * i, 5, f"src/s{i}.py") for i in range(5)]
    large = [commit(6 + i, 3 * DAY + 60 * i, 100, f"src/l{i}.py") for i in range(3)]
    spread = [commit(9 + i, (5 + i) * DAY, 150, f"src/x{i}.py") for i in range(4)]
    commits = [commit(0, 0, 10, "src/setup.py"), *small, *large, *spread]
    fact = burst_finding(commits, set(), {c.added[0] for c in commits})
    assert not fact.found and fact.data["commits"] == 3
    assert "the run of commits within 10 minutes of each other that adds the most " \
           "(3 commits)" in fact.rationale
    assert "largest run" not in fact.rationale
    concentration = concentration_finding(commits)
    assert "largest run" not in concentration.rationale
