"""What the code builds, against what the report says is built or missing.

`built_components` (the judges, the Chief Justice, the detectives, each built and wired) and
`built_features` (parallel judges, a router, a mean of the scores, structured output), each with
the code lines that show it; and the report sentences they contradict: a component said not
implemented (`status_contradictions`), a feature said absent (`denial_contradictions`, read
through `Denial`), a node said switched off or not started that the graph wires
(`disabled_but_wired`, `not_started_but_wired`), an item of a gap list (`component_gaps`).
`forensics.contradictions` turns them into facts: all but a description of the built system
without a feature understate the code (out of date, not false).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from automaton_auditor.forensics.diagrams.flow import match_score
from automaton_auditor.forensics.pdf.claims import (
    DISABLED_NODE,
    MEAN_STATED,
    NO_AVERAGING,
    NO_COMPONENT,
    NO_CONDITIONAL,
    NO_PARALLEL_JUDGES,
    NO_STRUCTURED,
    NOT_IMPLEMENTED,
    NOT_STARTED,
    ONLY_IMPLEMENTED,
    PARALLEL_JUDGES_STATED,
    SEQUENTIAL_JUDGES,
)
from automaton_auditor.forensics.pdf.qualifiers import stated
from automaton_auditor.state import FeatureClaim, Finding, RebuiltGraph

_JUDGE_NODE = re.compile(r"judge|prosecutor|defen[cs]e|tech_?lead", re.IGNORECASE)
_JUSTICE_NODE = re.compile(r"justice|chief", re.IGNORECASE)
COMPONENTS: dict[str, re.Pattern[str]] = {
    "judges": re.compile(r"\b(?:judges?|judicial|personas?|prosecutor|tech\s?lead)\b",
                         re.IGNORECASE),
    "chief justice": re.compile(r"\bchief\s*justice(?:node)?\b|\bsynthesis\s+engine\b",
                               re.IGNORECASE),
    "detectives": re.compile(r"\bdetectives?\b|\binvestigators?\b", re.IGNORECASE),
}
_CONDITION = re.compile(r"\b(?:if|unless|whether|when|once|until|would|could)\b", re.IGNORECASE)
# A sentence saying a feature is absent denies nothing when it is hypothetical, describes
# what an auditor (the report's own tool) looks for, contrasts with what was built, or is said
# of a peer's code ("The peer's judge nodes did not use .with_structured_output()").
_HEDGE = re.compile(r"\b(?:if|unless|whether|would|could|might|may|should|rubric|detect\w*|"
                    r"peers?|flag\w*|penali[sz]\w*|checks?|unlike|instead|rather|previous\w*|"
                    r"earlier|original\w*|interim|before)\b", re.IGNORECASE)


class Denial(NamedTuple):
    """How a sentence denies a feature, and how that denial is read."""

    pattern: re.Pattern[str]
    # saying the feature is absent always admits a gap ("no conditional edges")
    admits_gap: bool = False
    # the denial may be negated ("the judges are no longer run in sequence" affirms them)
    negatable: bool = False
    # a sentence about scoring ("scores a graph with no conditional edges as 1") describes
    # the report's own auditor, unless scores are what the feature is about
    about_scores: bool = False
    # the feature stated: the report describes the system with it when the text around the
    # sentence says so (a lead "not averaging:" over a rule table that uses the average)
    stated: re.Pattern[str] | None = None


PARALLEL_JUDGES, ROUTING, MEAN, STRUCTURED = (
    "parallel judges", "conditional routing", "a mean of the judges' scores",
    "structured output bound to the model")
DENIALS: tuple[tuple[str, Denial], ...] = (
    (PARALLEL_JUDGES, Denial(SEQUENTIAL_JUDGES, negatable=True,
                             stated=PARALLEL_JUDGES_STATED)),
    (PARALLEL_JUDGES, Denial(NO_PARALLEL_JUDGES, admits_gap=True)),
    (ROUTING, Denial(NO_CONDITIONAL, admits_gap=True)),
    (MEAN, Denial(NO_AVERAGING, about_scores=True, stated=MEAN_STATED)),
    (STRUCTURED, Denial(NO_STRUCTURED)))
_SCORING = re.compile(r"\bscor\w*", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|never|longer)\b", re.IGNORECASE)
# An admitted gap ("no conditional edges", "missing ...", "a known gap") that the code has
# since closed undersells the work: it is shown, not held against the report. A description
# of how the built system works ("the judges are invoked inside one node in sequence") that
# the code contradicts misleads the reader.
_GAP = re.compile(r"\b(?:no|gaps?|missing|absent|lacks?|lacking|planned|todo|remaining|future|"
                  r"known|limitations?|not\s+yet)\b", re.IGNORECASE)


def built_components(code: Sequence[Finding], graph: RebuiltGraph | None
                     ) -> dict[str, list[str]]:
    """Components the code builds and wires, each with the lines that show it: judges
    (persona prompts found, and judge nodes with edges into them), the Chief Justice (its
    synthesis code, and a node wired for it), the detectives (a fan-out to them)."""
    facts = {f.facet: f for f in code if f.found and f.pattern == "success"}
    wired = {b for _, b in graph.edges} if graph else set()
    built: dict[str, list[str]] = {}
    judges = sorted(n for n in wired if _JUDGE_NODE.search(n))
    if "judges.personas" in facts and len(judges) >= 2:
        built["judges"] = [fact_line(facts["judges.personas"]),
                           f"{graph.location if graph else ''}: judge nodes wired: "
                           f"{', '.join(judges)}"]
    justice = sorted(n for n in wired if _JUSTICE_NODE.search(n))
    if "justice.node" in facts and justice:
        built["chief justice"] = [fact_line(facts["justice.node"]),
                                  f"{graph.location if graph else ''}: node wired: "
                                  f"{', '.join(justice)}"]
    if "graph.parallel_detectives" in facts:
        built["detectives"] = [fact_line(facts["graph.parallel_detectives"])]
    return built


def built_features(code: Sequence[Finding]) -> dict[str, list[str]]:
    """Features the code builds, each with the lines that show it: judges fanned out in
    parallel (`graph.parallel_judges`), a router choosing a branch (`graph.conditional_edges`
    with a routing source, not only a list run all at once), a mean of the judges' scores in
    the synthesis (the lines `justice.averaging` quotes, even when later rules change it),
    unless `justice.rules` finds the judges weighed differently."""
    facts = {f.facet: f for f in code if f.found and f.pattern == "success"}
    built: dict[str, list[str]] = {}
    if "graph.parallel_judges" in facts:
        built[PARALLEL_JUDGES] = [fact_line(facts["graph.parallel_judges"])]
    if (bound := facts.get("llm.structured_output")) is not None:  # with its first binding
        built[STRUCTURED] = [fact_line(bound), *(bound.content or "").splitlines()[:1]]
    routing = facts.get("graph.conditional_edges")
    if routing is not None and routing.data.get("routing_sources"):
        built[ROUTING] = [fact_line(routing)]
    # the synthesis computes a mean of the scores, whether or not later rules change it; a
    # mean weighted per judge is the functionality-weight rule, not an average
    mean = next((f for f in code if f.facet == "justice.averaging" and f.content), None)
    weighted = any(f.facet == "justice.rules" and "functionality_weight" in
                   (f.data.get("rules") or {}) for f in code)
    if mean is not None and not weighted:
        built[MEAN] = [f"{mean.location}: {mean.rationale}",
                       *(mean.content or "").splitlines()[:3]]
    return built


def denial_contradictions(claim: FeatureClaim, built: dict[str, list[str]]
                          ) -> list[tuple[str, bool]]:
    """(feature, is an admitted gap) for each feature the sentence says is absent ("the
    judges run in sequence", "no conditional edges", "it does not average the scores") that
    the code builds; none when the rest of the sentence is hedged (`_HEDGE`) or the denial
    is itself negated (`Denial`). Unless the denial itself admits a gap, the rest of the
    sentence must say so ("a known gap"). A description the text around it qualifies by
    stating the feature (`Denial.stated`, `claim.near`) describes the system with it."""
    denied: dict[str, bool] = {}
    for feature, how in DENIALS:
        match = how.pattern.search(claim.sentence) if feature in built else None
        if match is None or (how.negatable and _NEGATED.search(match[0])):
            continue
        rest = claim.sentence[: match.start()] + " " + claim.sentence[match.end():]
        if _HEDGE.search(rest) or (not how.about_scores and _SCORING.search(rest)):
            continue
        # one wording that admits the gap makes the sentence an admitted gap
        gap = denied.get(feature, False) or how.admits_gap or bool(_GAP.search(rest))
        # a gap stays listed whatever else the report says; a description does not
        if gap or how.stated is None or not stated(claim.near, how.pattern, how.stated):
            denied[feature] = gap
    return sorted(denied.items())


def disabled_but_wired(claim: FeatureClaim, graph: RebuiltGraph | None
                       ) -> dict[str, list[str]]:
    """Graph nodes the sentence says are switched off ("VisionInspector currently commented
    out") that the code wires with edges in and out, each with those edges; the judges,
    Chief Justice and detectives as components are `status_contradictions`' to read."""
    return {f"the {node}": lines for node, lines in
            _wired_nodes(DISABLED_NODE, claim, graph).items()}


def not_started_but_wired(claim: FeatureClaim, graph: RebuiltGraph | None
                          ) -> dict[str, list[str]]:
    """Graph nodes a status line says are not begun ("Phase 4 \u2014 DocAnalyst Status: Not
    started") that the code wires with edges in and out, each with those edges: the report
    describes the current state of the code and understates it."""
    return _wired_nodes(NOT_STARTED, claim, graph)


def _wired_nodes(pattern: re.Pattern[str], claim: FeatureClaim, graph: RebuiltGraph | None
                 ) -> dict[str, list[str]]:
    """"<node> node" for each graph node named as `pattern`'s `name` (not a component the
    component rules read) with edges in and out, unless the sentence is hedged before it."""
    match = pattern.search(claim.sentence)
    if match is None or graph is None or _HEDGE.search(claim.sentence[: match.start()]) \
            or any(rx.search(match["name"]) for rx in COMPONENTS.values()):
        return {}
    found: dict[str, list[str]] = {}
    for node in graph.nodes:
        into = [f"{a} -> {b}" for a, b in graph.edges if b == node]
        out = [f"{a} -> {b}" for a, b in graph.edges if a == node]
        if into and out and match_score(match["name"], node) >= 0.8:
            found[f"{node} node"] = [f"{graph.location}: {node} wired: "
                                     f"{', '.join([*into, *out][:6])}"]
    return found


def component_gaps(claim: FeatureClaim, built: dict[str, list[str]]) -> dict[str, list[str]]:
    """Built components a gap-list item says are missing ("No judicial layer", "No
    ChiefJusticeNode or ..."), each with the lines that show it built."""
    match = NO_COMPONENT.search(claim.sentence)
    if match is None or _HEDGE.search(claim.sentence):
        return {}
    return {c: built[c] for c, rx in COMPONENTS.items() if rx.search(match["named"])
            and c in built}


def fact_line(fact: Finding) -> str:
    """A fact's location and rationale, as one quoted line."""
    return f"{fact.location}: {fact.rationale}"


def status_contradictions(claim: FeatureClaim, built: dict[str, list[str]]) -> list[str]:
    """Components the sentence says are not implemented that the code builds: "only X is
    implemented" leaves out every other built component; "X is not implemented" names X."""
    sentence = claim.sentence
    only = ONLY_IMPLEMENTED.search(sentence)
    if only and not _CONDITION.search(sentence[: only.start()]):
        named = {c for c, rx in COMPONENTS.items() if rx.search(only["named"])}
        if named:
            return sorted(c for c in built if c not in named)
    denied = NOT_IMPLEMENTED.search(sentence)
    if denied and not _CONDITION.search(sentence[: denied.start()]):
        clause = re.split(r"[;:,()\u2014]|\bbut\b", sentence[: denied.start()])[-1]
        return sorted(c for c, rx in COMPONENTS.items() if rx.search(clause) and c in built)
    return []
