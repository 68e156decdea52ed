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


def test_detectives_behind_conditional_gates_are_joined_where_every_route_meets(
        tmp_path: Path) -> None:
    # Hiwot-Beyene: entry fans out to three gates; each routes to its detective or to a
    # skip node, and all of those feed evidence_aggregator: that is their join
    gates = "".join(f"""
    g.add_conditional_edges("{d}_gate", lambda s: "{d}" if s.get("{d}") else "skip",
                            {{"{d}": "{d}_detective", "skip": "sync_aggregator"}})
    g.add_edge("entry", "{d}_gate")
    g.add_edge("{d}_detective", "evidence_aggregator")""" for d in ("doc", "repo", "vision"))
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph, START, END

    g = StateGraph(dict)
    for n in ["entry", "doc_gate", "repo_gate", "vision_gate", "doc_detective",
              "repo_detective", "vision_detective", "sync_aggregator", "evidence_aggregator"]:
        g.add_node(n, print)
    g.add_edge(START, "entry")
    g.add_edge("sync_aggregator", "evidence_aggregator")
    g.add_edge("evidence_aggregator", END)""" + gates})
    findings, _graph = code_findings(tmp_path, files)
    detectives = by_facet(findings, "graph.parallel_detectives")
    assert detectives.data["members"] == ["doc_gate", "repo_gate", "vision_gate"]
    assert detectives.data["joins"] == ["evidence_aggregator"]
    assert "(no static join)" not in detectives.rationale


def test_no_join_when_a_route_bypasses_the_meeting_node(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph, START, END

    g = StateGraph(dict)
    for n in ["entry", "doc_gate", "repo_gate", "doc_detective", "repo_detective", "agg"]:
        g.add_node(n, print)
    g.add_edge(START, "entry")
    g.add_edge("entry", "doc_gate")
    g.add_edge("entry", "repo_gate")
    g.add_conditional_edges("doc_gate", lambda s: "go" if s else "stop",
                            {"go": "doc_detective", "stop": END})
    g.add_edge("repo_gate", "repo_detective")
    g.add_edge("doc_detective", "agg")
    g.add_edge("repo_detective", "agg")
    g.add_edge("agg", END)"""})
    findings, _graph = code_findings(tmp_path, files)
    assert by_facet(findings, "graph.parallel_detectives").data["joins"] == []


def test_a_node_that_never_runs_is_no_branch_of_a_fan_in(tmp_path: Path) -> None:
    # habeshacoder: vision_inspector has an edge into the aggregator but none into it
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph, START, END

    g = StateGraph(dict)
    for n in ["ctx", "doc_analyst", "repo_investigator", "vision_inspector", "agg"]:
        g.add_node(n, print)
    g.add_edge(START, "ctx")
    g.add_edge("ctx", "doc_analyst")
    g.add_edge("ctx", "repo_investigator")
    g.add_edge("doc_analyst", "agg")
    g.add_edge("repo_investigator", "agg")
    g.add_edge("vision_inspector", "agg")
    g.add_edge("agg", END)"""})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.fan_in == {"agg": ["doc_analyst", "repo_investigator"]}
    assert by_facet(findings, "graph.fan_in").rationale == (
        "Fan-in points: [doc_analyst, repo_investigator] -> agg (vision_inspector also has "
        "an edge to it but never runs: no path from START).")
    assert by_facet(findings, "graph.unreachable_nodes").data["unreachable"] == [
        "vision_inspector"]


def test_a_builder_given_no_node_builds_no_graph_and_is_not_linear(tmp_path: Path) -> None:
    # Azazh@interim: no add_node at all; the wiring calls add_fan_out/add_fan_in, which
    # StateGraph does not have (AttributeError when the module is imported)
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph

    graph = StateGraph(dict)
    detectives = ["repo", "doc"]
    graph.add_fan_out("START", detectives)
    graph.add_fan_in(detectives, "agg")
    app = graph.compile()
    app.get_graph()
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None and not graph.linear
    linear = by_facet(findings, "graph.linear")
    assert not linear.found
    assert linear.rationale == (
        "No graph can be built: the StateGraph at src/graph.py:4 is given no node (no "
        "add_node call), and its wiring calls methods StateGraph does not have: add_fan_out "
        "(src/graph.py:6), add_fan_in (src/graph.py:7).")
    assert not by_facet(findings, "graph.builder").found
    undefined = by_facet(findings, "graph.undefined_names")
    # the compiled graph's get_graph is a real method: only the builder's calls count
    assert undefined.data["names"] == ["add_fan_in", "add_fan_out"]
    assert undefined.data["import_time"] == ["src/graph.py:6", "src/graph.py:7"]


def test_a_builder_method_stategraph_lacks_inside_a_function_is_a_sure_failure(
        tmp_path: Path) -> None:
    """zumi123: the wiring inside the graph's function calls ``add_nodes`` and ``run``, which
    StateGraph does not have: the wiring itself fails whenever the function builds the graph,
    not only on an error path, so the fact is as sure as a module that cannot import."""
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph

    def run_graph(state):
        graph = StateGraph(dict)
        graph.add_node("repo", print)
        graph.add_nodes(["doc", "agg"])
        return graph.run(state)
    """})
    undefined = by_facet(code_findings(tmp_path, files)[0], "graph.undefined_names")
    assert undefined.found and undefined.data["names"] == ["add_nodes", "run"]
    assert undefined.data["import_time"] == [] and undefined.confidence == 0.9


def test_a_one_node_chain_is_still_linear(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph, START, END

    graph = StateGraph(dict)
    graph.add_node("only", print)
    graph.add_edge(START, "only")
    graph.add_edge("only", END)
    """})
    findings, _graph = code_findings(tmp_path, files)
    assert by_facet(findings, "graph.linear").found
    assert by_facet(findings, "graph.builder").found


def test_a_detective_added_under_a_configuration_flag_is_said_to_be_conditional(
        tmp_path: Path) -> None:
    # GrimVad3r: vision_inspector is added only ``if config.enable_vision_inspector``
    files = write_repo(tmp_path, {"src/graph.py": """
    from langgraph.graph import StateGraph, START, END

    def build(config):
        builder = StateGraph(dict)
        builder.add_node("initialize", print)
        builder.add_node("repo_investigator", print)
        builder.add_node("doc_analyst", print)
        detective_nodes = ["repo_investigator", "doc_analyst"]
        if config.enable_vision_inspector:
            builder.add_node("vision_inspector", print)
            detective_nodes.append("vision_inspector")
        builder.add_node("aggregate_evidence", print)
        builder.add_edge(START, "initialize")
        for name in detective_nodes:
            builder.add_edge("initialize", name)
            builder.add_edge(name, "aggregate_evidence")
        builder.add_edge("aggregate_evidence", END)
        if __name__ == "__main__":
            builder.add_node("debug", print)
        return builder.compile()
    """})
    findings, _graph = code_findings(tmp_path, files)
    assert by_facet(findings, "graph.parallel_detectives").rationale == (
        "initialize fans out to doc_analyst, repo_investigator, vision_inspector; joined at "
        "aggregate_evidence. vision_inspector is added only when "
        "`config.enable_vision_inspector` holds (src/graph.py:10).")
