"""Whether a clone's temporary directory is removed on every path, or only when no error
occurs.

A removal (``shutil.rmtree(tmp)``, a helper that removes its argument) runs on every path
when it sits in a ``finally``, or when every error that can happen between the moment the
directory reaches its function (``tmp = tempfile.mkdtemp()``, ``path = clone(url)``) and
the removal is met by a handler that removes it too or goes on to the removal. Any call can
raise (a clone, a model call, a file read); a ``print``, a log call or a test that answers
False on an error (``os.path.exists``) is not counted. An error caught by a handler that
returns or raises without removing it, or not caught at all in the function, leaves the
directory behind: it is removed only when no error occurs. A removal followed by a
``raise`` (in its block or one around it) is itself a failure path's.

Read from the AST of the removal's function only: a directory handed in as a parameter is
judged at its callers' removals; one kept on ``self`` or in a global is not judged.
``TemporaryDirectory`` objects are not judged here (their finaliser removes them).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import caught_names, dotted, function_defs
from automaton_auditor.forensics.code.effects import LOG_CALLS
from automaton_auditor.forensics.code.exprs import own_nodes, target_names
from automaton_auditor.forensics.code.source import line_at, parse_file

BROAD = {"Exception", "BaseException"}
LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# calls that report a failure by their value, not by raising (besides print and log calls)
QUIET = {"exists", "isdir", "isfile", "islink", "isinstance", "hasattr", "callable"}


class Leak(NamedTuple):
    """A removal an error skips, quoted: the removal, the call that raises, and the handler
    that leaves without removing the directory (empty: nothing in the function catches it)."""

    removal: str
    raiser: str
    handler: list[str]


def error_leaks(repo: Path | None, graph: CallGraph,
                sites: list[tuple[str, int, bool]]) -> list[Leak]:
    """For the removals of one temporary directory (`sandbox.removals`: path, line, whether
    it runs only on a failure): each success-path removal with what skips it on an error,
    when every such removal is skipped by some error; [] when one runs on every path, none
    can be judged, or there is no checkout."""
    if repo is None:
        return []
    removing = {(p, n) for p, n, _f in sites}
    leaks: list[Leak] = []
    for path, line, failing in sites:
        if failing:
            continue
        key = graph.function_at(path, line)
        tree = parse_file(str(repo / path)) if key else None
        func = next((n for q, n in function_defs(tree) if key and q == key[1]), None) \
            if tree else None
        if func is None:
            return []  # module code or unreadable: not judged
        rm_lines = {n for p, n in removing if p == path}
        verdict = _site(func, line, rm_lines)
        if verdict is None:
            return []  # runs on every path, or cannot be judged: said removed
        if verdict:
            leaks.append(Leak(line_at(repo, path, line), line_at(repo, path, verdict[0]),
                              [line_at(repo, path, n) for n in verdict[1:]]))
    return leaks


def _site(func: ast.FunctionDef | ast.AsyncFunctionDef, line: int,
          rm_lines: set[int]) -> list[int] | None:
    """The lines that show an error skipping the removal at `line` (the call that raises,
    then the handler that leaves without removing); [] when the removal is not judged here
    (a failure path's, a parameter's); None when it runs on every path or cannot be told."""
    chain = _chain(func, line)
    if not chain:
        return None
    if any(isinstance(s, ast.Raise) for stmt, _o, block in chain
           for s in block[block.index(stmt) + 1:]) or \
            any(isinstance(o, ast.ExceptHandler) for _s, o, _b in chain):
        return []  # cleanup before failing: a failure path's removal
    if any(isinstance(o, ast.Try) and b is o.finalbody for _s, o, b in chain):
        return None
    call = next((n for n in ast.walk(chain[-1][0]) if isinstance(n, ast.Call) and n.lineno == line),
                None)
    names = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)} if call else set()
    params = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    arrival = _arrival(func, names, line)
    if not arrival:
        return [] if names and names <= params else None
    for node in _raisers(func, arrival, line, rm_lines):
        leak = _caught(func, node, line, rm_lines)
        if leak:
            return leak
    return None


def _chain(func: ast.AST, line: int) -> list[tuple[ast.stmt, ast.AST, list[ast.stmt]]]:
    """(statement, its owner, the block it is in) from the function down to the innermost
    statement that holds `line`; nested definitions are not entered."""
    out: list[tuple[ast.stmt, ast.AST, list[ast.stmt]]] = []
    owner: ast.AST = func
    while True:
        found = None
        for block in _blocks(owner):
            for stmt in block:
                if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) and \
                        not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef |
                                       ast.ClassDef):
                    found = (stmt, owner, block)
        if found is None:
            return out
        out.append(found)
        owner = found[0]


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    blocks = [getattr(node, f, None) or [] for f in ("body", "orelse", "finalbody")]
    return [*blocks, *([h] for h in getattr(node, "handlers", None) or [])] if \
        isinstance(node, ast.Try | ast.TryStar) else blocks + [
            c.body for c in getattr(node, "cases", None) or []]


def _arrival(func: ast.AST, names: set[str], line: int) -> int:
    """The last line of the first statement before `line` that binds one of `names` to
    something not constant (where the directory reaches this function); 0 when none."""
    lines = []
    for node in own_nodes(getattr(func, "body", [])):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and \
                not isinstance(node.value, ast.Constant):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value_end = node.end_lineno
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets, value_end = [node.optional_vars], node.context_expr.end_lineno
        else:
            continue
        if names & {n for t in targets for n in target_names(t)} and \
                (value_end or 0) < line:
            lines.append(int(value_end or 0))
    return min(lines, default=0)


def _raisers(func: ast.AST, start: int, line: int, rm_lines: set[int]) -> list[ast.Call]:
    """The calls between `start` and `line` that may raise: not in an ``except`` handler
    (those run on a failure already), not a print or log call, not a removal."""
    handled = {id(n) for h in ast.walk(func) if isinstance(h, ast.ExceptHandler)
               for n in ast.walk(h)}
    calls = [n for n in own_nodes(getattr(func, "body", [])) if isinstance(n, ast.Call)
             and start < n.lineno < line and id(n) not in handled and n.lineno not in rm_lines
             and (dotted(n.func) or "").rsplit(".", 1)[-1] not in LOG_CALLS | QUIET]
    return sorted(calls, key=lambda n: (n.lineno, n.col_offset))


def _caught(func: ast.AST, call: ast.Call, line: int, rm_lines: set[int]) -> list[int]:
    """Where an error of `call` goes, if it skips the removal at `line`: the call's line and
    the handler that leaves without removing the directory, or the call's line alone when
    nothing in the function catches it; [] when a ``finally`` or every handler on its way
    removes it or goes on to it."""
    for _stmt, owner, block in reversed(_chain(func, call.lineno)):
        if not isinstance(owner, ast.Try | ast.TryStar):
            continue
        if _removes(owner.finalbody, rm_lines):
            return []
        if block is not owner.body or not owner.handlers:
            continue
        for handler in owner.handlers:
            goes_on = not handler.body or not isinstance(handler.body[-1], LEAVES)
            if not _removes(handler.body, rm_lines) and not (
                    goes_on and line > (owner.end_lineno or 0)):
                return [call.lineno, handler.lineno, handler.body[-1].lineno]
        if any(caught_names(h) is None or BROAD & set(caught_names(h) or ())
               for h in owner.handlers):
            return []
        # narrow handlers only: other errors go on outwards
    return [call.lineno]


def _removes(body: list[ast.stmt], rm_lines: set[int]) -> bool:
    return any(s.lineno <= n <= (s.end_lineno or s.lineno) for s in body for n in rm_lines)


def leak_text(leaks: list[Leak]) -> str:
    """How a directory removed only when no error occurs reads in the rationale."""
    said = "; ".join(f"`{k.removal}` is skipped when `{k.raiser}` raises" + (
        f": the error goes to `{' ... '.join(k.handler)}`, which leaves without removing it"
        if k.handler else ": nothing in that function catches the error")
        for k in leaks[:3])
    return ("Removed only when no error occurs: the temporary directory is removed on the "
            "success path, but an error after it is made or handed over and before the "
            f"removal leaves it behind: {said}.")
