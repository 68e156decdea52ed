"""The report's feature claims (parallel judges or detectives, a fan-in, conditional routing)
checked against the graph the repo detective rebuilt: confirmed, contradicted or not
checkable, one verdict per feature."""

from __future__ import annotations

import re
from collections.abc import Sequence

from automaton_auditor.forensics.fanout import (
    DETECTIVE_NODE,
    detectives_never_run,
    detectives_run_first,
    idle_joins,
)
from automaton_auditor.forensics.pdf.claims import FEATURES
from automaton_auditor.state import FeatureClaim, Finding, RebuiltGraph

_JUDGE_NODE = re.compile(r"judge|prosecutor|defen[cs]e|tech_?lead|bench|opinion", re.IGNORECASE)
# The side a fan-in sentence speaks of: the detectives' evidence, or the judges' opinions
# ("judicial" is not read: "evidence collection before judicial reasoning" speaks of the
# evidence).
_EVIDENCE_SIDE = re.compile(r"\b(?:evidence|detectives?|investigat\w*|forensic\w*)\b",
                            re.IGNORECASE)
_JUDGES_SIDE = re.compile(r"\b(?:opinions?|verdicts?|judges?|personas?)\b", re.IGNORECASE)
FEATURE_LABELS = {
    "parallel_judges": "the judges run in parallel",
    "parallel_detectives": "the detectives run in parallel",
    "fan_in": "parallel branches are gathered by a fan-in node",
    "conditional_routing": "the graph routes with conditional edges",
}


def _distance(claim: FeatureClaim) -> int:
    """Characters between the subject and the claimed behaviour: the closer, the more
    specific the sentence ("judges run in parallel" beats a long summary sentence)."""
    subject, behaviour = FEATURES.get(claim.feature, (r"^", r"^"))
    spans = [[m.span() for m in re.finditer(rx, claim.sentence, re.IGNORECASE)]
             for rx in (subject, behaviour)]
    gaps = [max(b[0] - a[1], a[0] - b[1], 0) for a in spans[0] for b in spans[1]]
    return min(gaps, default=10_000)


def feature_findings(claims: list[FeatureClaim], graph: RebuiltGraph | None,
                     code: Sequence[Finding] = ()) -> list[Finding]:
    """One verdict per feature the report claims, read against the rebuilt graph and the
    code's facts (`code`: routes never taken leave detectives that never run)."""
    findings: list[Finding] = []
    seen: set[str] = set()
    # One verdict per feature, on its most specific sentence (document order breaks ties),
    # unless another of its sentences is contradicted by name (`detectives_run_first`).
    ranked = sorted(claims, key=lambda c: (list(FEATURES).index(c.feature)
                                           if c.feature in FEATURES else 99, _distance(c)))
    named = {c.feature: (c, why) for c in reversed(ranked) if graph is not None
             and c.feature == "parallel_detectives"
             and (why := detectives_run_first(c.sentence, graph))}
    for claim in ranked:
        if claim.feature in seen:
            continue
        seen.add(claim.feature)
        verdict, why = check_feature(claim.feature, graph, claim.sentence, code)
        if claim.feature in named:
            claim, why = named[claim.feature]
            verdict = "contradicted"
        label = FEATURE_LABELS.get(claim.feature, claim.feature)
        where = f"report p.{claim.page}" if claim.page else "report"
        if verdict == "contradicted":
            goal, pattern = f"The report claims {label}, but the rebuilt graph contradicts it", \
                "failure"
        elif verdict == "confirmed":
            goal, pattern = f"The report's claim that {label} is confirmed by the code", "success"
        else:
            goal, pattern = f"The report claims {label} (not checkable against the code)", \
                "neutral"
        findings.append(Finding(
            facet="claims.features", goal=goal, found=True, pattern=pattern,
            content=claim.sentence, location=where, rationale=why,
            confidence=0.8 if verdict != "unverified" else 0.4,
            data={"feature": claim.feature, "verdict": verdict}))
    return findings


def _second_layer(graph: RebuiltGraph) -> tuple[str, list[str]] | None:
    """A fan-out leaving a fan-in node: the parallel layer after the first join (in a
    courtroom, the judges after the evidence aggregator), whatever the nodes are named."""
    for source, targets in sorted(graph.fan_out.items()):
        if source in graph.fan_in and targets:
            return source, sorted(targets)
    return None


def _parallel(graph: RebuiltGraph, kind: re.Pattern[str], noun: str) -> tuple[str, str]:
    members = sorted(n for n in graph.nodes if kind.search(n))
    if not members:
        layer = _second_layer(graph) if noun == "judges" else None
        if layer:
            return "confirmed", (f"No node is named like {noun}, but the join '{layer[0]}' fans "
                                 f"out again to {', '.join(layer[1])} (a second parallel layer).")
        return "unverified", f"The rebuilt graph has no node named like {noun}."
    for source, targets in sorted(graph.fan_out.items()):
        hit = sorted(t for t in targets if kind.search(t))
        if len(hit) >= 2 or (hit and len(members) == 1):
            return "confirmed", f"'{source}' fans out to {', '.join(hit)}."
    chained = sorted(f"{a} -> {b}" for a, b in graph.edges
                     if kind.search(a) and kind.search(b))
    if chained:
        return "contradicted", (f"The {noun} nodes are chained one after another "
                                f"({', '.join(chained[:4])}), not fanned out.")
    if graph.linear and not graph.fan_out:
        return "contradicted", f"The rebuilt graph is linear: no fan-out reaches {noun}."
    return "unverified", f"No fan-out to the {noun} nodes ({', '.join(members[:5])}) was found."


def _side(sentence: str) -> tuple[re.Pattern[str], str] | None:
    """Whose fan-in a sentence speaks of, when it names one side only: the detectives'
    evidence ("complete evidence collection before judicial reasoning") or the judges'
    opinions; with the pattern of the other side's node names (a join of those only is
    not this side's)."""
    evidence, judges = _EVIDENCE_SIDE.search(sentence), _JUDGES_SIDE.search(sentence)
    if evidence and not judges:
        return _JUDGE_NODE, "detectives"
    return (DETECTIVE_NODE, "judges") if judges and not evidence else None


def check_feature(feature: str, graph: RebuiltGraph | None, sentence: str = "",
                  code: Sequence[Finding] = ()) -> tuple[str, str]:
    """("confirmed" | "contradicted" | "unverified", why) for one feature claim (a fan-in
    said of one side, the detectives' or the judges', is read on that side; the code's
    facts in `code` tell which routes are never taken)."""
    if graph is None or not graph.nodes:
        return "unverified", "No graph could be rebuilt from the code to check the claim."
    if feature == "parallel_judges":
        return _parallel(graph, _JUDGE_NODE, "judges")
    if feature == "parallel_detectives":
        verdict, why = _parallel(graph, DETECTIVE_NODE, "detectives")
        never = detectives_never_run(graph, code) if verdict == "unverified" else None
        return ("contradicted", never) if never else (verdict, why)
    if feature == "fan_in":
        side = _side(sentence)  # a join of the other side's nodes alone is not this side's
        joins = sorted(j for j, preds in graph.fan_in.items()
                       if side is None or not all(side[0].search(p) for p in preds))
        if joins:
            return "confirmed", f"Fan-in node(s) in the rebuilt graph: {', '.join(joins[:4])}."
        # a join wired for this side whose other inputs never run gathers no parallel branches
        idle = idle_joins(graph, code, DETECTIVE_NODE if side[1] == "detectives"
                          else _JUDGE_NODE) if side else []
        if side and idle:
            return "unverified", (
                f"The sentence speaks of the {side[1]}' fan-in; the graph "
                f"wires {'; '.join(idle[:2])}: reached only through routes never taken "
                "(graph.dead_routes), they bring nothing, so it gathers no parallel branches.")
        if graph.fan_in and side is not None:
            return "unverified", (
                f"The sentence speaks of the {side[1]}' fan-in; the rebuilt graph's joins "
                f"({', '.join(sorted(graph.fan_in)[:4])}) gather the other side only: no "
                f"join of the graph gathers the {side[1]}.")
        if graph.linear:
            return "contradicted", "The rebuilt graph is linear: no node gathers branches."
        return "unverified", "No fan-in node was recognised in the rebuilt graph."
    if feature == "conditional_routing":
        return _routing(graph)
    return "unverified", f"No check is defined for '{feature}'."


def _routing(graph: RebuiltGraph) -> tuple[str, str]:
    """Conditional routing is confirmed by a router that can change where the flow goes;
    routers beside static edges, whose every outcome some run may take leads to one node
    (the others can never be taken), or that always return the same list route nothing
    (`forensics.code.routing`): the claim then earns nothing, and is not contradicted
    either (the edges are there)."""
    if not graph.conditional_sources:
        return "contradicted", "The rebuilt graph has no add_conditional_edges call."
    routing = graph.routing_sources
    if routing is None or routing:
        leave = routing or graph.conditional_sources
        return "confirmed", f"Conditional edges leave {', '.join(sorted(leave)[:4])}."
    return "unverified", ("Conditional edges leave "
                          f"{', '.join(sorted(graph.conditional_sources)[:4])}, but none "
                          "changes where the flow goes (each sits beside a static edge from "
                          "the same node, or every outcome it may take leads to one node).")
