"""Rules kept in a table and run by a loop: each entry of the table is a rule.

``rules = [(is_flaw, cap), (lambda p, d, t, c: spread(p, d, t) > 2, re_evaluate)]`` run by
``for cond, act in rules: if cond(p, d, t, c): return act(p, d, t, c)`` decides as the
inline ``if is_flaw(p, d, t, c): return cap(p, d, t, c)`` and ``if spread(p, d, t) > 2:
return re_evaluate(p, d, t, c)`` do. `expand` writes the loop's body out once per entry,
each call of a loop name replaced by what that entry holds: a lambda's body with its
parameters replaced by the call's arguments, or a call of the function the entry names with
the call's arguments. The rewritten statements carry the entry's lines, so a fact quotes the
entry. What counts is what the entries' callables compute, never their names.
"""

from __future__ import annotations

import ast
import copy

from automaton_auditor.forensics.code.exprs import own_exprs, paired

MAX_ENTRIES = 24
CALLABLE = ast.Lambda | ast.Name | ast.Attribute
TABLE = ast.List | ast.Tuple | ast.Dict


def module_tables(tree: ast.Module) -> dict[str, ast.expr]:
    """Names a module binds to a literal list, tuple or dict (a table of rules, maybe)."""
    out: dict[str, ast.expr] = {}
    for stmt in tree.body:
        out.update(_tables([stmt]))
    return out


def _tables(stmts: list[ast.stmt]) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for stmt in stmts:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else \
            [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        value = getattr(stmt, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and isinstance(value, TABLE):
                out[target.id] = value
    return out


def function_tables(node: ast.FunctionDef | ast.AsyncFunctionDef,
                    module: dict[str, ast.expr]) -> dict[str, ast.expr]:
    """The tables a function can loop over: the module's, then its own (which shadow them)."""
    own: list[ast.stmt] = [s for s in ast.walk(node) if isinstance(s, ast.Assign | ast.AnnAssign)]
    return {**module, **_tables(own)}


def _entries(source: ast.expr, tables: dict[str, ast.expr]) -> list[ast.expr]:
    """The entries a loop takes from `source`: a literal table or a name bound to one, and
    ``table.items()`` / ``.values()`` / ``.keys()`` of a dict."""
    view = ""
    if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and \
            not source.args and source.func.attr in ("items", "values", "keys"):
        view, source = source.func.attr, source.func.value
    table = tables.get(source.id) if isinstance(source, ast.Name) else source
    if isinstance(table, ast.List | ast.Tuple) and not view:
        return list(table.elts)
    if not isinstance(table, ast.Dict):
        return []
    keys = [k for k in table.keys if k is not None]
    if view == "items":
        return [ast.Tuple(elts=[k, v], ctx=ast.Load()) for k, v in
                zip(table.keys, table.values, strict=True) if k is not None]
    return list(table.values) if view == "values" else keys


def expand(loop: ast.For | ast.AsyncFor, tables: dict[str, ast.expr]) -> list[list[ast.stmt]]:
    """The loop's body written out once per table entry whose callables the body calls
    (none when the loop takes no entry from a table or calls none of them)."""
    out: list[list[ast.stmt]] = []
    for entry in _entries(loop.iter, tables)[:MAX_ENTRIES]:
        held = {name: value for name, value in paired(loop.target, entry)
                if isinstance(value, CALLABLE)}
        called = {sub.func.id for s in loop.body for sub in ast.walk(s) if isinstance(
            sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in held}
        if not called:
            continue
        rewrite = _Rewrite({n: held[n] for n in called})
        body = [rewrite.visit(copy.deepcopy(s)) for s in loop.body]
        for stmt in body:
            rewrite.place(stmt)
        out.append(body)
    return out


def applied_calls(loop: ast.For | ast.AsyncFor, tables: dict[str, ast.expr]) -> list[ast.expr]:
    """What the loop calls through its table: each entry's lambda body or named call, with
    the loop's arguments (the calls a call graph follows)."""
    out: list[ast.expr] = []
    for body in expand(loop, tables):
        for stmt in body:
            out += [n for n in ast.walk(stmt) if isinstance(n, ast.expr) and _applied(n)]
    return out


class _Rewrite(ast.NodeTransformer):
    """Replaces calls of the loop's names by what one entry holds."""

    def __init__(self, held: dict[str, ast.expr]) -> None:
        self.held = held

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        value = self.held.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if value is None:
            return node
        if isinstance(value, ast.Lambda):
            out = _bound(value, node)
        else:  # ``(is_flaw, cap)``: the named function, called with the loop's arguments
            out = ast.Call(func=copy.deepcopy(value), args=node.args, keywords=node.keywords)
            ast.copy_location(out, value)
        out._applied = True  # type: ignore[attr-defined]  # (`place`, `applied_calls`)
        return out

    def place(self, stmt: ast.stmt) -> None:
        """A statement holding an entry's callable sits on that entry's lines."""
        for sub in ast.walk(stmt):
            if not isinstance(sub, ast.stmt):
                continue
            inner = [n for n in ast.walk(sub) if isinstance(n, ast.expr) and _applied(n)]
            own = [n for e in own_exprs(sub) for n in ast.walk(e)
                   if isinstance(n, ast.expr) and _applied(n)]
            if inner:
                sub.lineno = min(n.lineno for n in own or inner)
                sub.end_lineno = max(n.end_lineno or n.lineno for n in inner)


def _applied(node: ast.expr) -> bool:
    """Whether `node` stands for what an entry's callable computes (`_Rewrite`)."""
    return bool(getattr(node, "_applied", False))


def _bound(fn: ast.Lambda, call: ast.Call) -> ast.expr:
    """A lambda's body with its parameters replaced by the call's arguments."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    given = {**dict(zip(params, call.args, strict=False)),
             **{k.arg: k.value for k in call.keywords if k.arg}}

    class _Args(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            arg = given.get(node.id)
            return ast.copy_location(copy.deepcopy(arg), node) if arg is not None else node

    return _Args().visit(copy.deepcopy(fn.body))  # type: ignore[no-any-return]
