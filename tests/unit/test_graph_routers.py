"""Router destinations read as LangGraph reads them: a returned variable through the value
bound to it, Send lists built in a helper, ``-> Literal[...]`` annotations without a path
map; routers it cannot read leave reachability not established; joins reached through
routers."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from tests.unit.test_code_ast_graph import by_facet, write_repo

SEND_HELPER = """
    from typing import Literal
    from langgraph.graph import StateGraph, START, END
    from langgraph.types import Send

    def detectives_router(state):
        sends = []
        if state.get("repo_url"):
            sends.append(Send("repo", state))
        if state.get("pdf_path"):
            sends.append(Send("pdf", state))
        return sends

    def after_pdf(state):
        sends = [Send("doc", state)]
        sends.append(Send("vision", state))
        return sends

    def build():
        g = StateGraph(dict)
        for n in ["ctx", "repo", "pdf", "doc", "vision", "agg", "no_input"]:
            g.add_node(n, print)
        g.add_edge(START, "ctx")

        def start_route(state):
            if not state.get("repo_url"):
                return "no_input"
            out = detectives_router(state)
            if not out:
                return "agg"
            return out

        g.add_conditional_edges("ctx", start_route)
        g.add_conditional_edges("pdf", after_pdf)
        for n in ["repo", "doc", "vision", "no_input"]:
            g.add_edge(n, "agg")
        g.add_edge("agg", END)
        return g.compile()
"""


def test_a_returned_variable_is_read_through_its_binding(tmp_path: Path) -> None:
    # kidane-gebremedhin: ``out = detectives_router(state); return out`` and ``return sends``
    # are no node names: the Sends built in the helper are the destinations
    files = write_repo(tmp_path, {"src/graph.py": SEND_HELPER})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    unreachable = by_facet(findings, "graph.unreachable_nodes")
    assert not unreachable.found, unreachable.rationale
    cond = by_facet(findings, "graph.conditional_edges").rationale
    assert "'out'" not in cond and "'sends'" not in cond
    assert graph.fan_out["ctx"] == ["pdf", "repo"]
    assert graph.fan_out["pdf"] == ["doc", "vision"]


LITERAL = """
    from typing import Literal
    from langgraph.graph import StateGraph, START, END

    def route(state) -> Literal["doc", "skip"]:
        return state.get("routing", {}).get("branch", "skip")

    def build():
        g = StateGraph(dict)
        for n in ["pre", "doc", "skip", "agg"]:
            g.add_node(n, print)
        g.add_edge(START, "pre")
        g.add_conditional_edges("pre", route)
        g.add_edge("doc", "agg")
        g.add_edge("skip", "agg")
        g.add_edge("agg", END)
        return g.compile()
"""


def test_a_literal_return_annotation_names_the_destinations(tmp_path: Path) -> None:
    # Gersum: no path map, ``-> Literal["doc_analyst", "doc_skipped"]``: LangGraph routes
    # to both, so neither is "never run"
    files = write_repo(tmp_path, {"src/graph.py": LITERAL})
    findings, _graph = code_findings(tmp_path, files)
    assert not by_facet(findings, "graph.unreachable_nodes").found
    assert "pre -> ['doc', 'skip']" in by_facet(findings, "graph.conditional_edges").rationale


def test_an_unreadable_router_leaves_reachability_not_established(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/graph.py": LITERAL.replace(
        ' -> Literal["doc", "skip"]', "")})
    findings, _graph = code_findings(tmp_path, files)
    unreachable = by_facet(findings, "graph.unreachable_nodes")
    assert not unreachable.found
    assert "not established" in unreachable.rationale


JOIN = """
    from langgraph.graph import StateGraph, START, END

    def ok(state):
        if state.get("error"):
            return "error"
        return "success"

    def build():
        g = StateGraph(dict)
        for n in ["repo", "doc", "agg", "err"]:
            g.add_node(n, print)
        g.add_edge(START, "repo")
        g.add_edge(START, "doc")
        g.add_conditional_edges("repo", ok, {"success": "agg", "error": "err"})
        g.add_conditional_edges("doc", ok, {"success": "agg", "error": "err"})
        g.add_edge("err", "agg")
        g.add_edge("agg", END)
        return g.compile()
"""


def test_parallel_branches_meeting_through_routers_are_a_join(tmp_path: Path) -> None:
    # ephrata1888: each detective's router maps "success" to EvidenceAggregator
    files = write_repo(tmp_path, {"src/graph.py": JOIN})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert {"doc", "repo"} <= set(graph.fan_in["agg"])
    assert by_facet(findings, "graph.fan_in").found
    # only some routes lead to the error handler: it joins nothing
    assert "err" not in graph.fan_in


LAYERS = """
    from langgraph.graph import StateGraph, START, END

    def ok(state):
        if state.get("error"):
            return "err"
        return "agg"

    def judged(state):
        if state.get("error"):
            return "err"
        return "chief"

    def build():
        g = StateGraph(dict)
        for n in ["repo", "doc", "agg", "pros", "defe", "chief", "err"]:
            g.add_node(n, print)
        g.add_edge(START, "repo")
        g.add_edge(START, "doc")
        g.add_conditional_edges("repo", ok, ["agg", "err"])
        g.add_conditional_edges("doc", ok, ["agg", "err"])
        g.add_edge("agg", "pros")
        g.add_edge("agg", "defe")
        g.add_conditional_edges("pros", judged, ["chief", "err"])
        g.add_conditional_edges("defe", judged, ["chief", "err"])
        g.add_edge("chief", END)
        return g.compile()
"""


def test_an_error_handler_reached_again_past_the_next_fan_out_joins_nothing(
        tmp_path: Path) -> None:
    # Azazh: every detective routes to the aggregator or the error node, and the judges
    # after the aggregator route to the error node too; that does not gather the detectives
    files = write_repo(tmp_path, {"src/graph.py": LAYERS})
    _findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert "err" not in graph.fan_in


def test_a_static_edge_added_after_a_route_to_the_same_node_still_runs(
        tmp_path: Path) -> None:
    """Melaku-GA: ``add_conditional_edges("judge", done, {END: END, "again": "judge"})`` and
    then ``add_edge("judge", END)``: LangGraph runs the static edge whatever the router
    returns, so the route redirects nothing; the later static edge is not lost behind the
    route to the same node."""
    files = write_repo(tmp_path, {"graph.py": """
from langgraph.graph import StateGraph, START, END

def done(state):
    if state.get("report"):
        return END
    return "again"

def build():
    g = StateGraph(dict)
    g.add_node("judge", print)
    g.add_edge(START, "judge")
    g.add_conditional_edges("judge", done, {END: END, "again": "judge"})
    g.add_edge("judge", END)
    g.add_node("check", print)
    g.add_edge(START, "check")
    g.add_conditional_edges("check", done, {END: "judge", "again": "judge"})
    return g.compile()
"""})
    findings, _ = code_findings(tmp_path, files)
    conditional = by_facet(findings, "graph.conditional_edges")
    assert not conditional.found, conditional.rationale
    assert "judge also has unconditional edges" in conditional.rationale
    # each reason the graph has is said: the router whose outcomes all lead to one node too
    assert "every outcome of the router at check leads to one node (judge)" in \
        conditional.rationale


def test_a_lambda_that_returns_a_fixed_list_is_a_determined_fan_out(tmp_path: Path) -> None:
    """Ahmed-Hibet: ``add_conditional_edges(START, lambda _: ["repo", "doc", "vision"])``
    always runs the three at once: the run model knows its choice (it was "not
    determined"), and the fan-out is counted."""
    files = write_repo(tmp_path, {"graph.py": """
from langgraph.graph import StateGraph, START, END

def build():
    g = StateGraph(dict)
    for n in ["repo", "doc", "vision", "agg"]:
        g.add_node(n, print)
    g.add_conditional_edges(START, lambda _: ["repo", "doc", "vision"])
    for n in ["repo", "doc", "vision"]:
        g.add_edge(n, "agg")
    g.add_edge("agg", END)
    return g.compile()
"""})
    findings, _ = code_findings(tmp_path, files)
    run = by_facet(findings, "graph.execution")
    assert "router's choice is not determined" not in run.rationale, run.rationale
    assert run.rationale.startswith("2 superstep(s): [doc, repo, vision] -> [agg]"), \
        run.rationale
    # it fans out; it routes nothing
    assert by_facet(findings, "graph.fan_out").found
    conditional = by_facet(findings, "graph.conditional_edges")
    assert not conditional.found, conditional.rationale
    assert "always returns the same nodes" in conditional.rationale
