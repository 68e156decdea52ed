"""evidence_aggregator: the detectives' fan-in.

Cross-checks what the report claims against the repository (it needs both, so it runs after
the fan-in), compares diagrams with the rebuilt graph, notes detectives that produced nothing,
and gives each rubric dimension its dossier: a view on the one evidence store (the ids of the
evidence bound to it, in source order), never a copy.
"""

from __future__ import annotations

import time
from pathlib import PurePath
from typing import Any

from automaton_auditor.forensics.crosscheck import CrossCheck, cross_check
from automaton_auditor.forensics.vision.inspector import compare_with_code
from automaton_auditor.nodes.detectives import INPUT_FACETS, route_findings
from automaton_auditor.rubric import Dimension, Rubric
from automaton_auditor.state import AgentState, Evidence, Finding, all_evidence


def _cross_check(state: AgentState) -> CrossCheck:
    facts = state.get("report_facts")
    files = state.get("repo_files")
    if facts is None or not facts.readable:
        return CrossCheck([], [], [], [])
    if files is None:
        finding = Finding(facet="claims.paths", goal="Cited paths can be checked against the "
                          "repository", found=False, pattern="success", location="report",
                          rationale="the repository could not be acquired, so no cited path "
                          "can be verified", confidence=1.0)
        return CrossCheck([finding], [], [], [])
    target = state.get("target", "")
    # links to the audited repository count as citations; links elsewhere are not ours to check
    repo_url = target if target.startswith("https://") else None
    # the report's own file name: a report that names itself at another folder invents nothing
    report_name = PurePath(state.get("report_path") or "").name or None
    return cross_check(facts, files, state.get("code_graph"), repo_url=repo_url,
                       code=all_evidence(state.get("evidences")), names=state.get("code_names"),
                       report_name=report_name)


def _silent_detectives(state: AgentState) -> list[Finding]:
    evidences = state.get("evidences") or {}
    silent = []
    for source in ("repo", "doc", "vision"):
        if not evidences.get(source):
            silent.append(Finding(
                facet=INPUT_FACETS[source],
                goal=f"The {source} detective produced evidence", found=False,
                pattern="success", location="auditor",
                rationale=f"no evidence from the {source} detective", confidence=1.0))
    return silent


def _empty_dossier(dimension: Dimension) -> Evidence:
    return Evidence(source="aggregator", dimension=dimension.id, facet="dossier.empty",
                    goal=f"Evidence for '{dimension.name}'", found=False, pattern="success",
                    location="auditor",
                    rationale="no detective produced any fact bearing on this criterion",
                    confidence=1.0)


def empty_dimensions(evidence: list[Evidence], rubric: Rubric) -> list[Evidence]:
    """A found=False fact for every dimension no evidence bears on."""
    covered = {e.dimension for e in evidence}
    return [_empty_dossier(d) for d in rubric.dimensions if d.id not in covered]


def build_dossiers(evidence: list[Evidence], rubric: Rubric) -> dict[str, list[str]]:
    """One view per dimension: the ids of its evidence, in the store's (source) order."""
    dossiers: dict[str, list[str]] = {d.id: [] for d in rubric.dimensions}
    for item in evidence:
        if item.dimension in dossiers:
            dossiers[item.dimension].append(item.evidence_id)
    return dossiers


def evidence_aggregator(state: AgentState) -> dict[str, Any]:
    """Fan-in of the detectives: cross-checks, then one dossier view per criterion."""
    started = time.perf_counter()
    rubric = Rubric.from_state(state["rubric"])
    findings, verified, hallucinated, planned = _cross_check(state)
    findings += compare_with_code(state.get("diagrams") or [], state.get("code_graph"))
    findings += _silent_detectives(state)
    own = route_findings(findings, "aggregator", rubric)
    detectives = all_evidence(state.get("evidences"))
    # the empty-dossier facts go into the store too, so every id a dossier lists resolves
    own += empty_dimensions(detectives + own, rubric)
    everything = all_evidence({**(state.get("evidences") or {}), "aggregator": own})
    return {"evidences": {"aggregator": own}, "dossiers": build_dossiers(everything, rubric),
            "verified_paths": verified, "hallucinated_paths": hallucinated,
            "planned_paths": planned,
            "timings": {"evidence_aggregator": round(time.perf_counter() - started, 4)}}
