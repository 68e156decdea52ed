"""Which detectives a sentence says run in parallel, read against the rebuilt graph's order:
a detective the sentence names that the detective fan-out leaves out, and whose node runs
strictly before it, does not run in parallel with the others (`crosscheck` makes this the
verdict of the report's parallel-detectives claim)."""

from __future__ import annotations

import re

from automaton_auditor.state import RebuiltGraph

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
_ORDERED = re.compile(r"\b(?:then|after\w*|before|first|once|follow\w*|sequential\w*|"
                      r"preced\w*|next|waits?|until)\b", re.IGNORECASE)


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
    """Why a sentence saying the detectives run in parallel is wrong about one it names: the
    detective fan-out leaves that detective out and its node runs before the fan-out's
    source (the graph runs it alone first); None when no detective it names is."""
    layer = next(((s, t) for s, t in sorted(graph.fan_out.items())
                  if sum(bool(DETECTIVE_NODE.search(n)) for n in t) >= 2), None)
    if layer is None or _ORDERED.search(sentence):
        return None
    source, targets = layer
    # a target that another target leads to (the join the source also feeds) is no detective
    # running beside them; any other target of no known kind may be the one the sentence names
    later = {n for t in targets for n in _reach(graph, t, True)}
    if not all(any(node.search(t) for _, node in DETECTIVE_KINDS.values())
               for t in targets if t not in later):
        return None
    # only what runs strictly before: a node on a loop through the fan-out also runs after it;
    # the fan-out's own source runs before its targets too (a detective that fans out to the
    # others once it is done)
    before = (_reach(graph, source, False) - _reach(graph, source, True)) | {source}
    for kind, (said, node) in DETECTIVE_KINDS.items():
        if not said.search(sentence) or any(node.search(t) for t in targets):
            continue
        first = sorted(n for n in before if n in graph.nodes and node.search(n))
        if first:
            order = ("it is the fan-out's source" if first[0] == source
                     else f"{first[0]} precedes {source}")
            return (f"The sentence names the {kind} detective, but '{first[0]}' runs before "
                    f"the detective fan-out ('{source}' fans out to {', '.join(targets)}; "
                    f"{order}), so it does not run in parallel with them.")
    return None
