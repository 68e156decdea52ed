"""A graph class the repository writes itself is not LangGraph's: its builder is named for
what it is, and the wiring facts read with LangGraph's semantics are not established for it
(Deregit2025: ``class StateGraph`` in src/graph.py runs start nodes in a thread pool)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from tests.unit.test_code_ast_graph import by_facet, write_repo

OWN_CLASS = """
    from concurrent.futures import ThreadPoolExecutor


    class StateGraph:
        def __init__(self):
            self.nodes, self.edges, self.routes = {}, {}, []

        def add_node(self, name, func):
            self.nodes[name] = func

        def add_edge(self, a, b):
            self.edges.setdefault(a, []).append(b)

        def add_conditional_edge(self, source, router, targets):
            self.routes.append((source, router, targets))

        def run(self, state, starts):
            with ThreadPoolExecutor() as pool:
                return list(pool.map(lambda n: self.nodes[n](state), starts))
"""

WIRING = """
    from {module} import StateGraph


    def build():
        builder = StateGraph()
        builder.add_node("repo_detective", print)
        builder.add_node("doc_detective", print)
        builder.add_node("judges", print)
        builder.add_edge("repo_detective", "doc_detective")
        builder.add_edge("doc_detective", "judges")
        builder.add_conditional_edge("judges", len, {{"a": "repo_detective"}})
        return builder
"""

STATE = """
    import operator
    from typing import Annotated, TypedDict


    class AgentState(TypedDict):
        evidence: Annotated[list, operator.add]
"""

WIRING_FACETS = ("graph.topology", "graph.fan_out", "graph.fan_in", "graph.conditional_edges",
                 "graph.linear", "graph.parallel_detectives", "graph.parallel_judges")


def test_imported_own_class_is_not_langgraph(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/graph.py": OWN_CLASS,
                                  "src/state.py": STATE,
                                  "main.py": WIRING.format(module="src.graph")})
    findings, graph = code_findings(tmp_path, files)
    assert graph is None  # no LangGraph graph to rebuild
    builder = by_facet(findings, "graph.builder")
    assert not builder.found
    assert builder.location == "main.py:6"
    assert "the repository's own class (src/graph.py:5 `class StateGraph:`)" in \
        builder.rationale
    assert builder.data["own_class"]["path"] == "src/graph.py"
    assert builder.data.get("limitation") is None  # established: it is not LangGraph's
    for facet in WIRING_FACETS:
        fact = by_facet(findings, facet)
        assert not fact.found, facet
        assert fact.rationale.startswith("Not established: the builder at main.py:6 is "
                                         "StateGraph (`src.graph.StateGraph`)"), facet
        assert fact.data["limitation"], facet
    # LangGraph does not run it: no fact of how LangGraph would (reachability, joins, keys)
    assert not [f.facet for f in findings if f.facet == "graph.execution"
                or f.facet.startswith(("graph.state.", "graph.unreachable", "graph.join"))]
    # whether that runner applies the state's reducers is its own code
    no_graph = by_facet(findings, "state.no_graph")
    assert not no_graph.found
    assert no_graph.rationale.startswith("Not established: the builder at main.py:6")
    assert no_graph.data["limitation"]
    # the class defines add_conditional_edge: no call to a method StateGraph lacks
    undefined = by_facet(findings, "graph.undefined_names")
    assert not undefined.found
    assert "not a method" not in str(undefined.content)


def test_class_defined_in_the_same_file_and_reexported(tmp_path: Path) -> None:
    same = WIRING.replace("from {module} import StateGraph", "") + OWN_CLASS
    files = write_repo(tmp_path, {"app.py": same})
    findings, graph = code_findings(tmp_path, files)
    assert graph is None
    assert "(app.py:18 `class StateGraph:`)" in by_facet(findings, "graph.builder").rationale
    files = write_repo(tmp_path / "re", {"pkg/__init__.py": "from .engine import StateGraph\n",
                                         "pkg/engine.py": OWN_CLASS,
                                         "main.py": WIRING.format(module="pkg")})
    findings, graph = code_findings(tmp_path / "re", files)
    assert graph is None
    assert "(pkg/engine.py:5 `class StateGraph:`)" in \
        by_facet(findings, "graph.builder").rationale


def test_langgraph_builders_unchanged(tmp_path: Path) -> None:
    # LangGraph's class, directly, through an alias, through a package of the repository,
    # or subclassed by the repository: the wiring is read as LangGraph runs it
    linear = WIRING.replace('        builder.add_conditional_edge("judges", len, {{"a": '
                            '"repo_detective"}})\n', "")
    cases = {
        "direct": {"main.py": linear.format(module="langgraph.graph")},
        "alias": {"main.py": linear.replace("import StateGraph", "import StateGraph as SG")
                  .replace("StateGraph()", "SG()").format(module="langgraph.graph")},
        "package": {"pkg/__init__.py": "from langgraph.graph import StateGraph\n",
                    "main.py": linear.format(module="pkg")},
        "fallback": {"pkg/compat.py": "try:\n    from langgraph.graph import StateGraph\n"
                                      "except ImportError:\n    class StateGraph:\n"
                                      "        pass\n",
                     "main.py": linear.format(module="pkg.compat")},
        "subclass": {"pkg/engine.py": "from langgraph.graph import StateGraph as Base\n\n\n"
                                      "class StateGraph(Base):\n    pass\n",
                     "main.py": linear.format(module="pkg.engine")},
    }
    for name, tree in cases.items():
        files = write_repo(tmp_path / name, tree)
        findings, graph = code_findings(tmp_path / name, files)
        assert graph is not None, name
        assert graph.nodes == ["doc_detective", "judges", "repo_detective"], name
        builder = by_facet(findings, "graph.builder")
        assert builder.found, name
        assert builder.rationale == "StateGraph builder with 3 nodes and 2 edges.", name
        linear_fact = by_facet(findings, "graph.linear")
        assert linear_fact.found and not linear_fact.data.get("limitation"), name


def test_langgraph_builder_is_main_beside_an_own_class(tmp_path: Path) -> None:
    # the repository's own class, with more nodes and a fan-out to detectives, beside a
    # small LangGraph graph: the LangGraph graph is the main one, and the own class's
    # wiring is not read as LangGraph's (no parallel detectives from it)
    own = WIRING.format(module="src.graph").replace(
        'builder.add_edge("repo_detective", "doc_detective")',
        'builder.add_edge("judges", "repo_detective")').replace(
        'builder.add_edge("doc_detective", "judges")',
        'builder.add_edge("judges", "doc_detective")')
    files = write_repo(tmp_path, {
        "src/graph.py": OWN_CLASS, "main.py": own,
        "lg.py": """
            from langgraph.graph import StateGraph

            g = StateGraph(dict)
            g.add_node("a", print)
            g.add_node("b", print)
            g.add_edge("a", "b")
        """})
    findings, graph = code_findings(tmp_path, files)
    assert graph is not None and graph.nodes == ["a", "b"]
    builder = by_facet(findings, "graph.builder")
    assert builder.found and builder.location == "lg.py:4"
    assert not by_facet(findings, "graph.parallel_detectives").found


def test_an_own_runner_starting_work_side_by_side_is_said_with_its_lines(
        tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/graph.py": OWN_CLASS,
                                  "main.py": WIRING.format(module="src.graph")})
    findings, _graph = code_findings(tmp_path, files)
    runner = by_facet(findings, "graph.own_runner")
    assert runner.found and runner.pattern == "success"
    assert runner.content == "src/graph.py:19: ThreadPoolExecutor(...)"  # the with line
    serial = OWN_CLASS.replace("with ThreadPoolExecutor() as pool:\n                return "
                               "list(pool.map(", "return list(map(")
    assert "ThreadPoolExecutor()" not in serial
    files = write_repo(tmp_path / "serial", {"src/graph.py": serial,
                                             "main.py": WIRING.format(module="src.graph")})
    findings, _graph = code_findings(tmp_path / "serial", files)
    assert not [f for f in findings if f.facet == "graph.own_runner"]
