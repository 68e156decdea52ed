"""Whether a function is a stub: it only passes, logs, or returns its input or nothing."""

from __future__ import annotations

import ast
import re
import textwrap

_NOOP_CALLS = re.compile(r"^(?:print|log\w*\.\w+|logger\.\w+|logging\.\w+)$")


def _inert(stmt: ast.stmt, params: set[str]) -> bool:
    """A statement that computes nothing: ``pass``, a docstring, a print or log call,
    ``return`` of nothing, a constant, an empty collection or a parameter unchanged."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr):
        value = stmt.value
        return isinstance(value, ast.Constant) or (
            isinstance(value, ast.Call) and bool(_NOOP_CALLS.match(ast.unparse(value.func))))
    if isinstance(stmt, ast.Return):
        returned = stmt.value
        empty = (isinstance(returned, ast.Dict) and not returned.keys) or (
            isinstance(returned, (ast.List, ast.Tuple)) and not returned.elts)
        return returned is None or isinstance(returned, ast.Constant) or empty or (
            isinstance(returned, ast.Name) and returned.id in params)
    return False


def does_nothing(source: str | None) -> bool:
    """Whether a function's source only passes, logs, or returns its input or nothing (a
    stub: ``def chief_justice_node(state): return state``)."""
    try:
        tree = ast.parse(textwrap.dedent(source or ""))
    except (SyntaxError, ValueError, RecursionError):
        return False  # cut or unreadable: nothing is claimed
    func = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                None)
    if func is None:
        return False
    params = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    return all(_inert(stmt, params) for stmt in func.body)
