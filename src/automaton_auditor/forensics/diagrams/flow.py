"""Diagram flow: parse diagram source text into edges and read the flow's shape.

Reports often carry their architecture diagram as text: Mermaid or Graphviz (DOT) source in a
code block, or an arrow chain such as ``START -> a -> [b || c] -> d``. This module turns such
text into a list of directed edges, then reads the same shape facts as for code: fan-out,
fan-in, linear chains, and whether the Digital Courtroom's parallel split is drawn
(detectives in parallel -> aggregation -> judges in parallel -> synthesis).

Everything here is pure string and graph work: deterministic, no I/O, never raises on odd
input (unparseable lines are skipped).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from automaton_auditor.state import RebuiltGraph

Edge = tuple[str, str]
_E = TypeVar("_E")


def connected_pieces(edges: Sequence[_E], ends: Callable[[_E], Edge]) -> list[list[_E]]:
    """Edges grouped into connected pieces, directions ignored, in order of first
    appearance; `ends` gives an edge's two node names."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = node = parent[parent[node]]  # path halving: long chains stay cheap
        return node

    for edge in edges:
        src, dst = ends(edge)
        parent[root(dst)] = root(src)
    pieces: dict[str, list[_E]] = {}
    for edge in edges:
        pieces.setdefault(root(ends(edge)[0]), []).append(edge)
    return list(pieces.values())
MAX_SOURCE_CHARS = 20_000  # a hostile PDF may carry megabytes of "code"; parse a bounded prefix


@dataclass
class ParsedFlow:
    """Edges parsed from diagram source, with node labels and which edges are conditional."""

    kind: str  # mermaid | dot | text_art | arrow
    diagram_type: str = "flowchart"  # flowchart | state | sequence
    edges: list[Edge] = field(default_factory=list)
    conditional: list[Edge] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    # nodes written as a group that runs in parallel ("Detectives(Parallel)"): one name
    parallel: list[str] = field(default_factory=list)

    def add(self, src: str, dst: str, conditional: bool = False) -> None:
        """Record one edge once (order of first appearance is kept: output is deterministic)."""
        src, dst = terminal(src.strip()), terminal(dst.strip())
        if not src or not dst or src == dst:
            return
        if (src, dst) not in self.edges:
            self.edges.append((src, dst))
        if conditional and (src, dst) not in self.conditional:
            self.conditional.append((src, dst))
        for name in (src, dst):
            if name not in self.labels:
                self.labels.append(name)


# --- Names -----------------------------------------------------------------------------------

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_TERMINALS = {"__start__": "START", "__end__": "END", "start": "START", "end": "END"}


def terminal(name: str) -> str:
    """``START``/``END`` for the usual spellings of a graph's entry and exit, else `name`."""
    return _TERMINALS.get(name.lower(), name)


def name_tokens(name: str) -> list[str]:
    """Lower-case words of a node name: camelCase, snake_case, spaces and a trailing "node"
    (or "agent") suffix all normalised, so ``EvidenceAggregatorNode`` ~ ``evidence_aggregator``."""
    words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+", _CAMEL.sub(" ", name)) if w]
    while len(words) > 1 and words[-1] in {"node", "agent"}:
        words.pop()
    return words


def name_key(name: str) -> str:
    """A canonical key for exact fuzzy matching of node names."""
    return "".join(name_tokens(name))


def match_score(a: str, b: str) -> float:
    """How well two node names match: 1.0 same key, 0.8 one's words within the other's,
    else the difflib ratio of the keys when it is at least 0.85, else 0."""
    ka, kb = name_key(a), name_key(b)
    if not ka or not kb:
        return 0.0
    if ka == kb:
        return 1.0
    ta, tb = set(name_tokens(a)), set(name_tokens(b))
    if ta and tb and (ta <= tb or tb <= ta) and min(len(ka), len(kb)) >= 4:
        return 0.8
    ratio = difflib.SequenceMatcher(None, ka, kb).ratio()
    return round(ratio, 3) if ratio >= 0.85 else 0.0


def match_names(diagram: Iterable[str], code: Iterable[str]) -> dict[str, str]:
    """Map each diagram node name to its best-matching code node name (score > 0), ties
    broken by name so the result is deterministic."""
    code_names = sorted(set(code))
    result: dict[str, str] = {}
    for name in sorted(set(diagram)):
        scored = [(match_score(name, c), c) for c in code_names]
        scored = [s for s in scored if s[0] > 0]
        if scored:
            result[name] = max(scored, key=lambda s: (s[0], [-ord(ch) for ch in s[1]]))[1]
    return result


# --- Roles in the Digital Courtroom ----------------------------------------------------------

_ROLE_TERMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("synthesis", ("chiefjustice", "chief", "justice", "synthes", "supremecourt", "verdict")),
    ("aggregator", ("aggregat", "collector", "evidencemerge", "merge", "sync", "join")),
    ("judge", ("prosecutor", "defense", "defence", "techlead", "judge")),
    ("detective", ("investigator", "detective", "analyst", "inspector", "repo", "doc",
                   "vision")),
)
# Routers and dispatchers name a role but are the fan-out point, not a member of the role.
_NOT_A_MEMBER = ("dispatch", "fanout", "router", "route", "handler", "error")


def role_of(name: str) -> str | None:
    """The courtroom role a node name suggests: detective, aggregator, judge, synthesis."""
    key = name_key(name)
    if not key or any(term in key for term in _NOT_A_MEMBER):
        return None
    for role, terms in _ROLE_TERMS:
        if any(term in key for term in terms):
            return role
    return None


# --- Shape of a flow -------------------------------------------------------------------------


def flow_graph(edges: Iterable[Edge], conditional: Iterable[Edge] = (),
               parallel: Iterable[str] = ()) -> RebuiltGraph:
    """The flow's shape as a `RebuiltGraph` (same fields as the code's): fan-out and fan-in
    count only unconditional edges, since a yes/no branch is a choice, not parallelism;
    an edge into (out of) a `parallel` group node is a fan-out (fan-in) by itself."""
    edge_list = list(dict.fromkeys(edges))
    cond = set(conditional)
    nodes = list(dict.fromkeys(n for e in edge_list for n in e))
    succ: dict[str, list[str]] = {}
    pred: dict[str, list[str]] = {}
    for src, dst in edge_list:
        if (src, dst) in cond:
            continue
        succ.setdefault(src, []).append(dst)
        pred.setdefault(dst, []).append(src)
    groups = set(parallel)
    fan_out = {n: sorted(set(t)) for n, t in sorted(succ.items())
               if len(set(t)) >= 2 or groups & set(t)}
    fan_in = {n: sorted(set(s)) for n, s in sorted(pred.items())
              if len(set(s)) >= 2 or groups & set(s)}
    return RebuiltGraph(builder="diagram", nodes=nodes, edges=edge_list,
                        conditional_sources=sorted({s for s, _ in cond}),
                        fan_out=fan_out, fan_in=fan_in, linear=not fan_out and not fan_in)


@dataclass(frozen=True)
class CourtroomPattern:
    """Which parts of the parallel courtroom split a flow shows, with the nodes involved."""

    parallel_detectives: list[str]
    aggregation: list[str]
    parallel_judges: list[str]
    synthesis: list[str]

    @property
    def complete(self) -> bool:
        """All four parts of the pattern are shown."""
        return all([self.parallel_detectives, self.aggregation, self.parallel_judges,
                    self.synthesis])


def _role_group(nodes: dict[str, list[str]], role: str, groups: set[str]) -> list[str]:
    """The first (sorted) fan point whose partners include >= 2 nodes of `role`, or a
    group of them running in parallel (`groups`), as ``[point, member, ...]``; else []."""
    for point in sorted(nodes):
        members = sorted(n for n in nodes[point] if role_of(n) == role)
        if len(members) >= 2 or groups & set(members):
            return [point, *members]
    return []


def courtroom_pattern(graph: RebuiltGraph, parallel: Iterable[str] = ()) -> CourtroomPattern:
    """Read the courtroom split from a flow: a node fanning out to >= 2 detectives (or to a
    `parallel` group of them), a node fanning them in (aggregation), the same for judges
    (fan-in = synthesis)."""
    groups = set(parallel)
    return CourtroomPattern(
        parallel_detectives=_role_group(graph.fan_out, "detective", groups),
        aggregation=_role_group(graph.fan_in, "detective", groups),
        parallel_judges=_role_group(graph.fan_out, "judge", groups),
        synthesis=_role_group(graph.fan_in, "judge", groups),
    )


def longest_chain(edges: Iterable[Edge], conditional: Iterable[Edge] = ()) -> list[str]:
    """The longest simple path over the unconditional edges, found by a bounded iterative
    search (used to quote a linear pipeline; adversarial graphs cannot blow it up)."""
    cond = set(conditional)
    succ: dict[str, list[str]] = {}
    nodes: list[str] = []
    for src, dst in edges:
        nodes.extend(n for n in (src, dst) if n not in nodes)
        if (src, dst) not in cond:
            succ.setdefault(src, []).append(dst)
    best: list[str] = []
    budget = 20_000
    stack: list[list[str]] = [[n] for n in reversed(nodes)]
    while stack and budget > 0:
        budget -= 1
        path = stack.pop()
        if len(path) > len(best):
            best = path
        stack.extend([*path, nxt] for nxt in reversed(succ.get(path[-1], []))
                     if nxt not in path)
    return best


def successors(edges: Iterable[Edge]) -> dict[str, set[str]]:
    """Each node and the nodes its edges lead to."""
    step: dict[str, set[str]] = {}
    for a, b in edges:
        step.setdefault(a, set()).add(b)
    return step


def has_cycle(edges: Iterable[Edge]) -> bool:
    """Whether some node can reach itself again (linear in the edges: a code graph may be
    large)."""
    step = successors(edges)
    state: dict[str, int] = {}  # node -> 1 on the current path, 2 done
    for root in sorted(step):
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(sorted(step[root])))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                return True
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(sorted(step.get(child, ())))))
    return False
