"""Node functions the graph's node modules define that nothing wires or runs
(``graph.unwired_nodes``, informational: pattern "neutral").

A node module is a repository file the graph's builder imports, or one in the package
(directory) of a wired node function defined outside the builder's files. A node function
there is a module-level function shaped like a LangGraph node: one required parameter (the
state) and a state update returned, a ``Command`` or a dict display with a key the graph's
state declares (when those keys are not known: a dict with a constant key, from a function
that reads its parameter by a constant key, ``state.get("k")``).

It is left unwired when the graph does not run it (`liveness`: nodes, what they call and
name) and no code outside the tests names it: no import, call or reference of its name
anywhere (nor an exact string of it: ``getattr(module, "name")``), nor in its own file
outside its body. So a helper only wired nodes call is wired, and a module nothing imports
leaves all its node functions unwired. Not read when the wiring is not known (`wired_scope`
is None: names computed at run time, a node built by a factory) or the builder is the
repository's own class. The builder files' own functions are left out (routers and helpers
live there too).
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON, TEST_PATH
from automaton_auditor.forensics.code.liveness import Scope, file_imports
from automaton_auditor.forensics.code.source import line_at, parse_file, source_text
from automaton_auditor.forensics.code.state_schema import schema_keys
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.state import Finding

FACET = "graph.unwired_nodes"
COMMAND = "<Command>"  # a returned ``Command(...)`` among the returned keys
MAX_LISTED = 12


def unwired_findings(repo: Path | None, facts: dict[str, JSON], graph: CallGraph,
                     main: Topology | None, others: list[Topology],
                     scope: Scope | None) -> list[Finding]:
    """The fact on the node functions defined but never wired (none when there are none, or
    when the wiring is not known)."""
    if repo is None or main is None or main.custom is not None or scope is None:
        return []
    keys = set(schema_keys(facts, main.builder.get("state"))[0])
    found = [(path, fn) for path in sorted(_node_modules(facts, graph, [main, *others]))
             for fn in _node_functions(repo, path, keys)
             if (path, fn.name) not in scope.functions and not _named(repo, facts, path, fn)]
    if not found:
        return []
    listed = ", ".join(f"{p}:{fn.lineno} {fn.name}" for p, fn in found[:MAX_LISTED])
    return [Finding(
        facet=FACET, goal="Node functions defined but never wired into the graph",
        found=True, pattern="neutral", location=f"{found[0][0]}:{found[0][1].lineno}",
        content="\n".join(line_at(repo, p, fn.lineno) for p, fn in found[:MAX_LISTED]),
        rationale=(f"Defined but never wired: {listed}. Each takes a state and returns an "
                   "update like a node, yet no add_node adds it, no node the graph runs calls "
                   "or names it, and no code outside the tests imports, calls or names it: "
                   "it never runs."),
        confidence=0.8, data={"unwired": [f"{p}:{fn.lineno} {fn.name}" for p, fn in found]})]


def _node_modules(facts: dict[str, JSON], graph: CallGraph, topos: list[Topology]) -> set[str]:
    """The files the builders import, and the files of the packages of wired node functions
    defined outside the builders (tests and the builders' own files left out)."""
    builders = {str(op["path"]) for topo in topos for op in topo.ops}
    node_files = {key[0] for topo in topos for info in topo.nodes.values()
                  if (key := graph.node_function(info)) is not None}
    packages = {path.rpartition("/")[0] for path in node_files - builders}
    modules = {f for b in builders for f in file_imports(graph, b)}
    modules |= {path for path in facts if path.rpartition("/")[0] in packages}
    return {path for path in modules - builders
            if path.endswith(".py") and not TEST_PATH.search(path)}


def _node_functions(repo: Path, path: str, keys: set[str]
                    ) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module-level functions of `path` shaped like a node (see the module docstring)."""
    tree = parse_file(str(repo / path))
    return [stmt for stmt in (tree.body if tree is not None else [])
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
            and _node_shaped(stmt, keys)]


def _node_shaped(fn: ast.FunctionDef | ast.AsyncFunctionDef, keys: set[str]) -> bool:
    """One required parameter, and a state update returned: a ``Command``, or a dict with
    a key the graph's state declares (`keys`; when they are not known, a dict with a
    constant key, from a function that reads its parameter by a constant key)."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    if len(positional) - len(args.defaults) != 1 or any(d is None for d in args.kw_defaults):
        return False
    param = positional[0].arg
    nodes = [n for stmt in fn.body for n in ast.walk(stmt)]
    returned = {k for n in nodes if isinstance(n, ast.Return) for k in _returned_keys(n.value)}
    if keys:
        return bool(returned & (keys | {COMMAND}))
    return COMMAND in returned or (bool(returned) and any(_keyed(n, param) for n in nodes))


def _returned_keys(value: ast.expr | None) -> set[str]:
    """The constant string keys of a returned dict display; `COMMAND` for a ``Command``."""
    if isinstance(value, ast.Dict):
        return {k.value for k in value.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    func = value.func if isinstance(value, ast.Call) else None
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(
        func, ast.Attribute) else ""
    return {COMMAND} if name == "Command" else set()


def _keyed(node: ast.AST, param: str) -> bool:
    """``param["k"]`` or ``param.get("k")``: the parameter read as a state."""
    if isinstance(node, ast.Subscript):
        target, key = node.value, node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and node.args:
        target, key = node.func.value, node.args[0]
    else:
        return False
    return isinstance(target, ast.Name) and target.id == param and \
        isinstance(key, ast.Constant) and isinstance(key.value, str)


def _named(repo: Path, facts: dict[str, JSON], home: str,
           fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether any code outside the tests names `fn` (its own body left out): an import, a
    read of the name or of an attribute so called, or a string that is exactly the name."""
    word = fn.name
    end = fn.end_lineno or fn.lineno
    for path in sorted(facts):
        # read as text first: most files never hold the word
        if TEST_PATH.search(path) or word not in source_text(str(repo / path)):
            continue
        tree = parse_file(str(repo / path))
        for node in ast.walk(tree) if tree is not None else ():
            if path == home and fn.lineno <= getattr(node, "lineno", 0) <= end:
                continue
            if _names(node, word):
                return True
    return False


def _names(node: ast.AST, word: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == word and isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Attribute):
        return node.attr == word
    if isinstance(node, ast.alias):
        return word in (node.name, node.name.rsplit(".", 1)[-1])
    return isinstance(node, ast.Constant) and node.value == word
