"""Temporary directories deleted before their path is used: a function that returns the path
of a ``tempfile.TemporaryDirectory`` it does not hand on.

Two shapes, both read from the AST:

- ``with tempfile.TemporaryDirectory() as d: ... return d`` -- leaving the ``with`` block
  removes the directory, so the caller gets a path that no longer exists;
- ``tmp = tempfile.TemporaryDirectory(); ... return Path(tmp.name) / "repo"`` where ``tmp``
  never leaves the function (not returned, stored, passed or declared global): the object is
  finalised when the function returns, and its directory with it.

A generator (``@contextmanager`` that yields the path) keeps the directory alive while the
caller works, so it is never such a case. A path "is returned" when the returned value is
built from it by path operations (``Path(d) / "x"``, ``os.path.join(d, ...)``, ``str(d)``,
an f-string) or holds it (a tuple, a list, a dict's value: ``{"path": d}``); a call of
any other function consumes the path while it exists.

The other way round, `kept_alive`: a ``TemporaryDirectory`` object put into a module-level
container (``_ACTIVE_CLONES[td.name] = td``) lives as long as that container, so its
directory is removed only by whatever takes it out again and cleans it up (`released`, when
that runs: `sandbox.held`) or at interpreter exit, not after the function that made it is
done.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from automaton_auditor.forensics.code.common import JSON, dotted, function_defs, resolve
from automaton_auditor.forensics.code.exprs import carries, own_nodes, target_names

MAKER = "tempfile.TemporaryDirectory"
PATH_CALLS = {"Path", "PurePath", "PosixPath", "str", "join", "abspath", "realpath",
              "normpath", "fspath", "expanduser"}
PATH_METHODS = {"joinpath", "resolve", "absolute", "as_posix", "expanduser"}
STORERS = {"append", "add", "insert", "setdefault", "update", "extend", "__setitem__"}


def gone_on_return(tree: ast.Module, imports: dict[str, str]) -> list[JSON]:
    """``{"func", "made", "ret"}`` for each function that returns (at line ``ret``) the path
    of the ``TemporaryDirectory`` made at line ``made``, deleted as the function returns."""
    out = [{"func": qual, **found} for qual, func in function_defs(tree)
           for found in _function(func, imports)]
    return sorted(out, key=lambda f: (f["made"], f["ret"]))


def _is_maker(node: ast.AST | None, imports: dict[str, str]) -> bool:
    return isinstance(node, ast.Call) and resolve(dotted(node.func), imports) == MAKER


def _function(func: ast.FunctionDef | ast.AsyncFunctionDef,
              imports: dict[str, str]) -> list[JSON]:
    nodes = own_nodes(func.body)
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in nodes):
        return []  # a generator hands the path out while the directory still exists
    found: list[JSON] = []
    for node in nodes:
        if isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                name = dotted(item.optional_vars) if item.optional_vars else None
                if name and _is_maker(item.context_expr, imports):
                    # leaving the block removes it: a return in it or after it
                    after = [n for n in nodes if getattr(n, "lineno", 0) >= node.lineno]
                    found += _returns(after, nodes, {name}, "", item.context_expr.lineno)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name) and _is_maker(node.value, imports):
            holder = node.targets[0].id
            if not _escapes(holder, nodes):
                found += _returns(nodes, nodes, set(), holder, node.value.lineno)
    return found


def _escapes(holder: str, nodes: list[ast.AST]) -> bool:
    """True when the ``TemporaryDirectory`` object itself may outlive the function: its name
    is used other than for an attribute (returned, stored, passed on) or declared global."""
    used = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
    return any((isinstance(n, ast.Name) and n.id == holder and isinstance(n.ctx, ast.Load)
                and id(n) not in used) or
               (isinstance(n, ast.Global | ast.Nonlocal) and holder in n.names)
               for n in nodes)


def _returns(inside: list[ast.AST], nodes: list[ast.AST], names: set[str], holder: str,
             made: int) -> list[JSON]:
    """The returns among `inside` whose value is built from the directory's path."""
    paths = set(names)
    for _round in range(5):  # names built from the path, through a few assignments
        grown = {t.id for n in nodes if isinstance(n, ast.Assign) and
                 _carries(n.value, paths, holder) for t in n.targets
                 if isinstance(t, ast.Name)} - paths
        if not grown:
            break
        paths |= grown
    return [{"made": made, "ret": n.lineno} for n in inside
            if isinstance(n, ast.Return) and _carries(n.value, paths, holder)]


def _carries(node: ast.AST | None, paths: set[str], holder: str) -> bool:
    """True when `node` evaluates to (a path built from) the directory's path."""
    if isinstance(node, ast.Name):
        return node.id in paths
    if isinstance(node, ast.Attribute):
        return bool(holder) and node.attr == "name" and dotted(node.value) == holder
    if isinstance(node, ast.BinOp):
        return _carries(node.left, paths, holder) or _carries(node.right, paths, holder)
    if isinstance(node, ast.JoinedStr):
        return any(_carries(v.value, paths, holder) for v in node.values
                   if isinstance(v, ast.FormattedValue))
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_carries(e, paths, holder) for e in node.elts)
    if isinstance(node, ast.Dict):  # {"path": tmp_dir}: the caller reads the path out of it
        return any(_carries(v, paths, holder) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _carries(node.body, paths, holder) or _carries(node.orelse, paths, holder)
    if isinstance(node, ast.Call):
        tail = (dotted(node.func) or "").rsplit(".", 1)[-1]
        if isinstance(node.func, ast.Attribute) and node.func.attr in PATH_METHODS:
            return _carries(node.func.value, paths, holder)
        if tail == "dict":
            return any(_carries(k.value, paths, holder) for k in node.keywords)
        return tail in PATH_CALLS and any(_carries(a, paths, holder) for a in node.args)
    return False


def by_made(facts: dict[str, JSON], key: str) -> dict[tuple[str, int], JSON]:
    """A per-file list of these facts (``temp_gone``, ``temp_kept``) keyed by (path, line
    made)."""
    return {(p, int(g["made"])): g for p in sorted(facts) for g in facts[p].get(key) or []}


def _function_scopes(tree: ast.Module) -> Iterator[tuple[str, list[ast.AST], set[str]]]:
    """Each function's qualified name, its own nodes, and the module-level names it reads
    or writes as such (``global`` ones included, its own locals excluded)."""
    module = {n for stmt in tree.body for n in _module_binds(stmt)}
    for qual, func in function_defs(tree):
        nodes = own_nodes(func.body)
        declared = {n for node in nodes if isinstance(node, ast.Global) for n in node.names}
        yield qual, nodes, (module | declared) - (_locals(func, nodes) - declared)


def kept_alive(tree: ast.Module, imports: dict[str, str]) -> list[JSON]:
    """``{"func", "made", "kept", "container"}`` for each ``TemporaryDirectory`` made at line
    ``made`` whose object a function puts into the module-level ``container`` at line
    ``kept`` (``REGISTRY[key] = td``, ``REGISTRY.append(td)``, ``global td``): it outlives
    the function, and its directory with it."""
    out = []
    for qual, nodes, shared in _function_scopes(tree):
        for node in nodes:
            if isinstance(node, ast.Assign) and _is_maker(node.value, imports):
                holders = [t.id for t in node.targets if isinstance(t, ast.Name)]
                stored = [(node.lineno, b) for t in node.targets
                          if (b := _shared_base(t, shared))]
                stored += [s for h in holders for s in _stores(h, nodes, shared)]
                if stored:
                    line, container = min(stored)
                    out.append({"func": qual, "made": node.value.lineno, "kept": line,
                                "container": container})
    return sorted(out, key=lambda f: (f["made"], f["kept"]))


def released(tree: ast.Module) -> list[JSON]:
    """``{"func", "container", "line"}`` for each ``.cleanup()`` a function calls on an
    object taken from a module-level container (``REGISTRY.pop(key).cleanup()``, ``for td
    in REGISTRY: td.cleanup()``): where the objects `kept_alive` lists may be removed."""
    out = []
    for qual, nodes, shared in _function_scopes(tree):
        # a local taken from a container: ``td = REGISTRY.pop(k)``, ``for td in REGISTRY``
        taken: dict[str, set[str]] = {}
        for node in nodes:
            value = node.value if isinstance(node, ast.Assign) else \
                node.iter if isinstance(node, ast.For) else None
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.For) else []
            for name in (n for t in targets for n in target_names(t)):
                taken.setdefault(name, set()).update(_names(value) & shared)
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "cleanup":
                used = _names(node.func.value)
                for container in sorted((used & shared) | {c for n in used
                                                           for c in taken.get(n, ())}):
                    out.append({"func": qual, "container": container, "line": node.lineno})
    return out


def _names(node: ast.AST | None) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node else set()


def _locals(func: ast.FunctionDef | ast.AsyncFunctionDef, nodes: list[ast.AST]) -> set[str]:
    """Parameters and names a function binds (assignments and loop targets)."""
    return {a.arg for a in _params(func)} | {
        n for node in nodes if isinstance(node, ast.Assign | ast.AnnAssign | ast.For)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        for n in target_names(t)}


def _module_binds(stmt: ast.stmt) -> list[str]:
    """Names a module-level statement binds (inside ``if`` and ``try`` blocks too)."""
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in target_names(t)]
    if isinstance(stmt, ast.AnnAssign):
        return target_names(stmt.target)
    if isinstance(stmt, ast.If | ast.Try):
        blocks = [stmt.body, stmt.orelse, *(h.body for h in getattr(stmt, "handlers", []))]
        return [n for block in blocks for s in block for n in _module_binds(s)]
    return []


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = func.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
            *([a.kwarg] if a.kwarg else [])]


def _shared_base(target: ast.AST, shared: set[str]) -> str | None:
    """``X`` of ``X[k]`` or ``X.attr`` for a module-level ``X`` (a bare ``X`` only when
    declared ``global``, which `shared` then holds), else None."""
    base = target
    while isinstance(base, ast.Subscript | ast.Attribute):
        base = base.value
    return base.id if isinstance(base, ast.Name) and base.id in shared else None


def _stores(holder: str, nodes: list[ast.AST], shared: set[str]) -> list[tuple[int, str]]:
    """(line, container) where the object named `holder` goes into a module-level
    container or name."""
    found = [(n.lineno, holder) for n in nodes
             if isinstance(n, ast.Global) and holder in n.names and holder in shared]
    for node in nodes:
        if isinstance(node, ast.Assign) and carries(node.value, holder):
            found += [(node.lineno, b) for t in node.targets if (b := _shared_base(t, shared))]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in STORERS and \
                (b := _shared_base(node.func.value, shared)) and \
                any(carries(a, holder) for a in [*node.args, *(k.value for k in node.keywords)]):
            found.append((node.lineno, b))
    return found
