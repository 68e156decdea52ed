"""What a predicate over one criterion's evidence answers on a piece of evidence.

A synthesis helper that loops over the evidence of one criterion (``for ev in
evidences.get("safe_tool_engineering", []):``) and returns ``True`` under some tests is read
as those tests (`predicates`); `holds` evaluates them, three-valued, on one piece of evidence
whose ``found`` flag is known and whose text is what its literals spell (parts filled at run
time unknown): ``found``, the text, ``in``, ``startswith``, ``lower``, ``any`` over literal
markers, ``not``/``and``/``or``, names bound in the loop, ``if ...: continue`` guards. A loop
that may return anything but ``True`` is not read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any, NamedTuple

UNKNOWN = None  # three-valued tests: True, False or not known


class Text(NamedTuple):
    """An evidence's text: its literal runs, ``None`` for a part filled at run time."""

    parts: tuple[str | None, ...]

    def runs(self) -> list[str]:
        return [p for p in self.parts if p is not None]

    def known(self) -> bool:
        return None not in self.parts

    def lower(self) -> Text:
        return Text(tuple(p.lower() if p is not None else None for p in self.parts))


class Pred(NamedTuple):
    """A predicate over the evidence of criterion `key`: the tests under which it answers
    true, with the item's name and the names bound to its fields."""

    path: str
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    key: str
    item: str
    fires: list[tuple[list[ast.expr], int]]
    aliases: dict[str, ast.expr]


def text_of(node: ast.AST | None) -> Text | None:
    """What a literal or f-string spells (None: not a string literal)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return Text((node.value,))
    if isinstance(node, ast.JoinedStr):
        return Text(tuple(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str)
                          else None for v in node.values))
    return None


def _contains(text: Text, marker: str) -> bool | None:
    if any(marker in run for run in text.runs()):
        return True
    return False if text.known() else UNKNOWN


def _starts(text: Text, prefix: str) -> bool | None:
    first = text.parts[0] if text.parts else ""
    if first is None:
        return UNKNOWN
    if first.startswith(prefix):
        return True
    return False if text.known() or len(first) >= len(prefix) else UNKNOWN


class Item(NamedTuple):
    """One piece of evidence as the predicate sees it."""

    found: bool
    text: Text
    field: str  # the attribute holding its text


def _value(node: ast.AST, pred: Pred, item: Item, subst: dict[str, str], depth: int = 0) -> Any:
    """What an expression holds for `item`: a bool, a Text, a str, or UNKNOWN."""
    if depth > 12:
        return UNKNOWN
    if isinstance(node, ast.Name):
        if node.id in subst:
            return subst[node.id]
        alias = pred.aliases.get(node.id)
        return _value(alias, pred, item, subst, depth + 1) if alias is not None else UNKNOWN
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == pred.item:
        return item.found if node.attr == "found" else \
            item.text if node.attr == item.field else UNKNOWN
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        base = _value(node.func.value, pred, item, subst, depth + 1)
        arg = _value(node.args[0], pred, item, subst, depth + 1) if node.args else None
        if isinstance(base, Text) and node.func.attr == "lower" and not node.args:
            return base.lower()
        if isinstance(base, Text) and node.func.attr == "startswith" and isinstance(arg, str):
            return _starts(base, arg)
        return UNKNOWN
    return _test(node, pred, item, subst, depth + 1)


def _test(node: ast.AST, pred: Pred, item: Item, subst: dict[str, str],
          depth: int = 0) -> bool | None:
    """Whether a test holds for `item` (UNKNOWN when it cannot be read)."""
    if isinstance(node, ast.BoolOp):
        values = [_truth(_value(v, pred, item, subst, depth)) for v in node.values]
        stop = isinstance(node.op, ast.Or)
        if stop in values:
            return stop
        return UNKNOWN if UNKNOWN in values else not stop
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(_value(node.operand, pred, item, subst, depth))
        return UNKNOWN if inner is UNKNOWN else not inner
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
            isinstance(node.ops[0], ast.In | ast.NotIn):
        marker = _value(node.left, pred, item, subst, depth)
        text = _value(node.comparators[0], pred, item, subst, depth)
        held = _contains(text, marker) if isinstance(text, Text) and isinstance(
            marker, str) else UNKNOWN
        return held if held is UNKNOWN or isinstance(node.ops[0], ast.In) else not held
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "any" and len(node.args) == 1:
        return _any(node.args[0], pred, item, subst, depth)
    return UNKNOWN


def _any(gen: ast.AST, pred: Pred, item: Item, subst: dict[str, str],
         depth: int) -> bool | None:
    """``any(m in text for m in ["a", "b"])`` over literal markers."""
    if not isinstance(gen, ast.GeneratorExp) or len(gen.generators) != 1:
        return UNKNOWN
    loop = gen.generators[0]
    markers = [e.value for e in getattr(loop.iter, "elts", [])
               if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if not isinstance(loop.target, ast.Name) or loop.ifs or not markers or \
            len(markers) != len(getattr(loop.iter, "elts", [])):
        return UNKNOWN
    values = [_truth(_value(gen.elt, pred, item, {**subst, loop.target.id: m}, depth))
              for m in markers]
    return True if True in values else UNKNOWN if UNKNOWN in values else False


def _truth(value: Any) -> bool | None:
    if value is UNKNOWN or isinstance(value, bool):
        return value
    if isinstance(value, Text):
        return True if any(value.runs()) else False if value.known() else UNKNOWN
    return UNKNOWN if isinstance(value, ast.AST) else bool(value)


def holds(pred: Pred, item: Item) -> bool | None:
    """Whether the predicate answers true on `item` (some ``return True`` is reached)."""
    answers = [all_true([_truth(_value(t, pred, item, {})) for t in tests])
               for tests, _line in pred.fires]
    return True if True in answers else UNKNOWN if UNKNOWN in answers else False


def all_true(values: list[bool | None]) -> bool | None:
    """Three-valued ``and``."""
    return False if False in values else UNKNOWN if UNKNOWN in values else True


def _ends(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Continue | ast.Return | ast.Break | ast.Raise)


def _paths(stmts: list[ast.stmt], conds: list[ast.expr], fires: list[tuple[list[ast.expr], int]],
           aliases: dict[str, ast.expr]) -> bool:
    """The tests under which a loop body reaches ``return True`` (False: not readable, or it
    may return something else and stop the loop)."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            if not (isinstance(stmt.value, ast.Constant) and stmt.value.value is True):
                return False
            fires.append((list(conds), stmt.lineno))
            return True
        if isinstance(stmt, ast.Continue | ast.Break):
            return True
        if isinstance(stmt, ast.If):
            negated = ast.UnaryOp(op=ast.Not(), operand=stmt.test)
            if not (_paths(stmt.body, [*conds, stmt.test], fires, aliases) and
                    _paths(stmt.orelse, [*conds, negated], fires, aliases)):
                return False
            if _ends(stmt.body) and not stmt.orelse:
                conds = [*conds, negated]
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            aliases[stmt.targets[0].id] = stmt.value
        elif any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
            return False
    return True


def _key(node: ast.AST, binds: dict[str, ast.expr]) -> str | None:
    """``d.get("K", [])`` or ``d["K"]`` (through a local name): the key "K"."""
    if isinstance(node, ast.Name) and node.id in binds:
        node = binds[node.id]
    index = node.args[0] if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "get" and node.args else \
        node.slice if isinstance(node, ast.Subscript) else None
    return index.value if isinstance(index, ast.Constant) and isinstance(
        index.value, str) else None


def predicates(path: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Pred]:
    """The loops of `fn` over one criterion's evidence that answer ``True`` on some items."""
    binds = {t.id: n.value for n in ast.walk(fn) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)}
    for loop in (n for n in ast.walk(fn) if isinstance(n, ast.For)):
        key = _key(loop.iter, binds)
        if key is None or not isinstance(loop.target, ast.Name):
            continue
        fires: list[tuple[list[ast.expr], int]] = []
        aliases: dict[str, ast.expr] = {}
        if _paths(loop.body, [], fires, aliases) and fires:
            yield Pred(path, fn, key, loop.target.id, fires, aliases)


def fields(pred: Pred) -> set[str]:
    """The item's attributes the predicate reads besides ``found``."""
    nodes = [n for tests, _ in pred.fires for t in tests for n in ast.walk(t)]
    nodes += [n for value in pred.aliases.values() for n in ast.walk(value)]
    return {n.attr for n in nodes if isinstance(n, ast.Attribute) and isinstance(
        n.value, ast.Name) and n.value.id == pred.item and n.attr != "found"}
