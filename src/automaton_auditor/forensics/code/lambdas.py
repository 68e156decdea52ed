"""Lambdas read as functions: one a graph node runs, or one bound to a name.

A lambda's body is one expression, and calling it returns that expression: it is a def
whose body is ``return <expr>``. The walk (`calls.CallCollector`) records the lambdas
picked here as such a def, so what a node built from ``builder.add_node("gate", lambda s:
{})`` (or from ``gate = lambda s: {}``) returns is read by the same return analysis as a
def's (`outs`). Other lambdas (a sort key, a callback handed to a library) stay no
functions: nothing names them or runs them as a node.
"""

from __future__ import annotations

import ast
from collections import Counter

NODE_ADDERS = {"add_node"}  # the builder method whose action runs as a node


def node_action(call: ast.Call) -> ast.expr | None:
    """The callable an ``add_node`` call is given: its ``action=`` keyword, else its last
    positional argument when it has two (``add_node(fn)`` alone names the node after it)."""
    return next((kw.value for kw in call.keywords if kw.arg == "action"),
                call.args[-1] if len(call.args) >= 2 else None)


def inline_name(lam: ast.Lambda) -> str:
    """The name an inline lambda is recorded under: where it is written, so the graph's
    reading of the ``add_node`` call (`interp`) finds the same one."""
    return f"<lambda:{lam.lineno}:{lam.col_offset}>"


def picked_lambdas(tree: ast.Module) -> dict[int, str]:
    """id of each lambda read as a function -> its name: an ``add_node`` action
    (`inline_name`), or the value of ``name = lambda ...`` when the module binds that name
    nowhere else (a name bound twice may hold something else when it is used)."""
    stores: Counter[str] = Counter()
    bound: list[tuple[str, ast.Lambda]] = []
    picked: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] += 1
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stores[node.name] += 1
        elif isinstance(node, ast.arg):
            stores[node.arg] += 1
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in NODE_ADDERS and \
                isinstance(action := node_action(node), ast.Lambda):
            picked[id(action)] = inline_name(action)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Lambda):
            bound.append((node.targets[0].id, node.value))
    for name, lam in bound:
        if stores[name] == 1:
            picked.setdefault(id(lam), name)
    return picked


def as_def(lam: ast.Lambda, name: str) -> tuple[ast.FunctionDef, ast.Return]:
    """The def a lambda is, and its one return: its parameters, and a body that returns its
    expression (the expression itself, not a copy, at the lambda's lines)."""
    ret = ast.Return(value=lam.body)
    ast.copy_location(ret, lam.body)
    fn = ast.FunctionDef(name=name, args=lam.args, body=[ret], decorator_list=[],
                         returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12 and later
        setattr(fn, "type_params", [])  # noqa: B010 (the field is not in 3.11's stubs)
    return ast.copy_location(fn, lam), ret
