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
- ``"k" in state``, ``state.k is not None``: set; ``not in``: falsy; ``is None``: None
  (``NONE``: decided as falsy, but a fact that describes the test says "is None", since an
  empty value is not None);
- ``x == "lit"``, ``x`` a read of the key (directly or through such a local) whose default is
  a constant other than the literal, the literal truthy: the key is truthy when it holds,
  nothing is known when it fails (``!=`` the other way round);
- ``a or b`` holds with the guards every operand holds with, and fails with all of theirs;
- a count of the key's value: ``len(x)`` (also ``len(x) == 0``, ``> 0``, ``>= 1``) is true
  exactly when ``x`` is;
- ``any(e for e in items)`` (``sum(len(e) for e in items)``), ``items`` the key's value, a
  part of it (``state.get("k", {}).get("sub", [])``) or its ``.values()``: when it holds the
  key is truthy; when it fails, and the element and filters are true of every truthy item
  (``e``, ``len(e) > 0``, ``if e``), no item of the value (or of its values) is truthy
  (``NO_ITEM``). A local bound once to such a test stands for it.

Anything else implies nothing.
"""

from __future__ import annotations

import ast
from typing import Any

from automaton_auditor.forensics.code.common import JSON, dotted, str_value
from automaton_auditor.forensics.code.inert import PURE_CALLS, READ_METHODS
from automaton_auditor.forensics.code.sure_values import FILLED, UNKNOWN

Guard = list[Any]  # [key, True | False | SET | NONE | NO_ITEM]
SET = "set"  # the key holds a value other than None (``is not None``, ``"k" in state``)
NONE = "none"  # the key holds None or never arrived (``is None``)
FALSY = (False, NONE)  # the kinds that hold only when the key's value is falsy
NO_ITEM = "no-item"  # no item of the key's value (nor of its values) is truthy
ABSENT = "<absent>"  # what a view holds for a key that never arrived
Split = tuple[list[Guard], list[Guard]]  # the guards when the test holds, when it fails
NOT_CONSTANT = object()  # a default whose value is not a constant
VALUE, ITEMS, PART = "value", "items", "part"  # what an expression is of a key (`Tests.view`)
MAX_DEPTH = 4  # locals followed through one another


def possible(out: JSON, view: dict[str, Any]) -> bool:
    """False when a guard of the out cannot hold with the values the router sees (`view`,
    key -> value: a literal, `UNKNOWN`, ``NONEMPTY``, ``FILLED`` or `ABSENT`)."""
    for key, wanted in out.get("guards") or []:
        value = view.get(key, ABSENT)
        # ``is None`` is decided as falsiness, the safe side: only a truthy value rules it
        # out, so a route is never called dead on a falsy value that may not be None
        wanted = False if wanted == NONE else wanted
        if wanted == SET:  # anything but None: a falsy value is set too
            if value in (ABSENT, None):
                return False
        elif wanted == NO_ITEM:  # only a value known to hold a truthy item rules it out
            if value == FILLED:
                return False
        elif value != UNKNOWN and bool(value not in (ABSENT, None, False, 0, "")) != wanted:
            return False
    return True


def opposed(want: Any, other: Any) -> bool:
    """Whether two guards of one key cannot both hold: one needs it truthy, the other falsy
    (``is None`` included)."""
    return (want is True and other in FALSY) or (other is True and want in FALSY)


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
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            parts = [self.split(value) for value in test.values]
            fails: list[Guard] = []
            for _yes, no in parts:
                fails += [g for g in no if g not in fails]
            return [g for g in parts[0][0] if all(g in yes for yes, _no in parts)], fails
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            return self.compare(test.left, test.ops[0], test.comparators[0])
        counted = self.counted(test)
        if counted is not None:
            return counted
        key, default = self.read(test)
        return ([[key, True]], [[key, False]]) if key and default is not NOT_CONSTANT and \
            not default else ([], [])

    def counted(self, test: ast.expr, depth: int = 0) -> Split | None:
        """What a count of the key's value or a test of its items says (None: not one):
        ``len(x)``, ``any(...)``, ``sum(len(e) for e in ...)``, a local bound to one."""
        if isinstance(test, ast.Name) and test.id in self.reads and depth < MAX_DEPTH:
            return self.counted(self.reads[test.id], depth + 1)
        name = dotted(test.func) if isinstance(test, ast.Call) else None
        if not isinstance(test, ast.Call) or len(test.args) != 1 or test.keywords or \
                name not in ("len", "any", "sum"):
            return None
        if name == "len":
            key, kind = self.view(test.args[0])
            return ([[key, True]], [] if kind == PART else [[key, False]]) if key else ([], [])
        return self.items(test.args[0], name)

    def items(self, gen: ast.expr, name: str) -> Split:
        """``any(<elt> for <e> in <items> if ...)`` / ``sum(len(e) for ...)`` (`name`)."""
        if not isinstance(gen, ast.GeneratorExp | ast.ListComp) or len(gen.generators) != 1:
            return [], []
        comp = gen.generators[0]
        key, kind = self.view(comp.iter)
        item = comp.target.id if isinstance(comp.target, ast.Name) else None
        if key is None or item is None:
            return [], []
        every = (_implied(gen.elt, item) if name == "any" else _is_len(gen.elt, item)) and \
            all(_implied(c, item) for c in comp.ifs) and kind != PART
        return [[key, True]], [[key, NO_ITEM]] if every else []

    def view(self, node: ast.expr, depth: int = 0) -> tuple[str | None, str]:
        """The state key `node` is the value of (``VALUE``), the values of (``ITEMS``:
        ``x.values()``) or a part of (``PART``: ``x.get("sub", [])``, ``x["sub"]``,
        ``x.items()``), through locals bound once to one; (None, "") for anything else."""
        if depth > MAX_DEPTH:
            return None, ""
        if isinstance(node, ast.Name) and node.id in self.reads:
            return self.view(self.reads[node.id], depth + 1)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and \
                len(node.values) == 2 and _empty(node.values[1]):
            return self.view(node.values[0], depth + 1)  # ``state.get("k") or {}``
        key, default = state_read(node, self.state)
        if key is not None:
            return (key, VALUE) if default is not NOT_CONSTANT and not default else (None, "")
        inner = node.func.value if isinstance(node, ast.Call) and isinstance(
            node.func, ast.Attribute) else node.value if isinstance(node, ast.Subscript) \
            else None
        key, kind = self.view(inner, depth + 1) if inner is not None else (None, "")
        if key is None or kind != VALUE:
            return None, ""
        if isinstance(node, ast.Subscript):
            return key, PART
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        attr, args = node.func.attr, node.args
        if attr == "values" and not args:
            return key, ITEMS
        if (attr in ("keys", "items") and not args) or (
                attr == "get" and args and (len(args) == 1 or _empty(args[1]))):
            return key, PART
        return None, ""

    def compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> Split:
        count = self.counted(left)
        if count is not None and isinstance(right, ast.Constant) and \
                type(right.value) is int and right.value in (0, 1):
            # ``len(x) == 0`` is ``not len(x)``; ``len(x) > 0`` / ``>= 1`` / ``!= 0`` is it
            zero, one = right.value == 0, right.value == 1
            if (zero and isinstance(op, ast.Eq | ast.LtE)) or (one and isinstance(op, ast.Lt)):
                return count[1], count[0]
            if (zero and isinstance(op, ast.NotEq | ast.Gt)) or (
                    one and isinstance(op, ast.GtE)):
                return count
            return [], []
        if isinstance(op, ast.In | ast.NotIn) and dotted(right) == self.state:
            key = str_value(left)
            yes: list[Guard] = [[key, SET]] if key else []
            no: list[Guard] = [[key, False]] if key else []
            return (yes, no) if isinstance(op, ast.In) else (no, yes)
        key, default = self.read(left)
        if key is None or default is NOT_CONSTANT or not isinstance(right, ast.Constant):
            return [], []
        if isinstance(op, ast.Is | ast.IsNot) and right.value is None and default is None:
            return ([[key, NONE]], [[key, SET]]) if isinstance(op, ast.Is) else \
                ([[key, SET]], [[key, NONE]])
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
    """Locals bound once, to a plain read of the state (``status = state.get("k", "")``), a
    part of one or a count of one (``len``, ``any``, ``sum``: `Tests.view`,
    `Tests.counted`), and never changed, handed on or rebound (only read as a value:
    tested, compared, formatted, read with ``.get``/``.values()``/a subscript, given to a
    builtin that reads: ``len(x)``)."""
    stores: dict[str, int] = {}
    handed: set[str] = set()
    reading: set[int] = set()  # ids of ``x.get`` / ``x[...]`` nodes that only read x
    todo: list[ast.AST] = list(node.body)
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            handed |= {n.id for n in ast.walk(sub) if isinstance(n, ast.Name)}
            continue
        todo.extend(ast.iter_child_nodes(sub))
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                sub.func.attr in READ_METHODS:
            reading.add(id(sub.func))
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            stores[sub.id] = stores.get(sub.id, 0) + 1
        elif isinstance(sub, ast.Attribute | ast.Subscript) and isinstance(sub.value, ast.Name) \
                and id(sub) not in reading and not (isinstance(sub, ast.Subscript) and
                                                    isinstance(sub.ctx, ast.Load)):
            handed.add(sub.value.id)  # ``x.append(...)``, ``x[0] = ...``
        elif isinstance(sub, ast.Call) and dotted(sub.func) not in PURE_CALLS:
            handed |= {a.id for a in [*sub.args, *(k.value for k in sub.keywords)]
                       if isinstance(a, ast.Name)}
    return {sub.targets[0].id: sub.value for sub in ast.walk(node)
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1
            and isinstance(sub.targets[0], ast.Name) and stores.get(sub.targets[0].id) == 1
            and sub.targets[0].id not in handed | {state} and _bindable(sub.value, state)}


def _bindable(value: ast.expr, state: str) -> bool:
    """A read of the state, a part of a value (``x.get(...)``, ``x[...]``, ``x or {}``) or a
    count (``len``, ``any``, ``sum``): what a bound local may stand for."""
    if state_read(value, state)[0] is not None or isinstance(value, ast.Subscript | ast.BoolOp):
        return True
    return isinstance(value, ast.Call) and (dotted(value.func) in ("len", "any", "sum") or (
        isinstance(value.func, ast.Attribute) and value.func.attr in READ_METHODS))


def _empty(node: ast.expr) -> bool:
    """An empty literal: ``{}``, ``[]``, ``()``, ``""``, ``None``, ``0``, ``False``."""
    if isinstance(node, ast.Constant):
        return not node.value
    return (isinstance(node, ast.List | ast.Tuple | ast.Set) and not node.elts) or \
        (isinstance(node, ast.Dict) and not node.keys)


def _is_len(node: ast.expr, item: str) -> bool:
    return isinstance(node, ast.Call) and dotted(node.func) == "len" and len(node.args) == 1 \
        and isinstance(node.args[0], ast.Name) and node.args[0].id == item


def _implied(test: ast.expr, item: str) -> bool:
    """Whether `test` holds of every truthy `item`: ``e``, ``bool(e)``, ``len(e)``,
    ``len(e) > 0`` / ``>= 1`` / ``!= 0``, ``e is not None``."""
    if isinstance(test, ast.Name):
        return test.id == item
    if isinstance(test, ast.Call) and dotted(test.func) == "bool" and len(test.args) == 1:
        return _implied(test.args[0], item)
    if _is_len(test, item):
        return True
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or \
            not isinstance(test.comparators[0], ast.Constant):
        return False
    op, right = test.ops[0], test.comparators[0].value
    if isinstance(op, ast.IsNot):
        return right is None and isinstance(test.left, ast.Name) and test.left.id == item
    return _is_len(test.left, item) and type(right) is int and (
        (isinstance(op, ast.Gt | ast.NotEq) and right == 0) or
        (isinstance(op, ast.GtE) and right == 1))
