"""Imports that fail when the module loads: ``from src.state import StateGraph`` where
``src/state.py`` neither defines nor imports ``StateGraph`` raises ``ImportError`` before
anything of the importing module runs.

Only module-level ``from X import name`` statements whose module ``X`` is a file of the
repository are checked, and only against what that file binds at its top level (functions,
classes, assignments, its own imports, also inside top-level ``if``/``try``/``with``
blocks). A module with a star import or a module ``__getattr__`` may bind anything: its
names are never reported. A name that is a submodule of a package (``from pkg import mod``)
is found. Each failure is a diagnostic shaped like an analyser's (`health`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.resolve import module_name
from automaton_auditor.safefile import read_bounded

CODE = "IMPORT"  # the diagnostic code, beside the analysers' (F821 ...)
MAX_SOURCE_BYTES = 2 * 1024 * 1024
_BLOCKS = (ast.If, ast.Try, ast.With)


def _tree(repo: Path, path: str) -> ast.Module | None:
    try:
        source = read_bounded(repo / path, MAX_SOURCE_BYTES, root=repo)
        return ast.parse(source.decode("utf-8-sig"), filename=path)
    except (OSError, ValueError, SyntaxError, RecursionError, MemoryError):
        return None  # unreadable, not UTF-8 or not Python: nothing is claimed about it


def _top_statements(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's statements, those inside top-level if/try/with blocks included."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, _BLOCKS):
            blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
            blocks += [h.body for h in getattr(stmt, "handlers", [])]
            for block in blocks:
                yield from _top_statements(block)


def bound_names(tree: ast.Module) -> set[str] | None:
    """The names a module binds at its top level; None when it may bind any (a star import,
    a module ``__getattr__``)."""
    names: set[str] = set()
    for stmt in _top_statements(tree.body):
        if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
            return None
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == "__getattr__":
                return None
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _modules(files: Iterable[str]) -> dict[str, str]:
    """Dotted module name -> file, for every Python file of the repository."""
    return {module_name(path): path for path in sorted(files) if path.endswith(".py")}


def _target(stmt: ast.ImportFrom, path: str, modules: dict[str, str]) -> str | None:
    """The dotted name the statement imports from, resolved against the repository (a
    relative import against the importing file's package; an absolute one as written, or
    from the importing file's folder or a ``src`` folder as a script run there sees it)."""
    package = module_name(path).split(".")
    if not path.endswith("__init__.py"):
        package = package[:-1]
    if stmt.level:
        base = package[: len(package) - (stmt.level - 1)] if stmt.level - 1 <= len(package) \
            else []
        dotted = ".".join([*base, *([stmt.module] if stmt.module else [])])
        return dotted if dotted in modules else None
    if not stmt.module:
        return None
    for prefix in ("", ".".join(package), "src"):
        dotted = f"{prefix}.{stmt.module}" if prefix else stmt.module
        if dotted in modules:
            return dotted
    return None


def broken_imports(repo: Path, files: Iterable[str], importers: Iterable[str]) -> list[JSON]:
    """Module-level ``from X import name`` in `importers` whose ``X`` is a repository file
    that binds no ``name`` (and has no submodule of that name), as diagnostics."""
    modules = _modules(files)
    bound: dict[str, set[str] | None] = {}
    found: list[JSON] = []
    for path in sorted(set(importers)):
        tree = _tree(repo, path) if path.endswith(".py") else None
        for stmt in _top_statements(tree.body if tree else []):
            if not isinstance(stmt, ast.ImportFrom):
                continue
            dotted = _target(stmt, path, modules)
            if dotted is None or modules[dotted] == path:
                continue
            if modules[dotted] not in bound:
                source = _tree(repo, modules[dotted])
                bound[modules[dotted]] = bound_names(source) if source else None
            names = bound[modules[dotted]]
            if names is None:
                continue
            for alias in stmt.names:
                if alias.name in names or f"{dotted}.{alias.name}" in modules:
                    continue
                found.append({"path": path, "line": stmt.lineno, "code": CODE,
                              "message": f"`{alias.name}` is imported from {dotted} "
                                         f"({modules[dotted]}), which does not define it",
                              "import_time": True})
    return found
