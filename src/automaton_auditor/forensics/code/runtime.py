"""Facts from the static execution model (`execution`): what LangGraph will do with the graph.

Each fact quotes the lines it rests on and names the keys, nodes and edges in ``data`` (the
report's Mermaid picture marks them: ``output.mermaid`` reads these data keys).
Facts about how the state travels (``graph.state.*``) bear on the graph criterion and on the
state criterion alike (the rubric's "graph.state" family):

- ``graph.state.dropped_keys``: keys a node returns that the state does not declare
  (LangGraph drops them silently; ``whole``: the nodes none of whose keys is kept, with the
  lines that return them); ``graph.state.evidence_lost`` when a later node reads such
  a key (the evidence never reaches it: a functional break, confidence 0.9);
- ``graph.state.unwritten_reads``: keys a node reads that no node writes and the input cannot
  carry;
- ``graph.dead_routes``: a router branch that can never be taken (its guard needs a key that
  never arrives, or needs empty a key the nodes before it always fill);
- ``graph.unreachable_nodes``: nodes with no path from START (they never run), and nodes with
  no path to the run's end (END, or a node with no way out, where the run ends as well);
- ``graph.join_repeats``: a node joined by separate edges from branches of unequal length runs
  once per arriving branch (and everything after it too); past a router whose way depends on
  the run, each of its ways is simulated in turn (`joins`);
- ``graph.state.parallel_writes``: two nodes of one superstep write a key without a reducer
  (LangGraph raises InvalidUpdateError);
- ``graph.execution``: the simulated supersteps, with what could not be determined.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.dead_routes import route_finding
from automaton_auditor.forensics.code.endless import (
    Loop,
    endless_finding,
    endless_loops,
    reach_text,
)
from automaton_auditor.forensics.code.execution import (
    Model,
    Run,
    any_open,
    build_model,
    own_view,
    simulate,
    state_param,
)
from automaton_auditor.forensics.code.facts import quoted_finding as _f
from automaton_auditor.forensics.code.joins import join_repeats
from automaton_auditor.forensics.code.state_passing import passed_accesses
from automaton_auditor.forensics.code.state_writers import input_given
from automaton_auditor.forensics.code.stateflow import stateflow_findings
from automaton_auditor.forensics.code.topology import END, START, Topology, reach
from automaton_auditor.state import Finding


def runtime_findings(facts: dict[str, JSON], graph: CallGraph, main: Topology | None,
                     repo: Path | None) -> list[Finding]:
    """The execution facts of the main graph (none when there is no graph, or when it is
    the repository's own graph class, which LangGraph does not run)."""
    if main is None or not main.nodes or main.custom is not None:
        return []
    model = build_model(facts, graph, main, repo)
    run = simulate(model)
    where = str(main.builder.get("key") or ".")
    looped = [op for op in main.ops if op.get("loop")]
    if main.computed or looped:
        # node names computed at run time: the wiring we see is partial (or, for a loop
        # over run-time data, two symbolic copies, `loop_items`), so nothing about
        # reachability, routes or joins can be concluded
        op = (main.computed or looped)[0]
        run.undetermined.append(f"node names computed at run time ({op['path']}:{op['line']})")
        return [*_key_findings(model, run, repo, where, graph, facts),
                _summary(model, run, where)]
    loops = endless_loops(model, graph, repo)
    return [*_key_findings(model, run, repo, where, graph, facts),
            route_finding(graph, model, run, repo, where),
            *_shape_findings(model, run, repo, where, loops), endless_finding(loops, repo, where),
            _summary(model, run, where), *stateflow_findings(facts, graph, model, run, repo, where)]


def _line(model: Model, name: str, key: str | None = None) -> tuple[str, int] | None:
    node = model.nodes.get(name)
    if node is None or node.key is None:
        return None
    if key is not None and key in node.write_lines:
        return node.write_paths.get(key, node.key[0]), node.write_lines[key]
    if key is not None and node.whole_line:  # written back with the whole state
        return node.whole_path or node.key[0], node.whole_line
    if key is not None and key in node.reads:
        return node.key[0], node.reads[key]
    return model.topo.nodes[name]["op"]["path"], model.topo.nodes[name]["op"]["line"]


def _readers(model: Model) -> dict[tuple[str, str], tuple[str, int]]:
    """(reader, key) -> (path, line) for every key a node or a router reads from the state.
    A node reached by ``Send`` reads its payload, not the state: it is left out."""
    sent = {d for (_s, d), e in model.topo.edges.items() if e["kind"] == "send"}
    out = {(n, k): (node.key[0], line) for n, node in model.nodes.items() if node.key
           and n not in sent for k, line in node.reads.items()}
    for source, routers in model.routers.items():
        # a router sees its own node's return (undeclared keys only for some, `own_view`)
        own = dict(model.nodes[source].writes) if source in model.nodes else {}
        for router in routers:
            name = f"the router {router.key[1]} on {source}" if router.key else source
            seen = own_view(model, router, own)
            out.update({(name, k): (router.key[0], line) for k, line in router.reads.items()
                        if router.key and k not in seen})
    return out


def fallback_reads(graph: CallGraph, key: Key) -> set[str]:
    """Keys a function reads from its state only with a fallback of its own
    (``state.get("k", [])``, ``state.get("k") or default``): never written, the read still
    has a value."""
    state = state_param(graph, key)
    plain: set[str] = set()
    guarded: set[str] = set()
    for access in graph.flow(key).get("keys", []):
        if access["param"] == state and access["op"] not in ("set", "setattr"):
            (guarded if access.get("fallback") else plain).add(access["key"])
    return guarded - plain


def _guarded(model: Model, graph: CallGraph) -> set[tuple[str, str]]:
    """(reader, key) of `_readers` whose every read has a fallback."""
    out = {(n, k) for n, node in model.nodes.items() if node.key
           for k in fallback_reads(graph, node.key)}
    for source, routers in model.routers.items():
        out |= {(f"the router {r.key[1]} on {source}", k) for r in routers if r.key
                for k in fallback_reads(graph, r.key)}
    return out


def _behind(model: Model, run: Run, graph: CallGraph, given: set[str]
            ) -> dict[tuple[str, str], list[str]]:
    """(node, key) -> the keys each of the node's reads of `key` falls back from
    (`primary_reads`, through the helpers it hands its state to), for the reads that all
    fall back from a key given a value: in the graph's input (`given`), or written by a node
    that runs before the reader."""
    out: dict[tuple[str, str], list[str]] = {}
    for name, node in model.nodes.items():
        state = state_param(graph, node.key) if node.key else None
        if node.key is None or state is None:
            continue
        first = min(run.ran_at.get(name) or [0])
        fed = given | {k for n, other in model.nodes.items() if n != name
                       and min(run.ran_at.get(n) or [first]) < first for k in other.writes}
        seen: dict[str, list[set[str]]] = {}
        for access in [*graph.flow(node.key).get("keys", []),
                       *passed_accesses(graph, node.key, state)]:
            if access["param"] == state and access["op"] not in ("set", "setattr"):
                seen.setdefault(access["key"], []).append(set(access.get("behind") or ()))
        out.update({(name, k): sorted(set().union(*per) & fed) for k, per in seen.items()
                    if all(p & fed for p in per)})
    return out


def _joins(model: Model) -> set[str]:
    """Nodes where branches meet: two or more plain-edge sources, or a list-form join."""
    sources: dict[str, set[str]] = {}
    for (src, dst), edge in model.topo.edges.items():
        if edge["kind"] == "static" and src != START:
            sources.setdefault(dst, set()).add(src)
    return {d for d, s in sources.items() if len(s) > 1} | {d for _s, d, _o in model.topo.joins}


def _unwritten(model: Model, reads: dict[tuple[str, str], tuple[str, int]],
               lost: dict[str, list[str]]) -> dict[tuple[str, str], tuple[str, int]]:
    """Reads of keys that never arrive: not a state key (LangGraph has no channel for it), or
    a state key no node writes and the input schema does not carry (the reads with a
    fallback among them are set apart by the caller)."""
    written = {k for node in model.nodes.values() for k in node.writes}
    open_writes = any_open(model)
    out = {}
    for (who, key), where in reads.items():
        undeclared = model.complete and key not in model.channels
        unfed = (not open_writes and model.input_keys is not None and key in model.channels
                 and key not in written and key not in model.input_keys)
        if (undeclared or unfed) and key not in lost:
            out[(who, key)] = where
    return out


def _key_findings(model: Model, run: Run, repo: Path | None, where: str,
                  graph: CallGraph, facts: dict[str, JSON]) -> list[Finding]:
    dropped = {n: sorted(k) for n, k in sorted(run.dropped.items())}
    reads = _readers(model)
    lost = {k: r for k in sorted({k for keys in dropped.values() for k in keys})
            if (r := sorted(who for who, key in reads if key == k))}
    drop_quotes = [q for n, keys in dropped.items() for k in keys if (q := _line(model, n, k))]
    lost_quotes = drop_quotes + [reads[(who, k)] for k, r in lost.items() for who in r]
    # what parallel branches return for the node that joins them: the fan-in never gets it.
    # A side output (an `errors` list beside the evidence a node returns under a declared
    # key) is lost too, but the join still receives the branches' results.
    whole = {n: sorted({f"{q[0]}:{q[1]}" for k in keys if (q := _line(model, n, k))})
             for n, keys in dropped.items()
             if n in model.nodes and not set(model.nodes[n].writes) & model.channels.keys()}
    carried = {k for k in lost if any(k in dropped[n] for n in whole)}
    at_join = sorted({n for k in carried for n in lost[k] if n in _joins(model)})
    text = "; ".join(f"{n} returns {', '.join(k)}" for n, k in dropped.items())
    return [
        _f("graph.state.dropped_keys", "Nodes return keys the state does not declare",
           bool(dropped), drop_quotes, repo,
           (f"{text}: not in the state schema, so LangGraph drops them without a word."
            if dropped else "Every key a node returns is declared in the state."),
           0.8, where, nodes=dropped, channels=sorted(model.channels),
           # the nodes the state keeps nothing of, with the lines that return their keys
           whole=whole,
           # every dropped key is read later: the evidence-lost fact charges that defect
           **({"counted_in": "graph.state.evidence_lost"} if dropped and all(
               k in lost for keys in dropped.values() for k in keys) else {})),
        _f("graph.state.evidence_lost", "Evidence returned by one node never reaches the nodes "
           "that read it", bool(lost), lost_quotes, repo,
           ("; ".join(f"{k} (returned by {', '.join(n for n in dropped if k in dropped[n])}"
                      f", dropped) is read by {', '.join(r)} and never arrives there"
                      for k, r in lost.items())
            + (f"; the join {', '.join(at_join)} never receives what its branches return."
               if at_join else ".") if lost
            else "No node reads a key that LangGraph dropped."),
           # a fan-in that never receives its branches' results breaks the graph itself
           0.9 if at_join else 0.7, where, keys=lost, joins=at_join,
           nodes=sorted(n for n in dropped if set(dropped[n]) & set(lost))),
        _unwritten_finding(model, graph, reads, lost, repo, where, _behind(
            model, run, graph, input_given(repo, facts, set(model.channels)))),
    ]


def _unwritten_finding(model: Model, graph: CallGraph,
                       reads: dict[tuple[str, str], tuple[str, int]],
                       lost: dict[str, list[str]], repo: Path | None, where: str,
                       behind: dict[tuple[str, str], list[str]]) -> Finding:
    """``graph.state.unwritten_reads``: reads of keys that never arrive. A read with a
    fallback of its own (``state.get("k", [])``) is defensive code, not a read that never
    sees a value: it is only noted; so is a read made only when another key, which is given
    a value, holds none (`_behind`): it changes nothing while that key is given."""
    never = _unwritten(model, reads, lost)
    guarded = _guarded(model, graph)
    unwritten = {wk: q for wk, q in never.items() if wk not in guarded and wk not in behind}
    fallback = sorted(wk for wk in never if wk in guarded)
    spare = sorted(wk for wk in never if wk in behind and wk not in guarded)
    note = (" Read with a fallback of its own, a key that never arrives (not declared, or "
            "never written): " + "; ".join(f"{n} reads {k}" for n, k in fallback)
            + "; the read's default is used." if fallback else "")
    note += (" Read only as a fallback when another key holds no usable value, a key that "
             "never arrives: " + "; ".join(
                 f"{n} reads {k} only when {' or '.join(behind[(n, k)])} gives nothing"
                 for n, k in spare) + "; those keys are given a value (the graph's input, or "
             "a node that runs before), so the read changes nothing while they are."
             if spare else "")
    if unwritten:
        text = ("; ".join(f"{n} reads {k}" for n, k in sorted(unwritten)) + ": the state "
                "does not declare it, or no node writes it and the input cannot carry it; the "
                "read never sees a value.")
    elif not model.complete:
        text = "Not determined: the state's keys are not all known."
    else:
        text = (f"Every key read{' without a fallback' if fallback or spare else ''} is "
                "declared in the state" + ("; whether a node writes each is not determined (a node "
                               "returns keys only known at run time, or a copy of the "
                               "state)." if any_open(model) else "."))
    return _f("graph.state.unwritten_reads", "Nodes read keys that nothing writes",
              bool(unwritten), [unwritten[wk] for wk in sorted(unwritten)], repo, text + note,
              0.7, where, reads=[[n, k] for n, k in sorted(unwritten)],
              fallback=[[n, k] for n, k in fallback],
              **({"behind": [[n, k, behind[(n, k)]] for n, k in spare]} if spare else {}))


def _ending(model: Model) -> set[str]:
    """The nodes with a path to the run's end: to END, or to a node with no way out (no
    edge, router or ``Command``), where LangGraph ends the run as at END (it has no
    dead-end check)."""
    sources = {s for s, _d in model.topo.edges} | set(model.topo.conditional)
    sinks = [n for n, node in model.nodes.items() if n not in sources and not node.gotos]
    return set().union(_reach(model, END, False), *(_reach(model, n, False) for n in sinks))


def _open_text(ops: list[JSON]) -> str:
    where = ", ".join(f"{op['path']}:{op['line']}" for op in ops[:5])
    return ("Which nodes run and which reach END is not established: the destinations of "
            f"the router at {where} are not determined (it returns a value computed at run "
            "time, with no path map and no Literal return annotation).")


def _reach(model: Model, start: str, forward: bool, taken: bool = False) -> set[str]:
    """The nodes a path from `start` reaches (to it when not `forward`); with `taken`, over
    the routes some router takes only (`dead_routes`)."""
    edges = list(model.topo.taken() if taken else model.topo.edges)
    edges += [(n, g) for n, node in model.nodes.items() for g in node.gotos]
    return reach(edges, start, forward)


def _shape_findings(model: Model, run: Run, repo: Path | None, where: str,
                    loops: list[Loop]) -> list[Finding]:
    nodes = set(model.nodes)
    wired = _reach(model, START, True)
    unreachable = sorted(nodes - _reach(model, START, True, taken=True))
    stuck = sorted(nodes - _ending(model) - set(unreachable))
    open_ops = model.topo.undetermined
    if open_ops:
        # a router whose destinations are not determined may lead to any node: which nodes
        # run, and which reach END, is not established
        unreachable, stuck = [], []
    # wired from START only through routes never taken
    untaken = [n for n in unreachable if n in wired]
    unwired = [n for n in unreachable if n not in wired]
    repeats, ways, every_way = join_repeats(model, run)
    # a node whose writes are not known, running beside others, may write what they write
    unknown = sorted({n for step in run.steps if len(step) > 1 for n in step
                      if n not in model.nodes or model.nodes[n].open})
    # not established only when a parallel step's writers are all unknown: with some known,
    # the fact stands on them and the unknown ones are named beside it
    blind = any(len(step) > 1 and all(n in unknown for n in step) for step in run.steps)
    conflicts = [(step, key, writers) for step, key, writers in run.parallel
                 if not run.ambiguous_at or step < run.ambiguous_at]
    return [
        _f("graph.unreachable_nodes", "Nodes that never run or never reach END",
           bool(unreachable or stuck),
           [q for n in [*unreachable, *stuck] if (q := _line(model, n))], repo,
           (f"No path from START to {', '.join(unwired)}: they never run. " if unwired
            else "") + (f"{', '.join(untaken)}: wired from START only through routes never "
                        "taken (graph.dead_routes), they never run. " if untaken else "")
           + (f"No path from {', '.join(stuck)} to END (nor to a node with no way out, "
              "where the run would end too)." if stuck else "")
           or (_open_text(open_ops) if open_ops else reach_text(loops)),
           0.85 if unreachable else 0.6, where, unreachable=unreachable, no_end=stuck),
        _join_finding(model, run, repeats, ways, repo, where, every_way),
        _f("graph.state.parallel_writes", "Parallel nodes write a key without a reducer",
           bool(conflicts), list(dict.fromkeys(q for _s, k, w in conflicts for n in sorted(set(w))
                                                if (q := _line(model, n, k)))), repo,
           "; ".join(f"step {s}: {', '.join(sorted(set(w)))} all write {k}"
                     for s, k, w in conflicts) + ": LangGraph raises InvalidUpdateError."
           if conflicts else _no_conflict_text(unknown, blind),
           0.85, where, conflicts=[[s, k, sorted(set(w))] for s, k, w in conflicts],
           **({"limitation": f"what {_names_return(unknown)} is not determined"}
              if blind and not conflicts else {})),
    ]


def _join_finding(model: Model, run: Run, repeats: dict[str, Any], ways: dict[str, str],
                  repo: Path | None, where: str, every_way: bool) -> Finding:
    """``graph.join_repeats``; none seen is said only up to a guessed router's step, unless
    a join repeats on one way of the routers (`joins.join_repeats`)."""
    guessed = [] if repeats or not run.ambiguous_at else sorted(
        j for j in _joins(model) if any(s >= run.ambiguous_at for s in run.ran_at.get(j, [])))
    limitation = guessed and (f"{', '.join(guessed[:4])} run(s) after a router whose way "
                              f"depends on the run (step {run.ambiguous_at})")
    taken = ways and ("when " + ", ".join(f"{s} routes to {t}" for s, t in ways.items())
                      + ("" if every_way else " (not on every way it runs)") + ": ")
    return _f("graph.join_repeats", "A join runs once per arriving branch", bool(repeats),
              [q for n in repeats if (q := _line(model, n))], repo,
              (taken or "") + "; ".join(f"{n} runs {r['runs']} times ({', '.join(r['late'])} "
                                        f"arrive{'s' if len(r['late']) == 1 else ''} later)"
                                        for n, r in repeats.items())
              + ": separate edges (or routes) from branches of unequal length; the nodes after "
                "it run again on partial state." if repeats else f"No join is seen to run "
              f"twice; {limitation}, which orders nothing." if limitation else
              "Every join runs once.", 0.85 if every_way else 0.6, where, joins=repeats,
              guessed=guessed,
              **({"ways": ways} if ways else {}))


def _no_conflict_text(unknown: list[str], blind: bool) -> str:
    if not unknown:
        return "No key is written twice in one superstep without a reducer."
    return ("No key is seen written twice in one superstep without a reducer; "
            + ("not established: " if blind else "beside them, ")
            + f"what {_names_return(unknown[:6])} is not determined"
            + (", and no node beside them is known." if blind else "."))


def _names_return(names: list[str]) -> str:
    return f"{', '.join(names)} return{'s' if len(names) == 1 else ''}"


def _summary(model: Model, run: Run, where: str) -> Finding:
    steps = " -> ".join("[" + ", ".join(s) + "]" for s in run.steps[:12])
    return Finding(
        facet="graph.execution", goal="How LangGraph will run the graph (static model)",
        found=bool(run.steps), pattern="neutral", location=where, confidence=0.8,
        content=steps or None,
        rationale=(f"{len(run.steps)} superstep(s): {steps}." if steps else
                   "No node runs from START.") + (
            " Not determined: " + "; ".join(sorted(set(run.undetermined))[:5]) + "."
            if run.undetermined else ""),
        data={"steps": run.steps, "runs": dict(sorted(run.runs.items())),
              "arrived": sorted(run.arrived), "undetermined": sorted(set(run.undetermined)),
              "channels": {k: v for k, v in sorted(model.channels.items())}})
