"""Routes a router never takes: its test needs a state key that never has a value there.

A router's test is evaluated on what the router reads (`guards.possible` over the guards of
its returns): a key that never arrives reads as missing (the read's default, `guards`), so a
destination the router returns only when that key is set is never taken. A key never
arrives at the router when

- the state (all of its keys known) does not declare it: LangGraph drops it from every node's
  return and from the input, and the router's own node hands it on only to a router that
  sees the undeclared keys it returns (`execution.own_view`);
- the state declares it, but no node writes it (every node's return known, none returning a
  copy of the state; a node handing back the state it was given, ``return state``, passes on
  what arrived and writes only what it stores into it) and the graph's input schema is
  declared and does not carry it (without one the input may carry any key).

A destination the router returns only when a key is empty or None (``if not
state.get("k")``), None (``is None``; the fact says so, not "empty"), or holds no non-empty
item (``not any(len(v) > 0 for v in evidences.values())``), is never taken when the nodes
before it surely fill that key (`sure_keys`: its own node on every return, or every writer,
one of which runs on every path to it); the fact quotes the router's read, its return and
each writer's returns. A path that raises ends the run: it routes nowhere.

A path map's entry the router never returns (its returns all known names, none of them that
entry) is never taken either.

Left alone, as not determined: a router whose returns are not all known, one on a node
reached by ``Send`` (that node reads its payload), a router the simulated run never reaches,
and a destination another return of the node's routers also leads to. The destinations
never taken are left out of the fan-out, join and parallel facts (`topology.to_rebuilt`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.execution import (
    Model,
    Router,
    Run,
    build_model,
    known_outs,
    own_view,
    simulate,
    unknown_view,
)
from automaton_auditor.forensics.code.facts import quoted_finding
from automaton_auditor.forensics.code.guards import ABSENT, FALSY, NO_ITEM, NONE, possible
from automaton_auditor.forensics.code.node_returns import node_outs, node_target
from automaton_auditor.forensics.code.sure_keys import Sure, sure_at
from automaton_auditor.forensics.code.sure_values import FILLED
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.state import Finding


@dataclass
class DeadRoute:
    """One destination a router never takes, with the keys its test needs and why."""

    source: str
    target: str
    keys: list[str]
    why: str
    quotes: list[tuple[str, int]]
    when: str = ""  # what the router's test needs of the keys (none: it never returns it)


def dead_routes(graph: CallGraph, model: Model, run: Run) -> list[DeadRoute]:
    """The destinations of the model's routers never taken (see the module docstring)."""
    sent = {d for (_s, d), e in model.topo.edges.items() if e["kind"] == "send"}
    out: list[DeadRoute] = []
    for source, routers in sorted(model.routers.items()):
        if source in sent:
            continue
        for router in routers:
            # a name the router never returns needs no run to reach it
            out += _dead_targets(graph, model, run, source, router) if source in run.routes \
                else _unreturned(model, run, source, router, set()) if known_outs(router) \
                else []
    return out


def never_taken(facts: dict[str, JSON], graph: CallGraph, topo: Topology,
                repo: Path | None = None) -> dict[tuple[str, str], list[str]]:
    """(source, target) -> keys of the main graph's routes never taken (none when the
    wiring is partial or the graph is the repository's own class; `repo`: where the
    state's reducers are read)."""
    if topo.custom is not None or not topo.nodes or topo.computed or any(
            op.get("loop") for op in topo.ops):
        return {}
    model = build_model(facts, graph, topo, repo)
    return {(d.source, d.target): d.keys for d in dead_routes(graph, model, simulate(model))}


def _dead_targets(graph: CallGraph, model: Model, run: Run, source: str,
                  router: Router) -> list[DeadRoute]:
    outs, mapping = router.outs, router.info.get("map") or {}
    if not known_outs(router):
        return []  # its choice is not determined
    node = model.nodes.get(source)
    seen = {**unknown_view(model, run), **run.arrived,
            **own_view(model, router, dict(node.writes) if node else {})}
    sure = sure_at(model, source, router)
    # target -> keys that never arrive, keys whose value rules it out (with the test), lines
    dead: dict[str, tuple[list[str], dict[str, Any], list[int]]] = {}
    for out in outs:
        if possible(out, seen):
            continue
        guards = out.get("guards") or []
        keys = [k for k, want in guards if want not in FALSY and
                seen.get(k, ABSENT) == ABSENT and _never_arrives(model, k)]
        held = {k: want for k, want in guards if k in sure and
                not possible({"guards": [[k, want]]}, {k: sure[k].value})}
        for target in [*out.get("targets", []), *out.get("sends", [])]:
            name = str(mapping.get(str(target), target) if mapping else target)
            if (keys or held) and name not in run.routes[source]:
                known, wants, lines = dead.setdefault(name, ([], {}, []))
                known += [k for k in keys if k not in known]
                wants.update(held)
                lines.append(int(out["line"]))
    typed = graph.functions[router.key].get("typed") if router.key else None
    found = []
    for target, (keys, wants, lines) in sorted(dead.items()):
        if keys:
            found.append(DeadRoute(source, target, keys, _why(model, typed, source, keys),
                                   _quotes(model, router, source, keys, lines),
                                   f"{', '.join(keys)} {'is' if len(keys) == 1 else 'are'} set"))
        else:
            found.append(_held(graph, model, router, source, target, wants, sure, lines))
    return found + _unreturned(model, run, source, router, set(dead))


def _held(graph: CallGraph, model: Model, router: Router, source: str, target: str,
          wants: dict[str, Any], sure: dict[str, Sure], lines: list[int]) -> DeadRoute:
    """A destination the router takes only when a key is empty (or holds no non-empty item)
    that the nodes before it always fill (`sure_keys`)."""
    keys = sorted(wants)
    when = " or ".join(f"{k} {_NEEDS[wants[k]]}" for k in keys)
    why = "; ".join(
        (f"{source} gives {k} {_kind(sure[k].value)} on every return" if sure[k].own else
         f"{', '.join(sure[k].writers)} give{'s' if len(sure[k].writers) == 1 else ''} {k} "
         f"{_kind(sure[k].value)} on every return, and every path to {source} passes "
         f"through {'it' if len(sure[k].writers) == 1 else 'one of them'}") for k in keys)
    quotes = [(router.key[0], router.reads[k]) for k in keys if k in router.reads
              ] if router.key else []
    quotes += _quotes(model, router, source, [], lines)
    quotes += [q for k in keys for n in sure[k].writers for q in return_lines(graph, model, n, k)]
    return DeadRoute(source, target, keys, why + " (a path that raises ends the run; it does "
                     "not route)", list(dict.fromkeys(quotes)), when)


# what the router's test needs of a key, by the guard's kind (`guards`): its own words, so
# ``is None`` is not told as "empty", which the router would not route on
_NEEDS = {NO_ITEM: "holds no non-empty item", NONE: "is None", False: "is empty or None"}


def _kind(value: Any) -> str:
    return "a value holding a non-empty item" if value == FILLED else "a non-empty value"


def return_lines(graph: CallGraph, model: Model, name: str, key: str) -> list[tuple[str, int]]:
    """(path, line) of each return of node `name` that gives `key` a value."""
    fn, decos = node_target(graph, model.topo.nodes[name])
    if fn is None:
        return []
    return [(str(o.get("path") or fn[0]), int(o["line"])) for o in
            node_outs(graph, fn, decos) if key in (o.get("keys") or {})]


def _unreturned(model: Model, run: Run, source: str, router: Router,
                dead: set[str]) -> list[DeadRoute]:
    """The path map's entries the router never returns (tedoaba's ``"error_handler"``: its
    every return, followed into the helper it hands the choice to, is "judges" or
    "report"), when it returns names only."""
    mapping = router.info.get("map") or {}
    if not mapping or any(out.get("sends") for out in router.outs):
        return []
    returned = {str(t) for out in router.outs for t in out.get("targets", [])}
    quotes = [(str(out.get("path") or router.key[0]), int(out["line"]))
              for out in router.outs] if router.key else []
    quotes.append((router.info["op"]["path"], router.info["op"]["line"]))
    return [DeadRoute(source, str(name), [], f"its router never returns {key!r}", quotes)
            for key, name in sorted(mapping.items()) if str(key) not in returned
            and str(name) not in dead and str(name) not in run.routes.get(source, set())]


def _never_arrives(model: Model, key: str) -> bool:
    """No node gives `key` a value and the input cannot carry it. A node that hands back the
    state it was given (``return state``) writes only what it stores into it: it passes on
    what arrived, nothing new (a copy, ``{**state}``, may have changed any key)."""
    if key not in model.channels:
        return model.complete
    return model.input_keys is not None and key not in model.input_keys and not any(
        key in n.writes or n.open or (n.whole and n.copied) for n in model.nodes.values())


def _writers(model: Model, key: str) -> list[tuple[str, str, int]]:
    """(node, path, line) of each node that returns `key`."""
    return [(name, node.write_paths.get(key) or node.key[0], node.write_lines[key])
            for name, node in sorted(model.nodes.items())
            if node.key is not None and key in node.write_lines]


def _why(model: Model, typed: str | None, source: str, keys: list[str]) -> str:
    """Why each key never arrives at the router on `source` (`typed`: the class the router's
    state parameter is annotated with)."""
    state = str(model.topo.builder.get("state") or "the state").rsplit(".", 1)[-1]
    typed = typed.rsplit(".", 1)[-1] if typed else None
    parts = []
    for key in keys:
        if key in model.channels:
            parts.append(f"no node writes {key} and the input schema does not carry it")
            continue
        writers = [n for n, _p, _l in _writers(model, key)]
        if not writers:
            parts.append(f"{state} does not declare {key} and no node returns it")
        elif source in writers:
            parts.append(
                f"{source} returns {key}, but {state} does not declare it and "
                + (f"the router's state parameter is annotated {typed}" if typed else
                   f"{state} is a Pydantic model")
                + ", so LangGraph hands the router only the declared keys")
        else:
            parts.append(f"{', '.join(writers)} return{'s' if len(writers) == 1 else ''} "
                         f"{key}, but {state} does not declare it, so LangGraph drops it")
    return "; ".join(parts)


def _quotes(model: Model, router: Router, source: str, keys: list[str], lines: list[int]
            ) -> list[tuple[str, int]]:
    """The router's read of each key and its returns of the route, the add_conditional_edges
    call, and the returns of the key that never reach the router (its own node's only, when
    it is one of them)."""
    quotes = [(router.key[0], line) for line in [
        *(router.reads[k] for k in keys if k in router.reads), *lines]] if router.key else []
    quotes.append((router.info["op"]["path"], router.info["op"]["line"]))
    for key in keys:
        writers = _writers(model, key)
        own = [w for w in writers if w[0] == source]
        quotes += [(p, line) for _n, p, line in own or writers]
    return list(dict.fromkeys(quotes))


def route_finding(graph: CallGraph, model: Model, run: Run, repo: Path | None,
                  where: str) -> Finding:
    """``graph.dead_routes``: the destinations no router ever takes."""
    dead = dead_routes(graph, model, run)
    grouped: dict[tuple[str, str, str], list[DeadRoute]] = {}
    for d in dead:  # the destinations one test rules out, together
        grouped.setdefault((d.source, d.when, d.why), []).append(d)
    text = "; ".join(
        f"{source} -> {', '.join(d.target for d in ds)} {'is' if len(ds) == 1 else 'are'} "
        f"never taken: " + (f"{_router_name(model, source)} takes "
                            f"{'it' if len(ds) == 1 else 'them'} only when {when}, and {why}"
                            if when else why)
        for (source, when, why), ds in grouped.items())
    return quoted_finding(
        "graph.dead_routes", "A conditional route can never be taken", bool(dead),
        list(dict.fromkeys(q for d in dead for q in d.quotes)), repo,
        text + "." if dead else "Every route can be taken.", 0.8, where,
        edges=[[d.source, d.target] for d in dead],
        keys=sorted({k for d in dead for k in d.keys}))


def _router_name(model: Model, source: str) -> str:
    keys = [r.key[1] for r in model.routers.get(source, []) if r.key]
    return f"the router {keys[0]}" if len(keys) == 1 else "its router"


__all__ = ["DeadRoute", "dead_routes", "never_taken", "route_finding"]
