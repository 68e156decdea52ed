"""Expressions as `dead_stores` reads them: what evaluating one reads, and which names'
objects it may leave held elsewhere (by a call, a container, whatever receives its value).

A reader only looks at what it is given (``len(x)``, ``x[i]``, ``x.get(k)``, ``f"{x}"``, a
comparison, a module of pure functions such as ``math``); a copy (``list(x)``,
``x.copy()``) builds a new object; a changing method (``x.append(v)``, ``x.remove(v)``)
changes its receiver and keeps none of it. Anything else may keep what it is handed.
"""

from __future__ import annotations

import ast

from automaton_auditor.forensics.code.common import dotted
from automaton_auditor.forensics.code.inert import (
    ADD_METHODS,
    DROP_METHODS,
    PURE_CALLS,
    READ_METHODS,
)
from automaton_auditor.forensics.code.paths import LOGS

COPIES = frozenset({"list", "tuple", "sorted", "set", "frozenset", "dict", "copy",
                    "deepcopy"})  # a call whose value is a new object
# calls that only read their arguments (and build a new value from them): the project's
# pure builtins (`inert.PURE_CALLS`) but the copies and the iterators, which hold what they
# are handed, and a few more readers
READERS = (PURE_CALLS - COPIES - {"enumerate", "zip"}) | {
    "repr", "abs", "round", "format", "divmod", "pow", "hash", "id", "type"}
PURE_MODULES = ("math.", "statistics.", "np.", "numpy.")
MUTATORS = ADD_METHODS | DROP_METHODS | {"sort", "reverse"}
RETURNS_ARG = frozenset({"min", "max", "getattr", "get", "pop", "setdefault"})  # an argument
THROUGH = ast.BoolOp | ast.IfExp | ast.Starred | ast.keyword | ast.GeneratorExp


def names(node: ast.AST | None) -> set[str]:
    """The names an expression (or statement) reads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Load)} if node is not None else set()


def reader_call(call: ast.Call) -> bool:
    """A call that only reads its arguments and receiver: a reader, a copy, a pure module's
    function, a reading method (``x.get(k)``, ``x.copy()``) or a log."""
    name = dotted(call.func) or ""
    last = name.rsplit(".", 1)[-1]
    if isinstance(call.func, ast.Attribute):
        return last in READ_METHODS or last == "copy" or name.startswith(PURE_MODULES) or \
            bool(LOGS.search(name))
    return last in READERS or last in COPIES or bool(LOGS.search(name))


def pure(node: ast.AST) -> bool:
    """No call in `node` may change anything (every call is a `reader_call`)."""
    return all(reader_call(n) for n in ast.walk(node) if isinstance(n, ast.Call)) and not any(
        isinstance(n, ast.Await | ast.Yield | ast.YieldFrom) for n in ast.walk(node))


def fresh(value: ast.expr) -> bool:
    """A value that is a new object (or an immutable one), held by nothing else."""
    if isinstance(value, ast.Call):
        name = (dotted(value.func) or "").rsplit(".", 1)[-1]
        return name in COPIES or name in READERS - {"getattr", "min", "max"}
    return isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp |
                      ast.SetComp | ast.Constant | ast.JoinedStr | ast.Compare | ast.BinOp |
                      ast.UnaryOp)


def handed(expr: ast.AST | None, held: bool) -> set[str]:
    """The names whose object evaluating `expr` may leave held elsewhere: kept by a call, a
    container or (with `held`: an assigned or returned value) whatever receives `expr`."""
    if expr is None:
        return set()
    parents = {id(c): p for p in ast.walk(expr) for c in ast.iter_child_nodes(p)}
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Load) and _kept(n, parents, held)}


def _kept(node: ast.AST, parents: dict[int, ast.AST], held: bool) -> bool:
    """Whether the object `node` evaluates to may be kept (see `handed`)."""
    parent = parents.get(id(node))
    while (isinstance(parent, THROUGH) and not (
            isinstance(parent, ast.IfExp) and node is parent.test)) or (
            isinstance(parent, ast.comprehension) and isinstance(
                parents.get(id(parent)), ast.GeneratorExp)):  # a generator holds what it reads
        node = parent if not isinstance(parent, ast.comprehension) else parents[id(parent)]
        parent = parents.get(id(node))  # its value is theirs
    if parent is None:
        return held
    if isinstance(parent, ast.Attribute):  # ``x.attr``; ``x.method(...)`` may keep ``x``
        call = parents.get(id(parent))
        return isinstance(call, ast.Call) and call.func is parent and not (
            parent.attr in READ_METHODS | MUTATORS or parent.attr == "copy")
    if isinstance(parent, ast.Call):  # ``min(x, y)``, ``d.get(k, x)`` may return ``x``
        name = (dotted(parent.func) or "").rsplit(".", 1)[-1]
        return node is not parent.func and (not reader_call(parent) or (
            name in RETURNS_ARG and len(parent.args) + len(parent.keywords) > 1))
    return not isinstance(parent, ast.Subscript | ast.Compare | ast.UnaryOp | ast.BinOp |
                          ast.FormattedValue | ast.JoinedStr | ast.IfExp | ast.Slice |
                          ast.comprehension)


def targets(target: ast.expr) -> list[ast.expr]:
    """The single targets of an assignment target (a tuple's, a starred one's items)."""
    if isinstance(target, ast.Tuple | ast.List):
        return [t for item in target.elts for t in targets(item)]
    return targets(target.value) if isinstance(target, ast.Starred) else [target]


def stored(target: ast.expr) -> str | None:
    """The name a store binds or changes itself: ``x`` of ``x``, ``x[k]``, ``x.a``; None for
    a deeper store (``x[0].a``, ``x.a.b``), which changes an object something else may hold."""
    if isinstance(target, ast.Attribute | ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None
