"""``git.commit_bursts``: commits clustered within minutes that add most of the code, the
rubric's "timestamps clustered within minutes". Only the largest run decides (a burst is one
run adding half); every run adding a third (a partly clustered history's run,
`concentration.RUN_SHARE`) is named, so a second burst is not left unsaid."""

from __future__ import annotations

from automaton_auditor.forensics.git.concentration import MIN_LINES, RUN_SHARE
from automaton_auditor.forensics.git.history import (
    BURST_GAP,
    BURST_MIN_COMMITS,
    BURST_SHARE,
    QUOTE_COMMITS,
    Commit,
    largest_run,
    run_span,
    runs_over,
)
from automaton_auditor.state import Finding


def burst_finding(commits: list[Commit], boundary: set[str], today: set[str]) -> Finding:
    """Commits clustered within minutes that add most of the code (a history written in
    one sitting and committed in pieces): lines added per commit when the blobs are there,
    otherwise the code files present today (`today`, carried folders such as a committed
    .venv left out) each commit added. Confidence grows with the burst's share."""
    inside = [c for c in commits if c.sha not in boundary]
    by_lines = bool(inside) and all(c.lines is not None for c in inside)
    unit = ("net lines added to code (each commit's lines added minus removed)" if by_lines
            else "code files present today")

    def weight(commit: Commit) -> int:  # files: today's code files it added (as bulk_facts)
        return (commit.lines or 0) if by_lines else len(today.intersection(commit.added))

    total = sum(weight(c) for c in inside)
    best, share = largest_run(commits, boundary, weight)
    found = share >= BURST_SHARE
    span = best[-1].timestamp - best[0].timestamp if best else 0
    if found:
        clarity = min(1.0, (share - BURST_SHARE) / 0.4)
        confidence = (0.55 + 0.35 * clarity) * (1.0 if by_lines else 0.8)
        within = f"{span} seconds" if span < 120 else f"{span // 60} minutes"
        rationale = (f"Burst: {len(best)} commits within {within} added "
                     f"{share:.0%} of the {total} {unit} in the history.")
    else:
        confidence = 0.6 if by_lines else 0.4
        rationale = (f"No burst: the run of commits within {BURST_GAP // 60} minutes of each "
                     f"other that adds the most ({len(best)} commits) added {share:.0%} of "
                     f"the {total} {unit}." if best
                     else f"No burst: no {BURST_MIN_COMMITS} commits within "
                     f"{BURST_GAP // 60} minutes of each other.")
    named = runs_over(commits, boundary, weight, RUN_SHARE, MIN_LINES if by_lines else 0)
    rationale += _named(named)
    if boundary:
        rationale += " The history is shallow: only the commits past its boundary count."
    sizes = sorted(weight(c) for c in inside) or [0]
    quoted = [c for run, _, _ in named for c in run] if len(named) > 1 else best
    return Finding(
        facet="git.commit_bursts", goal="Commits clustered within minutes add most of the code",
        found=found, pattern="failure",
        location=f"commit {best[0].sha[:12]}" if best else "git log",
        content="\n".join(f"{c.quote()} (+{weight(c)})" for c in quoted[:QUOTE_COMMITS]) or None,
        rationale=rationale, confidence=round(confidence, 2),
        data={"unit": "lines" if by_lines else "files", "total": total,
              "share": round(share, 3), "commits": len(best), "span_seconds": span,
              "burst": [{"sha": c.sha, "date": c.date, "added": weight(c)} for c in best[:50]],
              "per_commit": {"max": sizes[-1], "median": sizes[len(sizes) // 2]},
              "shallow": bool(boundary),
              "runs": [{"sha": r[0].sha, "date": r[0].date, "last": r[-1].date,
                        "commits": len(r), "added": added, "share": round(part, 3)}
                       for r, added, part in named],
              "runs_share": round(sum(part for _, _, part in named), 3)})


NAMED_RUNS = 3  # runs named in full; more are counted


def _named(runs: list[tuple[list[Commit], int, float]]) -> str:
    """The sentence naming every run that adds a third (time order), when there are two or
    more: their spans, commits, additions and joint share ("" for one run: the fact's own
    sentence names it)."""
    if len(runs) < 2:
        return ""
    names = "; ".join(run_span(run, f"+{added}", f"{share:.0%}")
                      for run, added, share in runs[:NAMED_RUNS])
    more = f"; and {len(runs) - NAMED_RUNS} more" if len(runs) > NAMED_RUNS else ""
    together = sum(share for _, _, share in runs)
    return (f" Runs of commits minutes apart that each add a third or more of them, in time "
            f"order: {names}{more}; together {together:.0%} (a burst is one run adding "
            f"half of them, so each is judged alone).")
