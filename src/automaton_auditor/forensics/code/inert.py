"""Read on the syntax of a router and of the nodes of a loop: can the loop change the router's
choice?

Two questions, each answered only when the code makes it plain (else None / False):

- `none_test`: the test in front of a router's ``return`` holds exactly when no item of a state
  key has a field set: ``found_items == 0`` with ``found_items = sum(1 for vals in
  evidences.values() for e in vals if e.found)``, ``not any(e.found for e in ...)``,
  ``len([e for e in ... if e.found]) == 0``, the key read as ``state.get("k", ...)``,
  ``state["k"]`` or ``state.k``.
- `inert_writes`: a node adds to that key only items whose field is a false constant
  (``Evidence(..., found=False)``, ``{"found": False}``) or hands back what the state held,
  through its returns and through in-place stores into the state's own value. A branch taken
  only when a state item has the field set (``if raw and raw[0].found:``) is skipped: on the
  loop no item has it. Anything else that touches the key (a helper the value is passed to, an
  unknown method, a value computed at run time) is not inert.
"""

from __future__ import annotations

import ast
import itertools

from automaton_auditor.forensics.code.common import FunctionNode, dotted
from automaton_auditor.forensics.code.exprs import own_nodes, walk_expr

# calls that read without changing anything (a router made only of these decides on the state)
PURE_CALLS = frozenset({"len", "sum", "any", "all", "sorted", "set", "list", "dict", "tuple",
                        "str", "int", "float", "bool", "isinstance", "min", "max", "range",
                        "enumerate", "zip", "print", "getattr", "hasattr"})
READ_METHODS = frozenset({"get", "values", "items", "keys", "copy", "count", "index", "split",
                          "strip", "lower", "upper", "startswith", "endswith", "format",
                          "join", "splitlines", "replace"})
ADD_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})
DROP_METHODS = frozenset({"pop", "remove", "clear", "discard", "popitem"})
LOGGING = ("logger.", "logging.", "log.", "LOGGER.", "_logger.", "_log.")


def _state_read(expr: ast.AST, state: str, key: str) -> bool:
    """``state["k"]``, ``state.get("k", ...)``, ``state.k``."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
        sub = expr.slice
        return expr.value.id == state and isinstance(sub, ast.Constant) and sub.value == key
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and \
            expr.func.attr == "get" and isinstance(expr.func.value, ast.Name):
        first = expr.args[0] if expr.args else None
        return expr.func.value.id == state and isinstance(first, ast.Constant) and \
            first.value == key
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and \
        expr.value.id == state and expr.attr == key


def _rooted(expr: ast.AST, state: str, key: str, names: set[str]) -> bool:
    """Whether `expr` is the state's value of `key` or a part of it (through the `names`
    bound to it, subscripts, attributes, ``.get``/``.values()`` calls, ``x or default``)."""
    while True:
        if _state_read(expr, state, key):
            return True
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, ast.BoolOp):
            return any(_rooted(v, state, key, names) for v in expr.values)
        if isinstance(expr, ast.BinOp):  # ``a + b`` of two parts: a list of its items
            return _rooted(expr.left, state, key, names) or \
                _rooted(expr.right, state, key, names)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and \
                expr.func.attr in READ_METHODS:
            expr = expr.func.value
        elif isinstance(expr, ast.Subscript | ast.Attribute):
            expr = expr.value
        else:
            return False


def aliases(fn: FunctionNode, state: str, key: str) -> set[str]:
    """Local names bound to the state's value of `key` or to a part of it (loop targets over
    it included), to a fixed point."""
    names: set[str] = set()
    for _ in range(5):
        before = len(names)
        for node in own_nodes(fn.body):
            pairs: list[tuple[ast.AST, ast.AST]] = []
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
                pairs = [(node.target, node.value)]
            elif isinstance(node, ast.For | ast.comprehension):
                pairs = [(node.target, node.iter)]
            for target, value in pairs:
                if _rooted(value, state, key, names):
                    names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        if len(names) == before:
            break
    return names


def _field_test(expr: ast.AST, item: str, field: str | None = None) -> str | None:
    """The field `expr` tests on the name `item` (``e.found``, ``e["found"]``,
    ``e.get("found")``, ``getattr(e, "found")``), when `field` is None any field."""
    got: str | None = None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and \
            expr.value.id == item:
        got = expr.attr
    elif isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and \
            expr.value.id == item and isinstance(expr.slice, ast.Constant):
        got = str(expr.slice.value)
    elif isinstance(expr, ast.Call) and expr.args and isinstance(expr.args[0], ast.Constant):
        name = dotted(expr.func) or ""
        if name == f"{item}.get":
            got = str(expr.args[0].value)
        elif name == "getattr" and len(expr.args) >= 2 and isinstance(expr.args[0], ast.Name) \
                and expr.args[0].id == item and isinstance(expr.args[1], ast.Constant):
            got = str(expr.args[1].value)
    return got if got is not None and field in (None, got) else None


def _items_field(comp: ast.AST, state: str, key: str, names: set[str],
                 flagged: bool) -> str | None:
    """The field a comprehension over every item of the key tests: ``e for vals in
    k.values() for e in vals if e.f`` (with `flagged`, ``e.f for ...`` as its element)."""
    if not isinstance(comp, ast.GeneratorExp | ast.ListComp) or not comp.generators:
        return None
    gens = comp.generators
    if not _rooted(gens[0].iter, state, key, names):
        return None
    for before, gen in itertools.pairwise(gens):  # each runs over the one before
        if not (isinstance(gen.iter, ast.Name) and isinstance(before.target, ast.Name)
                and gen.iter.id == before.target.id):
            return None
    last = gens[-1].target
    if not isinstance(last, ast.Name) or any(g.ifs for g in gens[:-1]):
        return None
    if flagged:
        return _field_test(comp.elt, last.id) if not gens[-1].ifs else None
    ifs = gens[-1].ifs
    return _field_test(ifs[0], last.id) if len(ifs) == 1 else None


def _counted(expr: ast.AST, state: str, key: str, names: set[str]) -> str | None:
    """The field when `expr` counts (or lists) the key's items that have it set."""
    call = dotted(expr.func) if isinstance(expr, ast.Call) else None
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and call in ("sum", "len"):
        arg = expr.args[0]
        if call == "sum" and not (isinstance(arg, ast.GeneratorExp | ast.ListComp) and
                                  isinstance(arg.elt, ast.Constant) and arg.elt.value == 1):
            return None
        return _items_field(arg, state, key, names, flagged=False)
    return _items_field(expr, state, key, names, flagged=False)


def none_test(test: ast.expr, fn: FunctionNode, state: str, key: str) -> str | None:
    """The field when `test` holds exactly when no item of the state's `key` has it set."""
    names = aliases(fn, state, key)
    bound = {t.id: n.value for n in own_nodes(fn.body) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)}
    stores = [t.id for n in own_nodes(fn.body) if isinstance(n, ast.Assign | ast.AugAssign)
              for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
              if isinstance(t, ast.Name)]

    def value(expr: ast.expr) -> ast.AST:  # a local assigned once stands for its value
        if isinstance(expr, ast.Name) and stores.count(expr.id) == 1 and expr.id in bound:
            return bound[expr.id]
        return expr

    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = value(test.operand)
        if isinstance(inner, ast.Call) and dotted(inner.func) == "any" and len(inner.args) == 1:
            return _items_field(inner.args[0], state, key, names, flagged=True)
        return _counted(inner, state, key, names)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        zero = isinstance(right, ast.Constant) and right.value == 0 and \
            isinstance(op, ast.Eq | ast.LtE)
        one = isinstance(right, ast.Constant) and right.value == 1 and isinstance(op, ast.Lt)
        if zero or one:
            return _counted(value(test.left), state, key, names)
    return None


def pure(fn: FunctionNode) -> bool:
    """Whether the function only reads (no call beyond reading ones and logging, no global
    or nonlocal): its answer depends on its state argument alone."""
    for node in own_nodes(fn.body):
        if isinstance(node, ast.Global | ast.Nonlocal | ast.Await | ast.Yield | ast.YieldFrom):
            return False
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if not (name in PURE_CALLS or method in READ_METHODS or name.startswith(LOGGING)):
                return False
    return True


def _item_inert(expr: ast.AST, field: str, names: set[str], local: dict[str, ast.expr],
                depth: int = 0) -> bool:
    """Whether `expr`, written to the key, adds no item with `field` set: a constructor or a
    dict with the field a false constant, containers of such, an empty value, or what the
    state held (its items have the field unset on the loop)."""
    if depth > 6:
        return False
    if isinstance(expr, ast.Constant):
        return not expr.value
    if isinstance(expr, ast.Name):
        if expr.id in names:
            return True
        return expr.id in local and _item_inert(local[expr.id], field, names, local, depth + 1)
    if isinstance(expr, ast.Dict):
        for k, v in zip(expr.keys, expr.values, strict=True):
            if isinstance(k, ast.Constant) and k.value == field:
                return isinstance(v, ast.Constant) and not v.value
        return all(k is not None and _item_inert(v, field, names, local, depth + 1)
                   for k, v in zip(expr.keys, expr.values, strict=True))
    if isinstance(expr, ast.List | ast.Tuple | ast.Set):
        return all(_item_inert(e, field, names, local, depth + 1) for e in expr.elts)
    if isinstance(expr, ast.Call):
        given = [kw.value for kw in expr.keywords if kw.arg == field]
        if given:
            return isinstance(given[0], ast.Constant) and not given[0].value
        return dotted(expr.func) in ("list", "dict") and not expr.args and not expr.keywords
    return False


def _dead_on_loop(test: ast.expr, state: str, key: str, names: set[str], field: str) -> bool:
    """A test that holds only when an item of the key has the field set (``raw and
    raw[0].found``): on the loop no item has it, so its branch is never taken."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
        else [test]
    for part in parts:
        if isinstance(part, ast.Attribute | ast.Subscript):
            base = part.value
            test_field = part.attr if isinstance(part, ast.Attribute) else (
                part.slice.value if isinstance(part.slice, ast.Constant) else None)
            if test_field == field and _rooted(base, state, key, names) and \
                    not isinstance(base, ast.Name):  # an item of it, not the value itself
                return True
    return False


def _live(body: list[ast.stmt], state: str, key: str, names: set[str],
          field: str) -> list[ast.stmt]:
    """The statements of a block, those of branches dead on the loop left out (their
    `orelse` kept)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If) and _dead_on_loop(stmt.test, state, key, names, field):
            out += _live(stmt.orelse, state, key, names, field)
            continue
        out.append(stmt)
    return out


def inert_writes(fn: FunctionNode, state: str, key: str, field: str) -> bool:
    """Whether every change the node makes to the state's `key` (its returns and its
    in-place stores into the state's own value) adds no item with `field` set."""
    names = aliases(fn, state, key)
    nodes = [n for stmt in _live(fn.body, state, key, names, field) for n in _walk_live(
        stmt, state, key, names, field)]
    local = {t.id: n.value for n in nodes if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)}
    counts = [t.id for n in nodes if isinstance(n, ast.Assign) for t in n.targets
              if isinstance(t, ast.Name)]
    local = {k: v for k, v in local.items() if counts.count(k) == 1 and k not in names}
    return all(_node_inert(node, state, key, names, local, field) for node in nodes)


def _walk_live(stmt: ast.stmt, state: str, key: str, names: set[str],
               field: str) -> list[ast.AST]:
    """The nodes of a statement, branches dead on the loop left out."""
    if isinstance(stmt, ast.If):
        return [stmt.test, *(n for s in _live(stmt.body, state, key, names, field)
                             for n in _walk_live(s, state, key, names, field)),
                *(n for s in _live(stmt.orelse, state, key, names, field)
                  for n in _walk_live(s, state, key, names, field))]
    if isinstance(stmt, ast.For | ast.While | ast.With | ast.Try):
        inner = [n for blk in ("body", "orelse", "finalbody") for s in getattr(stmt, blk, [])
                 for n in _walk_live(s, state, key, names, field)]
        handlers = [n for h in getattr(stmt, "handlers", []) for s in h.body
                    for n in _walk_live(s, state, key, names, field)]
        heads = [getattr(stmt, a) for a in ("target", "iter", "test") if hasattr(stmt, a)]
        heads += [i for i in getattr(stmt, "items", [])]
        return [stmt, *(n for h in heads for n in walk_expr(h)), *inner, *handlers]
    return walk_expr(stmt)


def _node_inert(node: ast.AST, state: str, key: str, names: set[str],
                local: dict[str, ast.expr], field: str) -> bool:
    """One syntax node of a loop node: does it leave the key's items with the field unset?"""
    def rooted(expr: ast.AST) -> bool:  # the key's value, or the state itself
        return _rooted(expr, state, key, names) or (
            isinstance(expr, ast.Name) and expr.id == state)

    if isinstance(node, ast.Return):
        value = node.value
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return True
        if isinstance(value, ast.Name) and value.id == state:
            return True  # the state it was given: what it held, and the stores read here
        if not isinstance(value, ast.Dict) or None in value.keys:
            return False  # a copy of the state, a helper's answer: not read here
        return all(not (isinstance(k, ast.Constant) and k.value == key)
                   or _item_inert(v, field, names, local)
                   for k, v in zip(value.keys, value.values, strict=True))
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript | ast.Attribute) and rooted(target.value):
                name = target.attr if isinstance(target, ast.Attribute) else (
                    target.slice.value if isinstance(target.slice, ast.Constant) else None)
                if isinstance(target.value, ast.Name) and target.value.id == state:
                    if name != key:  # another key: not what the router tests
                        continue
                elif name == field:  # an item's own field set in place
                    if not (isinstance(node.value, ast.Constant) and not node.value.value):
                        return False
                    continue
                if not _item_inert(node.value, field, names, local):
                    return False
        return True
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and rooted(func.value):
            if func.attr in ADD_METHODS:
                return all(_item_inert(a, field, names, local) for a in node.args[-1:])
            return func.attr in READ_METHODS or func.attr in DROP_METHODS
        # the state's value handed to a call that may change it
        name = dotted(func) or ""
        return name in PURE_CALLS or name.startswith(LOGGING) or not any(
            rooted(a) for a in [*node.args, *(k.value for k in node.keywords)])
    return True
