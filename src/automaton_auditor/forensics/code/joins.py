"""Joins that run more than once: a node joined by separate edges (``add_edge(a, j)``,
``add_edge(b, j)``, or a router's way into it) from branches of unequal length runs once per
arriving branch, and every node after it runs again on partial state.

`repeats` reads one simulated run (`execution.simulate`). A run past a router whose way
depends on the run simulates every way at once, which orders nothing; `join_repeats` then
simulates each way of those routers in turn (at most `MAX_WAYS` combinations) and names the
first whose run repeats a join: a real run that takes those ways repeats it.
"""

from __future__ import annotations

from collections import Counter
from itertools import product

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.execution import Model, Run, simulate
from automaton_auditor.forensics.code.topology import START, reach

MAX_WAYS = 16  # combinations of router ways simulated one by one


def join_repeats(model: Model, run: Run) -> tuple[dict[str, JSON], dict[str, str], bool]:
    """The repeating joins of `run`, or else of the first way through its undetermined
    routers that repeats one, with those ways (router node -> the node it routes to), and
    whether each such join repeats on every way on which it runs (else only on some, as an
    error route: a lesser fact)."""
    found = repeats(model, run)
    if found or not run.ambiguous_at:
        return found, {}, True
    first: tuple[dict[str, JSON], dict[str, str]] | None = None
    ran, again = Counter[str](), Counter[str]()
    for combo, routed in each_way(model, run) or []:
        found = repeats(model, routed) if not routed.ambiguous_at else {}
        ran.update(routed.ran_at.keys())
        again.update(found.keys())
        if found and first is None:  # the ways that led there: routers run before it
            start = min(min(routed.ran_at[j]) for j in found)
            first = found, {s: t for s, t in combo.items()
                            if min(routed.ran_at.get(s) or [start]) < start}
    if first is None:
        return {}, {}, True
    return first[0], first[1], all(again[j] == ran[j] for j in first[0])


def each_way(model: Model, run: Run) -> list[tuple[dict[str, str], Run]] | None:
    """`run` simulated again once per combination of the ways its undetermined routers can
    take (router node -> the node it routes to, with the run), or None when they are more
    than `MAX_WAYS` or a router's ways are unknown."""
    undecided = sorted({u.split(":", 1)[0] for u in run.undetermined
                        if u.endswith("the router's choice is not determined")})
    ways = [sorted(run.routes.get(s, set())) for s in undecided]
    if not undecided or any(not w for w in ways) or len(list(product(*ways))) > MAX_WAYS:
        return None
    combos = [dict(zip(undecided, combo, strict=True)) for combo in product(*ways)]
    return [(combo, simulate(model, choices=combo)) for combo in combos]


def repeats(model: Model, run: Run) -> dict[str, JSON]:
    """Joins over separate edges that run more than once, with the late predecessors."""
    out: dict[str, JSON] = {}
    if run.undetermined and any("loop" in u for u in run.undetermined):
        return out
    edges = list(model.topo.edges)
    for name, count in sorted(run.runs.items()):
        # a router's way into the join, taken in this run, is an arrival too (ephrata1888:
        # the detectives route to the aggregator or to an error handler that feeds it next
        # step), unless it loops back from after the join
        after = reach(edges, name) if count > 1 else set()
        # a node the run reaches only through the join (a debate the join's router sends
        # back into it) re-enters it: a loop, not a late branch
        before = reach([e for e in edges if e[0] != name], START) if count > 1 else set()
        preds = sorted({s for (s, d), e in model.topo.edges.items() if d == name and s != START
                        and s in before and (e["kind"] == "static" or (
                            e["kind"] == "conditional" and s not in after
                            and name in run.routes.get(s, set())))})
        if count < 2 or len(preds) < 2:
            continue
        first = {p: min(run.ran_at[p]) for p in preds if p in run.ran_at}
        late = [p for p in first if first[p] > min(first.values())]
        repeated = sorted(set(run.ran_at.get(name, [])))
        # Past an undetermined router the run is a guess, unless the late branches ran
        # before it: then their arrival, and the join's second run, is certain.
        if late and (not run.ambiguous_at or repeated[1] < run.ambiguous_at
                     or all(first[p] < run.ambiguous_at for p in late)
                     or _late_every_way(model, run, set(preds), min(first.values()))):
            out[name] = {"runs": count, "late": late}
    return out


def _late_every_way(model: Model, run: Run, preds: set[str], earliest: int) -> bool:
    """Whether a router that ran while the run was still certain (after the join's first
    predecessor arrived, at `earliest`, or with it) sends every way it can go straight into the
    join: whichever it takes, a branch arrives after the first, so the join runs again."""
    certain = run.ambiguous_at or run.step + 1
    for source, routers in model.routers.items():
        ran = run.ran_at.get(source) or []
        ways = {t for r in routers for t in r.info.get("targets") or []}
        if ran and ways and ways <= preds and earliest <= ran[0] < certain:
            return True
    return False
