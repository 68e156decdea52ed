"""Code that tells an authentication failure apart: the rule behind "the clone handles
authentication failures".

The word "auth" in an error message (``"clone failed (check URL/auth)"``) handles nothing: any
failure gets that message. A function tests for an authentication or permission failure when
its code compares git's output or the error's text with an auth marker (``"Authentication
failed" in stderr``, ``status == 401``, ``any(m in err for m in ("denied", "403"))``), searches
it for one (``re.search("permission denied", err)``, ``err.startswith("fatal: could not read
Username")``), or catches an exception named for it (``except AuthenticationError``).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from automaton_auditor.forensics.code.common import caught_names, dotted, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes

AUTH = re.compile(r"auth|credential|permission|\b40[13]\b|username|password|terminal prompts",
                  re.I)
AUTH_CODES = {401, 403}
SEARCHES = {"search", "match", "fullmatch", "findall", "find", "startswith", "endswith",
            "count", "index"}
MATCHES = (ast.In, ast.NotIn, ast.Eq, ast.NotEq)


def auth_tests(tree: ast.Module, consts: dict[str, Any]
               ) -> tuple[dict[str, int], dict[str, int]]:
    """For each function (qualified name; nested functions are their own): the first line
    that tests for an authentication or permission failure, and the first line that passes
    a failed command's error on (an ``except ... as e`` that raises, returns or calls with
    ``e``, or a ``.returncode`` test whose branch carries ``.stderr``: an authentication
    failure is then caught and reported with git's own message, like any other), each kept
    only where there is one. One walk of each function serves both."""
    tests: dict[str, int] = {}
    reports: dict[str, int] = {}
    consts = {**consts, **_sequences(tree)}
    for qual, func in function_defs(tree):
        nodes = own_nodes(func.body)
        if line := _first_test(nodes, consts):
            tests[qual] = line
        # names holding a failed command's output (``err = proc.stderr.strip()``)
        held = {t.id for n in nodes if isinstance(n, ast.Assign) and _output(n.value)
                for t in n.targets if isinstance(t, ast.Name)}
        if reported := [line for line in (_reported(n, held) for n in nodes) if line]:
            reports[qual] = min(reported)
    return tests, reports


def _sequences(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level literal sequences (``PATTERNS = [("permission denied", "auth"), ...]``),
    which `module_consts` keeps only when they hold strings alone."""
    found: dict[str, ast.AST] = {}
    for stmt in tree.body:
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [
            stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        if isinstance(value, ast.List | ast.Tuple | ast.Set):
            found.update((t.id, value) for t in targets if isinstance(t, ast.Name))
    return found


def _first_test(nodes: list[ast.AST], consts: dict[str, Any]) -> int:
    # loop names that run over literal auth markers: ``any(m in err for m in MARKERS)``,
    # ``for pattern, code in PATTERNS`` (each name unpacked from an item)
    markers = {dotted(t) for n in nodes if isinstance(n, ast.For | ast.comprehension)
               and _auth_text(n.iter, consts)
               for t in (n.target.elts if isinstance(n.target, ast.Tuple) else [n.target])
               } - {None}
    lines = [getattr(n, "lineno", 0) for n in nodes if _tests(n, consts) or (
        isinstance(n, ast.Compare) and any(isinstance(o, ast.Name) and o.id in markers
                                           for o in [n.left, *n.comparators]))]
    return min(lines, default=0)


def _tests(node: ast.AST, consts: dict[str, Any]) -> bool:
    """True for one comparison, search or ``except`` that singles out an auth failure."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        return any(isinstance(op, MATCHES) for op in node.ops) and any(
            _auth_text(o, consts) for o in operands)
    if isinstance(node, ast.Call):
        tail = (dotted(node.func) or "").rsplit(".", 1)[-1] or (
            node.func.attr if isinstance(node.func, ast.Attribute) else "")
        return tail in SEARCHES and any(_auth_text(a, consts) for a in node.args)
    if isinstance(node, ast.ExceptHandler) and node.type is not None:
        return any(AUTH.search(name) for name in caught_names(node) or [])
    return False


def _auth_text(node: ast.AST, consts: dict[str, Any]) -> bool:
    """True for a literal auth marker, or a sequence or module constant holding one."""
    if isinstance(node, ast.Constant):
        value = node.value
        return (isinstance(value, str) and bool(AUTH.search(value))) or (
            isinstance(value, int) and value in AUTH_CODES)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_auth_text(e, consts) for e in node.elts)
    name = dotted(node) if isinstance(node, ast.Name | ast.Attribute) else None
    value = consts.get(name) if name else None
    if isinstance(value, ast.AST):  # a literal sequence (`_sequences`)
        return _auth_text(value, {})
    if isinstance(value, str):
        return bool(AUTH.search(value))
    return isinstance(value, list) and any(AUTH.search(str(v)) for v in value)


def _output(node: ast.AST) -> bool:
    """The expression holds a command's output (``proc.stderr``, ``exc.output``)."""
    return any(isinstance(n, ast.Attribute) and n.attr in ("stderr", "stdout", "output")
               for n in ast.walk(node))


def _reported(node: ast.AST, held: set[str]) -> int:
    if isinstance(node, ast.ExceptHandler) and node.name:
        return _carries(node.body, lambda n: isinstance(n, ast.Name) and n.id == node.name)
    if isinstance(node, ast.If) and any(isinstance(n, ast.Attribute) and n.attr == "returncode"
                                        for n in ast.walk(node.test)):
        return _carries(node.body, lambda n: _output(n) if isinstance(n, ast.Attribute) else
                        isinstance(n, ast.Name) and n.id in held)
    return 0


def _carries(body: list[ast.stmt], wanted: Any) -> int:
    """Line of the first raise, return, yield or call in `body` whose expression holds a
    node `wanted` accepts (the error passed on), else 0."""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Raise | ast.Return | ast.Yield | ast.Call) and any(
                    wanted(sub) for sub in ast.walk(node)):
                return getattr(node, "lineno", 0)
    return 0
