"""State reads that run only as a fallback behind another key's read.

``rules = state.get("rules"); if isinstance(rules, dict): return rules; full =
state.get("full")`` reads ``full`` only when ``rules`` holds no usable value, as do
``if not isinstance(rules, dict): rules = state.get("full")`` and ``state.get("rules") or
state.get("full")``. Whether ``full`` ever arrives then matters only when ``rules`` does not:
`runtime` asks it of the primary key before calling a read of ``full`` one that never sees
a value. This module finds, in one function body, the read expressions behind a primary
key and names that key (the primary: a read of the state parameter, directly or through a
local name bound to one).

A test is read as holding when the value is present (``x``, ``isinstance(x, T)``, ``x is not
None``) or absent (``not x``, ``x is None``): the body of an absent test, the ``else`` of a
present one, and what follows a present test whose body leaves the function, run only when
the primary gave nothing usable. Nested functions are their own scopes and are skipped.
"""

from __future__ import annotations

import ast

Behind = dict[int, set[str]]  # id of a read expression -> the primary keys it falls back from


def _read_key(node: ast.AST, params: set[str]) -> str | None:
    """The key of ``p.get("k", ...)``, ``p["k"]`` or ``p.k`` on a parameter `p`, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and node.args:
        owner, key = node.func.value, node.args[0]
    elif isinstance(node, ast.Subscript):
        owner, key = node.value, node.slice
    elif isinstance(node, ast.Attribute):
        owner, key = node.value, ast.Constant(node.attr)
    else:
        return None
    if not (isinstance(owner, ast.Name) and owner.id in params):
        return None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


class _Walk:
    """One function body: primary locals and the reads behind them."""

    def __init__(self, params: set[str]) -> None:
        self.params = params
        self.locals: dict[str, str] = {}  # local name -> the key it was read from
        self.behind: Behind = {}

    def primary(self, node: ast.expr) -> str | None:
        """The key `node` reads: a state read, a local bound to one, or the first value of
        ``a or b`` when that is one."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            node = node.values[0]
        if isinstance(node, ast.Name):
            return self.locals.get(node.id)
        return _read_key(node, self.params)

    def test(self, test: ast.expr) -> tuple[str, str | None, bool]:
        """(local, key, present) for a test on a local bound to one primary read; key None
        for any other test."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            name, key, present = self.test(test.operand)
            return name, key, not present
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and \
                test.func.id == "isinstance" and test.args:
            return self.test(test.args[0])
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.comparators[0], ast.Constant) and \
                test.comparators[0].value is None and isinstance(test.ops[0], ast.Is | ast.IsNot):
            name, key, _present = self.test(test.left)
            return name, key, isinstance(test.ops[0], ast.IsNot)
        if isinstance(test, ast.Name):
            return test.id, self.locals.get(test.id), True
        return "", None, True

    def mark(self, node: ast.AST, keys: frozenset[str]) -> None:
        """Note every state read inside `node` as behind `keys`, and the ``a or b`` falls."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.BoolOp) and isinstance(sub.op, ast.Or):
                before: set[str] = set()
                for value in sub.values:
                    if before:
                        for read in ast.walk(value):
                            if _read_key(read, self.params) is not None:
                                self.behind.setdefault(id(read), set()).update(before)
                    if (key := self.primary(value)) is not None:
                        before.add(key)
            if keys and _read_key(sub, self.params) is not None:
                self.behind.setdefault(id(sub), set()).update(keys)

    def block(self, body: list[ast.stmt], keys: frozenset[str]) -> None:
        """Walk statements in order; `keys`: the primaries the block runs behind."""
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if isinstance(stmt, ast.If):
                self.mark(stmt.test, keys)
                name, key, present = self.test(stmt.test)
                extra = frozenset({key}) if key is not None else frozenset()
                self.block(stmt.body, keys | extra if not present and _binds(
                    stmt.body, name) else keys)
                self.block(stmt.orelse, keys | extra if present and _binds(
                    stmt.orelse, name) else keys)
                if present and key is not None and not stmt.orelse and _hands_back(
                        stmt.body, name):
                    keys = keys | extra  # what follows runs only when the primary failed
                continue
            nested = [getattr(stmt, b, None) or [] for b in ("body", "orelse", "finalbody")]
            own = [c for c in ast.iter_child_nodes(stmt) if not isinstance(
                c, ast.stmt | ast.ExceptHandler | ast.match_case)]
            for child in own:
                self.mark(child, keys)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name):
                key = self.primary(stmt.value)
                if key is not None and not keys:
                    self.locals[stmt.targets[0].id] = key
                elif not keys:
                    self.locals.pop(stmt.targets[0].id, None)
            for inner in nested:
                self.block(inner, keys)
            for handler in getattr(stmt, "handlers", None) or []:
                self.block(handler.body, keys)
            for case in getattr(stmt, "cases", None) or []:
                self.block(case.body, keys)


def _binds(body: list[ast.stmt], name: str) -> bool:
    """Whether `body` assigns local `name` anew (the fallback replaces the primary's value)."""
    return any(isinstance(t, ast.Name) and t.id == name for stmt in body
               if isinstance(stmt, ast.Assign) for t in stmt.targets)


def _hands_back(body: list[ast.stmt], name: str) -> bool:
    """Whether `body` ends by returning what local `name` holds (``return rules``)."""
    last = body[-1] if body else None
    return isinstance(last, ast.Return) and last.value is not None and any(
        isinstance(n, ast.Name) and n.id == name for n in ast.walk(last.value))


def behind_reads(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: set[str]) -> Behind:
    """The state reads of `fn` (on `params`) that run only as a fallback behind another
    key's read (see the module docstring), by the read expression's id."""
    walk = _Walk(params)
    walk.block(fn.body, frozenset())
    return walk.behind
