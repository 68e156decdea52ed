"""How concentrated the code's arrival is: the rubric's failure patterns, graded.

The rubric's git failure pattern is a "bulk upload of all code at once" with "timestamps
clustered within minutes"; its success pattern an "atomic, step-by-step history". The strong
forms are other facts (`git.bulk_upload`: one commit adds most of the code files;
`git.commit_bursts`: a run of commits minutes apart adds half the code lines) and cap the
criterion at 2. This fact grades what lies between, from the code lines each commit adds
(`Commit.written`: every line it writes, so a commit that rewrites half the code counts for
what it wrote, not for what it grew the code by; a moved file adds only what the move
changed). Not the lines of today's code each commit last wrote (``git blame``): blame credits
a reformat or a file split with every line it touched, forgets steps whose code was later
rewritten, and stops at its bounds (it marks the one commit that wrote most of today's code,
below):

- two commits add half or more of the code lines, no more than ten commits add code at all
  (`STEP_LINES` lines or more: a fixed import is no step),
  and one of the two is a "go" that brings several components at once (it touches three or
  more of the build stages: tools, state, graph, judges, synthesis; or adds five or more code
  files; or wrote over half of the code lines present today, rewriting a template counted):
  the code was uploaded in a few goes, not built in steps; part failure pattern, part
  iteration, a middling score (cap 3), when the goes show the bulk the failure pattern names:
  one of them adds over half of the code lines or wrote over half of today's code (one
  dominant commit), or one of them lands in a run of commits minutes apart. Two goes of
  under half the code each, hours from any other commit, are large steps of an iterative
  history (steps that bring several components at once are not atomic, so no full marks:
  cap 4). Two large commits that each build one component are steps of a small project,
  not goes of an upload;
- one run of commits, each within minutes of the one before, adds a third or more: the
  history is partly clustered, so it is not fully step-by-step, though the pieces may still
  tell the progression the rubric asks for (cap 4: no full marks);
- batches of commits, each landing less than a minute after the one before and each batch a
  bulk (`MIN_LINES`), together add half or more: no one writes and commits a change that
  fast, so the work was written first and committed in batches afterwards; several such
  batches are the same clustered pattern as one run bringing a third (cap 4).

Only the steps around an upload in two goes lift it above the failure pattern: when the two
goes add `CARRY_SHARE` of the code lines and no more than `FEW_STEPS` other commits add any
(the rubric asks for more than three commits that build the system), there are no steps to
speak of, and the upload stands as the failure pattern (cap 2); when those steps include a
run of authored commits each within `SCRIPTED_GAP` seconds of the one before (no one writes
and commits a change in two seconds: a script committed them), the step-by-step story was
staged after the work, and the upload stands as the failure pattern (cap 2).

The fact quotes the commits it rests on (hash, date, lines added) and is not judged on a
shallow history (its boundary commit shows everything before it as added) or without line
counts.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from automaton_auditor.forensics.git.history import (
    BURST_GAP,
    BURST_MIN_COMMITS,
    Commit,
    largest_run,
    run_span,
    runs_over,
    stages_of,
    time_clusters,
)
from automaton_auditor.state import Finding

TWO_COMMITS_SHARE = 0.5  # two commits add half the code lines: cap 3 (or 4 without a bulk)
DOMINANT_SHARE = 0.5  # one commit adds over this share of the code lines: a bulk
RUN_SHARE = 1 / 3  # a run of commits minutes apart adds a third of the code lines: cap 4
# A bulk needs bulk: below this many lines the concentrated commits are a few atomic steps
# of a small project, whatever their share (the peers' run or two-commit uploads bring 590
# lines and more; a step-by-step peer's median code commit brings under 300).
MIN_LINES = 300
# Few commits bring code at all: with more, the history still shows steps around its two large
# commits (a held-out peer labelled high has 15 commits bringing code, two of them 61%; the
# mid peers with two-commit uploads have 7 or 8).
FEW_COMMITS = 10
CARRY_SHARE = 0.8  # "commits carrying the code": the fewest that add this share
# A commit adding fewer code lines than this (a fixed import, a renamed call) is not counted
# among the commits that add code: with every line a commit writes counted, such edits would
# otherwise pass for the steps `FEW_COMMITS` and `FEW_STEPS` count.
STEP_LINES = 5
# A commit that brings several components at once: it touches this many build stages (setup
# aside), or adds this many code files.
GO_STAGES = 3
GO_FILES = 5
# Other commits bringing code, at most, around two goes that bring `CARRY_SHARE` of it: two
# uploads and two touch-ups are no step-by-step build (rubric: "more than three commits").
FEW_STEPS = 2
SCRIPTED_GAP = 2  # seconds between commits no person can write and commit a change in
# Seconds under which a commit lands "in the same batch" as the one before: under a minute,
# so histories dated on whole minutes (one commit a minute) are no batch.
BATCH_GAP = 59
BATCHES_SHARE = 0.5  # batches committed seconds apart add half the code lines: cap 4
FACET = "git.concentration"
GOAL = "The code arrives in a few commits, or in one run of commits minutes apart"


def _lines(commit: Commit) -> int:
    """The code lines the commit adds (`Commit.written`)."""
    return commit.written or 0


def _quote(commit: Commit) -> str:
    return f"{commit.quote()} (+{_lines(commit)})"


def _entry(commit: Commit) -> dict[str, Any]:
    return {"sha": commit.sha, "date": commit.date, "lines": _lines(commit)}


def measures(inside: list[Commit]) -> dict[str, Any]:
    """The concentration measures of a history (no shallow boundary) whose `Commit.written`
    are read: total code lines added, the two largest commits and their shares, the largest
    run of commits minutes apart and its share, the batches of commits seconds apart that add
    a bulk each and their share, how many commits add code (`STEP_LINES` lines or more) and how
    few add `CARRY_SHARE` of it, the span in hours."""
    total = sum(_lines(c) for c in inside)
    ranked = sorted(inside, key=lambda c: (-_lines(c), c.timestamp, c.sha))
    run, run_share = largest_run(inside, (), _lines)
    authored = [c for c in inside if not c.merge]
    scripted = max(time_clusters(authored, (), SCRIPTED_GAP), key=len, default=[])
    batches = [b for b in time_clusters(authored, (), BATCH_GAP)
               if sum(_lines(c) for c in b) >= MIN_LINES]
    batch_lines = sum(_lines(c) for b in batches for c in b)
    carried, carrying = 0, 0
    for commit in ranked:
        if total and carried >= CARRY_SHARE * total:
            break
        carried, carrying = carried + _lines(commit), carrying + 1
    stamps = [c.timestamp for c in inside] or [0]
    writer = most_written(inside)
    in_runs = {c.sha for r in time_clusters(inside, ()) for c in r}
    paths_known = any(c.added or c.changed for c in inside)
    return {"total_lines": total,
            "largest": [_entry(c) for c in ranked[:2]],
            "largest_share": round(_lines(ranked[0]) / total, 3) if total else 0.0,
            "two_largest_share": round(sum(_lines(c) for c in ranked[:2]) / total, 3)
            if total else 0.0,
            "run": [_entry(c) for c in run[:50]], "run_commits": len(run),
            "two_largest_lines": sum(_lines(c) for c in ranked[:2]),
            "run_share": round(run_share, 3), "run_lines": sum(_lines(c) for c in run),
            "run_seconds": run[-1].timestamp - run[0].timestamp if run else 0,
            # every run adding a third (named; the largest alone decides, `clustered_run`)
            "runs": [{**_entry(r[0]), "commits": len(r), "lines": added, "share": round(part, 3),
                      "shas": [c.sha for c in r[:50]]}
                     for r, added, part in runs_over(inside, (), _lines, RUN_SHARE, MIN_LINES)],
            "scripted": [_entry(c) for c in scripted[:50]], "scripted_commits": len(scripted),
            "batches": [{**_entry(b[0]), "commits": len(b), "seconds": b[-1].timestamp
                         - b[0].timestamp, "lines": sum(_lines(c) for c in b),
                         "shas": [c.sha for c in b[:50]]} for b in batches[:50]],
            "batch_lines": batch_lines,
            "batch_share": round(batch_lines / total, 3) if total else 0.0,
            "commits_with_code": sum(1 for c in inside if _lines(c) >= STEP_LINES),
            # which of the two largest commits bring several components at once (all of them
            # when the paths each commit touched are unknown)
            "largest_goes": [not paths_known or _go(c) or c.sha == writer for c in ranked[:2]],
            "writer": writer, "writer_share": _share(inside, writer),
            # the two largest commits show a bulk: one dominates the code, or one lands
            # among commits minutes apart (else they are large steps hours apart)
            "largest_in_run": [c.sha in in_runs for c in ranked[:2]],
            "commits_for_80": carrying if total else 0,
            "span_hours": round((max(stamps) - min(stamps)) / 3600, 2)}


def _go(commit: Commit) -> bool:
    """The commit brings several components at once (`GO_STAGES` stages, or `GO_FILES` code
    files added)."""
    stages = set(stages_of(commit.added + commit.changed)) - {"setup"}
    code = [p for p in commit.added if p.endswith(".py")]
    return len(stages) >= GO_STAGES or len(code) >= GO_FILES


def most_written(commits: list[Commit]) -> str | None:
    """The commit that wrote most (over half) of today's code lines (`Commit.kept`: added,
    or rewritten from a template or placeholder), while growing the code by at least half
    of them (a reformat or move rewrites code already there); None when none did or the
    lines were not blamed. However many steps came before it, that commit built the
    components at once."""
    if any(c.kept is None for c in commits):
        return None
    today = sum(c.kept or 0 for c in commits)
    for commit in commits:
        kept = commit.kept or 0
        if today and 2 * kept > today and 2 * (commit.lines or 0) >= kept:
            return commit.sha
    return None


def _share(commits: list[Commit], sha: str | None) -> float:
    """The share of today's code lines the commit `sha` wrote."""
    today = sum(c.kept or 0 for c in commits)
    kept = next((c.kept or 0 for c in commits if c.sha == sha), 0)
    return round(kept / today, 3) if today else 0.0


def graded_cap(facts: dict[str, Any]) -> int | None:
    """The score the measures leave room for (2, 3 or 4), or None when the code arrives
    spread out (or the concentrated commits add fewer than `MIN_LINES` lines); see the
    module for the three patterns."""
    if two_goes(facts):
        if facts["scripted_commits"] >= BURST_MIN_COMMITS or only_goes(facts):
            return 2
        return 3 if bulk_goes(facts) else 4
    if clustered_run(facts) or facts["batch_share"] >= BATCHES_SHARE:
        return 4
    return None


def pattern_of(facts: dict[str, Any], cap: int | None) -> str | None:
    """Which pattern the graded `cap` rests on: "goes" (an upload in two goes, its steps
    scripted or absent: 2; or showing a bulk: 3), "steps" (a few large steps hours apart: 4),
    "run" (one run of commits minutes apart brings a third: 4) or "batches" (batches of
    commits seconds apart bring half: 4); None when no cap."""
    if cap is None:
        return None
    if two_goes(facts):
        return "goes" if cap < 4 else "steps"
    return "run" if clustered_run(facts) else "batches"


def two_goes(facts: dict[str, Any]) -> bool:
    """Two commits add half the code lines, a bulk, in a history where few commits add code,
    and one of them brings several components at once."""
    return bool(facts["two_largest_share"] >= TWO_COMMITS_SHARE and any(facts["largest_goes"])
                and facts["two_largest_lines"] >= MIN_LINES
                and facts["commits_with_code"] <= FEW_COMMITS)


def only_goes(facts: dict[str, Any]) -> bool:
    """The two goes add `CARRY_SHARE` of the code lines and at most `FEW_STEPS` other commits
    add any: the code was uploaded in (at most) two goes, with no steps around them."""
    return bool(facts["two_largest_share"] >= CARRY_SHARE
                and 2 <= facts["commits_with_code"] <= 2 + FEW_STEPS)


def bulk_goes(facts: dict[str, Any]) -> bool:
    """The two goes show the failure pattern's bulk: one commit adds over half of the code
    lines, wrote over half of today's code or added most of today's code files
    (``uploaded``), or one of them lands in a run of commits minutes apart."""
    return bool(facts["largest_share"] > DOMINANT_SHARE or facts.get("writer")
                or facts.get("uploaded") or any(facts["largest_in_run"]))


def clustered_run(facts: dict[str, Any]) -> bool:
    """One run of commits minutes apart adds `RUN_SHARE` of the code lines, and a bulk."""
    return bool(facts["run_share"] >= RUN_SHARE and facts["run_lines"] >= MIN_LINES)


def concentration_finding(commits: list[Commit], boundary: Collection[str] = (),
                          uploaded: bool = False) -> Finding:
    """Finding ``git.concentration`` for a log given oldest first (see the module).
    `uploaded`: one commit added most of today's code files (``git.bulk_upload``), which
    makes the goes a bulk as a dominant commit does."""
    inside = [c for c in commits if c.sha not in boundary]
    if boundary or not inside or any(c.written is None for c in inside):
        why = ("the history is shallow" if boundary else
               "the lines each commit added could not be read")
        return Finding(facet=FACET, goal=GOAL, found=False, pattern="failure",
                       location="git log", content=None, confidence=0.3,
                       rationale=f"Not judged: {why}.", data={"judged": False, "cap": None})
    facts = {**measures(inside), "uploaded": uploaded}
    cap = graded_cap(facts)
    facts["kind"] = pattern_of(facts, cap)
    by_sha = {c.sha: c for c in inside}
    head, quoted = _headline(facts, cap, by_sha)
    return Finding(
        facet=FACET, goal=GOAL, found=cap is not None, pattern="failure",
        location=f"commit {quoted[0].sha[:12]}" if quoted else "git log",
        content="\n".join(_quote(c) for c in quoted[:12]) or None,
        rationale=head, confidence=0.8 if cap is not None else 0.6,
        data={**facts, "judged": True, "cap": cap})


def _headline(facts: dict[str, Any], cap: int | None, by_sha: dict[str, Commit]
              ) -> tuple[str, list[Commit]]:
    """The finding's rationale for the graded `cap`, and the commits it quotes."""
    big = [by_sha[e["sha"]] for e in facts["largest"]]
    total = facts["total_lines"]
    # the metric said outright: git.commit_bursts counts lines net of removals, git.bulk_upload
    # code files, so their totals and "largest" commits differ from these
    two = (f"the two commits writing the most code lines ({', '.join(_quote(c) for c in big)}) "
           f"write {facts['two_largest_share']:.0%} of the {total} code lines the history's "
           f"commits write (each commit's added lines, rewrites included, not net of removals)")
    if facts["two_largest_share"] >= TWO_COMMITS_SHARE and not any(facts["largest_goes"]):
        two += " (each builds one component: steps, not goes of an upload)"
    if facts.get("writer"):
        two += (f" ({facts['writer'][:8]} wrote {facts['writer_share']:.0%} of the code "
                f"lines present today: the components at once)")
    minutes, runs = _minutes(facts, by_sha)
    carry = (f"{facts['commits_with_code']} commits add code ({STEP_LINES} lines or more), "
             f"{facts['commits_for_80']} of them 80% of the lines")
    if cap == 2 and only_goes(facts):
        one = facts["largest_share"] >= CARRY_SHARE  # the second is no go of an upload
        return (f"Uploaded in {'one go' if one else 'two goes'} (no better than 2): {two}; "
                f"only {facts['commits_with_code'] - 2} other commit(s) add code, the "
                f"remaining {1 - facts['two_largest_share']:.0%}: no steps build the system "
                f"around {'the upload' if one else 'the two uploads'}.", big)
    if cap == 2:
        return (f"Uploaded in two goes, its steps scripted (no better than 2): {two}; "
                f"{facts['scripted_commits']} commits land each within {SCRIPTED_GAP} s of "
                f"the one before, so the step-by-step story was staged; {carry}.",
                big + [by_sha[e["sha"]] for e in facts["scripted"]])
    if cap == 3:
        return f"Concentrated (no better than 3): {two}; {minutes}; {carry}.", big
    if facts["kind"] == "steps":
        return (f"Built in a few large steps (no better than 4): {two}, but neither adds "
                f"over half of the code lines nor lands among commits minutes apart (steps hours "
                f"apart, each bringing several components); {minutes}; {carry}.", big)
    if facts["kind"] == "batches":
        sizes = ", ".join(f"{b['commits']} commits in {b['seconds']} s from {b['sha'][:8]} "
                          f"{b['date']} (+{b['lines']})" for b in facts["batches"][:6])
        sizes += ", ..." if len(facts["batches"]) > 6 else ""
        return (f"Committed in batches (no better than 4): {len(facts['batches'])} batches of "
                f"commits each landing under a minute after the one before ({sizes}) add "
                f"{facts['batch_share']:.0%} of the {total} code lines the history's commits "
                f"write, so the work was written first and committed in pieces; {minutes}; "
                f"{carry}.", [by_sha[sha] for b in facts["batches"] for sha in b["shas"]])
    if cap == 4:
        return f"Partly clustered (no better than 4): {minutes}; {two}; {carry}.", runs
    if small_bulk(facts):  # concentrated by share, but too few lines for an upload
        return (f"Concentrated but small (no cap): {two}, yet the commits that concentrate "
                f"the code bring under the {MIN_LINES} lines of a bulk upload: a few steps of "
                f"a small project; {minutes}; {carry}.", big)
    return f"Spread: {two}; {minutes}; {carry}.", big


def small_bulk(facts: dict[str, Any]) -> bool:
    """The two largest commits add half the code lines, or one run of commits minutes
    apart a third, but they bring fewer than `MIN_LINES` lines: no bulk, and no spread."""
    return bool((facts["two_largest_share"] >= TWO_COMMITS_SHARE
                 and facts["two_largest_lines"] < MIN_LINES)
                or (facts["run_share"] >= RUN_SHARE and facts["run_lines"] < MIN_LINES))


NAMED_RUNS = 3  # runs of commits minutes apart named in full; more are counted


def _minutes(facts: dict[str, Any], by_sha: dict[str, Commit]) -> tuple[str, list[Commit]]:
    """The clause naming every run of commits minutes apart that adds a third of the code
    lines (`RUN_SHARE`, a bulk), in time order, or the run adding the most when none
    does; and the named runs' commits."""
    named = facts["runs"]
    if not named:
        run = [by_sha[e["sha"]] for e in facts["run"]]
        return (f"the run of commits minutes apart adding the most ({facts['run_commits']} "
                f"commits in {facts['run_seconds'] // 60} minutes, from {run[0].sha[:8]} "
                f"{run[0].date}) "
                f"adds {facts['run_share']:.0%}" if run else f"no {BURST_MIN_COMMITS} commits "
                f"lie within {BURST_GAP // 60} minutes of each other"), run
    runs = [[by_sha[sha] for sha in r["shas"]] for r in named]
    spans = "; ".join(run_span(run, f"+{r['lines']}", f"{r['share']:.0%}")
                      for run, r in zip(runs[:NAMED_RUNS], named, strict=False))
    more = f"; and {len(named) - NAMED_RUNS} more" if len(named) > NAMED_RUNS else ""
    count = {2: "two", 3: "three"}.get(len(named), str(len(named)))
    which = (f"the {count} runs of commits minutes apart that each add" if len(named) > 1
             else "the one run of commits minutes apart that adds")
    order = ", in time order" if len(named) > 1 else ""
    return (f"{which} a third or more of the code lines{order}: {spans}{more}",
            [c for run in runs for c in run])
