"""What a state key's reducer does with what a node returns, read once for every check
(`operator_of`): ``"operator.add"`` when it appends it to what the key holds,
``"operator.or_"`` when it merges it into the dict the key holds.

``operator.add`` / ``operator.or_`` (and their in-place forms) are known by name, and so is
a ``lambda a, b: a + b``. A reducer the repository defines is read: a function of two
parameters whose every return is ``a + b``, ``operator.add(a, b)``, ``a | b``,
``{**a, **b}`` or ``operator.or_(a, b)`` (or hands one side back alone, ``return b or []``,
for an empty other side) does what that operator does. One that drops duplicates, resets or
replaces is left as written. A dict-of-lists merge that loops over the second's items and
extends the lists it holds (``merged.setdefault(k, []).extend(v)``,
``combined[k] = combined[k] + v``) also appends (`appending`: a node handing a key's own
value back doubles it, `stateflow.state.doubled_lists`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON, dotted
from automaton_auditor.forensics.code.source import parse_file
from automaton_auditor.forensics.code.state_schema import class_fields, typed_classes

ADD, OR = "operator.add", "operator.or_"
# the operators a reducer may name, and what each does
OPERATORS = {"add": ADD, "iadd": ADD, "concat": ADD, "or_": OR, "ior": OR}


def appending(reducer: str | None, graph: CallGraph, repo: Path | None, path: str,
              line: int) -> bool:
    """Whether `reducer` (as the state class in `path` names it, at `line`) appends."""
    if operator_of(reducer, graph, repo, path, line) == ADD:
        return True
    fn = _function(_channel_operator(reducer) if reducer else None, graph, repo, path, line)
    # one return appending the update is enough: a node handing back a list that is not
    # empty reaches it (``if right == []: return []`` resets only on an empty update)
    return fn is not None and (_extends_each(fn) or ADD in _each_return(fn))


def channel_ops(facts: dict[str, JSON], graph: CallGraph, repo: Path | None,
                state: str | None) -> dict[str, str | None]:
    """State key -> what its reducer does (`operator_of`), for the keys of class `state`
    and of its base classes."""
    fields, _complete = class_fields(typed_classes(facts), state)
    return {str(f["name"]): operator_of(f["reducer"], graph, repo, path, int(f["line"]))
            if path else f["reducer"]
            for path, f in fields}


def operator_of(reducer: str | None, graph: CallGraph, repo: Path | None, path: str,
                line: int) -> str | None:
    """What `reducer` (as the state class in `path` names it, at `line`) does: ``ADD``,
    ``OR``, or the reducer as written when it is neither (None: no reducer)."""
    named = _channel_operator(reducer) if reducer else None
    if not named:
        return reducer
    if named.startswith("operator.") and named[9:] in OPERATORS:
        return OPERATORS[named[9:]]
    if named.startswith("lambda"):
        try:
            fn = ast.parse(named, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return reducer
        found = _does(fn) if isinstance(fn, ast.Lambda) else None
    else:
        function = _function(named, graph, repo, path, line)
        found = _does(function) if function is not None else None
    return found or reducer


def _function(reducer: str | None, graph: CallGraph, repo: Path | None, path: str,
              line: int) -> ast.FunctionDef | None:
    """The repository function `reducer` names, parsed (None: not the repository's)."""
    key = graph.named(path, reducer, line) if reducer else None
    tree = parse_file(str(repo / key[0])) if key is not None and repo is not None else None
    start = graph.functions[key]["line"] if key is not None else 0
    return next((fn for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
                 and fn.lineno == start), None) if tree is not None else None


def _does(fn: ast.FunctionDef | ast.Lambda) -> str | None:
    """The one operator every return of a two-parameter reducer applies to its parameters
    (a return of one side alone, for an empty other side, goes with any)."""
    found = _each_return(fn)
    return found.pop() if len(found) == 1 else None


def _each_return(fn: ast.FunctionDef | ast.Lambda) -> set[str | None]:
    """What each return of a two-parameter reducer applies (`_applies`; None: something
    else), a return of one side alone left out."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    if len(params) != 2:
        return {None}
    values = [fn.body] if isinstance(fn, ast.Lambda) else [
        r.value for r in ast.walk(fn) if isinstance(r, ast.Return)]
    return {_applies(v, *params) if v is not None else None for v in values
            if v is None or _name(v) not in params}


def _applies(value: ast.expr, held: str, given: str) -> str | None:
    """``a + b`` / ``operator.add(a, b)``: ADD; ``a | b`` / ``{**a, **b}`` /
    ``operator.or_(a, b)``: OR (``a`` the held value, ``b`` the update)."""
    if isinstance(value, ast.BinOp) and [_name(value.left), _name(value.right)] == \
            [held, given]:
        return ADD if isinstance(value.op, ast.Add) else OR if isinstance(
            value.op, ast.BitOr) else None
    if isinstance(value, ast.Dict) and value.keys == [None, None]:
        return OR if [_name(v) for v in value.values] == [held, given] else None
    if isinstance(value, ast.Call) and not value.keywords and \
            [_name(a) for a in value.args] == [held, given]:
        return OPERATORS.get((dotted(value.func) or "").removeprefix("operator."))
    return None


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


def _extends_each(fn: ast.FunctionDef) -> bool:
    """A dict-of-lists merge: a loop over the update's items extends the lists held."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    return len(params) == 2 and any(
        isinstance(node, ast.For) and _items_of(node.iter) == params[1]
        and _extends(node, _value_name(node.target)) for node in ast.walk(fn))


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
