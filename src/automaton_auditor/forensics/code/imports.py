"""Imports that fail when the module loads: ``from src.state import StateGraph`` where
``src/state.py`` neither defines nor imports ``StateGraph`` raises ``ImportError`` before
anything of the importing module runs.

Only module-level ``from X import name`` statements whose module ``X`` is a file of the
repository are checked, and only against what that file binds at its top level (functions,
classes, assignments and other stores, its own imports, the names its ``__all__`` lists, also
inside top-level ``if``/``try``/``with``/``for`` blocks, names a function declares
``global``, and what a star import brings from another repository module). A module with a
star import from outside the repository, a module ``__getattr__`` or a ``globals()`` call
may bind anything: its names are never reported. A name that is a submodule of a package
(``from pkg import mod``) is found. Each failure is a diagnostic shaped like an analyser's
(`health`), with the file imported from as its ``target`` and ``as_type`` true when the
importing module uses the name as a type (in an annotation or as a base class): the code
expects a model of that name. A relative import of a module the repository does not hold
(``from .nodes.detectives import X`` beside ``nodes/detective.py``) fails the same way, with
no ``target``, and so does one of a module it holds only in another letter case.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON, parse_module
from automaton_auditor.forensics.code.resolve import module_name
from automaton_auditor.safefile import read_bounded

CODE = "IMPORT"  # the diagnostic code, beside the analysers' (F821 ...)
MAX_SOURCE_BYTES = 2 * 1024 * 1024
_BLOCKS = (ast.If, ast.Try, ast.With, ast.For, ast.While)


def _tree(repo: Path, path: str) -> ast.Module | None:
    try:
        source = read_bounded(repo / path, MAX_SOURCE_BYTES, root=repo).decode("utf-8-sig")
    except (OSError, ValueError):
        return None  # unreadable or not UTF-8: nothing is claimed about it
    return parse_module(source, path)  # None: not Python


def top_statements(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's statements, those inside top-level if/try/with blocks included."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, _BLOCKS):
            blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
            blocks += [h.body for h in getattr(stmt, "handlers", [])]
            for block in blocks:
                yield from top_statements(block)


class _Bindings:
    """What each repository module binds at its top level (`bound`), memoised; a star import
    from another repository module brings that module's names."""

    def __init__(self, repo: Path, modules: dict[str, str]) -> None:
        self.repo, self.modules = repo, modules
        self.memo: dict[str, set[str] | None] = {}

    def bound(self, path: str) -> set[str] | None:
        """The names the module at `path` binds; None when it may bind any, or when it
        cannot be read."""
        if path not in self.memo:
            self.memo[path] = None  # a star-import cycle: the names are not all known
            tree = _tree(self.repo, path)
            self.memo[path] = self._names(tree, path) if tree else None
        return self.memo[path]

    def _names(self, tree: ast.Module, path: str) -> set[str] | None:
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and n.func.id == "globals" for n in ast.walk(tree)):
            return None  # ``globals()[name] = ...`` binds names no statement spells
        names = {n for node in ast.walk(tree) if isinstance(node, ast.Global)
                 for n in node.names}
        for stmt in top_statements(tree.body):
            if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
                dotted = _target(stmt, path, self.modules)
                more = self.bound(self.modules[dotted]) if dotted else None
                if more is None:
                    return None
                names |= more
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if stmt.name == "__getattr__":
                    return None
                names.add(stmt.name)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
            else:
                names |= _stored(stmt)
        return names


def _stored(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement stores (assignment and loop targets, ``with ... as``,
    ``:=``) outside the functions and classes in it, and the strings ``__all__`` lists."""
    if isinstance(stmt, _BLOCKS):  # the statements of its blocks are visited on their own
        heads: list[ast.AST] = [getattr(stmt, "target", None) or ast.Pass(),
                                *(i.optional_vars for i in getattr(stmt, "items", [])
                                  if i.optional_vars), getattr(stmt, "test", ast.Pass()),
                                getattr(stmt, "iter", ast.Pass())]
    else:
        heads = [stmt]
    names: set[str] = set()
    for head in heads:
        for node in ast.walk(head):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    if isinstance(stmt, (ast.Assign, ast.AugAssign)) and "__all__" in names and isinstance(
            stmt.value, (ast.List, ast.Tuple)):
        names |= {e.value for e in stmt.value.elts
                  if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return names


def module_files(files: Iterable[str]) -> dict[str, str]:
    """Dotted module name -> file, for every Python file of the repository."""
    return {module_name(path): path for path in sorted(files) if path.endswith(".py")}


def _package(path: str) -> list[str]:
    package = module_name(path).split(".")
    return package if path.endswith("__init__.py") else package[:-1]


def _relative(stmt: ast.ImportFrom, path: str) -> str:
    """The dotted name a relative import names, whether or not the repository holds it."""
    package = _package(path)
    base = package[: len(package) - (stmt.level - 1)] if stmt.level - 1 <= len(package) \
        else []
    return ".".join([*base, *([stmt.module] if stmt.module else [])])


def _absolute(name: str, path: str, modules: dict[str, str]) -> str | None:
    """An absolute module name as written, or from the importing file's folder or a ``src``
    folder as a script run there sees it, when the repository holds it."""
    for prefix in ("", ".".join(_package(path)), "src"):
        dotted = f"{prefix}.{name}" if prefix else name
        if dotted in modules:
            return dotted
    return None


def _target(stmt: ast.ImportFrom, path: str, modules: dict[str, str]) -> str | None:
    """The dotted name the statement imports from, resolved against the repository (a
    relative import against the importing file's package; an absolute one as written, or
    from the importing file's folder or a ``src`` folder as a script run there sees it)."""
    if stmt.level:
        dotted = _relative(stmt, path)
        return dotted if dotted in modules else None
    return _absolute(stmt.module, path, modules) if stmt.module else None


def loaded_files(stmt: ast.Import | ast.ImportFrom, path: str, modules: dict[str, str]
                 ) -> list[str]:
    """The repository files an import statement in `path` loads: the module it imports
    (from), and the submodules a ``from pkg import mod`` names (`modules`: `module_files`)."""
    if isinstance(stmt, ast.Import):
        found = [_absolute(alias.name, path, modules) for alias in stmt.names]
        return [modules[d] for d in found if d]
    dotted = _target(stmt, path, modules)
    base = dotted or (_relative(stmt, path) if stmt.level else None)
    subs = [f"{base}.{alias.name}" for alias in stmt.names if base]
    return [modules[d] for d in [*([dotted] if dotted else []), *subs] if d in modules]


class ImportChecks:
    """`broken_imports` of one repository, each importing file checked once however many
    callers ask (the graph's health, the state's models, the modules that cannot load)."""

    def __init__(self, repo: Path, files: Iterable[str]) -> None:
        self.repo, self.modules = repo, module_files(files)
        self.lowered = {dotted.lower(): dotted for dotted in self.modules}  # `_other_case`
        self.bindings = _Bindings(repo, self.modules)
        self.memo: dict[str, list[JSON]] = {}

    def broken(self, importers: Iterable[str]) -> list[JSON]:
        """The failing imports of `importers`, in path order (see `broken_imports`)."""
        found: list[JSON] = []
        for path in sorted(set(importers)):
            if path not in self.memo:
                self.memo[path] = self._check(path)
            found += self.memo[path]
        return found

    def _check(self, path: str) -> list[JSON]:
        repo, modules = self.repo, self.modules
        tree = _tree(repo, path) if path.endswith(".py") else None
        types: set[str] | None = None  # the names it uses as types, once needed
        found: list[JSON] = []
        for stmt in top_statements(tree.body if tree else []):
            if not isinstance(stmt, ast.ImportFrom):
                continue
            dotted = _target(stmt, path, modules)
            if dotted is None:
                found += _missing_module(repo, stmt, path) or \
                    _other_case(stmt, path, modules, self.lowered) or \
                    _absent_module(stmt, path, modules)
                continue
            if modules[dotted] == path:
                continue
            names = self.bindings.bound(modules[dotted])
            if names is None:
                continue
            for alias in stmt.names:
                if alias.name in names or f"{dotted}.{alias.name}" in modules:
                    continue
                types = _type_names(tree) if types is None else types
                found.append({"path": path, "line": stmt.lineno, "code": CODE,
                              "message": f"`{alias.name}` is imported from {dotted} "
                                         f"({modules[dotted]}), which does not define it",
                              "import_time": True, "target": modules[dotted],
                              "name": alias.name,
                              "as_type": (alias.asname or alias.name) in types})
        return found


def broken_imports(repo: Path, files: Iterable[str], importers: Iterable[str]) -> list[JSON]:
    """Module-level ``from X import name`` in `importers` whose ``X`` is a repository file
    that binds no ``name`` (and has no submodule of that name), as diagnostics."""
    return ImportChecks(repo, files).broken(importers)


def _missing_module(repo: Path, stmt: ast.ImportFrom, path: str) -> list[JSON]:
    """A relative ``from .pkg.mod import name`` whose module is neither a file nor a folder
    of the repository (it cannot come from anywhere else): ``ModuleNotFoundError`` when the
    importing module loads."""
    folder = path.split("/")[:-1]
    if not stmt.level or not stmt.module or stmt.level - 1 > len(folder):
        return []
    parts = [*folder[: len(folder) - (stmt.level - 1)], *stmt.module.split(".")]
    where = "/".join(parts)
    if (repo / f"{where}.py").exists() or (repo / where).is_dir():
        return []
    return [{"path": path, "line": stmt.lineno, "code": CODE,
             "message": f"`{'.' * stmt.level}{stmt.module}` is imported relatively, but the "
                        f"repository has neither {where}.py nor a {where}/ package",
             "import_time": True, "target": None, "name": stmt.module, "as_type": False}]


def _other_case(stmt: ast.ImportFrom, path: str, modules: dict[str, str],
                lowered: dict[str, str]) -> list[JSON]:
    """An absolute ``from pkg.tech_lead import X`` whose module the repository holds only
    in another letter case (``pkg/Tech_lead.py``): Python matches module names by case, on
    every system, so the import fails with ``ModuleNotFoundError``. `lowered`: the
    repository's module names in lower case, to their own spelling."""
    if stmt.level or not stmt.module:
        return []
    for prefix in ("", ".".join(_package(path)), "src"):
        real = lowered.get((f"{prefix}.{stmt.module}" if prefix else stmt.module).lower())
        if real is not None:
            return [{"path": path, "line": stmt.lineno, "code": CODE,
                     "message": f"`{stmt.module}` is imported, but the repository holds it "
                                f"only in another letter case ({modules[real]}): Python "
                                "matches module names by case, so the import fails",
                     "import_time": True, "target": None, "name": stmt.module,
                     "as_type": False}]
    return []


def _absent_module(stmt: ast.ImportFrom, path: str, modules: dict[str, str]) -> list[JSON]:
    """An absolute ``from src.nodes.detectives import X`` whose first part is a package of
    the repository's own (``src``) and whose module it lacks (bethel4: the file is at
    ``nodes/detectives.py``): the name resolves to that package, which has no such module,
    so the import fails with ``ModuleNotFoundError`` (an installed package of the same name
    is shadowed by the repository's when run from its root)."""
    if stmt.level or not stmt.module or "." not in stmt.module:
        return []
    head, dotted = stmt.module.split(".")[0], stmt.module
    if not any(m.startswith(f"{head}.") for m in modules) or any(
            m == dotted or m.startswith(f"{dotted}.") for m in modules):
        return []
    return [{"path": path, "line": stmt.lineno, "code": CODE,
             "message": f"`{dotted}` is imported, but the repository's `{head}` package has "
                        f"no such module (neither {dotted.replace('.', '/')}.py nor a "
                        "package of that name)",
             "import_time": True, "target": None, "name": dotted, "as_type": False}]


def _type_names(tree: ast.Module | None) -> set[str]:
    """Names a module uses as types: in annotations (string ones too) and as base classes."""
    heads: list[ast.expr] = []
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            heads.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            heads.append(node.returns)
        elif isinstance(node, ast.ClassDef):
            heads += node.bases
    names: set[str] = set()
    while heads:
        for node in ast.walk(heads.pop()):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:  # ``-> "Opinion"``: the string is the annotation
                    heads.append(ast.parse(node.value[:200], mode="eval").body)
                except (SyntaxError, ValueError, RecursionError):
                    continue
    return names
