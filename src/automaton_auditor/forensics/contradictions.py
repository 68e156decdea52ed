"""Report statements the code's own facts contradict, and template text left in the report.

Each read from a `FeatureClaim` the doc detective kept (`forensics.pdf.claims`): a reducer
bound to a state field ("operator.add for Evidence lists") against the state's `Annotated`
hints (`forensics.reducer_claims`); a component said not implemented ("only the detective
layer is implemented") against the components found built and wired; a feature said absent
("the judges are invoked inside one node in sequence", "no conditional edges", "it does not
average judge scores", "no structured output") against the facts that show it built (a
fan-out to the judges, a router, a mean in the synthesis, a structured-output binding): a
description of the built system is contradicted, an admitted gap the code has since closed
leaves the report out of date (`claims.stale_gaps`, a missing extra); what a persona's prompt
is said to hold (`forensics.persona_claims`); how the built system is said to behave (a retry
of malformed replies, a conditional gate, weighed judges: `forensics.behaviour_claims`); an
unfilled template placeholder ("(Insert your generated image here)") is a defect by itself.
A gap or a denial is read with its section (`forensics.pdf.qualifiers`): a gap under a
heading or lead-in that tells what a review caught or what was since fixed is no current
claim, and a description whose following text states the feature it denies (a lead "not
averaging:" over a rule table that uses the average) denies nothing. Each fact quotes the
report sentence with its page and the code lines it contradicts. Only clear cases count: a
sentence whose words match no field, or name no component, contradicts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from automaton_auditor.forensics.behaviour_claims import BEHAVIOUR_KINDS, behaviour_misquotes
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
from automaton_auditor.forensics.pdf.qualifiers import retrospective, stated
from automaton_auditor.forensics.persona_claims import quote_misquotes, security_misquotes
from automaton_auditor.forensics.reducer_claims import (
    Declared,
    declared_reducers,
    reducer_contradictions,
)
from automaton_auditor.forensics.stub_claims import admitted_nodes, stub_but_described
from automaton_auditor.forensics.usage import USAGE_KINDS, Misquote, usage_misquotes
from automaton_auditor.state import CodeNames, FeatureClaim, Finding, RebuiltGraph

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
# Statements of what is built or missing, which a retrospective section takes back.
_GAP_KINDS = ("implementation_status", "feature_denied", "component_gap", "node_disabled",
              "node_not_started")
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
        built["judges"] = [_line(facts["judges.personas"]),
                           f"{graph.location if graph else ''}: judge nodes wired: "
                           f"{', '.join(judges)}"]
    justice = sorted(n for n in wired if _JUSTICE_NODE.search(n))
    if "justice.node" in facts and justice:
        built["chief justice"] = [_line(facts["justice.node"]),
                                  f"{graph.location if graph else ''}: node wired: "
                                  f"{', '.join(justice)}"]
    if "graph.parallel_detectives" in facts:
        built["detectives"] = [_line(facts["graph.parallel_detectives"])]
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
        built[PARALLEL_JUDGES] = [_line(facts["graph.parallel_judges"])]
    if (bound := facts.get("llm.structured_output")) is not None:  # with its first binding
        built[STRUCTURED] = [_line(bound), *(bound.content or "").splitlines()[:1]]
    routing = facts.get("graph.conditional_edges")
    if routing is not None and routing.data.get("routing_sources"):
        built[ROUTING] = [_line(routing)]
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


def _line(fact: Finding) -> str:
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


def _where(claim: FeatureClaim) -> str:
    return f"report p.{claim.page}" if claim.page else "report"


def _contradiction(claim: FeatureClaim, goal: str, rationale: str, code: list[str],
                   data: dict[str, object]) -> Finding:
    """A `claims.contradictions` fact: the report's sentence (page) and the code lines."""
    return Finding(facet="claims.contradictions", goal=goal, found=True, pattern="failure",
                   content=f"{_where(claim)}: {claim.sentence}\n" + "\n".join(code),
                   location=_where(claim), confidence=0.85, rationale=rationale,
                   data={**data, "code": code})


def _reducer_finding(claim: FeatureClaim, wrong: list[tuple[str, Declared]]) -> Finding:
    said = "; ".join(f"{r} for {d.field}" for r, d in wrong)
    declared = "; ".join(f"{d.field} with {d.reducer} ({d.location})" for _, d in wrong)
    return _contradiction(
        claim, "The report binds a reducer to a state field the code declares with another "
        "reducer", f"The report says {said}; the state declares {declared}.",
        [f"{d.location}: {d.field}: {d.annotation}" for _, d in wrong], {"kind": "reducer"})


def _status_finding(claim: FeatureClaim, components: list[str],
                    built: dict[str, list[str]]) -> Finding:
    code = [line for c in components for line in built[c]]
    return _contradiction(
        claim, "The report says a component is not implemented that the code builds and "
        "wires", f"The report leaves out or denies the {', '.join(components)}, which the "
        f"code implements: {'; '.join(code)}.", code,
        {"kind": "status", "components": components})


def _denial_finding(claim: FeatureClaim, denied: list[tuple[str, bool]],
                    built: dict[str, list[str]]) -> Finding:
    """A contradiction for the features the sentence describes the system without; else a
    stale gap (a missing extra) for the ones it admits are missing."""
    described = [f for f, gap in denied if not gap]
    features = described or [f for f, _gap in denied]
    code = [line for f in features for line in built[f]]
    said = f"The report {{}} {' and '.join(features)}, which the code builds: {'; '.join(code)}."
    if not described:
        # a missing extra of report accuracy (judging.extras): the report undersells the
        # code, which is no contradiction, but it does not describe the code as it stands
        return Finding(
            facet="claims.stale_gaps", goal="The report describes the code as it stands (no "
            "gap it lists is already closed)", found=False, pattern="success",
            content=f"{_where(claim)}: {claim.sentence}\n" + "\n".join(code),
            location=_where(claim), confidence=0.7, rationale=said.format("lists as a gap"),
            data={"kind": "stale_gap", "features": features, "code": code})
    return _contradiction(
        claim, "The report describes the built system without a feature the code builds",
        said.format("describes the system without"), code,
        {"kind": "denial", "features": features})


def _misquote_finding(claim: FeatureClaim, wrong: list[Misquote]) -> Finding:
    return _contradiction(
        claim, "The report says the code calls something it does not",
        " ".join(m.rationale for m in wrong), [line for m in wrong for line in m.code],
        {"kind": "usage", "said": [m.said for m in wrong]})


def _usage(claim: FeatureClaim, names: CodeNames | None, words: set[str]) -> list[Misquote]:
    """What a statement about the code's calls gets wrong (`forensics.usage`)."""
    return usage_misquotes(claim.feature, claim.sentence, names, words) if names else []


def _placeholder_finding(claim: FeatureClaim) -> Finding:
    return Finding(
        facet="claims.placeholders", goal="The report contains template text never filled in",
        found=True, pattern="failure", content=f"{_where(claim)}: {claim.sentence}",
        location=_where(claim), confidence=0.85,
        rationale="A template placeholder was left in the report, so the section it stands "
                  "for was never written.", data={"kind": "placeholder"})


def contradiction_findings(claims: Sequence[FeatureClaim], code: Sequence[Finding],
                           graph: RebuiltGraph | None, names: CodeNames | None = None,
                           also: Sequence[Finding] = ()) -> list[Finding]:
    """One `claims.contradictions` fact per report sentence the code contradicts (its facts,
    or the names it uses: `names`), one `claims.placeholders` fact per template placeholder,
    each carrying the report's total of both (`data["statements"]`, so a rule can tell one
    slip from a report at odds with its code); and a `claims.stale_gaps` fact per
    admitted gap the code has closed. `also`: contradictions found elsewhere, counted."""
    declared = declared_reducers(code)
    built = built_components(code, graph)
    graph_built = built_features(code)
    words = set(names.identifiers) if names else set()
    admitted = admitted_nodes(claims)
    findings: list[Finding] = list(also)
    for claim in claims:
        if claim.feature in _GAP_KINDS and retrospective(claim.lead, claim.sentence):
            continue  # what a review caught, or a gap since closed: not a current claim
        if claim.feature in USAGE_KINDS:
            misquoted = _usage(claim, names, words)
            if misquoted:
                findings.append(_misquote_finding(claim, misquoted))
        elif claim.feature in BEHAVIOUR_KINDS:
            behaves = behaviour_misquotes(claim, code, graph, names, graph_built.get(MEAN))
            if behaves:
                findings.append(_contradiction(
                    claim, "The report describes behaviour the code does not have",
                    " ".join(m.rationale for m in behaves), [c for m in behaves for c in m.code],
                    {"kind": claim.feature, "said": [m.said for m in behaves]}))
        elif claim.feature == "reducer_binding":
            wrong = reducer_contradictions(claim, declared)
            if wrong:
                findings.append(_reducer_finding(claim, wrong))
        elif claim.feature == "implementation_status":
            components = status_contradictions(claim, built)
            if components:
                findings.append(_status_finding(claim, components, built))
        elif claim.feature == "node_not_started":
            begun = not_started_but_wired(claim, graph)
            if begun:
                findings.append(_status_finding(claim, sorted(begun), begun))
        elif claim.feature == "node_works":
            stubs = stub_but_described(claim, graph, admitted)
            if stubs:  # the inverse of a wired node not started: a stub said to work
                findings.append(_contradiction(
                    claim, "The report says a node does work that the node the graph runs "
                    "does not do", " ".join(m.rationale for m in stubs),
                    [c for m in stubs for c in m.code],
                    {"kind": "stub_node", "said": [m.said for m in stubs]}))
        elif claim.feature == "feature_denied":
            denied = denial_contradictions(claim, graph_built)
            if denied:
                findings.append(_denial_finding(claim, denied, graph_built))
        elif claim.feature == "component_gap":
            gaps = component_gaps(claim, built)
            if gaps:  # an item of a gap list admits the gap
                findings.append(_denial_finding(claim, [(c, True) for c in gaps], gaps))
        elif claim.feature == "node_disabled":
            wired = disabled_but_wired(claim, graph)
            if wired:  # a node said to be switched off admits a gap
                findings.append(_denial_finding(claim, [(n, True) for n in wired], wired))
        elif claim.feature in ("prompt_quote", "prompt_security"):
            quoted = quote_misquotes(claim, names, code) if claim.feature == "prompt_quote" \
                else security_misquotes(claim, code)
            if quoted:
                findings.append(_contradiction(
                    claim, "The report says a persona's prompt holds what it does not",
                    " ".join(m.rationale for m in quoted), [c for m in quoted for c in m.code],
                    {"kind": claim.feature, "said": [m.said for m in quoted]}))
        elif claim.feature == "placeholder":
            findings.append(_placeholder_finding(claim))
    failures = [f for f in findings if f.pattern == "failure"]
    return [f.model_copy(update={"data": {**f.data, "statements": len(failures)}})
            if f.pattern == "failure" else f for f in findings]
