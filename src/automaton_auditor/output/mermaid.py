"""Pictures for the audit report: Mermaid flowcharts of the graph rebuilt from the code and of
the flow read from the report's diagram, and a Unicode score bar.

GitHub renders Mermaid blocks; node ids are the node names themselves (made safe), so the
block still reads as plain text.

The code graph can carry marks from the detectives' facts, read from any ``graph.*``
evidence's `data` (the facts name nodes and edges; a fact that is not found marks nothing):

- ``unreachable_nodes``: names of nodes that never run (no path from START, or none to END);
- ``dead_routes``: ``[source, target]`` pairs of routes that can never be taken;
- ``double_joins``: names of join nodes that run more than once per run (a list, or a
  mapping of name to how many times).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from automaton_auditor.state import DiagramFacts, Evidence

_RESERVED = {"end", "graph", "subgraph", "flowchart", "style", "class", "classDef", "click",
             "linkStyle", "direction", "default", "call", "href"}
_TERMINALS = {"__start__": "START", "__end__": "END", "start": "START", "end": "END"}
STYLES = {
    "unreachable": "fill:#f2f2f2,stroke:#b00020,stroke-dasharray:5 3,color:#666",
    "twice": "fill:#fff4e0,stroke:#e07000,stroke-width:3px",
}
DEAD_ROUTE_STYLE = "stroke:#b00020,stroke-dasharray:5 3"
FULL, EMPTY = "█", "░"


@dataclass
class Flow:
    """Nodes and edges to draw, with conditional edges and the marks to show."""

    edges: list[tuple[str, str]]
    nodes: list[str] = field(default_factory=list)
    conditional: set[tuple[str, str]] = field(default_factory=set)
    unreachable: set[str] = field(default_factory=set)
    dead: set[tuple[str, str]] = field(default_factory=set)
    twice: dict[str, int] = field(default_factory=dict)


def _names(values: object) -> list[str]:
    return [str(v) for v in values] if isinstance(values, list | tuple | set) else []


def _pairs(values: object) -> set[tuple[str, str]]:
    pairs = set()
    for item in values if isinstance(values, list | tuple) else []:
        if isinstance(item, list | tuple) and len(item) == 2:
            pairs.add((str(item[0]), str(item[1])))
    return pairs


def code_flow(evidence: Iterable[Evidence]) -> Flow | None:
    """The code graph from the ``graph.topology`` fact, marked with the failure facts that
    name its nodes and edges; None when no graph was rebuilt."""
    items = [e for e in evidence if e.facet.startswith("graph.")]
    topology = next((e for e in items if e.facet == "graph.topology" and e.found), None)
    if topology is None:
        return None
    data = topology.data
    conditional = {(str(s), str(t)) for s, targets in (data.get("conditional") or {}).items()
                   for t in _names(targets)}
    flow = Flow(edges=sorted(_pairs(data.get("edges"))), nodes=_names(data.get("nodes")),
                conditional=conditional)
    for item in items:
        if not item.found:
            continue
        flow.unreachable.update(_names(item.data.get("unreachable_nodes")))
        flow.dead.update(_pairs(item.data.get("dead_routes")))
        twice = item.data.get("double_joins")
        if isinstance(twice, dict):
            flow.twice.update({str(k): int(v) for k, v in twice.items()})
        else:
            flow.twice.update({name: 2 for name in _names(twice) if name not in flow.twice})
    return flow


def diagram_flow(diagram: DiagramFacts) -> Flow:
    """The flow read from one of the report's diagrams."""
    conditional = _pairs(diagram.data.get("conditional_edges"))
    return Flow(edges=[(str(a), str(b)) for a, b in diagram.edges], conditional=conditional)


class _Ids:
    """Readable, unique Mermaid ids for node names."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        if name not in self.ids:
            base = _TERMINALS.get(name.lower()) or re.sub(r"\W+", "_", name).strip("_") or "node"
            # Mermaid's keywords are lower case ("End" or "END" is a fine id).
            if base[0].isdigit() or base in _RESERVED:
                base = f"n_{base}"
            candidate, n = base, 2
            while candidate in self.ids.values():
                candidate, n = f"{base}_{n}", n + 1
            self.ids[name] = candidate
        return self.ids[name]


def _label(name: str) -> str:
    return name.replace('"', "#quot;")


def _node_line(ident: str, name: str, flow: Flow) -> str:
    if name.lower() in _TERMINALS:
        return f"    {ident}([{_TERMINALS[name.lower()]}])"
    label = _label(name)
    if name in flow.twice:
        label += f" ×{flow.twice[name]}"
    if name in flow.unreachable:
        label += " (never runs)"
    shape = f'{{"{label}"}}' if name.endswith("?") else f'["{label}"]'
    return f"    {ident}{shape}"


def mermaid_flowchart(flow: Flow, direction: str = "TD") -> list[str]:
    """A fenced Mermaid flowchart: conditional edges dashed, dead routes red and labelled,
    unreachable nodes greyed, joins that run more than once highlighted."""
    ids = _Ids()
    names = list(dict.fromkeys([*flow.nodes, *(n for edge in flow.edges for n in edge)]))
    # START first, END last: the picture reads top to bottom like the run.
    names.sort(key=lambda n: {"START": 0, "END": 2}.get(_TERMINALS.get(n.lower(), ""), 1))
    lines = ["```mermaid", f"flowchart {direction}"]
    lines += [_node_line(ids(name), name, flow) for name in names]
    dead_indices: list[int] = []
    for index, (source, target) in enumerate(flow.edges):
        if (source, target) in flow.dead:
            arrow = "-. never taken .->"
            dead_indices.append(index)
        elif (source, target) in flow.conditional:
            arrow = "-.->"
        else:
            arrow = "-->"
        lines.append(f"    {ids(source)} {arrow} {ids(target)}")
    marked = {"unreachable": sorted(n for n in flow.unreachable if n in ids.ids),
              "twice": sorted(n for n in flow.twice if n in ids.ids)}
    for style, members in marked.items():
        if members:
            lines.append(f"    classDef {style} {STYLES[style]}")
            lines.append(f"    class {','.join(ids(n) for n in members)} {style}")
    if dead_indices:
        lines.append(f"    linkStyle {','.join(map(str, dead_indices))} {DEAD_ROUTE_STYLE}")
    return [*lines, "```"]


def legend(flow: Flow) -> str:
    """One line saying what the picture marks (empty when it marks nothing)."""
    parts = []
    if flow.conditional:
        parts.append("dashed: conditional route")
    if flow.dead:
        routes = ", ".join(f"{s} → {t}" for s, t in sorted(flow.dead))
        parts.append(f"never taken: {routes}")
    if flow.unreachable:
        parts.append(f"never runs: {', '.join(sorted(flow.unreachable))}")
    if flow.twice:
        parts.append("runs more than once per run: "
                     + ", ".join(f"{n} ×{k}" for n, k in sorted(flow.twice.items())))
    return "; ".join(parts)


def score_bar(score: int | float, out_of: int = 5) -> str:
    """A Unicode bar such as ``███░░`` (plain text, no image)."""
    filled = max(0, min(out_of, round(score)))
    return FULL * filled + EMPTY * (out_of - filled)
