"""``graph.endless_loop``: a route a router takes that comes back to the router's node through
plain edges, where nothing on the way can change the router's choice: once taken, it is taken
again on every pass, and LangGraph stops the run at its recursion limit (GraphRecursionError).

A cycle counts only when the code makes it plain (`inert`):

- the router reads only its state argument (no call beyond reading ones and logging), and the
  route back from its target is a chain of plain edges (one each, no router, no ``Command``);
- every node on the loop resolves to a function of the repository, with no decorator, and
  returns dicts or the state object it was given (``return state``: every key keeps its
  value unless the node stores into it; a key with a reducer gets it added again), not a
  copy of the state or a helper's answer;
- either no node on the loop writes a key the router reads, nor stores into the state's value
  of it (then the router sees the same state), or the ``return`` to the loop sits under a test
  that holds when no item of a key has a field set (``found_items == 0``), every ``return``
  before it goes the same way, and the nodes on the loop add to that key only items with the
  field a false constant (``Evidence(..., found=False)``) under a known reducer.

An exit on a retry counter the loop increments, or a handler that may add an item with the
field set, is no endless loop.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import FunctionNode, function_defs
from automaton_auditor.forensics.code.execution import Model, Router, state_param
from automaton_auditor.forensics.code.facts import quoted_finding
from automaton_auditor.forensics.code.inert import inert_writes, none_test, pure
from automaton_auditor.forensics.code.node_returns import node_target
from automaton_auditor.forensics.code.source import parse_file
from automaton_auditor.forensics.code.sure_keys import keeps
from automaton_auditor.forensics.code.topology import END
from automaton_auditor.state import Finding

MAX_CHAIN = 8


@dataclass
class Loop:
    """One endless route: the router's node, the loop's nodes and why it never ends."""

    source: str
    router: str
    chain: list[str]  # the router's target first, its node last
    why: str
    quotes: list[tuple[str, int]] = field(default_factory=list)


def _function(repo: Path, graph: CallGraph, key: Key) -> FunctionNode | None:
    tree = parse_file(str(repo / key[0]))
    start = graph.functions[key].get("line")
    return next((fn for qual, fn in function_defs(tree) if qual == key[1]
                 and fn.lineno == start), None) if tree is not None else None


def _chain(model: Model, start: str, source: str) -> list[str] | None:
    """The nodes from `start` back to `source` along single plain edges, or None."""
    chain, current = [start], start
    joined = {s for sources, _d, _o in model.topo.joins for s in sources}
    while current != source:
        outs = [(d, e) for (s, d), e in model.topo.edges.items() if s == current]
        node = model.nodes.get(current)
        if len(outs) != 1 or outs[0][1]["kind"] != "static" or current in joined or \
                current in model.topo.conditional or node is None or node.gotos or \
                len(chain) > MAX_CHAIN:
            return None
        current = outs[0][0]
        chain.append(current)
    return chain


def _loop_functions(model: Model, graph: CallGraph, repo: Path,
                    chain: list[str]) -> list[tuple[FunctionNode, str, str]] | None:
    """(function, state parameter, node name) of every node on the loop, or None."""
    out = []
    for name in dict.fromkeys(chain):
        node = model.nodes[name]
        key, decos = node_target(graph, model.topo.nodes[name])
        if key is None or decos or node.open:
            return None
        fn, state = _function(repo, graph, key), state_param(graph, key)
        if fn is None or state is None or (node.whole and not _hands_back(fn, state)):
            return None
        out.append((fn, state, name))
    return out


def _hands_back(fn: FunctionNode, state: str) -> bool:
    """Every ``return`` hands back the state object the node was given (``return state``):
    each key keeps its value unless the node stored into it (its writes)."""
    returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return)]
    return bool(returns) and all(isinstance(v, ast.Name) and v.id == state for v in returns)


def _top_returns(fn: FunctionNode) -> dict[int, ast.If | None] | None:
    """line -> the top-level ``if`` a router's return ends (None: a bare top-level return);
    None when some return sits deeper (its path to it is not read here)."""
    placed: dict[int, ast.If | None] = {}
    for stmt in fn.body:
        if isinstance(stmt, ast.Return):
            placed[stmt.lineno] = None
        elif isinstance(stmt, ast.If) and not stmt.orelse and \
                isinstance(stmt.body[-1], ast.Return):
            placed[stmt.body[-1].lineno] = stmt
    every = [n.lineno for n in ast.walk(fn) if isinstance(n, ast.Return)]
    return placed if set(every) <= set(placed) else None


def _targets(router: Router, out: dict[str, object]) -> set[str]:
    mapping = router.info.get("map") or {}
    found = out.get("targets") or []
    return {str(mapping.get(str(t), t) if mapping else t)
            for t in (found if isinstance(found, list) else [])}


def _why(model: Model, graph: CallGraph, repo: Path, router: Router, fn: FunctionNode,
         out: dict[str, object], loop: list[tuple[FunctionNode, str, str]]
         ) -> tuple[str, int] | None:
    """Why the loop never changes the router's choice, or None when that is not plain."""
    name = router.key[1] if router.key else "the router"
    reads = sorted(router.reads)
    # a node handing the state back writes each key again: a reducer adds it once more
    handed = any(model.nodes[n].whole for _f, _s, n in loop)
    if reads and all(k not in model.nodes[n].writes and inert_writes(f, s, k, "\0")
                     and not (handed and model.channels.get(k))
                     for f, s, n in loop for k in reads):
        return (f"the router {name} reads {', '.join(reads)}, which nothing on the loop "
                "changes", 0)
    placed = _top_returns(fn)
    state = state_param(graph, router.key) if router.key else None
    line = out.get("line")
    guard = placed.get(line) if placed is not None and isinstance(line, int) else None
    if guard is None or state is None:
        return None
    target = _targets(router, out)
    if any(_targets(router, o) != target for o in router.outs
           if isinstance(o.get("line"), int) and o["line"] < guard.lineno):
        return None  # an earlier return may leave the loop
    for key in reads:
        item = none_test(guard.test, fn, state, key)
        if item and keeps(model, key) and \
                all(inert_writes(f, s, key, item) for f, s, _n in loop):
            return (f"the router {name} takes it when no item of {key} has {item} set "
                    f"({router.key[0] if router.key else ''}:{guard.lineno}), and the nodes on "
                    f"the loop add to {key} only items with {item}=False or what the state "
                    "held", guard.lineno)
    return None


def endless_loops(model: Model, graph: CallGraph, repo: Path | None) -> list[Loop]:
    """The routes of the model's routers that, once taken, are taken forever."""
    loops: list[Loop] = []
    if repo is None:
        return loops
    for source, routers in sorted(model.routers.items()):
        for router in routers:
            fn = _function(repo, graph, router.key) if router.key else None
            # a list with names added under tests of their own (`outs` parts) is not followed
            if fn is None or not router.outs or not pure(fn) or any(
                    o.get("open") or o.get("sends") or o.get("part") for o in router.outs):
                continue
            for out in router.outs:
                targets = _targets(router, out)
                chain = _chain(model, next(iter(targets)), source) \
                    if len(targets) == 1 and END not in targets else None
                loop = _loop_functions(model, graph, repo, chain) if chain else None
                why = _why(model, graph, repo, router, fn, out, loop) \
                    if chain and loop else None
                if chain and why and router.key and not any(x.chain == chain for x in loops):
                    test = [(router.key[0], why[1])] if why[1] else []
                    loops.append(Loop(source, router.key[1], chain, why[0],
                                      test + _quotes(model, router, out, chain)))
    return loops


def _quotes(model: Model, router: Router, out: dict[str, object],
            chain: list[str]) -> list[tuple[str, int]]:
    """The router's return to the loop, the plain edges back, and what the loop's nodes
    write."""
    quotes = [(router.key[0], int(str(out["line"])))] if router.key else []
    for a, b in itertools.pairwise(chain):
        op = model.topo.edges[(a, b)]["op"]
        quotes.append((str(op["path"]), int(op["line"])))
    for name in dict.fromkeys(chain):
        node = model.nodes[name]
        quotes += [(node.write_paths.get(k) or (node.key[0] if node.key else ""), line)
                   for k, line in sorted(node.write_lines.items()) if k in router.reads]
    return list(dict.fromkeys(q for q in quotes if q[0]))


def endless_finding(loops: list[Loop], repo: Path | None, where: str) -> Finding:
    """``graph.endless_loop`` over the loops found (see the module docstring)."""
    text = "; ".join(f"the route {' -> '.join([*x.chain, x.chain[0]])} never ends ({x.why})"
                     for x in loops)
    return quoted_finding(
        "graph.endless_loop", "A conditional route loops forever once taken", bool(loops),
        [q for x in loops for q in x.quotes], repo,
        (text[0].upper() + text[1:] + "; LangGraph stops it at the recursion limit "
         "(GraphRecursionError)." if loops else
         "No route is seen to loop forever (only loops whose router cannot change its "
         "choice are counted)."), 0.8, where,
        loops=[[*x.chain, x.chain[0]] for x in loops], nodes=sorted({n for x in loops
                                                                   for n in x.chain}))


def reach_text(loops: list[Loop]) -> str:
    """What the reachability fact says when every node has a path to END: a node on an
    endless loop has one only on paper."""
    if not loops:
        return "Every node is reachable from START and reaches END."
    stuck = sorted({n for x in loops for n in x.chain})
    return (f"Every node is reachable from START and has a path to END, but once the route "
            f"into {', '.join(stuck)} is taken none of them reaches END (it loops forever).")
