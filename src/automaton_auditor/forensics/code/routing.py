"""Which conditional edges change where the flow goes.

LangGraph runs a node's static successors whatever its router returns, so a router beside a
static edge from the same node adds branches and stops nothing; a router all of whose
outcomes lead to one node, or whose only route some run may take leads to one node (the
others can never be taken: `dead_routes`), or that always returns the same list, chooses
nothing. The same test holds for every router. Only the
other routers route the flow: what the rubric's "conditional edges that handle error
states" needs, and what a report's claim that the graph routes with conditional edges is
confirmed by (`feature_claims`).
"""

from __future__ import annotations

from automaton_auditor.forensics.code.topology import Topology


def taken(topo: Topology, source: str) -> list[str]:
    """The destinations of `source`'s routers that some run may take (`dead_routes`)."""
    return [t for t in topo.conditional[source]["targets"] if (source, t) not in topo.dead]


def one_way(topo: Topology, source: str) -> bool:
    """Whether every outcome of `source`'s routers, all resolved, that some run may take
    leads to the same node."""
    found = topo.conditional[source]
    return len(taken(topo, source)) == 1 and not found["send"] and not any(
        router["op"] in topo.undetermined for router in found.get("routers", [found]))


def static_sources(topo: Topology) -> set[str]:
    """Nodes with a static edge out."""
    return {src for (src, _dst), info in topo.edges.items() if info["kind"] == "static"}


def routing_sources(topo: Topology) -> list[str]:
    """The nodes whose routers can change where the flow goes: no static edge beside them,
    more than one place some run may go to, and a choice among them (a router that always
    returns the same list, ``lambda _: ["a", "b"]``, fans out; it routes nothing)."""
    statics = static_sources(topo)
    return sorted(s for s, info in topo.conditional.items() if s not in statics
                  and not one_way(topo, s) and info.get("chooses"))


def conditional_text(topo: Topology, described: str, beside: list[str], routes: bool) -> str:
    """What the conditional edges do (`described`: each router's destinations): route the
    flow, or why none does (each reason the graph has: routers beside static edges
    (`beside`), routers with one destination or one that is ever taken, fixed lists)."""
    if not described:
        return "No add_conditional_edges call on the main graph."
    if routes:
        return f"Conditional edges: {described}."
    reasons = [f"{', '.join(beside)} also ha{'s' if len(beside) == 1 else 've'} "
               "unconditional edges, and LangGraph runs those successors whatever the router "
               "returns"] if beside else []
    single = [s for s in sorted(topo.conditional) if s not in beside and one_way(topo, s)]
    one = [s for s in single if len(topo.conditional[s]["targets"]) == 1]
    if one:
        reasons.append(f"every outcome of the router at {', '.join(one)} leads to one "
                       f"node ({', '.join(sorted({taken(topo, s)[0] for s in one}))}): it "
                       "chooses nothing")
    reasons += [f"the router at {s} never takes "
                f"{', '.join(t for t in topo.conditional[s]['targets'] if (s, t) in topo.dead)}"
                f" (a route that can never be taken): it always goes to {taken(topo, s)[0]}"
                for s in single if s not in one]
    if not reasons:  # routers that always return the same list of nodes
        reasons.append("each router always returns the same nodes, run at once (a fan-out): "
                       "it chooses nothing")
    return (f"Conditional edges: {described}; but " + "; and ".join(reasons)
            + ": no route stops or redirects the flow.")
