"""Which fan-out point of a graph reaches the detectives (or the judges), and where they join.

Members are matched by node name (`topology.DETECTIVE`, `topology.JUDGE`). A copy of a loop
over run-time data (`loop_items`) is named by the run-time item (``{rubric['dimensions'][#1]
['id']}``), which says nothing about what it is: such a copy is matched by what builds and
runs it instead, the factory call it is registered with (``make_detective(dim)``) and the
function it resolves to (``make_detective.detective_node``, `callgraph.CallGraph.built_node`).
A copy that neither its name nor those match is unknown: a fan-out to it can neither be
counted nor ruled out (`unknown_copies`).
"""

from __future__ import annotations

import re

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.topology import DETECTIVE, END, JUDGE, Topology, to_rebuilt
from automaton_auditor.state import RebuiltGraph

Group = tuple[str, list[str]]  # fan-out source, its members


def copy_roles(graph: CallGraph, topos: list[Topology]) -> dict[str, str]:
    """For each copy of a loop over run-time data: the factory it is built by and the
    function it runs, as the text a role pattern is matched against ("" when neither is
    known)."""
    out: dict[str, str] = {}
    for topo in topos:
        for name, info in sorted(topo.nodes.items()):
            if not info["op"].get("loop") or "{" not in name:
                continue
            made = (info["op"].get("wraps") or {}).get("call")
            key = graph.node_function(info)
            out[name] = " -> ".join(t for t in (f"{made}(...)" if made else "",
                                                 key[1] if key else "") if t)
    return out


def member(name: str, pattern: re.Pattern[str], roles: dict[str, str]) -> bool:
    """A node of the role `pattern` names: by its name, or (a loop copy) by its role text."""
    return bool(pattern.search(name) or pattern.search(roles.get(name, "")))


def parallel_group(g: RebuiltGraph, pattern: re.Pattern[str],
                   roles: dict[str, str]) -> Group | None:
    """The first fan-out point reaching two or more members (or its only target)."""
    for source, targets in g.fan_out.items():
        hits = [t for t in targets if member(t, pattern, roles)]
        if len(hits) >= 2 or (len(targets) == 1 and hits):
            return source, hits
    return None


def find_group(main: Topology, g: RebuiltGraph, others: list[Topology],
               pattern: re.Pattern[str], roles: dict[str, str]
               ) -> tuple[Topology, RebuiltGraph, Group] | None:
    """`parallel_group` in the main graph first; then in subgraphs (judges are often a
    compiled subgraph that the main graph adds as one node)."""
    for topo, graph in [(main, g), *((t, to_rebuilt(t)) for t in others if t.custom is None)]:
        group = parallel_group(graph, pattern, roles)
        if group:
            return topo, graph, group
    return None


def unknown_copies(g: RebuiltGraph, pattern: re.Pattern[str],
                   roles: dict[str, str]) -> Group | None:
    """A fan-out point that would reach two or more members if its loop copies of unknown
    role (no role pattern matches their name or role text) were members: whether it does
    is not established."""
    for source, targets in g.fan_out.items():
        unknown = [t for t in targets if t in roles and not any(
            member(t, p, roles) for p in (DETECTIVE, JUDGE))]
        hits = [t for t in targets if member(t, pattern, roles)]
        if unknown and len(unknown) + len(hits) >= 2:
            return source, unknown
    return None


def matched_by_role(members: list[str], pattern: re.Pattern[str],
                    roles: dict[str, str]) -> str:
    """How members named only by a run-time item were matched, as a sentence ("" if none)."""
    by_role = [m for m in members if not pattern.search(m)]
    if not by_role:
        return ""
    texts = sorted({roles[m] for m in by_role})
    return (f" {', '.join(by_role)} are copies of a loop over run-time data, matched by the "
            f"factory or function they run ({'; '.join(texts)}), not by name.")


def meeting_node(topo: Topology, members: list[str]) -> str | None:
    """The nearest node that every path out of every member passes through before END (a
    post-dominator of all of them), or None. Routers count with all their branches."""
    succ: dict[str, set[str]] = {}
    for src, dst in topo.edges:
        succ.setdefault(src, set()).add(dst)

    def reach(start: str, avoid: str | None) -> dict[str, int]:
        seen, todo = {start: 0}, [start]
        while todo:
            current = todo.pop(0)
            for nxt in sorted(succ.get(current, ())):
                if nxt != avoid and nxt not in seen:
                    seen[nxt] = seen[current] + 1
                    todo.append(nxt)
        return seen

    dist = [reach(m, None) for m in members]
    common = set.intersection(*(set(d) for d in dist)) - set(members) - {END} if dist else set()
    for node in sorted(common, key=lambda n: (max(d[n] for d in dist), n)):
        # passing through it: with it removed, no member reaches END or a dead end
        if all(not any(n == END or not succ.get(n) for n in reach(m, node)) for m in members):
            return node
    return None


def guarded_text(topo: Topology, members: list[str]) -> str:
    """Members added only under an ``if`` on something known at run time (a configuration
    flag): they are in the graph only when the test holds."""
    parts = []
    for name in members:
        op = topo.nodes.get(name, {}).get("op") or {}
        for when in op.get("when") or []:
            parts.append(f"{name} is added only when `{when['test']}` holds "
                         f"({op['path']}:{when['line']})")
    return f" {'; '.join(parts)}." if parts else ""
