"""Which returned values are the state's own value of a key (the ``echo`` of `outs`).

A node that returns, under a key with an add reducer (``operator.add``), the very list it read
from the state under that key hands LangGraph that list to append to itself: every item it
held is then in it twice. This module tells such a value from a fresh one, syntactically and
conservatively: a local name counts only when every binding of it in the function is the
state's value of that one key (growing it in place, ``x.append(o)``, ``x += [o]``, keeps it).
"""

from __future__ import annotations

import ast

from automaton_auditor.forensics.code.common import dotted, str_value


def state_value(node: ast.expr, state: str, mirrors: dict[str, str]) -> str | None:
    """The key `node` holds the state's own value of: ``state["k"]``, ``state.get("k", d)``,
    ``state.k``, a local of `mirrors`, a copy of one (``list(x)``, ``x.copy()``) or a sum
    with one (``x + [item]``: the old items are still in it)."""
    if isinstance(node, ast.Name):
        return mirrors.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return state_value(node.left, state, mirrors) or \
            state_value(node.right, state, mirrors)
    if isinstance(node, ast.Subscript) and dotted(node.value) == state:
        return str_value(node.slice)
    if isinstance(node, ast.Attribute) and dotted(node.value) == state:
        return node.attr
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "get" and \
            dotted(func.value) == state and node.args:
        return str_value(node.args[0])
    if isinstance(func, ast.Attribute) and func.attr == "copy" and not node.args:
        return state_value(func.value, state, mirrors)
    if dotted(func) == "list" and len(node.args) == 1:
        return state_value(node.args[0], state, mirrors)
    return None


def mirrors_of(node: ast.FunctionDef | ast.AsyncFunctionDef, state: str) -> dict[str, str]:
    """Local names bound only to the state's own value of one key (`state_value`; an
    augmented ``x += [item]`` grows that same list): ``opinions = state.get("opinions",
    []); opinions.append(o)``. A name bound anything else anywhere is left out."""
    bound: dict[str, set[str | None]] = {}
    todo: list[ast.AST] = list(node.body)
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        todo.extend(ast.iter_child_nodes(sub))
        if isinstance(sub, ast.Assign | ast.AnnAssign) and sub.value is not None:
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            value = state_value(sub.value, state, {}) \
                if len(targets) == 1 and isinstance(targets[0], ast.Name) else None
            for target in targets:
                for name in _stored(target):
                    bound.setdefault(name, set()).add(value)
        elif isinstance(sub, ast.For | ast.AsyncFor | ast.withitem | ast.NamedExpr |
                        ast.comprehension | ast.AnnAssign):
            for name in _stored(sub.optional_vars if isinstance(sub, ast.withitem)
                                else sub.target):
                bound.setdefault(name, set()).add(None)
    return {name: key for name, keys in bound.items() if len(keys) == 1 and name != state
            for key in keys if key is not None}


def rebound_keys(node: ast.FunctionDef | ast.AsyncFunctionDef, state: str,
                 mirrors: dict[str, str]) -> frozenset[str]:
    """Keys the function stores a value of its own into (``state["opinions"] = opinions``,
    `opinions` a fresh list): a later read of ``state["opinions"]`` is that value, not the
    state's. Storing the state's own value back (a `mirrors` local) rebinds nothing."""
    keys: set[str] = set()
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Assign):
            continue
        for target in sub.targets:
            key = str_value(target.slice) if isinstance(target, ast.Subscript) and \
                dotted(target.value) == state else None
            if key and state_value(sub.value, state, mirrors) != key:
                keys.add(key)
    return frozenset(keys)


def _stored(target: ast.AST | None) -> list[str]:
    """The names a binding target rebinds (``a``, ``a, b``; not ``d[k]``, which mutates d)."""
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)] if target is not None else []
