"""Pictures for the audit report: Mermaid flowcharts of the graph rebuilt from the code and of
the flow read from the report's diagram, and a Unicode score bar.

GitHub renders Mermaid blocks; node ids are the node names themselves (made safe), so the
block still reads as plain text.

The code graph carries marks from the execution facts (forensics/code/runtime.py), read
defensively from any found ``graph.*`` failure fact's `data` (a key that is missing or of
another shape marks nothing):

- ``graph.unreachable_nodes``: ``unreachable`` (no path from START: never runs) and
  ``no_end`` (no path to END);
- ``graph.dead_routes``: ``edges``, ``[source, target]`` routes that can never be taken;
- ``graph.join_repeats``: ``joins``, join name to ``{"runs": n, "late": [...]}`` (or to n);
- ``graph.state.dropped_keys``: ``nodes``, node name to the keys LangGraph drops from its return.

The older spellings ``unreachable_nodes``, ``dead_routes`` and ``double_joins`` (a list, or a
mapping of name to runs) are read from any ``graph.*`` fact too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from automaton_auditor.state import DiagramFacts, Evidence
from automaton_auditor.text import clip, printable

_RESERVED = {"end", "graph", "subgraph", "flowchart", "style", "class", "classDef", "click",
             "linkStyle", "direction", "default", "call", "href"}
_TERMINALS = {"__start__": "START", "__end__": "END", "start": "START", "end": "END"}
STYLES = {
    "unreachable": "fill:#f2f2f2,stroke:#b00020,stroke-dasharray:5 3,color:#666",
    "stuck": "stroke:#b00020,stroke-dasharray:5 3",
    "twice": "fill:#fff4e0,stroke:#e07000,stroke-width:3px",
    "drops": "stroke:#b00020,stroke-width:3px",
}
DEAD_ROUTE_STYLE = "stroke:#b00020,stroke-dasharray:5 3"
FULL, EMPTY = "█", "░"
NAME_LIMIT = 60


@dataclass
class Flow:
    """Nodes and edges to draw, with conditional edges and the marks to show."""

    edges: list[tuple[str, str]]
    nodes: list[str] = field(default_factory=list)
    conditional: set[tuple[str, str]] = field(default_factory=set)
    unreachable: set[str] = field(default_factory=set)
    no_end: set[str] = field(default_factory=set)
    dead: set[tuple[str, str]] = field(default_factory=set)
    twice: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, list[str]] = field(default_factory=dict)


def _names(values: object) -> list[str]:
    return [str(v) for v in values] if isinstance(values, list | tuple | set) else []


def _pairs(values: object) -> set[tuple[str, str]]:
    pairs = set()
    for item in values if isinstance(values, list | tuple) else []:
        if isinstance(item, list | tuple) and len(item) == 2:
            pairs.add((str(item[0]), str(item[1])))
    return pairs


def _runs(value: object) -> int:
    """How many times a join runs: a count, or a mapping with one (at least twice: the
    fact says it repeats)."""
    if isinstance(value, dict):
        value = value.get("runs", value.get("times"))
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else 2


def _joins(value: object) -> dict[str, int]:
    if isinstance(value, dict):
        return {str(name): _runs(v) for name, v in value.items()}
    return {name: 2 for name in _names(value)}


def _mark(flow: Flow, item: Evidence) -> None:
    data = item.data
    flow.unreachable.update(_names(data.get("unreachable")), _names(data.get("unreachable_nodes")))
    flow.no_end.update(_names(data.get("no_end")))
    flow.dead.update(_pairs(data.get("dead_routes")))
    if "dead_route" in item.facet:
        flow.dead.update(_pairs(data.get("edges")))
    for key in ("joins", "double_joins"):
        for name, runs in _joins(data.get(key)).items():
            flow.twice[name] = max(runs, flow.twice.get(name, 0))
    # the facet moved from graph.dropped_keys to graph.state.dropped_keys: read either
    dropped = data.get("nodes") if item.facet.endswith(".dropped_keys") else None
    if isinstance(dropped, dict):
        for name, keys in dropped.items():
            flow.dropped[str(name)] = sorted({*flow.dropped.get(str(name), []), *_names(keys)})


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
        if item.found and item.pattern != "success":
            _mark(flow, item)
    # A route the facts name but the topology did not list is still drawn (as never taken).
    flow.edges += sorted(flow.dead - set(flow.edges))
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
            base = (_TERMINALS.get(name.lower())
                    or re.sub(r"\W+", "_", name).strip("_")[:NAME_LIMIT] or "node")
            # Mermaid's keywords are lower case ("End" or "END" is a fine id).
            if base[0].isdigit() or base in _RESERVED:
                base = f"n_{base}"
            candidate, n = base, 2
            while candidate in self.ids.values():
                candidate, n = f"{base}_{n}", n + 1
            self.ids[name] = candidate
        return self.ids[name]


def plain_name(name: str) -> str:
    """A node name from the audited code or report as one short line without backticks or
    pipes nor control characters: a hostile name cannot close the code fence, break a table
    or drive a terminal."""
    return clip(printable(name, one_line=True).replace("`", "'").replace("|", "/"), NAME_LIMIT)


def _label(name: str) -> str:
    return plain_name(name).replace('"', "#quot;")


def _node_line(ident: str, name: str, flow: Flow) -> str:
    if name.lower() in _TERMINALS:
        return f"    {ident}([{_TERMINALS[name.lower()]}])"
    label = _label(name)
    if name in flow.twice:
        label += f" ×{flow.twice[name]}"
    if name in flow.unreachable:
        label += " (never runs)"
    elif name in flow.no_end:
        label += " (never reaches END)"
    if name in flow.dropped:
        label += f" (drops {', '.join(map(_label, flow.dropped[name]))})"
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
    marked = {"unreachable": flow.unreachable, "stuck": flow.no_end - flow.unreachable,
              "twice": set(flow.twice), "drops": set(flow.dropped)}
    for style, marks in marked.items():
        # a mark on a node the picture does not hold would make Mermaid draw a new node
        if members := sorted(n for n in marks if n in ids.ids):
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
        routes = ", ".join(f"{plain_name(s)} → {plain_name(t)}" for s, t in sorted(flow.dead))
        parts.append(f"never taken: {routes}")
    if flow.unreachable:
        parts.append(f"never runs: {', '.join(map(plain_name, sorted(flow.unreachable)))}")
    if stuck := flow.no_end - flow.unreachable:
        parts.append(f"never reaches END: {', '.join(map(plain_name, sorted(stuck)))}")
    if flow.dropped:
        parts.append("returns keys LangGraph drops: " + ", ".join(
            f"{plain_name(n)} ({', '.join(map(plain_name, keys))})"
            for n, keys in sorted(flow.dropped.items())))
    if flow.twice:
        parts.append("runs more than once per run: "
                     + ", ".join(f"{plain_name(n)} ×{k}" for n, k in sorted(flow.twice.items())))
    return "; ".join(parts)


def score_bar(score: int | float, out_of: int = 5) -> str:
    """A Unicode bar such as ``███░░`` (plain text, no image)."""
    filled = max(0, min(out_of, round(score)))
    return FULL * filled + EMPTY * (out_of - filled)
