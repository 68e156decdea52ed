"""Graph orchestration facts checked against real submissions: a router returning a list it
builds up, detectives behind conditional gates, fan-in branches that never run, a builder
that gets no node, and nodes wired only when a configuration flag is set."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings, collect_facts
from automaton_auditor.forensics.code.topology import rebuild
from tests.unit.test_code_ast_graph import by_facet, write_repo

LIST_ROUTER = """
    import os
    from langgraph.graph import StateGraph, START, END

    def build():
        builder = StateGraph(dict)
        for n in ["ContextBuilder", "RepoInvestigator", "DocAnalyst", "VisionInspector",
                  "EvidenceAggregator", "failure_node"]:
            builder.add_node(n, print)

        def start_router(state):
            runnable = []
            if state.get("repo_url"):
                runnable.append("RepoInvestigator")
            if state.get("pdf_path") and os.path.exists(state.get("pdf_path", "")):
                runnable.append("DocAnalyst")
                runnable += ["VisionInspector"]
            if not runnable:
                return "failure_node"
            return runnable

        builder.add_edge(START, "ContextBuilder")
        builder.add_conditional_edges("ContextBuilder", start_router, {
            "RepoInvestigator": "RepoInvestigator", "DocAnalyst": "DocAnalyst",
            "VisionInspector": "VisionInspector", "failure_node": "failure_node"})
        builder.add_edge("RepoInvestigator", "EvidenceAggregator")
        builder.add_edge("DocAnalyst", "EvidenceAggregator")
        builder.add_edge("VisionInspector", "EvidenceAggregator")
        builder.add_edge("EvidenceAggregator", END)
        builder.add_edge("failure_node", END)
        return builder.compile()
"""


def test_router_returning_a_list_it_builds_up_fans_out(tmp_path: Path) -> None:
    # richh-s: ``runnable.append(...)`` then ``return runnable``: LangGraph runs every
    # returned node at once, so ContextBuilder fans out to the three detectives
    files = write_repo(tmp_path, {"src/graph.py": LIST_ROUTER})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.fan_out == {"ContextBuilder": ["DocAnalyst", "RepoInvestigator",
                                                "VisionInspector"]}
    detectives = by_facet(findings, "graph.parallel_detectives")
    assert detectives.found
    assert detectives.rationale == ("ContextBuilder fans out to DocAnalyst, RepoInvestigator, "
                                    "VisionInspector; joined at EvidenceAggregator.")
    # a node named in a returned list reads the state (only a Send hands it a payload)
    main, _ = rebuild(collect_facts(tmp_path, files)[0])
    assert main is not None
    assert main.edges[("ContextBuilder", "DocAnalyst")]["kind"] == "parallel"
    assert main.edges[("ContextBuilder", "failure_node")]["kind"] == "conditional"


def test_a_list_grown_with_anything_but_names_stays_undetermined(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/graph.py": LIST_ROUTER.replace(
        'runnable.append("RepoInvestigator")', 'runnable.append(state["next"])')})
    _findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert "ContextBuilder" not in graph.fan_out
