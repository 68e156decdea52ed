"""Decisions of a scoring function whose result nothing reads (walk time, one function).

A decision is an ``if``, or a flag bound to a comparison, that `logic` records as a branch.
Its result is what it writes: the names its body binds and the local containers it changes
in place (``kept.remove(judge)``, ``table[key] = value``, ``total += x``). Text is no result
(a string or f-string bound or appended to a local that no test of the function reads: a
trace, a dissent note), nor is a log call; what its test calls runs whether it acts or not.
It has no effect when, by `dead_stores`, every name it writes is dead where it ends and
every container it changes is shared with nothing before it. Its branch is then marked
``unused``: the ``names``, the lines that write them (``at``) and the lines that bind them
again next (``over``; none when nothing reads them at all).

Anything unclear keeps a decision live: a ``return``, ``raise``, ``yield``, ``await``,
``with`` or nested definition in it; a store on ``self``, on a parameter or on anything not
local; a call that may change something (other than a log and a changing method of a local
on values that only read); a name a closure, ``global`` or ``nonlocal`` names; a ``break``
or ``continue`` leaving a loop whose body holds more than the decision, or has an ``else``.
"""

from __future__ import annotations

import ast

from automaton_auditor.forensics.code.common import JSON, FunctionNode
from automaton_auditor.forensics.code.dead_stores import Flow
from automaton_auditor.forensics.code.exprs import is_text, own_exprs, own_nodes, walk_expr
from automaton_auditor.forensics.code.store_exprs import pure, reader_call, stored, targets

MAX_LINES = 4  # lines kept per list of a mark
STOPS = (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal,
         ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Delete,
         ast.Import, ast.ImportFrom, ast.With, ast.AsyncWith)
TEXT_ADDS = frozenset({"append", "extend", "insert", "add"})
LOOPS = ast.For | ast.AsyncFor | ast.While
Write = tuple[ast.stmt, set[str], bool]  # a statement, the names it writes, in place or not


def unused_marks(fn: FunctionNode, logic: JSON) -> JSON:
    """`logic` with every branch whose decision has no effect marked ``unused``."""
    branches = logic.get("branches") or []
    decisions: dict[int, ast.stmt | None] = {}
    for node in own_nodes(fn.body):
        if isinstance(node, ast.If | ast.Assign):
            decisions[node.lineno] = None if node.lineno in decisions else node
    wanted = [(b, decisions.get(b["line"])) for b in branches]
    if not any(stmt for _b, stmt in wanted):
        return logic
    flow, tested = Flow.build(fn), names_in_tests(fn)
    for branch, stmt in wanted:
        mark = unused(flow, stmt, tested) if flow is not None and stmt is not None else None
        if mark:
            branch["unused"] = mark
    return logic


def names_in_tests(fn: FunctionNode) -> set[str]:
    """The names some test of the function reads (an ``if``/``while``/``assert``/conditional
    expression's test, a comprehension's condition, any comparison)."""
    tests: list[ast.AST] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests += node.ifs
        elif isinstance(node, ast.Compare):
            tests.append(node)
    return {n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name)}


def unused(flow: Flow, stmt: ast.stmt, tested: set[str]) -> JSON | None:
    """The ``unused`` mark of one decision, or None (see the module docstring)."""
    if isinstance(stmt, ast.If):
        body = [*stmt.body, *stmt.orelse]
    elif isinstance(stmt, ast.Assign) and pure(stmt.value):
        body = [stmt]
    else:
        return None
    found = writes(body, flow, tested)
    if found is None or not found[0]:
        return None
    items, machinery = found
    written = set().union(*(names for _s, names, _p in items))
    if (written | machinery) & (flow.closures | flow.declared) or \
            machinery & flow.live_after(stmt) or leaves_loop(body, stmt, flow):
        return None
    for each, names, in_place in items:  # dead where it is written, each unshared
        if names & flow.live_after(each) or (in_place and (
                names & (flow.params | {"self", "cls"} | flow.shared_before(each))
                or names - flow.bound)):
            return None
    return {"names": sorted(written), "at": sorted({s.lineno for s, _n, _p in items})[
        :MAX_LINES], "over": flow.rebinds(stmt, written)[:MAX_LINES]}


def writes(body: list[ast.stmt], flow: Flow,
           tested: set[str]) -> tuple[list[Write], set[str]] | None:
    """Each statement of `body` that writes something other than text, with the names it
    writes, and the names its loops and handlers bind; None when it may do anything else."""
    found: list[Write] = []
    machinery: set[str] = set()
    todo = list(body)
    while todo:
        stmt = todo.pop()
        exprs = [n for e in own_exprs(stmt) for n in walk_expr(e)]
        if isinstance(stmt, STOPS) or any(isinstance(n, STOPS) or (
                isinstance(n, ast.Call) and not reader_call(n) and flow.changed(n) is None)
                for n in exprs):
            return None
        if isinstance(stmt, ast.If | ast.For | ast.AsyncFor | ast.While | ast.Try):
            todo += [*stmt.body, *stmt.orelse, *getattr(stmt, "finalbody", [])]
            for handler in getattr(stmt, "handlers", []):
                machinery |= {handler.name} if handler.name else set()
                todo += handler.body
            machinery |= {t.id for t in targets(getattr(stmt, "target", ast.Tuple([])))
                          if isinstance(t, ast.Name)}
            continue
        item = written(stmt, flow, tested)
        if item is None:
            return None
        if item[0]:
            found.append((stmt, *item))
    return found, machinery


def written(stmt: ast.stmt, flow: Flow, tested: set[str]) -> tuple[set[str], bool] | None:
    """The names one simple statement writes, text aside, and whether it changes them in
    place; None for a statement that may do anything else."""
    if isinstance(stmt, ast.Expr) and (base := flow.changed(stmt.value)):
        call = stmt.value
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        # ``trace.append(f"...")``: text added to a local no test reads
        text = call.func.attr in TEXT_ADDS and call.args and not call.keywords and all(
            is_text(a, {}) for a in call.args) and base not in tested
        return (set() if text else {base}), True
    if isinstance(stmt, ast.Expr | ast.Pass | ast.Break | ast.Continue) or (
            isinstance(stmt, ast.AnnAssign) and stmt.value is None):
        return set(), False  # a log, a docstring
    if not isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign) or stmt.value is None:
        return None
    names: set[str] = set()
    in_place = isinstance(stmt, ast.AugAssign)
    for target in (t for each in (stmt.targets if isinstance(stmt, ast.Assign) else [
            stmt.target]) for t in targets(each)):
        base = stored(target)
        if base is None or (not isinstance(target, ast.Name) and base in (
                flow.params | {"self", "cls"})):
            return None
        if is_text(stmt.value, {}) and base not in tested:
            continue  # text: a trace, a note
        names.add(base)
        in_place = in_place or not isinstance(target, ast.Name)
    return names, in_place


def leaves_loop(body: list[ast.stmt], stmt: ast.stmt, flow: Flow) -> bool:
    """Whether a ``break`` or ``continue`` of `body` leaves (or restarts) the loop around
    `stmt` while that loop does more than `stmt` (its body holds more, or it has an
    ``else`` a break skips)."""
    jumps, todo = False, list[ast.AST](body)
    while todo and not jumps:
        node = todo.pop()
        jumps = isinstance(node, ast.Break | ast.Continue)
        if isinstance(node, LOOPS):
            todo += node.orelse  # a jump in its body is its own
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            todo += [c for c in ast.iter_child_nodes(node)
                     if isinstance(c, ast.stmt | ast.excepthandler)]
    loop = flow.enclosing(stmt)
    return jumps and not (isinstance(loop, LOOPS) and loop.body == [stmt] and not loop.orelse)
