"""What the fan-out, fan-in, linear and parallel-group facts say when the wiring read is not
the whole graph.

- Names computed at run time (``add_node(dim["id"], ...)``, ``add_edge(cfg.src, ...)`` with
  nodes added): the wiring read is partial, and what it leaves out may branch or join, so no
  such fact denies a branch or a join ("Not established", a limitation).
- A builder given no node at all (no add_node or add_sequence: `topology.builds_nothing`):
  the wiring is not partial but invalid. Whatever its edges name (an object such as
  ``add_edge(chief_justice, error_node)`` with ``chief_justice = ChiefJustice()``, or a
  string), LangGraph rejects an edge to a node never added when the graph compiles, and
  calls to methods StateGraph does not have (``add_fan_out``) raise AttributeError. No node
  exists to fan out, join or run in parallel: those facts are plain "not found", quoting the
  wiring calls.
"""

from __future__ import annotations

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.topology import Topology, builds_nothing, partial_reason
from automaton_auditor.state import Finding

DENIALS = ("graph.fan_out", "graph.fan_in", "graph.linear", "graph.parallel_detectives",
           "graph.parallel_judges")


def op_loc(op: JSON) -> str:
    """``path:line`` of a recorded builder operation."""
    return f"{op['path']}:{op['line']}"


def no_graph_text(main: Topology) -> str:
    """Why the builder builds no graph, with the calls to methods it does not have (they
    also count among the graph's undefined names, `health`)."""
    missing = sorted((op for op in main.ops if op["op"] == "missing_method"), key=op_loc)
    calls = ", ".join(f"{op['method']} ({op_loc(op)})" for op in missing[:8])
    return (f"No graph can be built: the StateGraph at {main.builder.get('key', '.')} is "
            "given no node (no add_node call)"
            + (f", and its wiring calls methods StateGraph does not have: {calls}"
               if calls else "") + ".")


def qualify_denials(main: Topology, facts: list[Finding]) -> list[Finding]:
    """The denials among `facts` (a fan-out, a join, a linear flow or a parallel group not
    found) as the wiring allows: plain "not found" when the builder is given no node, "Not
    established" when names computed at run time leave it partial, unchanged otherwise."""
    if builds_nothing(main):
        return [_no_nodes(main, f) if f.facet in DENIALS else f for f in facts]
    why = partial_reason(main)
    if why is None:
        return facts
    return [f.model_copy(update={
        "rationale": f"Not established: {why}." + (
            "" if f.facet == "graph.linear" else f" In the wiring read: {f.rationale}"),
        "confidence": 0.5, "data": {**f.data, "limitation": why}})
        if f.facet in DENIALS and not f.found else f for f in facts]


def _no_nodes(main: Topology, fact: Finding) -> Finding:
    """A fan-out, join, linear-flow or parallel-group fact on a builder given no node: not
    found, since no node exists, with the wiring calls quoted and the edges to nodes never
    added named. What the edges alone would draw (a fan-out "in name only") is kept as
    `drawn`, credited nowhere."""
    ops = sorted((op for op in main.ops if op["op"] != "alias"), key=op_loc)
    edges = [op for op in ops if op["op"] in ("add_edge", "add_conditional_edges",
                                              "set_entry_point", "set_finish_point")]
    text = no_graph_text(main) + (
        f" Its edges ({', '.join(op_loc(op) for op in edges[:8])}) join nodes never added: "
        "LangGraph rejects them when the graph compiles." if edges else "")
    if fact.facet != "graph.linear":
        text += " No node exists, so none fans out, joins or runs in parallel."
    if fact.found:
        text += f" The edges alone would draw: {fact.rationale}"
    return fact.model_copy(update={
        "found": False, "rationale": text, "confidence": max(fact.confidence, 0.9),
        "data": {"drawn": fact.data} if fact.found else fact.data,
        "content": "\n".join(f"{op_loc(op)}: {op['snippet']}" for op in ops[:15]) or None})
