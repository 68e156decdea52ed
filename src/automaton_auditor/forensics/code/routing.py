"""Which conditional edges change where the flow goes.

LangGraph runs a node's static successors whatever its router returns, so a router beside a
static edge from the same node adds branches and stops nothing; a router all of whose
outcomes lead to one node, or that always returns the same list, chooses nothing. Only the
other routers route the flow: what the rubric's "conditional edges that handle error
states" needs, and what a report's claim that the graph routes with conditional edges is
confirmed by (`feature_claims`).
"""

from __future__ import annotations

from automaton_auditor.forensics.code.topology import Topology


def one_way(topo: Topology, source: str) -> bool:
    """Whether every outcome of `source`'s routers, all resolved, leads to the same node."""
    found = topo.conditional[source]
    return len(found["targets"]) == 1 and not found["send"] and not any(
        router["op"] in topo.undetermined for router in found.get("routers", [found]))


def static_sources(topo: Topology) -> set[str]:
    """Nodes with a static edge out."""
    return {src for (src, _dst), info in topo.edges.items() if info["kind"] == "static"}


def routing_sources(topo: Topology) -> list[str]:
    """The nodes whose routers can change where the flow goes: no static edge beside them,
    more than one place to go, and a choice among them (a router that always returns the
    same list, ``lambda _: ["a", "b"]``, fans out; it routes nothing)."""
    statics = static_sources(topo)
    return sorted(s for s, info in topo.conditional.items() if s not in statics
                  and not one_way(topo, s) and info.get("chooses"))
