"""Tests a function's own boolean flags make false on every path (a decision that never fires).

``found_any = False; all_fail = True`` then, in a loop, ``found_any = True; all_fail = False``
together, ``if not found_any and opinions: return`` and ``if all_fail and opinions:``: the
last test needs ``all_fail`` true, so nothing was found, so ``opinions`` is empty (else the
first test returned): no path reaches it with its test true.

The analysis follows every path of one function's body over the values of its flags: locals
only ever assigned ``True``, ``False``, another flag or ``not`` one, and parameters only ever
tested for truth (never stored, passed, indexed or read otherwise; a call, which may change
the object through another name, leaves their truth open again). The state at each point is
the set of value combinations some path reaches it with; an ``if`` splits it on its test
(what the analysis does not model in a test, a call, a comparison, any other name, may be
either way each time), a loop runs zero or more times (to a fixed point), ``return`` and
``raise`` end a path, ``break``/``continue`` leave or restart the loop. Anything else gives
up (no test is then dead): a ``try``, ``with`` or ``match`` block, a flag a nested function
or a ``global``/``nonlocal`` names, more than `MAX_FLAGS` flags, more than `MAX_STATES`
combinations at one point or `MAX_STEPS` statements run.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from itertools import product
from typing import NamedTuple

MAX_FLAGS = 8  # flags and truth-tested parameters followed together
MAX_STATES = 512  # value combinations at one point of the body
MAX_QUOTED = 8  # lines quoted for one dead test
MAX_STEPS = 20_000  # statements run, loops' reruns included
Value = bool | None  # None: either value
State = tuple[Value, ...]
UNMODELLED = (ast.Try, ast.With, ast.AsyncWith, ast.Match, ast.Global, ast.Nonlocal) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())


class _GiveUp(Exception):
    pass


class _Out(NamedTuple):
    normal: frozenset[State]
    breaks: frozenset[State]
    continues: frozenset[State]


NONE: frozenset[State] = frozenset()


def dead_tests(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, list[int]]:
    """The ``if``/``while`` statements (by line) whose test no path reaches true, each with
    the lines that make it so: the assignments of its flags and of the flags set beside them,
    the earlier tests of those flags, and the test itself."""
    flags, params = _tracked(node)
    names = flags + params
    if not flags or len(names) > MAX_FLAGS:
        return {}
    runner = _Runner(names, len(flags))
    try:
        runner.block(node.body, frozenset({tuple(None for _ in names)}))
    except _GiveUp:
        return {}
    out: dict[int, list[int]] = {}
    for line, owner in runner.tests.items():
        if line in runner.reached and line not in runner.true and any(
                isinstance(n, ast.Name) and n.id in flags for n in ast.walk(owner.test)):
            why = _why(node, names, owner.test, line)
            # the decisions inside its body never run either
            out.update({s.lineno: why for s in _own(owner.body)
                        if isinstance(s, ast.If | ast.While)} | {line: why})
    return out


def _tracked(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[str], list[str]]:
    """The flags, then the truth-tested parameters (empty when the body holds what the
    analysis does not model)."""
    own = _own(node.body)
    if any(isinstance(n, UNMODELLED) for n in own):
        return [], []
    values = {id(t): sub.value for sub in own if isinstance(sub, ast.Assign | ast.AnnAssign)
              for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])}
    stored: dict[str, list[ast.expr | None]] = {}
    for sub in own:
        # a loop target, ``del``, a walrus, an augmented assignment: no flag's value
        bound = [sub.id] if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load) \
            else [a.asname or a.name.split(".")[0] for a in sub.names] if isinstance(
                sub, ast.Import | ast.ImportFrom) else [sub.name] if isinstance(
                sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else []
        for name in bound:
            stored.setdefault(name, []).append(values.get(id(sub)))
    nested = {n.id for sub in own if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef
                                                 | ast.Lambda | ast.ClassDef)
              for n in ast.walk(sub) if isinstance(n, ast.Name)}
    args = node.args
    params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    # a parameter holds whatever the caller passed (a list whose truth a call may change)
    flags = {name for name in stored if name not in nested and name not in params}
    while True:  # ``x = not y`` keeps ``x`` a flag only while ``y`` is one
        kept = {name for name in flags if all(_flag_value(v, flags) for v in stored[name])}
        if kept == flags:
            break
        flags = kept
    tested = _truth_tested(own)
    truthy = [p for p in params if p not in stored and p not in nested and all(
        id(n) in tested for n in own if isinstance(n, ast.Name) and n.id == p)]
    return sorted(flags), truthy


def _own(body: Sequence[ast.AST]) -> list[ast.AST]:
    """Every node of the body, nested functions and classes included as one node each."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(reversed(body))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef |
                          ast.Lambda):
            todo += reversed(list(ast.iter_child_nodes(node)))
    return out


def _flag_value(value: ast.expr | None, flags: set[str]) -> bool:
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        value = value.operand
        return isinstance(value, ast.Name) and value.id in flags
    return (isinstance(value, ast.Constant) and isinstance(value.value, bool)) or (
        isinstance(value, ast.Name) and value.id in flags)


def _truth_tested(nodes: list[ast.AST]) -> set[int]:
    """The names read only for their truth: a test, or an ``and``/``or``/``not`` operand
    inside one (``x = ops or []`` hands ``ops`` on: not a test)."""
    out: set[int] = set()
    todo = [n.test for n in nodes if isinstance(n, ast.If | ast.While | ast.IfExp | ast.Assert)]
    while todo:
        expr = todo.pop()
        out.add(id(expr))
        if isinstance(expr, ast.BoolOp):
            todo += expr.values
        elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            todo.append(expr.operand)
    return out


class _Runner:
    """Runs a body over sets of flag values, recording each test reached and reached true."""

    def __init__(self, names: list[str], flags: int) -> None:
        self.index = {name: i for i, name in enumerate(names)}
        self.params = range(flags, len(names))  # their places in a state
        self.tests: dict[int, ast.If | ast.While] = {}
        self.steps = 0
        self.reached: set[int] = set()
        self.true: set[int] = set()

    def block(self, body: list[ast.stmt], states: frozenset[State]) -> _Out:
        breaks: set[State] = set()
        continues: set[State] = set()
        for stmt in body:
            if not states:
                break
            out = self.stmt(stmt, states)
            states = out.normal
            breaks |= out.breaks
            continues |= out.continues
        return _Out(states, frozenset(breaks), frozenset(continues))

    def stmt(self, stmt: ast.stmt, states: frozenset[State]) -> _Out:
        self.steps += 1
        if len(states) > MAX_STATES or self.steps > MAX_STEPS:
            raise _GiveUp
        if isinstance(stmt, ast.Return | ast.Raise):
            return _Out(NONE, NONE, NONE)
        if isinstance(stmt, ast.Break):
            return _Out(NONE, states, NONE)
        if isinstance(stmt, ast.Continue):
            return _Out(NONE, NONE, states)
        if isinstance(stmt, ast.If):
            yes, no = self.split(stmt, states)
            body, other = self.block(stmt.body, yes), self.block(stmt.orelse, no)
            return _Out(body.normal | other.normal, body.breaks | other.breaks,
                        body.continues | other.continues)
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            return self.loop(stmt, states)
        states = self.forget(stmt, states)
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in self.index:
                    states = frozenset(self.assign(s, target.id, stmt.value) for s in states)
        return _Out(states, NONE, NONE)

    def loop(self, stmt: ast.For | ast.AsyncFor | ast.While,
             states: frozenset[State]) -> _Out:
        """Zero or more runs of the body: the states at the loop's head, to a fixed point
        (each step of a ``for`` runs its iterator's code: what a call may change is open)."""
        head, breaks = states, frozenset[State]()
        while True:
            if isinstance(stmt, ast.While):
                enter, leave = self.split(stmt, head)
            else:
                enter = leave = self.forget(None, head)
            out = self.block(stmt.body, enter)
            breaks |= out.breaks
            grown = head | out.normal | out.continues
            if grown == head:
                break
            head = grown
        after = self.block(stmt.orelse, leave)
        return _Out(after.normal | breaks, after.breaks, after.continues)

    def forget(self, node: ast.AST | None, states: frozenset[State]) -> frozenset[State]:
        """After a call (None: code the analysis cannot see), a parameter's truth is open:
        the call may have changed the object it holds (``ops.append(o)``, another alias)."""
        if not self.params or (node is not None and not _calls(node)):
            return states
        return frozenset(tuple(None if i in self.params else v for i, v in enumerate(s))
                         for s in states)

    def assign(self, state: State, name: str, value: ast.expr) -> State:
        new = list(state)
        new[self.index[name]] = self.value(value, state)
        return tuple(new)

    def split(self, owner: ast.If | ast.While,
              states: frozenset[State]) -> tuple[frozenset[State], frozenset[State]]:
        """The states that may take each side of `owner`'s test; the truth of a followed
        name the test reads but no path has fixed yet is fixed on each side."""
        test, line = owner.test, owner.lineno
        states = self.forget(test, states)
        self.tests[line] = owner
        if states:
            self.reached.add(line)
        # a call inside the test may change a parameter's truth between two reads of it
        read = sorted({i for n in ast.walk(test) if isinstance(n, ast.Name) and (
            i := self.index.get(n.id, -1)) >= 0 and not (i in self.params and _calls(test))})
        yes: set[State] = set()
        no: set[State] = set()
        for state in states:
            open_ = [i for i in read if state[i] is None]
            for values in product((True, False), repeat=len(open_)):
                fixed = list(state)
                for i, value in zip(open_, values, strict=True):
                    fixed[i] = value
                result = self.value(test, tuple(fixed))
                if result is not False:
                    yes.add(tuple(fixed))
                if result is not True:
                    no.add(tuple(fixed))
        if yes:
            self.true.add(line)
        return frozenset(yes), frozenset(no)

    def value(self, expr: ast.expr, state: State) -> Value:
        """The truth of `expr` in `state` (None: either; Kleene's three-valued logic)."""
        if isinstance(expr, ast.Constant):
            return bool(expr.value)
        if isinstance(expr, ast.Name) and expr.id in self.index:
            return state[self.index[expr.id]]
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            inner = self.value(expr.operand, state)
            return None if inner is None else not inner
        if isinstance(expr, ast.BoolOp):
            values = [self.value(v, state) for v in expr.values]
            decisive = isinstance(expr.op, ast.Or)  # ``or``: one true decides; ``and``: false
            if decisive in values:
                return decisive
            return None if None in values else not decisive
        return None


def _calls(node: ast.AST) -> bool:
    """Whether running `node` runs code the analysis cannot see (a call, an ``await``, a
    ``yield``, a nested definition's decorators and defaults)."""
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or any(
        isinstance(n, ast.Call | ast.Await | ast.Yield | ast.YieldFrom) for n in _own([node]))


def _why(node: ast.FunctionDef | ast.AsyncFunctionDef, names: list[str], test: ast.expr,
         line: int) -> list[int]:
    """The test, the assignments of the flags it reads and of the flags set in the same
    blocks as those (set together), and the earlier tests reading any of them."""
    own = _own(node.body)
    blocks = [[s for s in body if isinstance(s, ast.Assign | ast.AnnAssign)]
              for sub in own for body in (getattr(sub, f, None) for f in ("body", "orelse"))
              if isinstance(body, list)] + [[s for s in node.body if isinstance(
                  s, ast.Assign | ast.AnnAssign)]]
    relevant = {n.id for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in names}
    grown = True
    while grown:
        grown = False
        for block in blocks:
            set_here = {t.id for s in block for t in ast.walk(s)
                        if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
                        and t.id in names}
            if set_here & relevant and not set_here <= relevant:
                relevant |= set_here
                grown = True
    lines = {s.lineno for s in own if isinstance(s, ast.Assign | ast.AnnAssign) and any(
        isinstance(t, ast.Name) and t.id in relevant for t in ast.walk(s)
        if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store))}
    lines |= {s.lineno for s in own if isinstance(s, ast.If | ast.While) and s.lineno < line
              and any(isinstance(n, ast.Name) and n.id in relevant for n in ast.walk(s.test))}
    return [*sorted(lines)[:MAX_QUOTED - 1], line]
