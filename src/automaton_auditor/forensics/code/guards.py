"""What a test of a function's state parameter says about the state's keys (the guards of
`outs`), and whether a guard can hold with what a router sees (`possible`).

A guard is ``[key, want]``: the test holds only if the state's value under ``key`` is truthy
(``True``), falsy (``False``) or set to something other than None (``"set"``); a key that
never arrives reads as falsy. `Tests.split` gives the guards a test implies when it holds and
when it fails:

- a read of the key (``state.get("k")``, ``state["k"]``, ``state.k``; a ``.get`` default must
  be a falsy constant, else an absent key reads truthy) or a local bound once to such a read
  and only read as a value: truthy when the test holds, falsy when it fails;
- ``not t`` swaps the two; ``a and b`` holds with every guard of each operand, and fails with
  a lone operand's;
- ``"k" in state``, ``state.k is not None``: set; ``not in``, ``is None``: falsy;
- ``x == "lit"``, ``x`` a read of the key (directly or through such a local) whose default is
  a constant other than the literal, the literal truthy: the key is truthy when it holds,
  nothing is known when it fails (``!=`` the other way round).

Anything else implies nothing.
"""

from __future__ import annotations

import ast
from typing import Any

from automaton_auditor.forensics.code.common import JSON, dotted, str_value
from automaton_auditor.forensics.code.node_returns import UNKNOWN

Guard = list[Any]  # [key, True | False | SET]
SET = "set"  # the key holds a value other than None (``is not None``, ``"k" in state``)
ABSENT = "<absent>"  # what a view holds for a key that never arrived
Split = tuple[list[Guard], list[Guard]]  # the guards when the test holds, when it fails
NOT_CONSTANT = object()  # a default whose value is not a constant


def possible(out: JSON, view: dict[str, Any]) -> bool:
    """False when a guard of the out cannot hold with the values the router sees (`view`,
    key -> value: a literal, `UNKNOWN`, ``NONEMPTY`` or `ABSENT`)."""
    for key, wanted in out.get("guards") or []:
        value = view.get(key, ABSENT)
        if wanted == SET:  # anything but None: a falsy value is set too
            if value in (ABSENT, None):
                return False
        elif value != UNKNOWN and bool(value not in (ABSENT, None, False, 0, "")) != wanted:
            return False
    return True


class Tests:
    """The tests of one function whose state parameter is `state`."""

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, state: str) -> None:
        self.state = state
        self.reads = _bound_reads(node, state) if state else {}

    def split(self, test: ast.expr) -> Split:
        """The guards `test` implies when it holds and when it fails."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            parts = [self.split(value) for value in test.values]
            return [g for yes, _no in parts for g in yes], \
                (parts[0][1] if len(parts) == 1 else [])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            yes, no = self.split(test.operand)
            return no, yes
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            return self.compare(test.left, test.ops[0], test.comparators[0])
        key, default = self.read(test)
        return ([[key, True]], [[key, False]]) if key and default is not NOT_CONSTANT and \
            not default else ([], [])

    def compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> Split:
        if isinstance(op, ast.In | ast.NotIn) and dotted(right) == self.state:
            key = str_value(left)
            yes: list[Guard] = [[key, SET]] if key else []
            no: list[Guard] = [[key, False]] if key else []
            return (yes, no) if isinstance(op, ast.In) else (no, yes)
        key, default = self.read(left)
        if key is None or default is NOT_CONSTANT or not isinstance(right, ast.Constant):
            return [], []
        if isinstance(op, ast.Is | ast.IsNot) and right.value is None and default is None:
            return ([[key, False]], [[key, SET]]) if isinstance(op, ast.Is) else \
                ([[key, SET]], [[key, False]])
        if isinstance(op, ast.Eq | ast.NotEq) and right.value and \
                not isinstance(right.value, bool) and default != right.value:
            return ([[key, True]], []) if isinstance(op, ast.Eq) else ([], [[key, True]])
        return [], []

    def read(self, node: ast.expr) -> tuple[str | None, Any]:
        """The state key `node` reads (directly, or through a local bound once to the read)
        and what an absent key reads as: the read's default (None without one), or
        `NOT_CONSTANT` when that default is not a constant."""
        if isinstance(node, ast.Name) and node.id in self.reads:
            node = self.reads[node.id]
        return state_read(node, self.state)


def state_read(node: ast.expr, state: str) -> tuple[str | None, Any]:
    """The state key `node` reads (``state["k"]``, ``state.get("k", d)``, ``state.k``) and
    what an absent key reads as (`Tests.read`)."""
    if isinstance(node, ast.Subscript) and dotted(node.value) == state:
        return str_value(node.slice), None
    if isinstance(node, ast.Attribute) and dotted(node.value) == state:
        return node.attr, None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and dotted(node.func.value) == state and node.args:
        given = node.args[1] if len(node.args) > 1 else None
        default = None if given is None else given.value if isinstance(given, ast.Constant) \
            else [] if isinstance(given, ast.List | ast.Tuple) and not given.elts \
            else {} if isinstance(given, ast.Dict) and not given.keys else NOT_CONSTANT
        return str_value(node.args[0]), default
    return None, None


def _bound_reads(node: ast.FunctionDef | ast.AsyncFunctionDef, state: str
                 ) -> dict[str, ast.expr]:
    """Locals bound once, to a plain read of the state (``status = state.get("k", "")``),
    and never changed, handed on or rebound (only read as a value: tested, compared,
    formatted)."""
    stores: dict[str, int] = {}
    handed: set[str] = set()
    todo: list[ast.AST] = list(node.body)
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            handed |= {n.id for n in ast.walk(sub) if isinstance(n, ast.Name)}
            continue
        todo.extend(ast.iter_child_nodes(sub))
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            stores[sub.id] = stores.get(sub.id, 0) + 1
        elif isinstance(sub, ast.Attribute | ast.Subscript) and isinstance(sub.value, ast.Name):
            handed.add(sub.value.id)  # ``x.append(...)``, ``x[0] = ...``
        elif isinstance(sub, ast.Call):
            handed |= {a.id for a in [*sub.args, *(k.value for k in sub.keywords)]
                       if isinstance(a, ast.Name)}
    return {sub.targets[0].id: sub.value for sub in ast.walk(node)
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1
            and isinstance(sub.targets[0], ast.Name) and stores.get(sub.targets[0].id) == 1
            and sub.targets[0].id not in handed | {state}
            and state_read(sub.value, state)[0] is not None}
