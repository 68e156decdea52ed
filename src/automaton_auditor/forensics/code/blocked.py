"""Whether a judge fails before its model call: a name its code reads that is never bound.

ruff (`analysers`) says which names fail when the line that reads them runs: F821, a name no
scope the function sees binds (builtins, imports, ``global``/``nonlocal`` declarations and
comprehension variables count as bound; a class body's names are not seen from its methods),
and F823, a local read before its assignment. A star import makes an unknown name a maybe
(F405), never one of these, so no fact then. Such a name stops a call when it is read on every
path to the call: in a statement ahead of it in its block or in an enclosing block, in the
header of a block that holds it (an ``if`` test, a loop's iterable, a ``with`` item), or in the
call's own arguments; not under a lambda, a conditional expression's branches, the later
operands of ``and``/``or``, a comprehension past its first iterable, or inside a compound
statement ahead of it (a branch or a ``try`` may skip it). A route (`prompt_eval.Step`: the
judge node, the functions it calls on the way, the model call) is blocked when one of its
steps reads such a name before the call it makes next.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from automaton_auditor.forensics.code.analysers import Analysis, diagnostic_name
from automaton_auditor.forensics.code.prompt_values import Step

FAILING = ("F821", "F823")
Undefined = dict[str, set[tuple[int, str]]]  # path -> (line, name) read there, failing
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def undefined_reads(analysis: Analysis) -> Undefined:
    """Per file, the (line, name) reads that fail when their line runs."""
    out: Undefined = {}
    for diagnostic in analysis.diagnostics:
        if diagnostic["code"] in FAILING:
            out.setdefault(diagnostic["path"], set()).add(
                (int(diagnostic["line"]), diagnostic_name(diagnostic)))
    return out


def failing_read(path: str, line: int, undefined: Undefined) -> str | None:
    """A name read on `line` that is never defined there (``Repo.clone_from(url, dest)`` in a
    module that never imports ``Repo``): the call on that line raises NameError first, its
    callee and arguments being evaluated before it runs, so it does nothing it names."""
    return min((name for at, name in undefined.get(path, set()) if at == line), default=None)


def blocked_at(route: tuple[Step, ...], undefined: Undefined) -> str | None:
    """``path:line`` of the first failing read that stops the route before its model call,
    or None when nothing known stops it."""
    for step in route:
        failing = undefined.get(step.path)
        if step.fn is None or step.call is None or not failing:
            continue
        line = fails_before(step.fn, step.call, failing)
        if line is not None:
            return f"{step.path}:{line}"
    return None


def fails_before(fn: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call,
                 failing: set[tuple[int, str]]) -> int | None:
    """The line of a failing read on every path from the start of `fn` to `call` (None
    when there is none)."""
    line = call.lineno
    body: list[ast.stmt] | None = fn.body
    while body:
        holder = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)),
                      None)
        if holder is None:
            return None
        for stmt in body[:body.index(holder)]:
            if (hit := _first(always_run(stmt), failing)) is not None:
                return hit
        exprs, body = _step_into(holder, call)
        if (hit := _first(exprs, failing)) is not None:
            return hit
    return None


def _header(stmt: ast.stmt) -> list[ast.AST]:
    """What a compound statement evaluates before any block of it runs."""
    if isinstance(stmt, ast.If | ast.While):
        return [stmt.test]
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return [stmt.iter]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [item.context_expr for item in stmt.items]
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return [*stmt.decorator_list, *stmt.args.defaults,
                *(d for d in stmt.args.kw_defaults if d is not None)]
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)]
    return []


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks the header of `stmt` runs before (a ``try`` has no header)."""
    if isinstance(stmt, ast.If | ast.While | ast.For | ast.AsyncFor):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [stmt.body]
    if isinstance(stmt, ast.Match):
        return [case.body for case in stmt.cases]
    return []


def always_run(stmt: ast.stmt) -> list[ast.AST]:
    """What runs whenever `stmt` does, as far as reads go: a simple statement whole (not a
    local annotation, which is never evaluated), a compound one's header."""
    if isinstance(stmt, ast.AnnAssign):
        return [stmt.value] if stmt.value is not None else []
    if any(isinstance(stmt, kind) for kind in (ast.If, ast.While, ast.For, ast.AsyncFor,
                                                ast.With, ast.AsyncWith, ast.Match, ast.Try,
                                                ast.TryStar, ast.FunctionDef,
                                                ast.AsyncFunctionDef, ast.ClassDef)):
        return _header(stmt)
    return [stmt]


def _step_into(holder: ast.stmt, call: ast.Call) -> tuple[list[ast.AST],
                                                          list[ast.stmt] | None]:
    """(what runs before `call` inside `holder`, the block of `holder` that holds the call;
    None when the call is in `holder` itself)."""
    line = call.lineno
    if isinstance(holder, ast.Try | ast.TryStar):
        # its body runs from the top; a handler or ``finally`` may run without it
        body = holder.body
        return [], body if body[0].lineno <= line <= (body[-1].end_lineno or line) else None
    for block in _blocks(holder):
        if block and block[0].lineno <= line <= (block[-1].end_lineno or line):
            return _header(holder), block
    if isinstance(holder, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [], None
    # the call sits in this statement itself (in a header when `holder` is compound):
    # whenever it is made, its callee and its arguments were evaluated first
    return [call.func, *call.args, *(k.value for k in call.keywords)], None


def always_run_nodes(roots: Iterable[ast.AST]) -> list[ast.AST]:
    """Every node of `roots` that is evaluated whenever they are (see the module docstring):
    a lambda's body, a conditional's branches, the later operands of ``and``/``or`` and a
    comprehension past its first iterable may not run."""
    out: list[ast.AST] = []
    todo = list(roots)
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.Lambda):
            todo += [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
        elif isinstance(node, ast.IfExp):
            todo.append(node.test)
        elif isinstance(node, ast.BoolOp):
            todo += node.values[:1]
        elif isinstance(node, COMPREHENSIONS):
            todo.append(node.generators[0].iter)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            todo += list(ast.iter_child_nodes(node))
    return out


def _first(roots: Iterable[ast.AST], failing: set[tuple[int, str]]) -> int | None:
    """The first line among `roots` that reads a failing name where it always runs."""
    lines = [n.lineno for n in always_run_nodes(roots) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Load) and (n.lineno, n.id) in failing]
    return min(lines) if lines else None
