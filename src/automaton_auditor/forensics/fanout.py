"""Which detectives a sentence says run in parallel, read against the rebuilt graph's order:
a detective the sentence names that the detective fan-out leaves out, and whose node runs
strictly before it, does not run in parallel with the others (`crosscheck` makes this the
verdict of the report's parallel-detectives claim). Routes the code facts prove are never
taken (`graph.dead_routes`) are read too: a detective reached only through them never runs."""

from __future__ import annotations

import re
from collections.abc import Sequence

from automaton_auditor.state import Finding, RebuiltGraph

DETECTIVE_NODE = re.compile(r"detective|investigat|analy[sz]|inspect|repo|doc|vision|pdf",
                            re.IGNORECASE)
# What a sentence calls each detective ("AST" is the repository detective's tool), and how
# its node is named.
DETECTIVE_KINDS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "repository": (re.compile(r"\brepo\w*|\bAST\b|\bgit\b|\bcode\s+(?:investigat|detectiv|"
                              r"analy)\w*", re.IGNORECASE),
                   re.compile(r"(?i:repo|git|code)|(?<![a-z])(?:ast|AST)(?![a-z])")),
    "document": (re.compile(r"\bdoc\w*|\bpdf\b", re.IGNORECASE),
                 re.compile(r"doc|pdf", re.IGNORECASE)),
    "vision": (re.compile(r"\bvision\w*|\bdiagrams?\b|\bimages?\b", re.IGNORECASE),
               re.compile(r"vision|image|diagram", re.IGNORECASE)),
}
# A sentence that orders the detectives claims no full fan-out.
# ("following" alone reads as an adjective: "three investigators following strict protocols")
_ORDERED = re.compile(r"\b(?:then|after\w*|before|first|once|follow(?:s|ed)?|sequential\w*|"
                      r"preced\w*|next|waits?|until)\b", re.IGNORECASE)
# How many detectives a sentence says run in parallel ("three parallel investigators").
_COUNT = re.compile(r"\b(two|three|four|[234])\s+(?:[\w-]+\s+){0,2}?(?:detectives?|"
                    r"investigators?|agents?|analy[sz]ers?)\b", re.IGNORECASE)
_NUMBERS = {"two": 2, "three": 3, "four": 4, "2": 2, "3": 3, "4": 4}


def _reach(graph: RebuiltGraph, node: str, forward: bool) -> set[str]:
    """Every node reached from `node` (forward) or from which it is reached (backward)."""
    seen: set[str] = set()
    frontier = [node]
    while frontier:
        current = frontier.pop()
        for source, target in graph.edges:
            near, far = (source, target) if forward else (target, source)
            if near == current and far not in seen:
                seen.add(far)
                frontier.append(far)
    return seen


def detectives_run_first(sentence: str, graph: RebuiltGraph) -> str | None:
    """Why a sentence saying the detectives run in parallel is wrong about one it names, or
    about how many it counts ("three parallel investigators"): the detective fan-out leaves
    that detective out (holds fewer than the count) and a detective's node runs before the
    fan-out's source (the graph runs it alone first); None when no such detective is."""
    layer = next(((s, t) for s, t in sorted(graph.fan_out.items())
                  if sum(bool(DETECTIVE_NODE.search(n)) for n in t) >= 2), None)
    if layer is None or _ORDERED.search(sentence):
        return None
    source, targets = layer
    # a target that another target leads to (the join the source also feeds) is no detective
    # running beside them; any other target of no known kind may be the one the sentence names
    later = {n for t in targets for n in _reach(graph, t, True)}
    beside = [t for t in targets if t not in later]
    if not all(any(node.search(t) for _, node in DETECTIVE_KINDS.values()) for t in beside):
        return None
    # only what runs strictly before: a node on a loop through the fan-out also runs after it;
    # the fan-out's own source runs before its targets too (a detective that fans out to the
    # others once it is done)
    before = (_reach(graph, source, False) - _reach(graph, source, True)) | {source}
    layout = f"'{source}' fans out to {', '.join(targets)}"
    for kind, (said, node) in DETECTIVE_KINDS.items():
        if not said.search(sentence) or any(node.search(t) for t in targets):
            continue
        first = sorted(n for n in before if n in graph.nodes and node.search(n))
        if first:
            return (f"The sentence names the {kind} detective, but '{first[0]}' runs before "
                    f"the detective fan-out ({layout}; {_order(first[0], source)}), so it "
                    "does not run in parallel with them.")
    count = _COUNT.search(sentence)
    if count and _NUMBERS[count.group(1).lower()] > len(beside):
        first = sorted(n for n in before if n in graph.nodes and DETECTIVE_NODE.search(n)
                       and any(node.search(n) for _, node in DETECTIVE_KINDS.values()))
        if first:
            return (f"The sentence says \"{count.group(0)}\" run in parallel, but the detective "
                    f"fan-out runs {len(beside)} ({', '.join(beside)}; {layout}) and "
                    f"'{first[0]}' runs before it ({_order(first[0], source)}), so not all "
                    "of them run in parallel.")
    return None


def _order(first: str, source: str) -> str:
    return "it is the fan-out's source" if first == source else f"{first} precedes {source}"


def _never_run(code: Sequence[Finding]) -> tuple[Finding, set[str]] | None:
    """The dead-route fact and the nodes that never run, when the code facts hold both."""
    dead, never = (next((f for f in code if f.facet == facet and f.found
                         and f.confidence >= 0.8), None)
                   for facet in ("graph.dead_routes", "graph.unreachable_nodes"))
    if dead is None or never is None:
        return None
    return dead, set(never.data.get("unreachable") or ())


def idle_joins(graph: RebuiltGraph, code: Sequence[Finding], side: re.Pattern[str]
               ) -> list[str]:
    """Joins the graph wires but that gather no parallel branches: each node that two or more
    nodes of one side (`side`: their names) lead to, all but one of which never run (reached
    only through routes never taken), as "join (from a, b, c; b, c never run)"."""
    facts = _never_run(code)
    if facts is None:
        return []
    idle = facts[1]
    preds: dict[str, set[str]] = {}
    for source, target in graph.edges:
        if side.search(source):
            preds.setdefault(target, set()).add(source)
    return [f"{join} (from {', '.join(sorted(srcs))}; {', '.join(sorted(srcs & idle))} never "
            "run)" for join, srcs in sorted(preds.items())
            if len(srcs) >= 2 and join not in graph.fan_in and len(srcs - idle) <= 1
            and srcs & idle]


def detectives_never_run(graph: RebuiltGraph, code: Sequence[Finding]) -> str | None:
    """Why a claim that the detectives run in parallel is wrong when the code facts show
    at most one detective can run: the others are reached only through routes never taken
    (`graph.dead_routes`) and never run (`graph.unreachable_nodes`); the reason quotes the
    router's lines. None when no such fact is found."""
    facts = _never_run(code)
    if facts is None:
        return None
    dead, idle = facts
    cut = sorted({n for _s, t in dead.data.get("edges") or () for n in {t, *_reach(graph, t, True)}
                  if n in idle and DETECTIVE_NODE.search(n)})
    alive = sorted(n for n in graph.nodes if DETECTIVE_NODE.search(n) and n not in idle)
    if not cut or len(alive) > 1:
        return None
    runs = f"only {alive[0]} of the detectives runs" if alive else "no detective runs"
    lines = "; ".join((dead.content or "").splitlines()[:3])
    return (f"The code facts show {runs}: {', '.join(cut)} never run, reached only through "
            f"routes never taken ({dead.rationale.rstrip('.')}; {lines}), so no two "
            "detectives run in parallel.")
