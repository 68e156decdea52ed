"""Rebuilding the audited LangGraph topology from the recorded builder operations."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.own_graph import factory_schema, own_class
from automaton_auditor.forensics.code.resolve import Resolver
from automaton_auditor.forensics.code.routers import chooses, targets_of
from automaton_auditor.state import RebuiltGraph

START, END = "__start__", "__end__"
# Node names, matched on word parts: "repo" is a detective, "report_writer" is not.
DETECTIVE = re.compile(r"detective|investigat|vision|analy[sz]|inspect|(^|[_\W])(repo|docs?|"
                       r"pdf|git|code|ast)([_\W]|$)", re.I)
JUDGE = re.compile(r"judge|prosecutor|defen[cs]e|tech_?lead|critic|persona|evaluat|opinion|"
                   r"assess|deliberat|grader", re.I)


@dataclass
class Topology:
    """A rebuilt graph with the operations each edge came from."""

    key: str
    builder: JSON
    nodes: dict[str, JSON] = field(default_factory=dict)
    edges: dict[tuple[str, str], JSON] = field(default_factory=dict)
    conditional: dict[str, JSON] = field(default_factory=dict)
    ops: list[JSON] = field(default_factory=list)
    # ``add_edge([a, b], c)``: c waits for all of a, b (one barrier), with its operation
    joins: list[tuple[tuple[str, ...], str, JSON]] = field(default_factory=list)
    # node names computed at run time (``add_node(dim["id"], ...)``): the wiring is partial
    computed: list[JSON] = field(default_factory=list)
    # add_conditional_edges calls whose router's destinations are not determined (it returns
    # a value read from the state, with no path map and no Literal annotation)
    undetermined: list[JSON] = field(default_factory=list)
    # the repository's own class the builder is made from (`own_graph.own_class`), or None
    # for LangGraph's: its calls then mean what that class does, not what LangGraph does
    custom: JSON | None = None
    # (source, target) -> keys: routes no router ever takes (`dead_routes`), left out of
    # what runs, fans out and joins
    dead: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def taken(self) -> dict[tuple[str, str], JSON]:
        """The edges, those of routes never taken left out."""
        return {e: info for e, info in self.edges.items() if e not in self.dead}


def group_builders(facts: dict[str, JSON], resolver: Resolver) -> dict[str, list[JSON]]:
    """Operations per builder, with helper functions' builders merged into their callers'."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    ops = [op for path in sorted(facts) for op in facts[path].get("ops") or []]
    for op in ops:
        if op["op"] == "alias":
            parent[find(op["alias"])] = find(op["builder"])
        if op["op"] != "pass_builder":
            continue
        target = resolver.function(op.get("func"), op["path"])
        if target is None:
            continue
        params = target[1].get("params") or []
        index = op["index"] + (1 if params[:1] in (["self"], ["cls"]) else 0)
        if index < len(params):
            for other in ops:
                if other["builder"].endswith(f"::{params[index]}") and \
                        other["builder"].startswith(f"{target[0]}::"):
                    parent[find(other["builder"])] = find(op["builder"])
    groups: dict[str, list[JSON]] = {}
    for op in ops:
        if op["op"] not in ("pass_builder", "alias"):
            groups.setdefault(find(op["builder"]), []).append(op)
    return groups


def rebuild(facts: dict[str, JSON]) -> tuple[Topology | None, list[Topology]]:
    """The main graph (most nodes) and every other builder found."""
    resolver = Resolver(facts)
    builders = {b["key"]: b for path in sorted(facts) for b in facts[path].get("builders") or []}
    topologies = []
    for key, ops in sorted(group_builders(facts, resolver).items()):
        # A builder never seen being created (a helper's parameter): located at its first
        # operation, so every location stays ``path:line``.
        first = min(ops, key=lambda o: (o["path"], o["line"]))
        topo = Topology(key, builders.get(key, {"key": f"{first['path']}:{first['line']}",
                                                 "line": first["line"],
                                                 "snippet": first["snippet"], "state": None}),
                        ops=ops)
        for op in ops:
            for one in _expand(op, resolver):
                _apply(topo, one, resolver)
        _command_edges(topo, resolver)
        _check_copies(topo)
        topologies.append(topo)
    for key in sorted(set(builders) - {t.key for t in topologies}):
        topologies.append(Topology(key, builders[key]))
    if not topologies:
        return None, []
    for topo in topologies:
        made = topo.builder.get("cls")
        topo.custom = own_class(str(made), topo.key.rsplit(":", 1)[0], facts, resolver) \
            if made else None
        if made and not topo.builder.get("state"):  # made by a repository function
            topo.builder = {**topo.builder, **factory_schema(
                str(made), topo.key.rsplit(":", 1)[0], facts, resolver)}
    # a LangGraph builder is the main graph before any of the repository's own classes
    ranked = sorted(topologies, key=lambda t: (t.custom is not None, -len(t.nodes),
                                               -len(t.edges), t.key))
    return ranked[0], ranked[1:]


def _each_marker(value: Any) -> str | None:
    if isinstance(value, dict):
        if "each" in value:
            return str(value["each"])
        return next((m for v in value.values() if (m := _each_marker(v))), None)
    if isinstance(value, list):
        return next((m for v in value if (m := _each_marker(v))), None)
    return None


def _substitute(value: Any, marker: str, item: Any) -> Any:
    if isinstance(value, dict):
        if value.get("each") == marker:
            return item
        return {k: _substitute(v, marker, item) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, marker, item) for v in value]
    return value


def _expand(op: JSON, res: Resolver, depth: int = 0) -> list[JSON]:
    """Unroll an operation recorded inside a loop over another module's list."""
    marker = _each_marker([op["args"], op["kwargs"], op.get("wraps")])
    if marker is None or depth > 3:
        return [op]
    items = res.value({"ref": marker}, op["path"])
    if not isinstance(items, list):
        items = [None]
    out: list[JSON] = []
    for item in items[:64]:
        one = {**op, "args": _substitute(op["args"], marker, item),
               "kwargs": _substitute(op["kwargs"], marker, item),
               "wraps": _substitute(op.get("wraps"), marker, item)}
        out += _expand(one, res, depth + 1)
    return out


def _check_copies(topo: Topology) -> None:
    """The symbolic copies of a loop over run-time data (`loop_items`) stand for its items
    only when the copies are wired into the graph and every edge meets a registered node:
    nodes added in the loop while the edges name others (``add_node(name, judge)`` with
    ``add_edge("a", "judge")``) leave the wiring partial, as names computed at run time."""
    looped = [op for op in topo.ops if op.get("loop")]
    if not looped:
        return
    copies = {n for n, info in topo.nodes.items() if info["op"].get("loop") and "{" in n}
    ends = {n for edge in topo.edges for n in edge} - {START, END}
    unwired = any(not any(n in edge for edge in topo.edges) for n in copies)
    if ends - set(topo.nodes) or unwired:
        topo.computed += [op for op in looped if op not in topo.computed]


def _command_edges(topo: Topology, res: Resolver) -> None:
    """Nodes whose function returns ``Command(goto=...)`` route without add_edge."""
    for name, info in sorted(topo.nodes.items()):
        found = res.function(str(info.get("fn") or ""), info["op"]["path"])
        gotos = sorted({g for g in (found[1].get("gotos") or [])} if found else set())
        if not gotos or name in topo.conditional:
            continue
        topo.conditional[name] = {"op": info["op"], "targets": gotos, "send": False,
                                  "sends": [], "router": "Command(goto=...)",
                                  "chooses": len(gotos) >= 2}
        for target in gotos:
            _edge(topo, name, target, info["op"], "conditional")


def _edge(topo: Topology, src: str | None, dst: str | None, op: JSON, kind: str) -> None:
    if src and dst:
        known = topo.edges.get((src, dst))
        # a static edge runs whatever a router beside it returns: it outweighs a route to the
        # same node, whichever was added first
        if known is None or (kind == "static" and known["kind"] != "static"):
            topo.edges[(src, dst)] = {"op": op, "kind": kind}
    elif op not in topo.computed:
        topo.computed.append(op)


def _apply(topo: Topology, op: JSON, res: Resolver) -> None:
    path, args, kwargs, name = op["path"], op["args"], op["kwargs"], op["op"]
    if name == "add_node":
        _add_node(topo, op, res)
    elif name == "add_edge":
        src = kwargs.get("start_key", args[0] if args else None)
        dst = res.name(kwargs.get("end_key", args[1] if len(args) > 1 else None), path)
        sources = res.value(src, path)
        for item in sources if isinstance(sources, list) else [src]:
            _edge(topo, res.name(item, path), dst, op, "static")
        names = [res.name(i, path) for i in sources] if isinstance(sources, list) else []
        if dst and len(names) > 1 and all(names):
            topo.joins.append((tuple(str(n) for n in names), dst, op))
    elif name == "add_sequence" and args:
        seq = res.value(args[0], path)
        names = [res.name(i[0] if isinstance(i, list) else i, path)
                 for i in (seq if isinstance(seq, list) else [])]
        for n in names:
            if n:
                topo.nodes.setdefault(n, {"op": op, "fn": n})
        for a, b in itertools.pairwise(names):
            _edge(topo, a, b, op, "static")
    elif name == "set_entry_point" and args:
        _edge(topo, START, res.name(args[0], path), op, "static")
    elif name == "set_finish_point" and args:
        _edge(topo, res.name(args[0], path), END, op, "static")
    elif name in ("add_conditional_edges", "set_conditional_entry_point"):
        _conditional(topo, op, res)


def _add_node(topo: Topology, op: JSON, res: Resolver) -> None:
    args, kwargs, path = op["args"], op["kwargs"], op["path"]
    real = args[:-1]
    fn = args[-1] if args else ""
    if "node" in kwargs:
        node = res.name(kwargs["node"], path)
        fn = str((kwargs.get("action") or {}).get("ref", "")) if isinstance(
            kwargs.get("action"), dict) else fn
    elif len(real) >= 2 or (len(real) == 1 and "action" in kwargs):
        node = res.name(real[0], path)
        action = real[1] if len(real) >= 2 else kwargs.get("action")
        if isinstance(action, dict) and action.get("ref"):
            fn = str(action["ref"])  # ``for name, fn in [("a", a)]: add_node(name, fn)``
    elif len(real) == 1:
        node = res.name(real[0], path)
        fn = str(real[0].get("ref", "")) if isinstance(real[0], dict) else fn
    else:
        return
    if node:
        topo.nodes.setdefault(node, {"op": op, "fn": fn})
    elif op not in topo.computed:
        topo.computed.append(op)


def _conditional(topo: Topology, op: JSON, res: Resolver) -> None:
    args, kwargs, path = op["args"], op["kwargs"], op["path"]
    entry = op["op"] == "set_conditional_entry_point"
    source = START if entry else res.name(kwargs.get("source", args[0] if args else None), path)
    rest = args if entry else args[1:]
    router = kwargs.get("path", rest[0] if rest else None)
    path_map = kwargs.get("path_map", rest[1] if len(rest) > 1 else None)
    mapped = res.value(path_map, path)
    mapping = {str(res.name(k, path)): res.name(v, path) for k, v in mapped["map"]} \
        if isinstance(mapped, dict) and "map" in mapped else {}
    targets, sent, many, unknown = targets_of(router, path_map, path, res)
    if unknown and op not in topo.undetermined:
        topo.undetermined.append(op)
    # a returned list goes through the path map like a single name does
    many = {str(mapping.get(t) or t) for t in many}
    targets = sorted(set(targets) | many)
    if not source:
        return
    # ``sends``: every target run at once (``Send`` or a returned list): the fan-out
    sends = sent | many
    own = {"op": op, "targets": targets, "send": bool(sends), "sends": sorted(sends),
           "map": mapping, "router": router.get("ref") if isinstance(router, dict) else None,
           "chooses": len(mapping) >= 2 or len(targets) - len(sends) >= 2 or
           chooses(router, path, res)}
    first = topo.conditional.get(source)
    if first is None or "routers" not in first:
        topo.conditional[source] = {**own, "routers": [own]}
    else:
        # LangGraph runs every router attached to a node (each add_conditional_edges call is
        # one more branch): the first entry speaks for the source, all are kept
        first["routers"].append(own)
        first["targets"] = sorted(set(first["targets"]) | set(targets))
        first["sends"] = sorted(set(first["sends"]) | sends)
        first["send"] = bool(first["sends"])
        first["chooses"] = first["chooses"] or own["chooses"]
    for target in targets:
        # a node reached by Send reads its payload; one named in a list reads the state
        _edge(topo, source, target, op, "send" if target in sent else
              "parallel" if target in many else "conditional")


def reach(edges: list[tuple[str, str]], start: str, forward: bool = True) -> set[str]:
    """`start` and the nodes a path of `edges` leads to from it (to it when not
    `forward`)."""
    step: dict[str, set[str]] = {}
    for src, dst in edges:
        a, b = (src, dst) if forward else (dst, src)
        step.setdefault(a, set()).add(b)
    seen, todo = {start}, [start]
    while todo:
        for nxt in step.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def running(topo: Topology) -> set[str] | None:
    """The nodes a path from START reaches (the others never run), or None when that is
    not known: no edge leaves START, some wiring is computed at run time, or a router's
    destinations are not determined."""
    if topo.computed or topo.undetermined or not any(src == START for src, _dst in topo.edges):
        return None
    return reach(list(topo.taken()), START)


def to_rebuilt(topo: Topology) -> RebuiltGraph:
    """The shared `RebuiltGraph` model, with fan-out/fan-in computed from the edges (routes
    never taken left out)."""
    out: dict[str, set[str]] = {}
    into: dict[str, set[str]] = {}
    edges = topo.taken()
    statics = {src for (src, _dst), info in edges.items() if info["kind"] == "static"}
    for (src, dst), info in edges.items():
        # A branch chosen by a router runs beside the source's static successors.
        if info["kind"] in ("static", "send", "parallel") or src in statics:
            out.setdefault(src, set()).add(dst)
        if info["kind"] == "static":
            into.setdefault(dst, set()).add(src)
    # a router's Send (copies of one node), or a returned list none of whose names was
    # left out as never taken
    pruned = {s for s, _d in topo.dead}
    fans = {s for s, info in topo.conditional.items() if info.get("send") and s not in pruned}
    fans |= {s for (s, _d), info in edges.items() if info["kind"] == "send"}
    fan_out = {s: sorted(t) for s, t in out.items() if len(t) >= 2 or s in fans}
    # parallel siblings that reach a node through their routers also meet there (LangGraph
    # runs it once, in the superstep after theirs, as for plain edges) when every route the
    # router can take leads to it: a node only some routes reach (an error handler) is no join.
    # "Leads to" stays inside this layer: a path through a later fan-out (the judges after
    # the aggregator, whose routers also reach the error handler) gathers nothing here.
    siblings = {t for ts in fan_out.values() for t in ts}
    layer = [(a, b) for a, b in edges if a not in fan_out]
    for (src, dst), info in edges.items():
        if info["kind"] != "static" and src in siblings and dst != src and all(
                dst in reach(layer, t) for (a, t) in edges if a == src):
            into.setdefault(dst, set()).add(src)
    # a branch from a node that never runs brings nothing to the join
    live = running(topo)
    into = {d: {s for s in ss if live is None or s in live} for d, ss in into.items()}
    fan_in = {d: sorted(s) for d, s in into.items() if len(s) >= 2 and d != END}
    for source, info in topo.conditional.items():
        for target in info["sends"]:
            if source not in fans or (source, target) in topo.dead:
                continue
            for (a, b), edge in edges.items():
                if a == target and edge["kind"] == "static" and b != END:
                    fan_in.setdefault(b, sorted(into.get(b, {target})))
    builder = topo.builder
    return RebuiltGraph(
        builder=builder.get("snippet", "")[:300], location=builder.get("key", ""),
        nodes=sorted(topo.nodes), edges=sorted(topo.edges),
        conditional_sources=sorted(topo.conditional),
        fan_out=dict(sorted(fan_out.items())), fan_in=dict(sorted(fan_in.items())),
        # no node, no flow: nothing to call linear (`findings` says no graph is built)
        # wiring computed at run time may branch: the flow is then not known to be linear
        linear=not builds_nothing(topo) and not fan_out and not topo.conditional
        and not topo.computed)


def builds_nothing(topo: Topology) -> bool:
    """The builder is never given a node (no add_node or add_sequence call): there is no
    graph to run, whatever else is called on it."""
    return not any(op["op"] in ("add_node", "add_sequence") for op in topo.ops)


def partial_reason(topo: Topology) -> str | None:
    """Why the rebuilt wiring is partial (a builder call whose node names are computed at
    run time was left out), or None."""
    if not topo.computed:
        return None
    op = topo.computed[0]
    return (f"node names computed at run time ({op['path']}:{op['line']}): the wiring read "
            "is partial, and what it leaves out may branch or join")


def loop_note(topo: Topology) -> str:
    """How the loops over run-time data that wire the graph were read (`loop_items`)."""
    loops = sorted({(op["loop"]["path"], op["loop"]["line"], op["loop"]["iter"])
                    for op in topo.ops if op.get("loop")} if not topo.computed else set())
    if not loops:
        return ""
    where = "; ".join(f"{p}:{line} over {text}" for p, line, text in loops[:6])
    return (f" Nodes and edges wired in loops over run-time data ({where}) are read as two "
            "copies of each ([#1], [#2]), one per item.")

