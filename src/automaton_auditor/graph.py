"""The Digital Courtroom, wired. This module only wires nodes; the logic lives in `nodes/`.

START → context_builder → (repo_investigator ‖ doc_analyst ‖ vision_inspector)
      → evidence_aggregator → judge × (criteria × personas) → dialectics
      → [reevaluate × (disputed criteria × personas), one round] → chief_justice
      → report_writer → END
Invalid input goes from context_builder straight to report_writer.

Callers (the service, LangGraph Server) see the input and output schemas only: they send
`AuditInput` (target, report, optional rubric, settings and run id) and receive `AuditOutput`
(run id, final report, report files, errors); everything else is the courtroom's own state.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from automaton_auditor.nodes.aggregator import evidence_aggregator
from automaton_auditor.nodes.context import DETECTIVES, context_builder, route_after_context
from automaton_auditor.nodes.detectives import doc_analyst, repo_investigator, vision_inspector
from automaton_auditor.nodes.dialectics import (
    ReevaluationTask,
    dialectics,
    dispatch_reevaluation,
    reevaluate,
)
from automaton_auditor.nodes.judges import dispatch_judges, judge
from automaton_auditor.nodes.justice import chief_justice
from automaton_auditor.nodes.report import report_writer
from automaton_auditor.state import AgentState, AuditInput, AuditOutput, JudgeTask


def build_graph() -> StateGraph[AgentState, Any, AuditInput, AuditOutput]:
    """The uncompiled courtroom graph."""
    builder = StateGraph(AgentState, input_schema=AuditInput, output_schema=AuditOutput)
    builder.add_node("context_builder", context_builder)
    builder.add_node("repo_investigator", repo_investigator)
    builder.add_node("doc_analyst", doc_analyst)
    builder.add_node("vision_inspector", vision_inspector)
    builder.add_node("evidence_aggregator", evidence_aggregator)
    builder.add_node("judge", judge, input_schema=JudgeTask)
    builder.add_node("dialectics", dialectics)
    builder.add_node("reevaluate", reevaluate, input_schema=ReevaluationTask)
    builder.add_node("chief_justice", chief_justice)
    builder.add_node("report_writer", report_writer)

    builder.add_edge(START, "context_builder")
    builder.add_conditional_edges("context_builder", route_after_context,
                                  [*DETECTIVES, "report_writer"])
    builder.add_edge(DETECTIVES, "evidence_aggregator")
    builder.add_conditional_edges("evidence_aggregator", dispatch_judges, ["judge"])
    builder.add_edge("judge", "dialectics")
    builder.add_conditional_edges("dialectics", dispatch_reevaluation,
                                  ["reevaluate", "chief_justice"])
    builder.add_edge("reevaluate", "chief_justice")
    builder.add_edge("chief_justice", "report_writer")
    builder.add_edge("report_writer", END)
    return builder


def compile_graph(checkpointer: Any = None) -> Any:
    """The compiled courtroom, optionally with a checkpointer."""
    return build_graph().compile(checkpointer=checkpointer, name="automaton_auditor")


# Entry point for LangGraph Server (`langgraph.json`).
def make_graph() -> Any:
    """Factory used by `langgraph dev` / LangGraph Server."""
    return compile_graph()
