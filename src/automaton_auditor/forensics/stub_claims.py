"""A report that says a graph node does its work, read against the stub the graph runs there.

The inverse of a wired node given a status of not started (`contradictions.
not_started_but_wired`): the report describes a node as working now ("The VisionInspector ...;
it classifies diagrams", `claims.NODE_WORKS`), and the function the graph runs for that node
does nothing (`RebuiltGraph.stub_nodes`: it only passes, logs or returns its input, or returns
a fixed "not implemented" placeholder). Only a clause that states the work as done counts: a
clause that hedges or plans it ("will classify", "can classify", "does not yet map"), a
sentence or section that says the node is a stub or planned, or a sentence under a plan's
lead-in ("The Forward Plan:") describes the design, not the code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from automaton_auditor.forensics.diagrams.flow import match_score
from automaton_auditor.forensics.pdf.claims import (
    DISABLED_NODE,
    NODE_ADMITTED,
    NODE_WORKS,
    NOT_STARTED,
)
from automaton_auditor.forensics.usage import Misquote
from automaton_auditor.state import FeatureClaim, RebuiltGraph

# Words that make the clause a plan, a possibility or a denial, not a statement of work done.
_HEDGED = re.compile(r"\b(?:not|never|no|cannot|will|would|could|should|may|might|can|shall|"
                     r"plan\w*|future|later|yet|once|when|if|unless|eventually|intend\w*|"
                     r"expected|supposed|meant|todo|designed|aims?)\b|n't\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.;:()\u2014]|\b(?:but|while|whereas|although|though)\b",
                         re.IGNORECASE)
# A lead-in of plans ("The Forward Plan:", "Future Work"), unless it says what is current
# ("Current Gaps:" under "Gap Analysis and Forward Plan").
_PLANNED_LEAD = re.compile(r"\b(?:forward|future|next|roadmap|plan\w*|todo|remaining|"
                           r"proposed|will|milestones?|phases?)\b", re.IGNORECASE)
_CURRENT_LEAD = re.compile(r"\b(?:current\w*|now|today|status|as\s+built|implemented)\b",
                           re.IGNORECASE)


def admitted_nodes(claims: Iterable[FeatureClaim]) -> set[str]:
    """Names the report calls a stub, a placeholder, planned, not started or switched off
    anywhere (`claims.NODE_ADMITTED`, `NOT_STARTED`, `DISABLED_NODE`)."""
    patterns = {"node_admitted": NODE_ADMITTED, "node_not_started": NOT_STARTED,
                "node_disabled": DISABLED_NODE}
    names: set[str] = set()
    for claim in claims:
        pattern = patterns.get(claim.feature)
        for match in pattern.finditer(claim.sentence) if pattern else ():
            names |= {n for n in (match.groupdict().get("name"),
                                  match.groupdict().get("subject")) if n}
    return names


def stub_but_described(claim: FeatureClaim, graph: RebuiltGraph | None, admitted: set[str]
                       ) -> list[Misquote]:
    """What the sentence says a stub node of `graph` does now, with the node's wiring and the
    lines that show it does nothing; none when the report calls that node a stand-in
    anywhere (`admitted`), the sentence or its clause hedges the work, or the sentence sits
    under a plan's lead-in."""
    if graph is None or not graph.stub_nodes or NODE_ADMITTED.search(claim.sentence) or (
            _PLANNED_LEAD.search(claim.lead) and not _CURRENT_LEAD.search(claim.lead)):
        return []
    found: dict[str, Misquote] = {}
    for match in NODE_WORKS.finditer(claim.sentence):
        name = match["name"] or match["subject"]
        verb = "verb" if match["name"] else "verb2"
        # the clause that states the work: from its start (before the name, or "it") to
        # its end after the verb
        before = claim.sentence[:match.start("name") if match["name"] else match.start(verb)]
        work = _CLAUSE_END.split(claim.sentence[match.start(verb):], maxsplit=1)[0]
        if _HEDGED.search(f"{_CLAUSE_END.split(before)[-1]} {work}") \
                or any(match_score(name, a) >= 0.8 for a in admitted):
            continue
        said = f"{name} {' '.join(work.split()[:8])}"
        for node, lines in sorted(graph.stub_nodes.items()):
            into = [f"{a} -> {b}" for a, b in graph.edges if b == node]
            if into and match_score(name, node) >= 0.8 and node not in found:
                found[node] = Misquote(
                    said, f"The report says {said!r}; the function the graph runs as its "
                    f"{node} node does nothing (it only passes, logs, returns its input or a "
                    "fixed placeholder).",
                    [f"{graph.location}: {node} wired: {', '.join(into[:4])}", *lines])
    return [found[node] for node in sorted(found)]
