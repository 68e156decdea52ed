"""The typed state of an audit: records and detective facts (`models`), statuses (`status`),
and here the LangGraph state with its reducers and the graph's input and output schemas.

This package imports nothing from the rest of the auditor: every other layer depends on it.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Required

from pydantic import BaseModel
from typing_extensions import TypedDict

from automaton_auditor.state.models import (
    CONTENT_LIMIT,
    JUDGES,
    SOURCES,
    AuditReport,
    CitedPath,
    CodeNames,
    CriterionResult,
    DiagramFacts,
    Evidence,
    FeatureClaim,
    Finding,
    Judge,
    JudicialOpinion,
    Pattern,
    RebuiltGraph,
    ReportFacts,
    RuleApplication,
    Source,
)
from automaton_auditor.state.status import (
    CallFailure,
    CallFailureKind,
    DetectiveStatus,
    StatusKind,
    failed_detectives,
)

__all__ = [
    "CONTENT_LIMIT", "JUDGES", "SOURCES", "STATE_MODELS", "AgentState", "AuditInput",
    "AuditOutput", "AuditReport", "CallFailure", "CallFailureKind", "CitedPath", "CodeNames",
    "CriterionResult", "DetectiveStatus", "DiagramFacts", "Evidence", "FeatureClaim",
    "Finding", "Judge", "JudgeTask", "JudicialOpinion", "Pattern", "RebuiltGraph",
    "ReportFacts", "RuleApplication", "Source", "StatusKind", "all_evidence",
    "failed_detectives", "final_report_of", "first_reason", "merge_dicts", "report_evidence",
    "resolved_dossiers", "sum_counts",
]


def first_reason(left: str | None, right: str | None) -> str | None:
    """Reducer for `aborted`: several parallel judges may stop the run; the first reason wins."""
    return left or right


def sum_counts(left: dict[str, int] | None, right: dict[str, int] | None) -> dict[str, int]:
    """Reducer for counters written in parallel (token usage): values are added per key."""
    total = dict(left or {})
    for key, value in (right or {}).items():
        total[key] = total.get(key, 0) + value
    return total


def merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer for parallel writes of distinct keys (``operator.ior`` without mutating)."""
    return {**(left or {}), **(right or {})}


class AgentState(TypedDict, total=False):
    """The graph state. Keys written by parallel branches carry reducers."""

    # Inputs
    target: str
    # The run's id (its checkpoint thread); shown in the report and the manifest.
    run_id: str
    report_path: str
    # A report sent as bytes (base64) by a remote caller; context_builder writes it to a file
    # of the server's, sets report_path to it and empties this.
    report_base64: str
    rubric: dict[str, Any]
    settings: dict[str, Any]
    # Set by context_builder
    input_ok: bool
    input_error: str | None
    commit: str
    # A local target's paths that differ from its last commit (the audit reads the commit).
    uncommitted: list[str]
    repo_files: list[str]
    report_sha256: str
    started_at: float
    # The one evidence store: written in parallel by the detectives (one key per source)
    # and the aggregator.
    evidences: Annotated[dict[str, list[Evidence]], operator.ior]
    # Per-dimension dossiers, built once by the aggregator: views on the store (evidence ids
    # in source order), never copies (`resolved_dossiers` resolves them).
    dossiers: dict[str, list[str]]
    # Written in parallel by the judges.
    opinions: Annotated[list[JudicialOpinion], operator.add]
    # Provider failures of the judges' calls (the dialectics node stops the run on them).
    call_failures: Annotated[list[CallFailure], operator.add]
    errors: Annotated[list[str], operator.add]
    timings: Annotated[dict[str, float], merge_dicts]
    detective_status: Annotated[dict[str, DetectiveStatus], merge_dicts]
    code_graph: RebuiltGraph | None
    code_names: CodeNames | None
    report_facts: ReportFacts | None
    diagrams: list[DiagramFacts]
    verified_paths: list[str]
    hallucinated_paths: list[str]
    planned_paths: list[str]
    results: list[CriterionResult]
    aborted: Annotated[str | None, first_reason]
    # Token usage of LLM calls not carried by an opinion (e.g. failed re-evaluations).
    usage: Annotated[dict[str, int], sum_counts]
    # The report as ruled; its `evidence` stays empty here (the store above holds it) and is
    # filled from the store when the report is written (`final_report_of`).
    final_report: AuditReport
    report_files: dict[str, str]


class AuditInput(TypedDict, total=False):
    """What a caller sends (the graph's input schema): the target and the report, optionally
    the rubric and settings (defaulted by the context builder) and a run id to name the run.
    A remote caller sends the report's bytes as `report_base64` and its file name as
    `report_path`."""

    target: Required[str]
    report_path: Required[str]
    report_base64: str
    rubric: dict[str, Any]
    settings: dict[str, Any]
    run_id: str


class AuditOutput(TypedDict, total=False):
    """What a caller receives (the graph's output schema)."""

    run_id: str
    final_report: AuditReport
    report_files: dict[str, str]
    errors: list[str]


class JudgeTask(TypedDict, total=False):
    """What one judge receives through `Send`: one criterion, one persona, its dossier (the
    view resolved), the settings and the run id (whose circuit its model calls share)."""

    judge: Required[Judge]
    dimension: Required[dict[str, Any]]
    dossier: Required[list[Evidence]]
    settings: Required[dict[str, Any]]
    run_id: str


def all_evidence(evidences: dict[str, list[Evidence]] | None) -> list[Evidence]:
    """Every item of the evidence store, in source order."""
    store = evidences or {}
    return [e for source in SOURCES for e in store.get(source, [])]


def resolved_dossiers(state: AgentState) -> dict[str, list[Evidence]]:
    """Every criterion's evidence, resolved from its dossier view on the store."""
    by_id = {e.evidence_id: e for e in all_evidence(state.get("evidences"))}
    return {dimension_id: [by_id[i] for i in ids if i in by_id]
            for dimension_id, ids in (state.get("dossiers") or {}).items()}


def report_evidence(evidences: dict[str, list[Evidence]] | None) -> dict[str, list[Evidence]]:
    """A report's evidence section: the store's non-empty sources, in source order."""
    store = evidences or {}
    return {source: store[source] for source in SOURCES if store.get(source)}


def final_report_of(state: AgentState | dict[str, Any]) -> AuditReport | None:
    """The run's report with its evidence section filled from the store, as report.json holds
    it (the state keeps one copy of the evidence: the store)."""
    report: AuditReport | None = state.get("final_report")
    if report is None or report.evidence:
        return report
    return report.model_copy(update={"evidence": report_evidence(state.get("evidences"))})


# The models a checkpoint may hold, and so the only classes the checkpointer revives from disk
# (`storage.runs`); a test checks every model reachable from `AgentState` is listed.
STATE_MODELS: tuple[type[BaseModel], ...] = (
    Finding, Evidence, JudicialOpinion, RuleApplication, CriterionResult, AuditReport,
    RebuiltGraph, CodeNames, CitedPath, FeatureClaim, ReportFacts, DiagramFacts, DetectiveStatus,
    CallFailure,
)
