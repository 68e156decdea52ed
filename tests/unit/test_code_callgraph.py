"""`CallGraph.sources` answers each question the same whatever was asked before it."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import collect_facts
from automaton_auditor.forensics.code.callgraph import MAX_DEPTH, CallGraph

from .test_code_ast_graph import write_repo

# ``a`` and ``b`` take each other's values: a cycle of binds
CYCLE = '''
import tempfile


def f(cond):
    a = tempfile.mkdtemp()
    b = "lit"
    if cond:
        a = b
    if cond:
        b = a
    return b
'''


def _chain(length: int) -> str:
    """``x0 = tempfile.mkdtemp(); x1 = x0; ...``: each name one step further from the dir."""
    lines = ["import tempfile", "", "", "def f():", "    x0 = tempfile.mkdtemp()"]
    lines += [f"    x{i} = x{i - 1}" for i in range(1, length)]
    return "\n".join([*lines, f"    return x{length - 1}", ""])


def _graph(tmp_path: Path, source: str) -> CallGraph:
    files = write_repo(tmp_path, {"m.py": source})
    facts, _ = collect_facts(tmp_path, files)
    return CallGraph(facts)


def test_a_value_in_a_cycle_is_the_same_asked_alone_or_after_its_partner(
        tmp_path: Path) -> None:
    key = ("m.py", "f")
    alone = _graph(tmp_path, CYCLE).sources(key, ["v:b"])
    assert alone == {"s:lit", "t:m.py:6"}
    graph = _graph(tmp_path, CYCLE)
    graph.sources(key, ["v:a"])  # ``b`` is met inside ``a``'s cycle first
    assert graph.sources(key, ["v:b"]) == alone


def test_a_value_cut_by_the_depth_bound_is_not_reused_where_there_is_room(
        tmp_path: Path) -> None:
    key, far, near = ("m.py", "f"), f"v:x{MAX_DEPTH + 1}", "v:x1"
    source = _chain(MAX_DEPTH + 2)
    alone = _graph(tmp_path, source).sources(key, [near])
    assert alone == {"t:m.py:5"}
    graph = _graph(tmp_path, source)
    assert graph.sources(key, [far]) == frozenset()  # the dir is past the bound from here
    assert graph.sources(key, [near]) == alone
    # and the other way: what ``x1`` found is not reused where it is past the bound
    graph = _graph(tmp_path, source)
    graph.sources(key, [near])
    assert graph.sources(key, [far]) == frozenset()


def test_a_value_rebound_from_its_own_method_call_ends_at_its_class(tmp_path: Path) -> None:
    # ``t = t.bind()``: resolving ``bind`` needs the sources of ``t``, which hold that call
    graph = _graph(tmp_path, '''
import tempfile  # the analysis reads files that import what it looks for


class Tool:
    def bind(self):
        return self


def f():
    t = Tool()
    t = t.bind()
    return t
''')
    assert graph.sources(("m.py", "f"), ["v:t"]) == {"o:m.py|Tool"}


def test_a_method_of_an_object_held_in_a_self_attribute_is_called(tmp_path: Path) -> None:
    # ``self.git = GitTool()`` in __init__, ``self.git.clone()`` in a node method: the node
    # reaches ``GitTool.clone`` (a tool's code is not "code the graph never runs")
    graph = _graph(tmp_path, '''
import tempfile  # the analysis reads files that import what it looks for


class GitTool:
    def clone(self, url):
        return tempfile.mkdtemp()


class Detectives:
    def __init__(self):
        self.git = GitTool()

    def investigate(self, state):
        return {"path": self.git.clone(state["url"])}
''')
    reached = graph.reachable([("m.py", "Detectives.investigate")])
    assert ("m.py", "GitTool.clone") in reached


def test_a_node_a_factory_made_at_module_level_is_the_closure_it_returns(
        tmp_path: Path) -> None:
    # eyobed7b: ``prosecutor_node = judge_node_factory("Prosecutor", PROMPT)`` in one module,
    # ``add_node("prosecutor", prosecutor_node)`` in another: the node runs ``node``
    files = write_repo(tmp_path, {"judges.py": '''
import tempfile  # the analysis reads files that import what it looks for


def judge_node_factory(name, prompt):
    def node(state):
        return {"opinions": [name]}
    return node


prosecutor_node = judge_node_factory("Prosecutor", "Find flaws.")
''', "graph.py": "from judges import prosecutor_node\n"})
    facts, _ = collect_facts(tmp_path, files)
    graph = CallGraph(facts)
    assert graph.named("graph.py", "prosecutor_node") == ("judges.py",
                                                          "judge_node_factory.node")
    assert graph.named("graph.py", "judges.prosecutor_node") == ("judges.py",
                                                                 "judge_node_factory.node")


def test_module_objects_made_from_each_other_name_no_function(tmp_path: Path) -> None:
    # hostile: ``a = b()`` and ``b = a()`` at module level: following one to the other
    # must end (it recursed without end), and neither names a function
    graph = _graph(tmp_path, "import tempfile\n\na = b()\nb = a()\n")
    assert graph.named("m.py", "a") is None
    assert graph.named("m.py", "b") is None


INSTANCE_NODES = '''
import tempfile  # the analysis reads files that import what it looks for
from langgraph.graph import StateGraph


class Prosecutor:
    def __call__(self, state):
        return {"opinions": []}


class Auditor:
    def __init__(self):
        self.prosecutor = Prosecutor()

    def build(self):
        judge = Prosecutor()
        g = StateGraph(dict)
        g.add_node("prosecutor", self.prosecutor)
        g.add_node("judge", judge)
        return g
'''


def test_a_node_that_is_an_instance_of_a_repository_class_runs_its_call(
        tmp_path: Path) -> None:
    # Miked: ``self.prosecutor = Prosecutor()`` in __init__, ``add_node("prosecutor",
    # self.prosecutor)``: the node runs ``Prosecutor.__call__`` (it resolved to nothing, so
    # the judges' code was unknown); a local instance the same
    graph = _graph(tmp_path, INSTANCE_NODES)
    assert graph.named("m.py", "self.prosecutor", 18) == ("m.py", "Prosecutor.__call__")
    assert graph.named("m.py", "judge", 19) == ("m.py", "Prosecutor.__call__")
    assert graph.named("m.py", "self.missing", 18) is None
