"""Report statements the code's own facts contradict, and template text left in the report.

Each read from a `FeatureClaim` the doc detective kept (`forensics.pdf.claims`): a reducer
bound to a state field ("operator.add for Evidence lists") against the state's `Annotated`
hints (`forensics.reducer_claims`); a component or node said not implemented ("only the
detective layer is implemented", "DocAnalyst Status: Not started") against the components
and nodes found built and wired (the report understates the code: out of date, not false,
a `claims.stale_gaps` fact); a feature said absent
("the judges are invoked inside one node in sequence", "no conditional edges", "it does not
average judge scores", "no structured output") against the facts that show it built (a
fan-out to the judges, a router, a mean in the synthesis, a structured-output binding): a
description of the built system is contradicted, an admitted gap the code has since closed
leaves the report out of date (`claims.stale_gaps`, a missing extra); what a persona's prompt
is said to hold (`forensics.persona_claims`); how the built system is said to behave (a retry
of malformed replies, a conditional gate, weighed judges: `forensics.behaviour_claims`; a
sandboxed clone or a reducer's merge the code's facts show failing, said once however many
sentences tell it: `forensics.failure_claims`); an
unfilled template placeholder ("(Insert your generated image here)") is a defect by itself.
A gap or a denial is read with its section (`forensics.pdf.qualifiers`): a gap under a
heading or lead-in that tells what a review caught or what was since fixed is no current
claim, and a description whose following text states the feature it denies (a lead "not
averaging:" over a rule table that uses the average) denies nothing. Each fact quotes the
report sentence with its page and the code lines it contradicts. Only clear cases count: a
sentence whose words match no field, or name no component, contradicts nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from automaton_auditor.forensics.behaviour_claims import BEHAVIOUR_KINDS, behaviour_misquotes
from automaton_auditor.forensics.failure_claims import FAILURE_KINDS
from automaton_auditor.forensics.pdf.qualifiers import retrospective
from automaton_auditor.forensics.persona_claims import quote_misquotes, security_misquotes
from automaton_auditor.forensics.reducer_claims import (
    Declared,
    declared_reducers,
    reducer_contradictions,
)
from automaton_auditor.forensics.status_claims import (
    MEAN,
    built_components,
    built_features,
    component_gaps,
    denial_contradictions,
    disabled_but_wired,
    not_started_but_wired,
    status_contradictions,
)
from automaton_auditor.forensics.stub_claims import admitted_nodes, stub_but_described
from automaton_auditor.forensics.usage import USAGE_KINDS, Misquote, usage_misquotes
from automaton_auditor.state import CodeNames, FeatureClaim, Finding, RebuiltGraph

# Statements of what is built or missing, which a retrospective section takes back.
_GAP_KINDS = ("implementation_status", "feature_denied", "component_gap", "node_disabled",
              "node_not_started")


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


class _Code(NamedTuple):
    """What the code builds and names, read once for every claim."""

    facts: Sequence[Finding]
    graph: RebuiltGraph | None
    names: CodeNames | None
    words: set[str]
    declared: list[Declared]
    built: dict[str, list[str]]
    features: dict[str, list[str]]
    admitted: set[str]


def _said(claim: FeatureClaim, goal: str, wrong: Sequence[Misquote], kind: str) -> Finding:
    facts = sorted({str(m.data["fact"]) for m in wrong if m.data.get("fact")})
    return _contradiction(claim, goal, " ".join(m.rationale for m in wrong),
                          [c for m in wrong for c in m.code],
                          {"kind": kind, "said": [m.said for m in wrong],
                           **({"facts": facts} if facts else {})})


def _usage_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    misquoted = _usage(claim, code.names, code.words)
    return _said(claim, "The report says the code calls something it does not", misquoted,
                 "usage") if misquoted else None


def _behaviour_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    behaves = behaviour_misquotes(claim, code.facts, code.graph, code.names,
                                  code.features.get(MEAN))
    return _said(claim, "The report describes behaviour the code does not have", behaves,
                 claim.feature) if behaves else None


def _reducer_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    wrong = reducer_contradictions(claim, code.declared)
    return _reducer_finding(claim, wrong) if wrong else None


def _status_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    # "the judges are not implemented yet", "only the detectives are built": the report
    # undersells what the code has built, out of date rather than false
    components = status_contradictions(claim, code.built)
    return _denial_finding(claim, [(c, True) for c in components], code.built) \
        if components else None


def _not_started_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    begun = not_started_but_wired(claim, code.graph)  # a status line that undersells
    return _denial_finding(claim, [(n, True) for n in sorted(begun)], begun) \
        if begun else None


def _stub_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    stubs = stub_but_described(claim, code.graph, code.admitted)
    # the inverse of a wired node not started: a stub said to work
    return _said(claim, "The report says a node does work that the node the graph runs does "
                 "not do", stubs, "stub_node") if stubs else None


def _denial_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    denied = denial_contradictions(claim, code.features)
    return _denial_finding(claim, denied, code.features) if denied else None


def _gap_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    gaps = component_gaps(claim, code.built)  # an item of a gap list admits the gap
    return _denial_finding(claim, [(c, True) for c in gaps], gaps) if gaps else None


def _disabled_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    wired = disabled_but_wired(claim, code.graph)  # a node said switched off admits a gap
    return _denial_finding(claim, [(n, True) for n in wired], wired) if wired else None


def _prompt_check(claim: FeatureClaim, code: _Code) -> Finding | None:
    quoted = quote_misquotes(claim, code.names, code.facts) \
        if claim.feature == "prompt_quote" else security_misquotes(claim, code.facts)
    return _said(claim, "The report says a persona's prompt holds what it does not", quoted,
                 claim.feature) if quoted else None


# Each claim kind's check; a kind both a usage and a behaviour kind is read as usage.
_CHECKS: dict[str, Callable[[FeatureClaim, _Code], Finding | None]] = {
    "reducer_binding": _reducer_check, "implementation_status": _status_check,
    "node_not_started": _not_started_check, "node_works": _stub_check,
    "feature_denied": _denial_check, "component_gap": _gap_check,
    "node_disabled": _disabled_check, "prompt_quote": _prompt_check,
    "prompt_security": _prompt_check,
    "placeholder": lambda claim, _code: _placeholder_finding(claim),
    **{kind: _behaviour_check for kind in BEHAVIOUR_KINDS},
    **{kind: _usage_check for kind in USAGE_KINDS},
}


def _told(found: Finding, findings: Sequence[Finding]) -> bool:
    """Whether another kind of sentence already misstates the failure of the code `found`
    rests on (a clone "sandboxed in a TemporaryDirectory" and "removed automatically", both
    against one directory nothing removes): one failure, one contradiction."""
    facts = set(found.data.get("facts") or ())
    return bool(facts) and any(f.data.get("kind") != found.data.get("kind")
                               and facts & set(f.data.get("facts") or ()) for f in findings)


def contradiction_findings(claims: Sequence[FeatureClaim], code: Sequence[Finding],
                           graph: RebuiltGraph | None, names: CodeNames | None = None,
                           also: Sequence[Finding] = ()) -> list[Finding]:
    """One `claims.contradictions` fact per report sentence the code contradicts (its facts,
    or the names it uses: `names`), one `claims.placeholders` fact per template placeholder,
    each carrying the report's total of both (`data["statements"]`, so a rule can tell one
    slip from a report at odds with its code); and a `claims.stale_gaps` fact per
    admitted gap the code has closed. `also`: contradictions found elsewhere, counted."""
    read = _Code(code, graph, names, set(names.identifiers) if names else set(),
                 declared_reducers(code), built_components(code, graph), built_features(code),
                 admitted_nodes(claims))
    findings: list[Finding] = list(also)
    for claim in claims:
        if claim.feature in _GAP_KINDS and retrospective(claim.lead, claim.sentence):
            continue  # what a review caught, or a gap since closed: not a current claim
        if claim.feature in FAILURE_KINDS and any(
                f.data.get("kind") == claim.feature for f in findings):
            continue  # one failure of the code, misstated once however often it is told
        check = _CHECKS.get(claim.feature)
        found = check(claim, read) if check else None
        if found is not None and not _told(found, findings):
            findings.append(found)
    failures = [f for f in findings if f.pattern == "failure"]
    return [f.model_copy(update={"data": {**f.data, "statements": len(failures)}})
            if f.pattern == "failure" else f for f in findings]
