"""Whether the code sees a process call fail: the one rule behind "subprocess and git calls
are checked for errors".

``subprocess.run(cmd, check=False)`` returns quietly when git fails, so a ``check=`` keyword
proves nothing by itself. A call's failure is seen when the call raises on it
(``check=True`` or any value that is not the literal ``False``; ``check_call`` and
``check_output`` always raise), when it sits in a try block with an ``except`` that catches a
process or git error, or when its result's exit status is read afterwards in the same scope
(``result.returncode``, ``result.check_returncode()``, ``result.stderr`` or
``proc.wait()``/``proc.poll()`` tested, the code of ``rc = subprocess.call(...)`` tested).
Each seen call is answered with the line that shows it, for the finding to quote.

An ``except`` that drops the error sees nothing: one that neither raises, nor logs or prints,
nor keeps the error (reads the exception object or a command's ``stderr``/``output``) in
what it does, nor hands it to a loop (``continue``), swallows every failure (``except
Exception: return None, None``: a failed clone's authentication error included). A call
whose only check is such a handler (or whose ``check=True`` raises into one) is not
checked: it is answered, apart, with that handler's line (`error_checks`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from automaton_auditor.forensics.code.classify import SUBPROCESS
from automaton_auditor.forensics.code.common import caught_names, dotted, keyword, resolve
from automaton_auditor.forensics.code.effects import LOG_CALLS
from automaton_auditor.forensics.code.exprs import own_nodes

RAISING = {"check_call", "check_output"}  # they raise CalledProcessError on a non-zero exit
INT_RESULT = {"call", "getstatusoutput"}  # the result (its first item) is the exit code
# the exception types whose ``except`` sees a process or git failure (any of its bases)
CATCHES = {"Exception", "BaseException", "SubprocessError", "CalledProcessError",
           "TimeoutExpired", "OSError", "IOError", "EnvironmentError", "FileNotFoundError",
           "GitCommandError", "GitError", "CommandError"}
TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)
REPORTS = LOG_CALLS | {"print_exc", "exit"}  # calls that tell of the error, or end the run
OUTPUTS = {"stderr", "output", "returncode"}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def failure_checks(tree: ast.Module, imports: dict[str, str],
                   wrappers: frozenset[tuple[int, str]] = frozenset()) -> dict[int, int]:
    """Line of each subprocess or ``clone_from`` call whose failure the code sees -> the line
    that shows it (the ``check=`` value, the ``except``, or the read of its exit status).
    `wrappers`: (line, last name part) of calls to helpers that return a process call's
    result, read the same way (`wrapped`)."""
    return error_checks(tree, imports, wrappers)[0]


def error_checks(tree: ast.Module, imports: dict[str, str],
                 wrappers: frozenset[tuple[int, str]] = frozenset()
                 ) -> tuple[dict[int, int], dict[int, list[int]]]:
    """`failure_checks`, and the line of each call whose error an ``except`` swallows (no
    other check) -> that handler's first and last lines."""
    out: dict[int, int] = {}
    dropped: dict[int, list[int]] = {}
    stack: list[ast.AST] = [tree]
    while stack:
        scope = stack.pop()
        found = _Scope(imports, wrappers)
        found.walk(scope, stack)
        seen, lost = found.checked()
        out.update(seen)
        dropped.update(lost)
    return out, dropped


def keeps_error(handler: ast.ExceptHandler) -> bool:
    """The handler does something with the error it catches: raises (again or anew), logs
    or prints, ends the run, reads the exception object or a command's output, or hands the
    failure to its loop (``continue``/``break``: the next attempt of a retry, a skipped
    item)."""
    nodes = own_nodes(handler.body)
    return any(isinstance(n, ast.Raise | ast.Continue | ast.Break) or (
        isinstance(n, ast.Call) and (dotted(n.func) or "").rsplit(".", 1)[-1] in REPORTS) or (
        isinstance(n, ast.Name) and n.id == handler.name and isinstance(n.ctx, ast.Load)) or (
        isinstance(n, ast.Attribute) and n.attr in OUTPUTS) for n in nodes)


def raised_line(node: ast.Call, tail: str) -> int:
    """The line showing that a process call raises when its command fails: its ``check=``
    (any value but the literal ``False``), or the call itself for ``check_call`` and
    ``check_output``; 0 when it returns quietly."""
    check = keyword(node, "check")
    if check is not None and not (isinstance(check, ast.Constant) and check.value is False):
        return check.lineno
    return node.lineno if tail in RAISING else 0


def raising_process_call(node: ast.Call, imports: dict[str, str]) -> int:
    """`raised_line` of a ``subprocess`` call (CalledProcessError), 0 for any other call."""
    full = resolve(dotted(node.func), imports) or ""
    tail = full.rsplit(".", 1)[-1]
    return raised_line(node, tail) if full.startswith("subprocess.") and tail in SUBPROCESS \
        else 0


def _catches(handler: ast.ExceptHandler) -> bool:
    names = caught_names(handler)
    return names is None or bool(CATCHES.intersection(names))  # None: a bare ``except:``


class _Scope:
    """One function (or the module) body: its process calls, what their results are bound
    to, and the reads of those results."""

    def __init__(self, imports: dict[str, str],
                 wrappers: frozenset[tuple[int, str]] = frozenset()) -> None:
        self.imports = imports
        self.wrappers = wrappers
        # id -> (call, tail, line of a check= that raises, line of an except around it;
        # negative: every except that catches it drops the error)
        self.calls: dict[int, tuple[ast.Call, str, int, int]] = {}
        self.ends: dict[int, int] = {}  # a swallowing except's line -> its last line
        self.binds: dict[str, list[tuple[int, ast.Call]]] = {}  # name -> (line, call)
        self.reads: list[tuple[ast.AST, int, bool]] = []  # (receiver, line, int reading)

    def walk(self, scope: ast.AST, scopes: list[ast.AST]) -> None:
        """Visit the scope's own nodes; nested functions and classes go on `scopes`."""
        for node, handler, tested in self._nodes(scope, scopes):
            if isinstance(node, ast.Call):
                self._call(node, handler)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                self._bind(targets, node.value)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                self._bind([node.optional_vars], node.context_expr)
            if isinstance(node, ast.Attribute) and (
                    node.attr == "returncode" or (node.attr == "stderr" and tested)):
                self.reads.append((node.value, node.lineno, False))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                    node.func.attr == "check_returncode" or
                    (node.func.attr in ("wait", "poll") and tested)):
                self.reads.append((node.func.value, node.lineno, False))
            elif tested and isinstance(node, ast.Name | ast.Call):
                self.reads.append((node, node.lineno, True))

    def _nodes(self, scope: ast.AST, scopes: list[ast.AST]
               ) -> Iterator[tuple[ast.AST, int, bool]]:
        """(node, line of an enclosing ``except`` that catches a process failure or 0,
        negated when every such ``except`` of that ``try`` drops the error (`keeps_error`),
        whether the node is part of a test) for every node of the scope."""
        stack: list[tuple[ast.AST, int, bool]] = [
            (child, 0, False) for child in ast.iter_child_nodes(scope)]
        while stack:
            node, handler, tested = stack.pop()
            if isinstance(node, _SCOPES):
                scopes.append(node)
                continue
            yield node, handler, tested
            guard = handler
            if isinstance(node, ast.Try | ast.TryStar):
                catching = [h for h in node.handlers if _catches(h)]
                kept = next((h.lineno for h in catching if keeps_error(h)), 0)
                guard = (kept or -catching[0].lineno) if catching else handler
                if catching and not kept:
                    self.ends[catching[0].lineno] = catching[0].end_lineno or 0
            for field, value in ast.iter_fields(node):
                inner = guard if field == "body" else handler
                test = tested or isinstance(node, ast.Compare | ast.BoolOp) or (
                    isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)) or (
                    field == "test" and isinstance(node, TESTS))
                for child in value if isinstance(value, list) else [value]:
                    if isinstance(child, ast.AST):
                        stack.append((child, inner, test))

    def _call(self, node: ast.Call, handler: int) -> None:
        full = resolve(dotted(node.func), self.imports) or ""
        tail = full.rsplit(".", 1)[-1]
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if not ((full.startswith("subprocess.") and tail in SUBPROCESS)
                or "clone_from" in (tail, method) or (node.lineno, tail) in self.wrappers):
            return
        self.calls[id(node)] = (node, tail, raised_line(node, tail), handler)

    def _bind(self, targets: Sequence[ast.expr], value: ast.expr | None) -> None:
        value = value.value if isinstance(value, ast.Await) else value
        if not isinstance(value, ast.Call):
            return
        for target in targets:
            first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
            name = dotted(first)
            if name:
                self.binds.setdefault(name, []).append((value.lineno, value))

    def checked(self) -> tuple[dict[int, int], dict[int, list[int]]]:
        """Call line -> the line that shows its failure is seen, for the seen calls; and
        call line -> the ``except`` that swallows its error, for the calls seen by nothing
        else (a ``check=True`` whose error goes there is no check)."""
        read: dict[int, int] = {}
        for receiver, line, as_code in sorted(self.reads, key=lambda r: r[1]):
            call = receiver if isinstance(receiver, ast.Call) else self._bound(receiver, line)
            known = self.calls.get(id(call)) if call is not None else None
            if known is not None and (not as_code or known[1] in INT_RESULT):
                read.setdefault(id(call), line)
        out: dict[int, int] = {}
        dropped: dict[int, list[int]] = {}
        for key, (node, _tail, raised, handler) in self.calls.items():
            # the most telling line first: a raise on failure, the exit status read, an except
            seen = read.get(key, 0) if handler < 0 else raised or read.get(key, 0) or handler
            if seen:
                out.setdefault(node.lineno, seen)
            elif handler < 0:
                dropped.setdefault(node.lineno, [-handler, self.ends.get(-handler, 0)])
        return out, dropped

    def _bound(self, receiver: ast.AST, line: int) -> ast.Call | None:
        """The call last bound to the name `receiver` at or before `line`."""
        before = [b for b in self.binds.get(dotted(receiver) or "", []) if b[0] <= line]
        return max(before, key=lambda b: b[0])[1] if before else None
