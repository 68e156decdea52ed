"""Rule gates: the names a decision needs to hold a value, and whether they ever can.

``if prosecutor_score == 1 and rules.get("security_override"):`` fires only when ``rules``
holds something. The walk records such names per branch (``gates``: a name, or the receiver
of ``name.get("k")`` / ``name["k"]`` / ``name.k``, that is one of the conjuncts a test needs
true). Across the call graph, a gate whose every value is read from the state under a key
the state schema does not declare (``getattr(state, "rules", {})``, ``state.get("rules")`` in
a node function) never holds anything: LangGraph has no channel for the key, so the read
always gives its default and the rule never fires.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.execution import state_param
from automaton_auditor.forensics.code.exprs import call_name

MAX_DEPTH = 4


def presence(test: ast.expr, binds: dict[str, list[ast.expr]]) -> bool:
    """A test of whether a collection holds anything: ``not scores``, ``len(ops) == 0``,
    ``not len(ops)``, ``ops is None`` (a flag, a name set from a comparison, is not)."""
    node = test.operand if isinstance(test, ast.UnaryOp) and type(test.op) is ast.Not else test
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
            node.comparators[0], ast.Constant) and (
            isinstance(node.ops[0], ast.Is) or call_name(node.left) == "len") and \
            node.comparators[0].value in (0, None):
        node = node.left
    elif node is test:
        return False  # ``if scores:``: the path with scores, the usual one
    if isinstance(node, ast.Call) and call_name(node) == "len" and len(node.args) == 1:
        node = node.args[0]
    return isinstance(node, ast.Name) and not any(
        isinstance(b, ast.Compare | ast.BoolOp | ast.UnaryOp | ast.Constant)
        for b in binds.get(node.id, []))


COLLECTIONS = (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp,
               ast.GeneratorExp)
BUILDERS = {"list", "dict", "set", "tuple", "sorted", "defaultdict"}


def shape_only(test: ast.expr, binds: dict[str, list[ast.expr]]) -> bool:
    """A test of the scores' shape, never of their values, which decides on no judge's score:
    whether a collection holds anything (`presence`, or ``if scores:`` on a name bound only to
    a collection), how many items it holds (``len(s) >= 3``, ``len(s) != len(w)``), whether a
    value has a type (``isinstance(score, int)``) or a total is zero (``total <= 0``: judges
    score 1 to 5, so a zero only means nothing was counted); and ``and``/``or``/``not`` of
    such tests. A helper's guard on its input (``if not scores or not weights: return 3``)
    is then no cap."""
    if presence(test, binds):
        return True
    if isinstance(test, ast.BoolOp):
        return all(shape_only(v, binds) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return shape_only(test.operand, binds)
    if isinstance(test, ast.Name):
        bound = binds.get(test.id, [])
        return bool(bound) and all(isinstance(b, COLLECTIONS) or call_name(b) in BUILDERS
                                   for b in bound)
    if call_name(test) == "isinstance":
        return True
    if not isinstance(test, ast.Compare):
        return False
    sides = [test.left, *test.comparators]
    counts = [s for s in sides if call_name(s) == "len"]
    numbers = [s for s in sides if isinstance(s, ast.Constant) and type(s.value) in (int, float)]
    last = test.comparators[-1]
    zero = len(sides) == 2 and isinstance(last, ast.Constant) and last in numbers and \
        last.value == 0 and not isinstance(test.ops[0], ast.In | ast.NotIn)
    return zero or (bool(counts) and len(counts) + len(numbers) == len(sides))


def value_reads(test: ast.expr, reads: Callable[[ast.AST], set[str]],
                binds: dict[str, list[ast.expr]], body: list[ast.stmt] | None = None) -> set[str]:
    """What a decision's test reads, a side of an ``and``/``or`` that only tests the scores'
    shape (`shape_only`) reading no score (whether any evidence was found still reads the
    evidence): ``if not scores or max(scores) - min(scores) > 2`` decides on the spread. A
    clamp (`clamp_limit`) reads what its limit reads, not what the clamped score came from;
    a test of a value's type (`type_only`) reads nothing."""
    limit = clamp_limit(test, body or [])
    if limit is not None and (own := reads(limit)):
        return own
    if type_only(test):
        return set()  # a parse by the value's type decides on no score, fact or word
    if shape_only(test, binds):
        return reads(test) - {"score"}
    parts = test.values if isinstance(test, ast.BoolOp) else [test]
    return set().union(*(reads(t) - ({"score"} if shape_only(t, binds) else set())
                         for t in parts))


def type_only(test: ast.expr) -> bool:
    """``isinstance(found, str)`` (and ``and``/``or``/``not`` of such): a test of a value's
    type, which picks how to read it (``found = found.lower() == "true"``), not a verdict."""
    if isinstance(test, ast.BoolOp):
        return all(type_only(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return type_only(test.operand)
    return call_name(test) == "isinstance"


def clamp_limit(test: ast.expr, body: list[ast.stmt]) -> ast.expr | None:
    """``if final > limit: final = limit`` (or a floor, ``<``): the limit a test compares a
    name with when its body sets that name to the limit. It is ``final = min(final, limit)``:
    the words or facts the score came from are no trigger of the clamp, only the limit's."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(
            test.ops[0], ast.Gt | ast.GtE | ast.Lt | ast.LtE):
        return None
    sets = {(s.targets[0].id, ast.dump(s.value)) for s in body if isinstance(s, ast.Assign)
            and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)}
    for name, limit in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if isinstance(name, ast.Name) and (name.id, ast.dump(limit)) in sets:
            return limit
    return None


def test_gates(test: ast.expr) -> set[str]:
    """The local names a test needs to hold a value: each conjunct of an ``and`` chain that
    is a bare name or a lookup on one (``rules``, ``rules.get("k")``, ``rules["k"]``)."""
    conjuncts = test.values if isinstance(test, ast.BoolOp) and \
        isinstance(test.op, ast.And) else [test]
    out: set[str] = set()
    for node in conjuncts:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant):
            node = node.func.value
        elif isinstance(node, ast.Subscript | ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name):
            out.add(node.id)
    return out


def branch_gates(test: ast.expr, inner: list[ast.expr]) -> list[str]:
    """The gates of a decision: its test's, and those every nested test deciding the score
    (`inner`) needs (a rule that only changes the score under such tests needs them too)."""
    shared = test_gates(inner[0]).intersection(*map(test_gates, inner[1:])) if inner \
        else set()
    return sorted(test_gates(test) | shared)


def _undeclared_read(graph: CallGraph, key: Key, site: dict[str, object],
                     declared: set[str]) -> bool:
    """``getattr(state, "k", default)`` or ``state.get("k")`` for an undeclared key ``k``."""
    state = f"p:{state_param(graph, key)}"
    args = site.get("args")
    if not isinstance(args, list):
        return False
    name = str(site.get("name") or "")
    if name == "getattr" and len(args) >= 2 and args[0] == [state]:
        keys = args[1]
    elif name.endswith(".get") and site.get("recv") == [state] and args:
        keys = args[0]
    else:
        return False
    return len(keys) == 1 and str(keys[0]).startswith("s:") and keys[0][2:] not in declared


class GateReader:
    """Decides, for the synthesis scope, which gates never hold a value (`declared`: the
    state schema's keys, None when they are not all known)."""

    def __init__(self, graph: CallGraph, scope: list[Key], declared: set[str] | None,
                 nodes: set[Key], unwritten: Callable[[], set[str]] | None = None) -> None:
        self.graph = graph
        self.scope = scope
        self.declared = declared
        self.nodes = nodes  # the graph's node functions: their first parameter is the state
        # keys taken out of `declared` the first time a read is checked: finding them reads
        # the whole repository again, which most syntheses never need
        self._unwritten = unwritten

    def _holdable(self) -> set[str]:
        if self._unwritten is not None and self.declared is not None:
            self.declared = self.declared - self._unwritten()
            self._unwritten = None
        return self.declared or set()

    def never_holds(self, key: Key, name: str, depth: int = 0) -> bool:
        """True when every value `name` can hold in `key` is an undeclared state read:
        through its local assignments, or, for a parameter, through every call to `key`
        from the synthesis scope (at least one)."""
        if self.declared is None or depth > MAX_DEPTH:
            return False
        atoms = (self.graph.flow(key).get("binds") or {}).get(name)
        if atoms is None:
            atoms = self._passed(key, name)
            return bool(atoms) and all(self._atom(k, a, depth) for k, a in atoms)
        return bool(atoms) and all(self._atom(key, a, depth) for a in atoms)

    def _atom(self, key: Key, atom: str, depth: int) -> bool:
        if atom.startswith("c:"):
            sites = self.graph.sites(key)
            index = int(atom[2:])
            return self.declared is not None and key in self.nodes and index < len(sites) \
                and _undeclared_read(self.graph, key, sites[index], self._holdable())
        if atom.startswith(("v:", "p:")):
            return self.never_holds(key, atom[2:], depth + 1)
        return False

    def _passed(self, key: Key, name: str) -> list[tuple[Key, str]]:
        """(caller, atom) for what every call to `key` in scope passes as parameter `name`."""
        params = self.graph.functions[key].get("params") or []
        if name not in params:
            return []
        position = params.index(name) - (1 if params[:1] == ["self"] else 0)
        out: list[tuple[Key, str]] = []
        for caller in self.scope:
            for site in self.graph.sites(caller):
                target = self.graph.resolve(caller, site)
                if target is None or self.graph.function_key(target) != key:
                    continue
                args = site.get("args") or []
                given = args[position] if 0 <= position < len(args) else \
                    (site.get("kw") or {}).get(name)
                if not given:
                    return []  # a default or a value we cannot follow: may hold something
                out += [(caller, a) for a in given]
        return out
