"""A static model of how LangGraph runs the rebuilt graph: channels, writes, supersteps.

- Channels are the keys of the state schema (TypedDict, Pydantic model, dataclass; with the
  keys of base classes, ``MessagesState``'s ``messages``, and the input/output schemas); a
  key's reducer comes from ``Annotated[T, reducer]``.
- A node writes the keys its function returns (`outs`, followed through helpers it returns
  from and the decorators around it: `node_returns`); keys that are not channels are
  dropped by LangGraph without a word. A router attached to the node itself still sees
  them; a router on a later node does not.
- Supersteps: a node runs in the step after any of its plain-edge predecessors ran (once per
  step, however many arrive); a list-form join ``add_edge([a, b], c)`` waits until all its
  sources ran; a router picks the targets whose returns are not ruled out by what has arrived
  (``state.get("k")`` is falsy when ``k`` never arrives, truthy once a node surely filled it:
  `sure_values`; a reducer that adds or merges keeps it so: `reducers.operator_of`); each
  ``Send`` is one more task; two writes to a key without a reducer in one step are an error.
- A router sees its own node's writes; the keys that node returned and the state does not
  declare only in a dict state, its state parameter not annotated with a class of keys
  (``def route(state: AgentState)``: LangGraph reads it through that class, `own_view`).
- The input carries the input schema's keys; with none declared, the keys the first nodes read
  as ``state["k"]`` (`input_needs`), so a node that returns the whole state (``{**state,
  ...}``) writes them back.

Where names or counts are only known at run time the model says "not determined" and draws no
failure from it. Nothing is executed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.guards import possible
from automaton_auditor.forensics.code.node_returns import node_outs, node_target, resolved_outs
from automaton_auditor.forensics.code.reducers import channel_ops
from automaton_auditor.forensics.code.routers import fixed_outs
from automaton_auditor.forensics.code.state_passing import passed_reads
from automaton_auditor.forensics.code.state_schema import passthrough, schema_keys
from automaton_auditor.forensics.code.sure_values import FILLED, NONEMPTY, UNKNOWN
from automaton_auditor.forensics.code.topology import END, START, Topology

MAX_STEPS = 40
MAX_RUNS = 8  # a node run more often than this is in a loop: counts are not determined
TRUTHY = (NONEMPTY, FILLED)


@dataclass
class Node:
    """What one graph node does to the state."""

    name: str
    key: Key | None  # its function, when it resolves
    writes: dict[str, Any] = field(default_factory=dict)  # key -> literal value or "?"
    write_lines: dict[str, int] = field(default_factory=dict)
    whole: bool = False  # returns the whole state
    # a copy of it (``{**state}``, ``dict(state)``): the keys it changes in the copy are not
    # followed, unlike the state object handed back (``return state``), changed by its stores
    copied: bool = False
    whole_line: int = 0  # where it first returns the whole state
    # the files those lines are in: a helper's or a decorator's wrapper's, not the function's
    write_paths: dict[str, str] = field(default_factory=dict)
    whole_path: str = ""
    open: bool = False  # returns something not determined
    reads: dict[str, int] = field(default_factory=dict)  # key -> first line read
    needs: set[str] = field(default_factory=set)  # keys read as ``state["k"]`` (no default)
    gotos: list[str] = field(default_factory=list)
    # key -> (path, line) of a return handing back under it the state's own value of it
    echoes: dict[str, tuple[str, int]] = field(default_factory=dict)


@dataclass
class Router:
    """One router attached to a node (an add_conditional_edges call) and its resolved outs."""

    info: JSON
    outs: list[JSON]  # empty: not determined
    key: Key | None = None  # the router function, when it resolves
    reads: dict[str, int] = field(default_factory=dict)  # key -> first line read
    passthrough: bool = True  # it sees the undeclared keys its own node returns (`own_view`)


@dataclass
class Model:
    """The graph as LangGraph will run it."""

    topo: Topology
    channels: dict[str, str | None]  # key -> reducer
    input_keys: set[str] | None  # None: the input may carry any channel
    nodes: dict[str, Node]
    routers: dict[str, list[Router]]  # source -> every router attached to it
    complete: bool = True  # False: the state schema's keys are not all known (no key is dropped)
    ops: dict[str, str | None] = field(default_factory=dict)  # key -> `reducers.operator_of`


@dataclass
class Run:
    """One simulated run: supersteps, runs per node, what arrived and what went wrong."""

    steps: list[list[str]] = field(default_factory=list)
    runs: Counter[str] = field(default_factory=Counter)
    ran_at: dict[str, list[int]] = field(default_factory=dict)
    arrived: dict[str, Any] = field(default_factory=dict)
    dropped: dict[str, set[str]] = field(default_factory=dict)
    parallel: list[tuple[int, str, list[str]]] = field(default_factory=list)
    routes: dict[str, set[str]] = field(default_factory=dict)  # source -> targets taken
    undetermined: list[str] = field(default_factory=list)
    # the first step after a router whose choice is not determined (both ways simulated):
    # from there on, what runs together is only what may run together
    ambiguous_at: int = 0
    step: int = 0
    choices: dict[str, str] = field(default_factory=dict)  # router source -> the way it takes
    open_input: bool = False  # the input's keys are guessed (`input_needs`), not known


# --- the model ---------------------------------------------------------------------------------
def build_model(facts: dict[str, JSON], graph: CallGraph, topo: Topology,
                repo: Path | None = None) -> Model:
    """The static execution model of one rebuilt graph (`repo`: where its reducers are read)."""
    builder = topo.builder
    channels, complete = schema_keys(facts, builder.get("state"))
    given = builder.get("input")
    inputs, known = schema_keys(facts, given) if given else ({}, False)
    for extra in (inputs, schema_keys(facts, builder.get("output"))[0]):
        for key, reducer in extra.items():
            channels.setdefault(key, reducer)
    nodes = {name: _node(graph, name, info) for name, info in sorted(topo.nodes.items())}
    routers: dict[str, list[Router]] = {}
    for source, first in sorted(topo.conditional.items()):
        for info in first.get("routers") or [first]:
            fn = graph.node_function(info, "router")
            routers.setdefault(source, []).append(Router(
                info, resolved_outs(graph, fn) if fn else fixed_outs(topo.edges, source, info), fn,
                state_reads(graph, fn) if fn else {},
                passthrough(facts, (graph.functions[fn] if fn else {}).get("typed"),
                            builder.get("state"), channels)))
    return Model(topo, channels, set(inputs) if known else None, nodes, routers, complete,
                 channel_ops(facts, graph, repo, builder.get("state")))


def _node(graph: CallGraph, name: str, info: JSON) -> Node:
    key, decos = node_target(graph, info)
    node = Node(name, key)
    if key is None:
        node.open = True  # a subgraph or a computed callable: not determined
        return node
    outs = node_outs(graph, key, decos)
    for out in outs:
        for written, value in (out.get("keys") or {}).items():
            # a value another return differs on, or that one leaves unwritten, is not known
            node.writes[written] = value if all(
                (o.get("keys") or {}).get(written, UNKNOWN) == value for o in outs) else UNKNOWN
            if written not in node.write_lines:
                node.write_lines[written] = out["line"]
                node.write_paths[written] = out.get("path") or key[0]
        if out.get("whole") and not node.whole:
            node.whole, node.whole_line = True, out["line"]
            node.whole_path = out.get("path") or key[0]
        node.copied |= bool(out.get("whole") and out.get("copy"))
        node.open |= bool(out.get("open"))
        for echoed in out.get("echo") or []:
            node.echoes.setdefault(echoed, (out.get("path") or key[0], out["line"]))
        node.gotos += [g for g in out.get("gotos", []) if g not in node.gotos]
    if node.whole:
        # a node that returns the state it was given returns what it stored in it
        for written, line in state_accesses(graph, key, stores=True).items():
            node.writes.setdefault(written, UNKNOWN)
            node.write_lines.setdefault(written, line)
    node.reads = {**passed_reads(graph, key, state_param(graph, key)), **state_reads(graph, key)}
    node.needs = set(state_accesses(graph, key, stores=False, ops=("get",)))
    return node


def state_reads(graph: CallGraph, key: Key) -> dict[str, int]:
    """Keys a node or router function reads from its state parameter (first line each)."""
    return state_accesses(graph, key, stores=False)


def state_param(graph: CallGraph, key: Key) -> str | None:
    """The parameter a node or router function receives the state in."""
    params = graph.functions[key].get("params") or []
    return params[1] if params[:1] == ["self"] and len(params) > 1 else (
        params[0] if params else None)


def state_accesses(graph: CallGraph, key: Key, stores: bool,
                   ops: tuple[str, ...] | None = None) -> dict[str, int]:
    """Keys a function reads from (or, with `stores`, stores into) its state parameter, with
    the first line of each (`ops`: only these kinds of access, e.g. "get" for ``s["k"]``)."""
    state = state_param(graph, key)
    found: dict[str, int] = {}
    for access in graph.flow(key).get("keys", []):
        if access["param"] == state and (access["op"] in ("set", "setattr")) == stores \
                and (ops is None or access["op"] in ops):
            found.setdefault(access["key"], access["line"])
    return found


# --- routers -----------------------------------------------------------------------------------
def own_view(model: Model, router: Router, own: dict[str, Any]) -> dict[str, Any]:
    """What the router sees of its own node's return `own`: all of it, or only the keys the
    state declares (`Router.passthrough`)."""
    if router.passthrough or not model.complete:
        return own
    return {k: v for k, v in own.items() if k in model.channels}


def route(model: Model, source: str, view: dict[str, Any], own: dict[str, Any]
          ) -> tuple[set[str], Counter[str], bool]:
    """(targets, Send counts, determined) of the routers on `source` given `view` and the
    node's own return `own` (LangGraph runs every router attached to a node)."""
    targets: set[str] = set()
    sends: Counter[str] = Counter()
    determined = True
    for router in model.routers.get(source, []):
        more, sent, known = _route_one(router, {**view, **own_view(model, router, own)})
        targets |= more
        sends.update(sent)
        determined &= known
    return targets, sends, determined


def known_outs(router: Router) -> bool:
    """Whether every return of the router is known: not ``return tasks`` built up in a loop,
    nor a returned test without a path map of it."""
    mapping = router.info.get("map") or {}
    return bool(router.outs) and not any(
        o.get("open") or not (o.get("targets") or o.get("sends")) or (
            o.get("test") and not set(o["targets"]) <= set(mapping)) for o in router.outs)


def _route_one(router: Router, view: dict[str, Any]) -> tuple[set[str], Counter[str], bool]:
    info, outs, mapping = router.info, router.outs, router.info.get("map") or {}
    if not known_outs(router):
        return set(info["targets"]), Counter(), False
    targets: set[str] = set()
    sends: Counter[str] = Counter()
    determined = True
    chosen = [o for o in outs if possible(o, view)]
    # the parts of one returned list (`outs`) are one choice, taken together
    if len({("part", o["line"]) if o.get("part") else
            (tuple(o.get("targets", [])), tuple(o.get("sends", []))) for o in chosen}) > 1:
        determined = False  # the router really branches on data only known at run time
    for out in chosen:
        targets |= {mapping.get(str(t), t) if mapping else t for t in out.get("targets", [])}
        for target in out.get("sends", []):
            if out.get("count") is None and "count" in out:
                determined = False
            sends[target] += out.get("count") or 1
    return {t for t in targets if t}, sends, determined


# --- supersteps --------------------------------------------------------------------------------
def simulate(model: Model, input_keys: set[str] | None = None,
             choices: dict[str, str] | None = None) -> Run:
    """Run the model from START (the input carries `input_keys`, default: the input schema's
    keys) until no node is triggered, END, or MAX_STEPS; a router whose way is not
    determined takes the way `choices` gives for its node, when it is one of its ways."""
    run = Run(choices=dict(choices or {}),
              open_input=input_keys is None and model.input_keys is None)
    given = input_keys if input_keys is not None else (
        model.input_keys if model.input_keys is not None else input_needs(model))
    run.arrived = {k: UNKNOWN for k in given if k in model.channels or not model.complete}
    joined: dict[str, set[str]] = {d: set() for _s, d, _o in model.topo.joins}
    frontier = _successors(model, START, run, {}, joined)
    for step in range(1, MAX_STEPS + 1):
        frontier.pop(END, None)
        if not frontier:
            return run
        run.steps.append(sorted(frontier))
        run.step = step
        writers: dict[str, list[str]] = {}
        for name, count in sorted(frontier.items()):
            run.runs[name] += count
            run.ran_at.setdefault(name, []).append(step)
            _write(model, run, name, count, writers)
        conflicts = [(k, w) for k, w in sorted(writers.items())
                     if len(w) > 1 and k in model.channels and not model.channels[k]]
        if conflicts:
            run.parallel += [(step, k, w) for k, w in conflicts]
            if run.ambiguous_at and step >= run.ambiguous_at:
                # both ways of an undetermined router were simulated: these nodes may never
                # run together, and nothing after this step is known
                run.undetermined.append(
                    f"step {step}: " + "; ".join(f"{', '.join(sorted(set(w)))} write {k}"
                                                 for k, w in conflicts)
                    + " only if a router takes every way; the model stops there")
            return run  # LangGraph raises InvalidUpdateError here
        nxt: Counter[str] = Counter()
        for name in sorted(frontier):
            node = model.nodes.get(name)
            own = {k: v for k, v in (node.writes if node else {}).items()}
            for target, count in _successors(model, name, run, own, joined).items():
                nxt[target] = max(nxt[target], 1) if count == 1 else nxt[target] + count
        if any(run.runs[n] > MAX_RUNS for n in run.runs):
            run.undetermined.append("a loop runs nodes more than "
                                    f"{MAX_RUNS} times: counts not determined")
            return run
        frontier = nxt
    run.undetermined.append(f"more than {MAX_STEPS} supersteps")
    return run


def _write(model: Model, run: Run, name: str, count: int,
           writers: dict[str, list[str]]) -> None:
    node = model.nodes.get(name)
    if node is None:
        return
    written = dict(node.writes)
    if node.whole:
        written.update({k: run.arrived.get(k, UNKNOWN) for k in run.arrived})
    for key, value in written.items():
        if key in model.channels or not model.complete:
            writers.setdefault(key, []).extend([name] * count)
            before = run.arrived.get(key, value)
            if model.channels.get(key) and (before in TRUTHY or value in TRUTHY):
                # a reducer keeps what arrived (non-empty stays non-empty) and what is added
                run.arrived[key] = FILLED if value == FILLED else NONEMPTY
            else:
                run.arrived[key] = value if before == value else UNKNOWN
        else:
            run.dropped.setdefault(name, set()).add(key)
    if node.open:
        run.undetermined.append(f"{name}: what it returns is not determined")


def _successors(model: Model, name: str, run: Run, own: dict[str, Any],
                joined: dict[str, set[str]]) -> Counter[str]:
    """Tasks triggered for the next step by `name` having run (Send tasks counted)."""
    out: Counter[str] = Counter()
    in_joins = {(s, d) for sources, d, _o in model.topo.joins for s in sources}
    for (src, dst), edge in sorted(model.topo.edges.items()):
        if src == name and edge["kind"] == "static" and (src, dst) not in in_joins:
            out[dst] = 1
    for sources, dst, _op in model.topo.joins:
        if name in sources:
            joined[dst].add(name)
            if joined[dst] >= set(sources):
                out[dst] = 1
                joined[dst].clear()
    if name in model.topo.conditional:
        # a router sees what its node returned (`own_view`); a key some node may write
        # without our knowing is not absent
        targets, sends, determined = route(model, name, {**unknown_view(model, run),
                                                         **run.arrived}, own)
        way = run.choices.get(name)
        if not determined and way in targets | set(sends):
            sends = Counter({way: sends[way]} if sends[way] else {})
            targets, determined = targets & {way}, True
        run.routes.setdefault(name, set()).update(targets | set(sends))
        if not determined:
            run.undetermined.append(f"{name}: the router's choice is not determined")
            if len(targets) + len(sends) > 1 and not run.ambiguous_at:
                run.ambiguous_at = run.step + 1
        for target in targets:
            out[target] = max(out[target], 1)
        for target, count in sends.items():
            out[target] += count
    node = model.nodes.get(name)
    for target in node.gotos if node else []:
        out[target] = max(out[target], 1)
    return out


def input_needs(model: Model) -> set[str]:
    """With no input schema, the keys the input must carry: state keys that a node START
    runs first reads as ``state["k"]`` (no default), since nothing ran before it to write
    them. A node reached by ``Send`` reads its payload instead."""
    first = {d for (src, d), e in model.topo.edges.items()
             if src == START and e["kind"] == "static"}
    return {k for name in first if (node := model.nodes.get(name)) for k in node.needs
            if k in model.channels or not model.complete}


def any_open(model: Model) -> bool:
    """True when some node writes keys that are not determined (all keys may arrive): a
    node handing back the state it was given writes what it stores, but one returning a
    copy may have changed any key in it."""
    return any(n.open or (n.whole and n.copied) for n in model.nodes.values())


def unknown_view(model: Model, run: Run) -> dict[str, Any]:
    """Keys a router may see without our knowing: every channel when some node's writes are
    not determined, or only the input can write it and the run's input is not known (no
    input schema); every key a router tests when the state's keys are not all known."""
    written = {k for n in model.nodes.values() for k in n.writes}
    view: dict[str, Any] = {k: UNKNOWN for k in model.channels if any_open(model) or (
        run.open_input and k not in written)}
    if not model.complete:
        view.update({k: UNKNOWN for routers in model.routers.values() for r in routers
                     for out in r.outs for k, _want in out.get("guards") or []})
    return view
