"""What a returned value surely is, read on the syntax of one function (the values of `outs`).

A value under a returned key is a literal (``True``, ``"x"``, ``None``), ``NONEMPTY`` (surely
truthy: a non-empty list, dict or set literal, an f-string), ``FILLED`` (a container surely
holding a truthy item: ``[[x]]``, ``{"repo": [x]}``), a constructed object (``NEW`` and the
class as written: ``AuditReport(...)``, ``AuditReport.model_validate(...)``; `node_returns`
tells whether that class's instances are always truthy) or ``"?"`` (not known).

A local name returned is read through what it surely holds at that ``return``, on every path
that reaches it (`sure_locals`): a list, dict or set bound empty and added to on every such
path (``append``, ``add``, ``insert``, a store ``d[k] = v``, ``+= [x]``) is non-empty; a
constructed object stays one until the name is rebound. A path that raises does not reach the
return (LangGraph aborts the run on an exception). Whatever may undo it forgets the name: a
rebinding, ``pop``/``remove``/``clear``, an unknown method, the name handed to a call that is
no plain builtin, used in a nested function. A loop's body may run no time: what it adds does
not count after it; an ``except`` handler starts from what held before the ``try``; a ``with``
block runs to its end unless its manager is ``contextlib.suppress``.
"""

from __future__ import annotations

import ast
from collections.abc import Set as AbstractSet
from typing import Any

from automaton_auditor.forensics.code.common import dotted
from automaton_auditor.forensics.code.inert import (
    ADD_METHODS,
    DROP_METHODS,
    PURE_CALLS,
    READ_METHODS,
)

NONEMPTY = "<non-empty>"  # a value known to be truthy: ``[x]``, ``{"k": v}``, ``f"..."``
FILLED = "<filled>"  # a container holding a truthy item: ``[[x]]``, ``{"repo": [x]}``
CONTAINER = "<container>"  # a list, dict or set: adding to it makes it non-empty
NEW = "<new>"  # prefix of a constructed object's value: ``<new>AuditReport``
UNKNOWN = "?"
BUILDERS = ("model_validate", "model_validate_json", "model_construct", "parse_obj",
            "parse_raw")  # a Pydantic class's constructors
EMPTY_CALLS = ("list", "dict", "set")
GROWN = frozenset({"sort", "reverse"})  # methods that keep every item
Kinds = dict[str, Any]  # local name -> what it surely holds (CONTAINER, NONEMPTY, FILLED, NEW)


def literal(node: ast.expr, kinds: Kinds | None = None) -> Any:
    """What `node` surely is (see the module docstring); `kinds`: what the locals surely
    hold where it is evaluated."""
    kinds = kinds or {}
    if isinstance(node, ast.Constant) and isinstance(node.value, bool | str | int | float):
        return node.value
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.List | ast.Tuple | ast.Set) and node.elts:
        return FILLED if any(_truthy(literal(e, kinds)) for e in node.elts) else NONEMPTY
    if isinstance(node, ast.Dict) and node.keys:
        # a truthy value under a non-empty key: iterated or through ``.values()``, an item
        return FILLED if any(k is not None and _truthy(literal(k, kinds)) and
                             _truthy(literal(v, kinds))
                             for k, v in zip(node.keys, node.values, strict=True)) \
            else NONEMPTY
    if isinstance(node, ast.JoinedStr):
        return NONEMPTY
    if isinstance(node, ast.Name):
        kind = kinds.get(node.id)
        return kind if kind in (NONEMPTY, FILLED) or str(kind).startswith(NEW) else UNKNOWN
    made = constructed(node)
    return NEW + made if made else UNKNOWN


def constructed(node: ast.expr) -> str | None:
    """The class `node` builds an instance of, as written: ``Cls(...)``,
    ``Cls.model_validate(...)`` (a capitalised name: a class by convention; whether it
    is one is for the caller to check)."""
    if not isinstance(node, ast.Call):
        return None
    name = dotted(node.func) or ""
    head, _, tail = name.rpartition(".")
    if tail in BUILDERS and head:
        name = head
    return name if name.rsplit(".", 1)[-1][:1].isupper() else None


def _truthy(value: Any) -> bool:
    return value in (NONEMPTY, FILLED) or (
        isinstance(value, str | int | float) and bool(value) and value != UNKNOWN
        and not str(value).startswith(NEW))


def sure_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, Kinds]:
    """id of each ``return`` statement of `fn` (nested definitions aside) -> what the locals
    surely hold there."""
    flow = _Flow()
    flow.run(fn.body, {})
    return flow.at_returns


def _meet(*states: Kinds | None) -> Kinds | None:
    """What holds on every one of the paths (None: a path that never gets there)."""
    live = [s for s in states if s is not None]
    if not live:
        return None
    out: Kinds = {}
    for name, kind in live[0].items():
        found = [s.get(name) for s in live]
        if all(f == kind for f in found):
            out[name] = kind
        elif all(f in (CONTAINER, NONEMPTY, FILLED) for f in found):
            out[name] = CONTAINER if CONTAINER in found else NONEMPTY
    return out


def _forget(kinds: Kinds, names: set[str]) -> Kinds:
    return {n: k for n, k in kinds.items() if n not in names}


def _forget_handed(kinds: Kinds, node: ast.AST, also: AbstractSet[str] = frozenset()) -> Kinds:
    """`kinds` without what `node` may change (`_handed`), read only when something is held."""
    return _forget(kinds, _handed(node) | also) if kinds else kinds


def _stored(target: ast.AST | None) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} if target else set()


def _handed(node: ast.AST) -> set[str]:
    """Names `node` may change what they hold: bound, deleted, handed to a call that is no
    plain builtin (directly or in a literal), the receiver of a method that may drop items,
    used inside a nested function."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            out.add(sub.id)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            out |= {n.id for n in ast.walk(sub) if isinstance(n, ast.Name)}
        elif isinstance(sub, ast.Call) and dotted(sub.func) not in PURE_CALLS:
            for arg in [*sub.args, *(k.value for k in sub.keywords)]:
                items = arg.elts if isinstance(arg, ast.List | ast.Tuple | ast.Set) else [arg]
                out |= {a.id for a in items if isinstance(a, ast.Name)}
            func = sub.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    func.attr not in READ_METHODS | ADD_METHODS | GROWN:
                out.add(func.value.id)
        elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Del) and \
                isinstance(sub.value, ast.Name):
            out.add(sub.value.id)
    return out


class _Flow:
    """What the locals surely hold, statement by statement (see the module docstring)."""

    def __init__(self) -> None:
        self.at_returns: dict[int, Kinds] = {}

    def run(self, body: list[ast.stmt], kinds: Kinds | None) -> Kinds | None:
        """What holds after `body` (None: no path falls through it)."""
        for stmt in body:
            if kinds is None:
                return None
            kinds = self.stmt(stmt, kinds)
        return kinds

    def uses(self, node: ast.AST | None, kinds: Kinds) -> Kinds:
        """`kinds` after evaluating `node`: a constructed object stays one until rebound."""
        if node is None or not kinds:  # nothing held: nothing to lose (most functions)
            return kinds
        handed = _handed(node)
        bound = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                 and not isinstance(n.ctx, ast.Load)}
        return {n: k for n, k in kinds.items()
                if n not in bound and (n not in handed or str(k).startswith(NEW))}

    def stmt(self, stmt: ast.stmt, kinds: Kinds) -> Kinds | None:
        if isinstance(stmt, ast.Return):
            self.at_returns[id(stmt)] = self.uses(stmt.value, kinds)
            return None
        if isinstance(stmt, ast.Raise | ast.Break | ast.Continue):
            return None
        if isinstance(stmt, ast.If):
            kinds = self.uses(stmt.test, kinds)
            return _meet(self.run(stmt.body, kinds), self.run(stmt.orelse, kinds))
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            head = stmt.test if isinstance(stmt, ast.While) else stmt.iter
            entry = _forget_handed(self.uses(head, kinds), stmt, (
                set() if isinstance(stmt, ast.While) else _stored(stmt.target)))
            self.run(stmt.body, entry)  # may run no time: only its returns are read
            return _meet(entry, self.run(stmt.orelse, entry)) if stmt.orelse else entry
        if isinstance(stmt, ast.Try | ast.TryStar):
            return self.attempt(stmt, kinds)
        if isinstance(stmt, ast.With | ast.AsyncWith):
            kinds = self.uses(ast.Tuple(elts=[i.context_expr for i in stmt.items]), kinds)
            kinds = _forget(kinds, set().union(*(_stored(i.optional_vars) for i in stmt.items)))
            after = self.run(stmt.body, kinds)
            swallows = any(dotted(i.context_expr.func if isinstance(i.context_expr, ast.Call)
                                  else i.context_expr) in ("suppress", "contextlib.suppress")
                           for i in stmt.items)
            return _meet(_forget_handed(kinds, stmt), after) if swallows else after
        if isinstance(stmt, ast.Match):
            kinds = self.uses(stmt.subject, kinds)
            rest = _forget_handed(kinds, stmt)
            return _meet(rest, *(self.run(c.body, rest) for c in stmt.cases))
        return self.simple(stmt, kinds)

    def attempt(self, stmt: ast.Try | ast.TryStar, kinds: Kinds) -> Kinds | None:
        """A ``try``: the body then ``else``, or any handler from what held before it."""
        body = self.run(stmt.body, kinds)
        failed = _forget_handed(kinds, ast.Module(body=stmt.body, type_ignores=[]))
        paths = [self.run(stmt.orelse, body) if stmt.orelse else body]
        paths += [self.run(h.body, _forget(failed, {h.name} if h.name else set()))
                  for h in stmt.handlers]
        after = _meet(*paths)
        if not stmt.finalbody:
            return after
        if after is None:  # every path returns or raises: the finally block still runs
            self.run(stmt.finalbody, failed)
            return None
        return self.run(stmt.finalbody, after)

    def simple(self, stmt: ast.stmt, kinds: Kinds) -> Kinds:
        """An assignment, a call on a local (``items.append(x)``), or anything else."""
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            value = stmt.value
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            kinds = self.uses(value, kinds)
            made = _bound(value, kinds)
            if isinstance(value, ast.Name) and not str(kinds.get(value.id)).startswith(NEW):
                kinds = _forget(kinds, {value.id})  # an alias: changes through it go unseen
            for target in targets:
                kinds = self.store(target, value, made, kinds)
            return kinds
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and \
                isinstance(stmt.op, ast.Add) and kinds.get(stmt.target.id) in (
                    CONTAINER, NONEMPTY, FILLED):
            name = stmt.target.id
            kinds = self.uses(stmt.value, kinds)
            return {**kinds, name: _added(kinds.get(name), stmt.value, kinds)} \
                if isinstance(stmt.value, ast.List) and stmt.value.elts else kinds
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return self.call(stmt.value, kinds)
        return self.uses(stmt, kinds)

    def store(self, target: ast.expr, value: ast.expr, made: Any, kinds: Kinds) -> Kinds:
        if isinstance(target, ast.Name):
            kinds = _forget(kinds, {target.id})
            return {**kinds, target.id: made} if made is not None else kinds
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and \
                kinds.get(target.value.id) in (CONTAINER, NONEMPTY, FILLED):
            name = target.value.id  # ``d[k] = v``: a dict with that key (a list: one item)
            key = literal(target.slice, kinds) if not isinstance(target.slice, ast.Slice) else ""
            full = _truthy(literal(value, kinds)) and _truthy(key)
            return {**kinds, name: FILLED if full or kinds[name] == FILLED else NONEMPTY}
        return self.uses(target, kinds)

    def call(self, call: ast.Call, kinds: Kinds) -> Kinds:
        """``x.append(item)`` / ``add`` / ``insert`` / ``setdefault`` / ``extend([...])`` /
        ``update({...})`` on a local container: non-empty after it."""
        func = call.func
        name = func.value.id if isinstance(func, ast.Attribute) and \
            isinstance(func.value, ast.Name) else None
        kind = kinds.get(name) if name else None
        if name is None or kind not in (CONTAINER, NONEMPTY, FILLED):
            return self.uses(call, kinds)
        kinds = self.uses(ast.Tuple(elts=[*call.args, *(k.value for k in call.keywords)]),
                          kinds)
        assert isinstance(func, ast.Attribute)
        if func.attr in ("append", "add", "insert") and call.args:
            return {**kinds, name: _added(kind, ast.List(elts=call.args[-1:]), kinds)}
        if func.attr in ("extend", "update") and len(call.args) == 1 and _filled_literal(
                call.args[0]):
            return {**kinds, name: _added(kind, call.args[0], kinds)}
        if func.attr == "setdefault" and call.args:
            return {**kinds, name: kind if kind == FILLED else NONEMPTY}
        if func.attr in DROP_METHODS:
            return {**kinds, name: CONTAINER}
        if func.attr in READ_METHODS | ADD_METHODS | GROWN:
            return kinds
        return _forget(kinds, {name})


def _filled_literal(node: ast.expr) -> bool:
    return (isinstance(node, ast.List | ast.Tuple | ast.Set) and bool(node.elts)) or \
        (isinstance(node, ast.Dict) and bool(node.keys))


def _added(kind: Any, items: ast.expr, kinds: Kinds) -> Any:
    """A container's kind once the literal `items` (a list or a dict) is added to it."""
    return FILLED if kind == FILLED or literal(items, kinds) == FILLED else NONEMPTY


def _bound(value: ast.expr, kinds: Kinds) -> Any:
    """What a local bound to `value` surely holds (None: nothing known)."""
    if isinstance(value, ast.List | ast.Dict | ast.Set | ast.Tuple) and not (
            getattr(value, "elts", None) or getattr(value, "keys", None)):
        return CONTAINER if not isinstance(value, ast.Tuple) else None
    if isinstance(value, ast.Call) and dotted(value.func) in EMPTY_CALLS and \
            not value.args and not value.keywords:
        return CONTAINER
    found = literal(value, kinds)
    if isinstance(value, ast.Name):  # an alias: changes through either name go unseen
        return found if str(found).startswith(NEW) else None
    return found if found in (NONEMPTY, FILLED) or str(found).startswith(NEW) else None
