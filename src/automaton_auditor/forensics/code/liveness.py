"""Which of the repository's functions a graph runs, read from the call graph.

`live` starts from the graph's node functions and adds, with no bound on depth, what they
call (`CallGraph.callees`), the repository functions they name as values (a callback, a
dispatch table of lambdas, a tool list, a factory's returned closure), the functions
defined inside them, and what module-level code of their files names (it runs on import).
Naming a function counts as running it: a rule that calls code dead must not mistake a
callback for dead code. What is left is code nothing the graph runs can reach.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import NamedTuple

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, TEST_PATH, dotted, qualified


class Scope(NamedTuple):
    """What a graph runs: the live functions, and the files that hold them or that they
    import (module-level code runs on import)."""

    functions: frozenset[Key]
    files: frozenset[str]

    def runs(self, path: str, name: str) -> bool:
        """Whether code of function or class `name` in `path` may run (``""``: code at module
        or class level, which runs when its file is imported)."""
        if not name:
            return path in self.files
        return (path, name) in self.functions or any(
            k[0] == path and k[1].startswith(name + ".") for k in self.functions)


def live(graph: CallGraph, roots: Iterable[Key],
         refs: dict[Key, set[str]] | None = None) -> set[Key]:
    """Functions that may run when `roots` run (see the module docstring). `refs` holds the
    names each function reads (`name_references`, keyed ``(path, qual)``; ``(path, "")``
    for module-level code)."""
    refs = refs or {}
    seen: set[Key] = set()
    opened: set[str] = set()
    todo = sorted(r for r in set(roots) if r in graph.functions)
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        todo += [k for k in _uses(graph, key, refs.get(key, set())) if k not in seen]
        if key[0] not in opened:  # its file was imported: module-level code ran
            opened.add(key[0])
            todo += [k for k in _named(graph, (key[0], "<module>"), refs.get((key[0], ""), set()))
                     if k not in seen]
    return seen


def references(facts: dict[str, JSON]) -> dict[Key, set[str]]:
    """The names each function of the parsed files reads (`name_references`, kept in each
    file's facts as ``refs``)."""
    return {(path, qual): set(names) for path in sorted(facts)
            if facts[path].get("functions")
            for qual, names in (facts[path].get("refs") or {}).items()}


def file_imports(graph: CallGraph, path: str) -> set[str]:
    """The repository files `path`'s own import statements name."""
    refs = set((graph.facts[path].get("imports") or {}).values())
    return {target for ref in refs for module in {ref, ref.rsplit(".", 1)[0]}
            for target in graph.module_files(module, path)}


def entry_files(graph: CallGraph, builders: set[str]) -> set[str]:
    """`builders` (the files that build the graph) and the files outside the tests whose own
    import statements name one of them or, in turn, such a file: the entry points that run
    the graph (a ``main.py``, a CLI, a web server through its runner). A package
    ``__init__`` passes on no link: importing a module runs its package, not the module's
    own functions, so a module that only shares a package with the graph is no entry."""
    own = {path: file_imports(graph, path) for path in sorted(graph.facts)
           if not TEST_PATH.search(path) and not path.endswith("__init__.py")}
    found = set(builders)
    while grown := {path for path, names in own.items() if path not in found and names & found}:
        found |= grown
    return found


def code_runs(graph: CallGraph, scope: Scope | None,
              builders: set[str]) -> Callable[[str, str], bool] | None:
    """Whether code of function `name` in `path` may run (``""``: module level), by the graph
    or its entry points (`entry_files`): a function the graph runs (`scope`), or any code of
    a file the graph's code or the entry files import, or of one some other code outside the
    tests imports (the walk may miss how it is reached). By file, since a method called on
    an instance is not always followed: what this rules out is a module nothing imports but
    the tests (an older copy of a tool). None without a graph."""
    entries = entry_files(graph, builders) if builders else set()
    if not entries:
        return None
    files = imported_files(graph, entries) | (scope.files if scope is not None else set())
    files |= {f for path in graph.facts if not TEST_PATH.search(path)
              for f in file_imports(graph, path) if f != path}
    return lambda path, name: path in files or (scope is not None and scope.runs(path, name))


def imported_files(graph: CallGraph, paths: Iterable[str]) -> set[str]:
    """`paths` and every repository file they import, transitively, with the packages'
    ``__init__.py`` files (importing ``pkg.mod`` runs ``pkg/__init__.py`` first)."""
    seen: set[str] = set()
    todo = sorted(set(paths))
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        parts = path.split("/")[:-1]
        todo += [init for cut in range(1, len(parts) + 1)
                 if (init := "/".join([*parts[:cut], "__init__.py"])) in graph.modules
                 and init not in seen]
        for ref in sorted(set((graph.facts.get(path, {}).get("imports") or {}).values())):
            for module in {ref, ref.rsplit(".", 1)[0]}:
                todo += [f for f in graph.module_files(module, path) if f not in seen]
    return seen


def _named(graph: CallGraph, key: Key, names: Iterable[str]) -> list[Key]:
    """The repository functions `names` (read in `key`) stand for; a class stands for its
    constructor and its ``__call__``."""
    out: list[Key] = []
    for name in sorted(set(names)):
        target = graph.resolve(key, {"name": name})
        if target is None:
            continue
        if target.is_class:
            out += [(m.path, m.qual) for method in ("__init__", "__call__")
                    if (m := graph.method(target.path, target.qual, method)) is not None]
        else:
            out.append((target.path, target.qual))
    return out


def _uses(graph: CallGraph, key: Key, names: set[str]) -> list[Key]:
    """The functions `key` calls, names (as call arguments, bindings, returns, or in
    `names`), or defines inside itself."""
    out = [k for _i, t in graph.callees(key) if (k := graph.function_key(t)) is not None]
    flow = graph.flow(key)
    atoms = {a for site in graph.sites(key)
             for group in [*site.get("args", []), *(site.get("kw") or {}).values()]
             for a in group}
    atoms |= {a for group in (flow.get("binds") or {}).values() for a in group}
    atoms |= set(flow.get("rets") or [])
    out += _named(graph, key, {a[2:] for a in atoms if a.startswith("v:")} | names)
    prefix = key[1] + "."
    out += [k for k in graph.functions if k[0] == key[0] and k[1].startswith(prefix)]
    return out


class _Reads(ast.NodeVisitor):
    """Names read per function, qualified as the facts qualify functions."""

    def __init__(self) -> None:
        self.func = ""
        self.cls = ""
        self.out: dict[str, set[str]] = {}

    def visit_Import(self, node: ast.Import) -> None:
        """Importing a name runs nothing: not a read."""

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        """Importing a name runs nothing: not a read."""

    def visit_Name(self, node: ast.Name) -> None:
        """A name read in the current function (``""``: module or class level)."""
        if isinstance(node.ctx, ast.Load):
            self.out.setdefault(self.func, set()).add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        """``module.function`` reads the dotted name as well as its head."""
        name = dotted(node)
        if name and isinstance(node.ctx, ast.Load):
            self.out.setdefault(self.func, set()).add(name)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Decorators and defaults are read where the function is defined; its body in it."""
        for expr in [*node.decorator_list, *node.args.defaults,
                     *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(expr)
        saved = self.func
        self.func = qualified(self.func, self.cls, node.name)
        for stmt in node.body:
            self.visit(stmt)
        self.func = saved

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        """A class body runs where the class is defined: module level, as the facts say."""
        for expr in [*node.bases, *node.decorator_list, *(k.value for k in node.keywords)]:
            self.visit(expr)
        saved = (self.func, self.cls)
        self.func, self.cls = "", node.name
        for stmt in node.body:
            self.visit(stmt)
        self.func, self.cls = saved


def name_references(tree: ast.AST) -> dict[str, set[str]]:
    """Per function of a parsed file (``Cls.method``, ``outer.inner``; ``""`` for module- and
    class-level code): the names and dotted names it reads, imports left out."""
    reads = _Reads()
    reads.visit(tree)
    return reads.out
