"""Whether a state key's reducer appends what a node returns to what the key holds, so that
a node handing the key's own value back doubles it (`stateflow.state.doubled_lists`).

``operator.add`` and ``lambda a, b: a + b`` are known by name. A reducer the repository
defines is read: it appends when it returns its first parameter plus its second
(``return (existing or []) + (new or [])``), or, for a dict of lists, when it loops over the
second's items and extends or adds to the lists it holds (``merged.setdefault(k, []).extend(v)``,
``combined[k] = combined[k] + v``). One that drops duplicates or replaces is none.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.source import parse_file

ADDERS = frozenset({"operator.add", "operator.iadd", "operator.concat"})
_ADD_LAMBDA = re.compile(r"lambda\s+(\w+)\s*,\s*(\w+)\s*:\s*\1\s*\+\s*\2$")


def appending(reducer: str | None, graph: CallGraph, repo: Path | None, path: str,
              line: int) -> bool:
    """Whether `reducer` (as the state class in `path` names it, at `line`) appends."""
    reducer = _channel_operator(reducer) if reducer else None
    if not reducer:
        return False
    if reducer in ADDERS or _ADD_LAMBDA.match(reducer):
        return True
    key = graph.named(path, reducer, line)
    tree = parse_file(str(repo / key[0])) if key is not None and repo is not None else None
    start = graph.functions[key]["line"] if key is not None else 0
    return any(isinstance(fn, ast.FunctionDef) and fn.lineno == start and _appends(fn)
               for fn in ast.walk(tree)) if tree is not None else False


def _channel_operator(reducer: str) -> str | None:
    """The reducer itself, or the operator of a channel given in its place
    (``Annotated[list, BinaryOperatorAggregate(list, operator=merge)]``: ``merge``)."""
    if "BinaryOperatorAggregate(" not in reducer:
        return reducer
    try:
        call = ast.parse(reducer, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(call, ast.Call):
        return None
    given = [k.value for k in call.keywords if k.arg == "operator"] + call.args[1:2]
    return ast.unparse(given[0]) if given else None


def _appends(fn: ast.FunctionDef) -> bool:
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    if len(params) != 2:
        return False
    held, given = params
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.BinOp) and \
                isinstance(node.value.op, ast.Add) and _name(node.value.left) == held and \
                _name(node.value.right) == given:
            return True
        if isinstance(node, ast.For) and _items_of(node.iter) == given and \
                _extends(node, _value_name(node.target)):
            return True
    return False


def _value_name(target: ast.expr) -> str | None:
    """``v`` of ``for k, v in ...``."""
    if isinstance(target, ast.Tuple) and len(target.elts) == 2 and \
            isinstance(target.elts[1], ast.Name):
        return target.elts[1].id
    return None


def _extends(loop: ast.For, value: str | None) -> bool:
    """Whether the loop's body appends the value it walks to a list: ``.extend(v)`` or
    ``... + v``."""
    return value is not None and any(
        (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
         and n.func.attr == "extend" and [_name(a) for a in n.args] == [value])
        or (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) and _name(n.right) == value)
        for stmt in loop.body for n in ast.walk(stmt))


def _name(node: ast.expr) -> str | None:
    """The name an operand reads: ``x``, or ``x or []`` / ``(x or {})``."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and node.values:
        node = node.values[0]
    return node.id if isinstance(node, ast.Name) else None


def _items_of(node: ast.expr) -> str | None:
    """The name whose ``.items()`` a loop walks (``(new or {}).items()``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "items" and not node.args:
        return _name(node.func.value)
    return None
