"""Dead stores: whether what a statement of one function writes is read afterwards.

`Flow.build` reads one function body into a statement-level control-flow graph: branches;
loops, with ``break``, ``continue`` and their ``else`` (a ``for`` over a name reads it again
at every step, over a copy ``list(x)`` once); ``try``, with an edge from its entry and from
every statement of its body to each handler and, with everything inside it, to its
``finally``; ``with``; ``return`` and ``raise`` to the exit. Two analyses run over it:

- sharing (forwards): a name whose object something else may hold: a parameter, a name bound
  to anything but a fresh value (a literal, a comprehension, arithmetic, a copy such as
  ``list(x)``), a name handed anywhere but to a reader (``len(x)``, ``x[i]``, ``x.get(k)``,
  ``f"{x}"``, a test, a loop over it) or to a method that changes it in place;
- strong liveness (backwards): a name is live where a path reads it before it is bound
  again. An assignment to a name, or a store into a local container nothing shares, reads
  its value only where what it writes is live (``count = check["count"]`` with ``count``
  never read reads nothing), unless the value calls something that may change state; tests,
  returns, calls, logs and stores into anything else always read.

A ``match`` block, an assignment expression (``:=``), ``locals()``/``vars()``/``eval``/
``exec`` or nesting deeper than the builder recurses make `Flow.build` give up (None):
nothing it cannot follow is guessed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from automaton_auditor.forensics.code.common import FunctionNode, dotted
from automaton_auditor.forensics.code.store_exprs import (
    COPIES,
    MUTATORS,
    fresh,
    handed,
    names,
    pure,
    stored,
    targets,
)

GIVE_UP = frozenset({"locals", "vars", "eval", "exec", "globals"})
MAX_PASSES = 200


class _GiveUp(Exception):
    pass


@dataclass
class _Node:
    """One statement (or a branch's test, a loop's step, a join)."""

    line: int
    reads: set[str] = field(default_factory=set)  # read whatever is live after
    # (written, read, in place): `read` is read only where a `written` name is live, or, for
    # a store in place, where it may be shared
    uses: list[tuple[frozenset[str], set[str], bool]] = field(default_factory=list)
    kills: set[str] = field(default_factory=set)  # names bound again
    fresh: set[str] = field(default_factory=set)  # of those, bound to a new object
    handed: set[str] = field(default_factory=set)  # names whose object something may keep
    succ: list[int] = field(default_factory=list)


class Flow:
    """The control-flow graph of one function and what is shared and live along it."""

    def __init__(self, fn: FunctionNode) -> None:
        args = fn.args
        self.params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                       *(x for x in (args.vararg, args.kwarg) if x)]}
        self.nodes: list[_Node] = [_Node(fn.lineno)]  # the entry
        self.spans: dict[int, tuple[int, int]] = {}  # a statement's first and last node
        self.parents: dict[int, ast.stmt] = {}  # a statement's enclosing statement
        self.closures: set[str] = set()  # names a nested function or lambda refers to
        self.declared: set[str] = set()  # ``global`` and ``nonlocal`` names
        self.bound: set[str] = set(self.params)  # names the function binds
        self.loops: list[tuple[int, list[int]]] = []  # a loop's step and its breaks
        self.tries: list[list[int]] = []  # the nodes of each enclosing ``try`` body
        self.shared: list[set[str]] = []
        self.live: list[set[str]] = []

    @classmethod
    def build(cls, fn: FunctionNode) -> Flow | None:
        """The flow of `fn`, analysed; None where the analysis gives up (module docstring)."""
        for node in ast.walk(fn):
            if isinstance(node, ast.NamedExpr | ast.Match) or (
                    isinstance(node, ast.Call) and dotted(node.func) in GIVE_UP):
                return None
        flow = cls(fn)
        for lam in (n for n in ast.walk(fn) if isinstance(n, ast.Lambda)):
            flow.closures |= names(lam.body)
        try:
            flow.block(fn.body, [0], fn)
            flow.share()
            flow.liveness()
        except (_GiveUp, RecursionError):  # nested deeper than the builder recurses
            return None
        return flow

    # --- the graph -------------------------------------------------------------------------
    def new(self, line: int, preds: list[int], reads: set[str] | None = None,
            kills: set[str] | None = None, handed: set[str] | None = None) -> int:
        """A node after `preds`, inside every enclosing ``try`` body."""
        index = len(self.nodes)
        self.nodes.append(_Node(line, reads or set(), kills=kills or set(),
                                handed=handed or set()))
        for pred in preds:
            self.nodes[pred].succ.append(index)
        for group in self.tries:
            group.append(index)
        return index

    def block(self, body: list[ast.stmt], preds: list[int], parent: ast.AST) -> list[int]:
        """Link `body` after `preds`; the nodes control leaves it from."""
        for stmt in body:
            if isinstance(parent, ast.stmt):
                self.parents[id(stmt)] = parent
            first = len(self.nodes)
            preds = self.stmt(stmt, preds)
            self.spans[id(stmt)] = (first, len(self.nodes) - 1)
        return preds

    def stmt(self, stmt: ast.stmt, preds: list[int]) -> list[int]:
        """One statement: compound ones by their parts, the others as one node."""
        line = stmt.lineno
        if isinstance(stmt, ast.If):
            test = self.new(line, preds, reads=names(stmt.test), handed=handed(stmt.test, False))
            ends = self.block(stmt.body, [test], stmt) + self.block(stmt.orelse, [test], stmt)
            return [self.new(line, ends)]  # the join
        if isinstance(stmt, ast.While):
            step = self.new(line, preds, reads=names(stmt.test), handed=handed(stmt.test, False))
            return self.loop(stmt, step)
        if isinstance(stmt, ast.For | ast.AsyncFor):
            entry = self.new(line, preds, reads=names(stmt.iter), handed=handed(stmt.iter, False))
            bound = {t.id for t in targets(stmt.target) if isinstance(t, ast.Name)}
            self.bound |= bound
            again = set() if isinstance(stmt.iter, ast.Call) and (dotted(
                stmt.iter.func) or "").rsplit(".", 1)[-1] in COPIES else names(stmt.iter)
            return self.loop(stmt, self.new(line, [entry], reads=again, kills=bound))
        if isinstance(stmt, ast.With | ast.AsyncWith):
            bound = {t.id for i in stmt.items if i.optional_vars is not None
                     for t in targets(i.optional_vars) if isinstance(t, ast.Name)}
            self.bound |= bound
            head = self.new(line, preds, reads=names(ast.Tuple([i.context_expr for i in
                                                                stmt.items])),
                            handed=handed(ast.Tuple([i.context_expr for i in stmt.items]), True),
                            kills=bound)
            return self.block(stmt.body, [head], stmt)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            return self.attempt(stmt, preds)
        return self.simple(stmt, preds)

    def loop(self, stmt: ast.For | ast.AsyncFor | ast.While, step: int) -> list[int]:
        """A loop's body from its `step` and back; its ``else`` when it ends; its breaks."""
        breaks: list[int] = []
        self.loops.append((step, breaks))
        for end in self.block(stmt.body, [step], stmt):
            self.nodes[end].succ.append(step)
        self.loops.pop()
        return self.block(stmt.orelse, [step], stmt) + breaks

    def attempt(self, stmt: ast.stmt, preds: list[int]) -> list[int]:
        """A ``try``: its body, an edge from its entry and each of its statements to every
        handler, then ``else``, and everything inside it on to ``finally``."""
        entry = self.new(stmt.lineno, preds)
        group = [entry]
        self.tries.append(group)
        ends = self.block(getattr(stmt, "body", []), [entry], stmt)
        self.tries.pop()
        ends = self.block(getattr(stmt, "orelse", []), ends, stmt)
        for handler in getattr(stmt, "handlers", []):
            name = {handler.name} if handler.name else set()
            self.bound |= name
            head = self.new(handler.lineno, list(group), reads=names(handler.type), kills=name)
            ends += self.block(handler.body, [head], stmt)
        final = getattr(stmt, "finalbody", [])
        if not final:
            return ends
        inside = list(range(entry, len(self.nodes)))
        return self.block(final, [self.new(stmt.lineno, inside)], stmt)

    def simple(self, stmt: ast.stmt, preds: list[int]) -> list[int]:
        """A statement as one node; control goes on from it unless it jumps."""
        index = self.new(stmt.lineno, preds)
        node = self.nodes[index]
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign) and stmt.value:
            self.assign(node, stmt, stmt.value)
        elif isinstance(stmt, ast.Expr) and (changed := self.changed(stmt.value)):
            call = stmt.value
            assert isinstance(call, ast.Call)
            node.uses.append((frozenset({changed}), names(ast.Tuple([*call.args, *(
                k.value for k in call.keywords)])), True))
            node.handed |= handed(call, False)
        else:
            self.other(stmt, node)
        if isinstance(stmt, ast.Break | ast.Continue) and self.loops:
            step, breaks = self.loops[-1]
            (breaks.append(index) if isinstance(stmt, ast.Break)
             else node.succ.append(step))
        jumps = ast.Return | ast.Raise | ast.Break | ast.Continue
        return [] if isinstance(stmt, jumps) else [index]

    def changed(self, value: ast.expr) -> str | None:
        """The local a call statement changes in place (``kept.remove(j)``) when that is all
        it may do: a changing method of a local name, on arguments that only read."""
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
            return None
        base = value.func.value
        args = ast.Tuple([*value.args, *(k.value for k in value.keywords)])
        if isinstance(base, ast.Name) and value.func.attr in MUTATORS and pure(args) and \
                base.id not in self.params | {"self", "cls"}:
            return base.id
        return None

    def assign(self, node: _Node, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign,
               value: ast.expr) -> None:
        """An assignment: names bound (an augmented one reads its target), stores in place."""
        read, written = names(value), set()
        node.handed |= handed(value, True)
        many = isinstance(stmt, ast.Assign) and (len(stmt.targets) > 1 or not isinstance(
            stmt.targets[0], ast.Name))
        for target in [t for each in (stmt.targets if isinstance(stmt, ast.Assign)
                                      else [stmt.target]) for t in targets(each)]:
            base = stored(target)
            if isinstance(target, ast.Name) and not isinstance(stmt, ast.AugAssign):
                node.kills.add(target.id)
                self.bound.add(target.id)
                if fresh(value) and not many:
                    node.fresh.add(target.id)
                written.add(target.id)
            elif base is None or base in self.params | {"self", "cls"}:
                node.reads |= read | names(target)  # stored where others may read it
            else:  # ``x += v``, ``x[k] = v``: changes the local in place
                node.uses.append((frozenset({base}), read | names(target), True))
        if written:
            if pure(value):
                node.uses.append((frozenset(written), read, False))
            else:
                node.reads |= read

    def other(self, stmt: ast.stmt, node: _Node) -> None:
        """Any other statement reads everything it names; nested definitions are closures."""
        node.reads |= names(stmt)
        held = isinstance(stmt, ast.Return | ast.Raise) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield | ast.YieldFrom))
        for expr in ast.iter_child_nodes(stmt):
            node.handed |= handed(expr, held)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.closures |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
            node.kills.add(stmt.name)
        elif isinstance(stmt, ast.Global | ast.Nonlocal):
            self.declared |= set(stmt.names)
        elif isinstance(stmt, ast.Delete | ast.Import | ast.ImportFrom):
            node.kills |= {t.id for t in getattr(stmt, "targets", []) if isinstance(
                t, ast.Name)} | {(a.asname or a.name).split(".")[0]
                                 for a in getattr(stmt, "names", [])}

    # --- the analyses ----------------------------------------------------------------------
    def share(self) -> None:
        """Forwards, to a fixed point: the names that may be shared before each node."""
        self.shared = [set() for _ in self.nodes]
        self.shared[0] = self.params | {"self", "cls"}
        todo = list(range(len(self.nodes)))
        while todo:
            index = todo.pop()
            node = self.nodes[index]
            out = ((self.shared[index] | node.handed) - node.kills) | (node.kills - node.fresh)
            for succ in node.succ:
                if not out <= self.shared[succ]:
                    self.shared[succ] |= out
                    todo.append(succ)

    def liveness(self) -> None:
        """Backwards, to a fixed point: the names live before each node (module docstring)."""
        self.live = [set() for _ in self.nodes]
        for _ in range(MAX_PASSES):
            changed = False
            for index in range(len(self.nodes) - 1, -1, -1):
                node, after = self.nodes[index], self.after(index)
                live = (after - node.kills) | node.reads
                for written, read, in_place in node.uses:
                    if written & after or (in_place and written & self.shared[index]):
                        live |= read
                if live != self.live[index]:
                    self.live[index], changed = live, True
            if not changed:
                return
        raise _GiveUp

    def after(self, index: int) -> set[str]:
        """The names live after a node."""
        return set().union(*(self.live[s] for s in self.nodes[index].succ))

    # --- questions about one statement -----------------------------------------------------
    def live_after(self, stmt: ast.stmt) -> set[str]:
        """The names live where `stmt` ends (after an ``if``'s join, an assignment)."""
        return self.after(self.spans[id(stmt)][1])

    def shared_before(self, stmt: ast.stmt) -> set[str]:
        """The names that may be shared where `stmt` starts."""
        return self.shared[self.spans[id(stmt)][0]]

    def rebinds(self, stmt: ast.stmt, wanted: set[str]) -> list[int]:
        """The lines, outside `stmt`, where a path from its end first binds one of `wanted`
        again."""
        first, last = self.spans[id(stmt)]
        lines: set[int] = set()
        seen: set[tuple[int, str]] = set()
        todo = [(s, name) for s in self.nodes[last].succ for name in wanted]
        while todo:
            index, name = todo.pop()
            if (index, name) in seen:
                continue
            seen.add((index, name))
            node = self.nodes[index]
            if name in node.kills:
                if not first <= index <= last:
                    lines.add(node.line)
                continue
            todo += [(s, name) for s in node.succ]
        return sorted(lines)

    def enclosing(self, stmt: ast.stmt) -> ast.stmt | None:
        """The statement `stmt` is directly inside (None at the function's top level)."""
        return self.parents.get(id(stmt))
