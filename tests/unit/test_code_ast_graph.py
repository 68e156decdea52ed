"""Graph reconstruction traps: aliases, loops, list fan-in, Send, graphs outside
src/graph.py, method chains, helpers, linear chains, and names only in prose."""

from __future__ import annotations

import textwrap
from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding


def write_repo(root: Path, files: dict[str, str]) -> list[str]:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    return sorted(files)


def by_facet(findings: list[Finding], facet: str) -> Finding:
    matches = [f for f in findings if f.facet == facet]
    assert len(matches) == 1, facet
    return matches[0]


STATE = """
    import operator
    from typing import Annotated
    from typing_extensions import TypedDict

    class State(TypedDict):
        items: Annotated[list[str], operator.add]
"""


def test_alias_and_loop_and_list_fan_in(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"app/state.py": STATE, "app/flow.py": """
        from langgraph.graph import StateGraph as SG, START, END
        from app.state import State

        DETECTIVES = ["repo", "doc", "vision"]

        def build():
            g = SG(State)
            g.add_node("ctx", f)
            for name in DETECTIVES:
                g.add_node(name, f)
                g.add_edge("ctx", name)
            g.add_node("agg", f)
            g.add_edge(DETECTIVES, "agg")
            g.add_edge(START, "ctx")
            g.add_edge("agg", END)
            return g.compile()
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.nodes == ["agg", "ctx", "doc", "repo", "vision"]
    assert graph.fan_out == {"ctx": ["doc", "repo", "vision"]}
    assert graph.fan_in == {"agg": ["doc", "repo", "vision"]}
    assert ("__start__", "ctx") in graph.edges and ("agg", "__end__") in graph.edges
    assert not graph.linear
    detectives = by_facet(findings, "graph.parallel_detectives")
    assert detectives.found and detectives.data["joins"] == ["agg"]
    assert detectives.location.startswith("app/flow.py:")
    assert by_facet(findings, "graph.linear").found is False


def test_send_fan_out_through_helper_router(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"pkg/state.py": STATE, "pkg/routing.py": """
        from langgraph.types import Send

        JUDGES = ["prosecutor", "defense", "tech_lead"]

        def _tasks(state):
            return [Send("judge", {"who": j}) for j in JUDGES]

        def route(state):
            if not state:
                return "error_handler"
            return _tasks(state)
    """, "pkg/wiring/assemble.py": """
        from langgraph.graph import END, StateGraph
        from pkg.routing import route
        from pkg.state import State

        builder = StateGraph(State)
        builder.add_node("agg", f).add_node("judge", f).add_node("chief", f)
        builder.add_node("error_handler", f)
        builder.set_entry_point("agg")
        builder.add_conditional_edges("agg", route, ["judge", "error_handler"])
        builder.add_edge("judge", "chief")
        builder.set_finish_point("chief")
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.fan_out == {"agg": ["judge"]}
    assert graph.fan_in == {"chief": ["judge"]}
    assert graph.conditional_sources == ["agg"]
    assert ("agg", "error_handler") in graph.edges
    assert by_facet(findings, "graph.parallel_judges").found
    cond = by_facet(findings, "graph.conditional_edges")
    assert cond.found and cond.data["error_routes"] == ["error_handler"]
    assert cond.location == "pkg/wiring/assemble.py:10"


def test_constants_from_another_module_and_helper_builder(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"core/names.py": """
        from enum import Enum

        class Node(str, Enum):
            A = "alpha"
            B = "beta"
            C = "gamma"
    """, "core/helpers.py": """
        from langgraph.graph import StateGraph
        from core.names import Node

        def wire(graph):
            graph.add_edge(Node.A, Node.B)
            graph.add_edge(Node.A, Node.C)
    """, "core/main.py": """
        from langgraph.graph import StateGraph
        from core.helpers import wire
        from core.names import Node

        def make():
            workflow = StateGraph(dict)
            for n in [Node.A, Node.B, Node.C]:
                workflow.add_node(n, lambda s: s)
            wire(workflow)
            return workflow
    """})
    _findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.nodes == ["alpha", "beta", "gamma"]
    assert graph.fan_out == {"alpha": ["beta", "gamma"]}


def test_linear_chain_is_flagged(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"graph_def.py": """
        from langgraph.graph import StateGraph, START, END
        g = StateGraph(dict)
        for n in ("repo", "doc", "judge"):
            g.add_node(n, print)
        g.add_edge(START, "repo")
        g.add_edge("repo", "doc")
        g.add_edge("doc", "judge")
        g.add_edge("judge", END)
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None and graph.linear
    linear = by_facet(findings, "graph.linear")
    assert linear.found and linear.pattern == "failure"
    assert by_facet(findings, "graph.fan_out").found is False
    assert by_facet(findings, "graph.parallel_detectives").found is False


def test_names_only_in_strings_and_comments_count_for_nothing(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/graph.py": '''
        """We build StateGraph(AgentState) and call builder.add_edge("a", "b")."""
        # builder = StateGraph(State); builder.add_edge(["x", "y"], "z")
        NOTE = "builder.add_conditional_edges('a', route) and os.system('rm -rf /')"

        def describe():
            """Uses os.system and subprocess.run(cmd, shell=True) -- never."""
            return NOTE
    '''})
    findings, graph = code_findings(tmp_path, files)
    assert graph is None
    assert by_facet(findings, "graph.builder").found is False
    assert by_facet(findings, "safety.os_system").found is False
    assert by_facet(findings, "safety.shell_true").found is False


def test_findings_are_deterministic(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"a.py": STATE, "b.py": """
        from langgraph.graph import StateGraph
        g = StateGraph(dict)
        g.add_edge(["x", "y"], "z")
    """})
    first = code_findings(tmp_path, files)[0]
    second = code_findings(tmp_path, list(reversed(files)))[0]
    assert [f.model_dump() for f in first] == [f.model_dump() for f in second]
    fan_in = by_facet(first, "graph.fan_in")
    # no node is added, so the join the edge draws is kept apart, not credited
    assert not fan_in.found and fan_in.data["drawn"]["fan_in"] == {"z": ["x", "y"]}
    assert fan_in.content is not None and 'g.add_edge(["x", "y"], "z")' in fan_in.content


def test_command_goto_routes_from_node_functions(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"flow.py": """
        from langgraph.graph import StateGraph, START
        from langgraph.types import Command

        def triage(state):
            if state["bad"]:
                return Command(goto="error_handler")
            return Command(goto="judge")

        g = StateGraph(dict)
        g.add_node("triage", triage)
        g.add_node("judge", print)
        g.add_node("error_handler", print)
        g.add_edge(START, "triage")
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.conditional_sources == ["triage"]
    assert ("triage", "error_handler") in graph.edges and ("triage", "judge") in graph.edges
    assert by_facet(findings, "graph.linear").found is False


def test_builder_held_on_self_across_methods(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"state.py": STATE, "court/workflow.py": """
        from langgraph.graph import StateGraph, START, END
        from state import State

        class Court:
            def __init__(self):
                self.graph = StateGraph(state_schema=State)

            def _detectives(self):
                for name in ("repo", "doc"):
                    self.graph.add_node(name, print)
                    self.graph.add_edge(START, name)
                    self.graph.add_edge(name, "agg")

            def build(self):
                self._detectives()
                self.graph.add_node("agg", print)
                self.graph.add_edge("agg", END)
                return self.graph.compile()
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.location == "court/workflow.py:7"
    assert graph.nodes == ["agg", "doc", "repo"]
    assert graph.fan_out == {"__start__": ["doc", "repo"]}
    assert graph.fan_in == {"agg": ["doc", "repo"]}
    assert by_facet(findings, "graph.builder").data["state"] == "state.State"
    assert by_facet(findings, "state.agent_state").location == "state.py:6"


def test_router_returning_a_list_and_branch_beside_static_edges(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"g.py": """
        from langgraph.graph import StateGraph, START, END

        def route_judges(state):
            if not state:
                return END
            return ["prosecutor", "defense", "tech_lead"]

        def entry_router(state):
            return "detectives" if state else "abort"

        b = StateGraph(dict)
        for n in ["entry", "repo", "doc", "agg", "prosecutor", "defense", "tech_lead", "abort"]:
            b.add_node(n, print)
        b.add_edge(START, "entry")
        b.add_conditional_edges("entry", entry_router, {"detectives": "repo", "abort": "abort"})
        b.add_edge("entry", "doc")
        b.add_edge(["repo", "doc"], "agg")
        b.add_conditional_edges("agg", route_judges)
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.fan_out == {"agg": ["defense", "prosecutor", "tech_lead"],
                             "entry": ["abort", "doc", "repo"]}
    assert ("agg", "__end__") in graph.edges
    assert by_facet(findings, "graph.parallel_judges").data["members"] == [
        "defense", "prosecutor", "tech_lead"]
    assert by_facet(findings, "graph.parallel_detectives").data["joins"] == ["agg"]


def test_lambda_router_returning_a_list_fans_out(tmp_path: Path) -> None:
    # add_conditional_edges(START, lambda _: [a, b, c]) runs all three at once, like a
    # router function returning the list; a lambda choosing one string does not fan out
    files = write_repo(tmp_path, {"g.py": """
        from langgraph.graph import StateGraph, START, END

        b = StateGraph(dict)
        for n in ["repo_investigator", "doc_analyst", "vision_inspector", "agg", "judge"]:
            b.add_node(n, print)
        b.add_conditional_edges(START, lambda _: ["repo_investigator", "doc_analyst",
                                                  "vision_inspector"])
        b.add_edge(["repo_investigator", "doc_analyst", "vision_inspector"], "agg")
        b.add_conditional_edges("agg", lambda s: "judge" if s else END)
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.fan_out == {"__start__": ["doc_analyst", "repo_investigator",
                                           "vision_inspector"]}
    detectives = by_facet(findings, "graph.parallel_detectives")
    assert detectives.found and detectives.data["joins"] == ["agg"]


def test_send_targets_bound_by_a_loop_over_an_imported_list(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"app/config.py": """
        JUDGE_NODES = ("prosecutor", "defense", "tech_lead")
    """, "app/graph.py": """
        from langgraph.graph import StateGraph
        from langgraph.types import Send
        from app.config import JUDGE_NODES

        def fan_out_judges(state):
            sends = []
            for node_name in JUDGE_NODES:
                sends.append(Send(node_name, state))
            return sends

        g = StateGraph(dict)
        g.add_node("agg", print)
        for n in JUDGE_NODES:
            g.add_node(n, print)
            g.add_edge(n, "chief")
        g.add_node("chief", print)
        g.add_conditional_edges("agg", fan_out_judges)
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.fan_out == {"agg": ["defense", "prosecutor", "tech_lead"]}
    assert graph.fan_in == {"chief": ["defense", "prosecutor", "tech_lead"]}
    assert by_facet(findings, "graph.parallel_judges").found


def test_loop_over_a_list_from_a_module_without_trigger_words(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"pkg/names.py": 'STEPS = ["fetch", "parse", "store"]\n',
                                  "pkg/flow.py": """
        from langgraph.graph import StateGraph, START
        from pkg.names import STEPS

        g = StateGraph(dict)
        for step in STEPS:
            g.add_node(step, print)
            g.add_edge(START, step)
    """})
    _findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert graph.nodes == ["fetch", "parse", "store"]
    assert graph.fan_out == {"__start__": ["fetch", "parse", "store"]}


def test_parallel_judges_inside_a_subgraph(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"court.py": """
        from langgraph.graph import StateGraph, START, END

        def judges_subgraph():
            sub = StateGraph(dict)
            for j in ["prosecutor", "defense", "tech_lead"]:
                sub.add_node(j, print)
                sub.add_edge(START, j)
                sub.add_edge(j, END)
            return sub.compile()

        main = StateGraph(dict)
        for n in ["repo", "doc", "vision", "agg", "chief", "report"]:
            main.add_node(n, print)
        main.add_node("judges", judges_subgraph())
        main.add_edge(["repo", "doc", "vision"], "agg")
        main.add_edge("agg", "judges")
        main.add_edge("judges", "chief")
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None and "judges" in graph.nodes
    judges = by_facet(findings, "graph.parallel_judges")
    assert judges.found and judges.data["subgraph"] == "court.py:5"
    assert judges.data["members"] == ["defense", "prosecutor", "tech_lead"]


def test_every_graph_location_is_path_and_line(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"wiring.py": """
        from langgraph.graph import START

        def wire(graph):
            graph.add_node("a", print)
            graph.add_node("b", print)
            graph.add_edge(START, "a")
            graph.add_edge(START, "b")
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None and graph.location == "wiring.py:5"
    for finding in findings:
        if finding.facet.startswith("graph."):
            path, _, line = finding.location.rpartition(":")
            assert path == "wiring.py" and line.isdigit(), finding


def test_report_writers_are_not_detectives(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"g.py": """
        from langgraph.graph import StateGraph
        g = StateGraph(dict)
        g.add_edge("chief", "report_writer")
        g.add_edge("chief", "report_json")
    """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None and graph.fan_out == {"chief": ["report_json", "report_writer"]}
    assert by_facet(findings, "graph.parallel_detectives").found is False


def test_a_router_beside_static_edges_from_the_same_node_routes_nothing(tmp_path: Path) -> None:
    # The static edges always run: the router's error route to END stops nothing.
    source = """
        from langgraph.graph import StateGraph, START, END

        def check(state):
            return "continue" if state else "error"

        b = StateGraph(dict)
        for n in ["repo", "doc", "vision", "agg"]:
            b.add_node(n, print)
        b.add_edge(START, "repo")
        b.add_edge("repo", "doc")
        b.add_edge("repo", "vision")
        b.add_edge(["doc", "vision"], "agg")
        b.add_edge("agg", END)
        b.add_conditional_edges("repo", check, {"continue": "doc", "error": END})
    """
    files = write_repo(tmp_path, {"g.py": source})
    findings, _ = code_findings(tmp_path, files)
    cond = by_facet(findings, "graph.conditional_edges")
    assert not cond.found and "whatever the router returns" in cond.rationale
    assert 'b.add_edge("repo", "doc")' in (cond.content or "")
    # Without the static edges from "repo", the router does choose the way.
    routed = source.replace('        b.add_edge("repo", "doc")\n', "").replace(
        '        b.add_edge("repo", "vision")\n', "")
    assert routed.count("add_edge") == source.count("add_edge") - 2
    files = write_repo(tmp_path, {"g.py": routed})
    assert by_facet(code_findings(tmp_path, files)[0], "graph.conditional_edges").found


def test_a_router_whose_every_outcome_leads_to_one_node_routes_nothing(tmp_path: Path) -> None:
    # {"success": "repo", "failed": "repo"}: a failed clone goes on like a good one
    source = """
        from langgraph.graph import StateGraph, START, END

        def cloned(state):
            return "success" if state.get("path") else "failed"

        b = StateGraph(dict)
        for n in ["clone", "repo", "doc", "agg"]:
            b.add_node(n, print)
        b.add_edge(START, "clone")
        b.add_conditional_edges("clone", cloned, {"success": "repo", "failed": "repo"})
        b.add_edge("repo", "doc")
        b.add_edge("doc", "agg")
        b.add_edge("agg", END)
    """
    files = write_repo(tmp_path, {"g.py": source})
    cond = by_facet(code_findings(tmp_path, files)[0], "graph.conditional_edges")
    assert not cond.found and "leads to one node (repo)" in cond.rationale
    files = write_repo(tmp_path, {"g.py": source.replace('"failed": "repo"', '"failed": END')})
    assert by_facet(code_findings(tmp_path, files)[0], "graph.conditional_edges").found


def test_parallel_branches_that_each_run_to_end_are_not_joined(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"g.py": """
        from langgraph.graph import StateGraph, START, END
        b = StateGraph(dict)
        for n in ["context", "repo_detective", "doc_detective", "vision_detective"]:
            b.add_node(n, print)
        b.add_edge(START, "context")
        for n in ["repo_detective", "doc_detective", "vision_detective"]:
            b.add_edge("context", n)
            b.add_edge(n, END)
    """})
    findings, _ = code_findings(tmp_path, files)
    assert by_facet(findings, "graph.fan_out").found
    detectives = by_facet(findings, "graph.parallel_detectives")
    assert not detectives.found and "straight to END" in detectives.rationale


def test_a_builder_flag_s_default_picks_its_branch(tmp_path: Path) -> None:
    """``build_graph(parallel=True)`` with a linear ``else`` for tests: the graph is the
    branch the default takes, not both edge sets at once."""
    files = write_repo(tmp_path, {"app/state.py": STATE, "app/flow.py": """
        from langgraph.graph import StateGraph, START, END
        from app.state import State

        def build_graph(parallel: bool = True, *, trace=False):
            g = StateGraph(State)
            for name in ("repo", "doc", "agg"):
                g.add_node(name, f)
            if parallel:
                g.add_edge(START, "repo")
                g.add_edge(START, "doc")
                g.add_edge(["repo", "doc"], "agg")
            else:
                g.add_edge(START, "repo")
                g.add_edge("repo", "doc")
                g.add_edge("doc", "agg")
            if not trace:
                g.add_edge("agg", END)
            return g.compile()
    """})
    _findings, graph = code_findings(tmp_path, files)
    assert graph is not None
    assert sorted(graph.edges) == [("__start__", "doc"), ("__start__", "repo"),
                                   ("agg", "__end__"), ("doc", "agg"), ("repo", "agg")]
    assert graph.fan_out == {"__start__": ["doc", "repo"]}


# zumi123: "pseudo-code" against a top-level ``import langgraph``, which has no StateGraph
# (AttributeError at run time), and nodes handed over as objects to a made-up API.
NO_SUCH_BUILDER = """
    import langgraph as lg
    from app.state import State

    def run():
        builder = lg.StateGraph(name="AuditorInterim")
        repo_node = lg.Node("RepoInvestigator", func=lambda s: None)
        builder.add_node(repo_node)
        builder.add_edge(repo_node, repo_node)
        return builder.run(initial_state={})
"""


def test_a_state_graph_the_langgraph_package_does_not_have_is_no_builder(
        tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"app/state.py": STATE, "app/flow.py": NO_SUCH_BUILDER})
    findings, _ = code_findings(tmp_path, files)
    assert not by_facet(findings, "graph.builder").found
    assert by_facet(findings, "state.no_graph").found
    # the same calls through the module that has it build a graph
    real = NO_SUCH_BUILDER.replace("import langgraph as lg", "import langgraph.graph as lg")
    files = write_repo(tmp_path / "real", {"app/state.py": STATE, "app/flow.py": real})
    findings, _ = code_findings(tmp_path / "real", files)
    assert by_facet(findings, "graph.builder").found
