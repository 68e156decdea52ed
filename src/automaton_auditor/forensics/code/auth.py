"""Code that tells an authentication failure apart: the rule behind "the clone handles
authentication failures".

The word "auth" in an error message (``"clone failed (check URL/auth)"``) handles nothing: any
failure gets that message. A function tests for an authentication or permission failure when
its code compares git's output or the error's text with an auth marker (``"Authentication
failed" in stderr``, ``status == 401``, ``any(m in err for m in ("denied", "403"))``), searches
it for one (``re.search("permission denied", err)``, ``err.startswith("fatal: could not read
Username")``), or catches an exception named for it (``except AuthenticationError``).

The text of a subprocess error (``str(e)``, ``f"{e}"``, ``repr(e)``, ``e.args`` of a
``CalledProcessError`` or ``TimeoutExpired``) holds the command and its exit status only; git's
message is in ``e.stderr``/``e.output``. A test of that text for an auth word can never be
true, and handing it on passes no git message on: both are kept apart (`blind`), to be said.
GitPython's ``GitCommandError``, whose text includes git's stderr, is no such error.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from automaton_auditor.forensics.code.common import JSON, caught_names, dotted, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.failures import raising_process_call

AUTH = re.compile(r"auth|credential|permission|\b40[13]\b|username|password|terminal prompts",
                  re.I)
AUTH_CODES = {401, 403}
SEARCHES = {"search", "match", "fullmatch", "findall", "find", "startswith", "endswith",
            "count", "index"}
MATCHES = (ast.In, ast.NotIn, ast.Eq, ast.NotEq)
OUTPUTS = ("stderr", "stdout", "output")
# errors whose text is the command and exit status; GitPython's errors carry git's stderr
PROCESS_ERRORS = {"CalledProcessError", "TimeoutExpired", "SubprocessError"}
LIBRARY_ERRORS = {"GitCommandError", "GitError", "CommandError"}
BROAD = {"Exception", "BaseException"}
CONVERSIONS = {"str", "repr", "format"}


def auth_tests(tree: ast.Module, consts: dict[str, Any], imports: dict[str, str]
               ) -> tuple[dict[str, int], dict[str, int], dict[str, JSON]]:
    """For each function (qualified name; nested functions are their own): the first line
    that tests for an authentication or permission failure, the first line that passes
    a failed command's error on (an ``except ... as e`` that raises, returns or calls with
    ``e``, or with ``e.stderr`` when ``e`` is a subprocess error; a ``.returncode`` test whose
    branch carries ``.stderr``: an authentication failure is then caught and reported with
    git's own message, like any other), and where it tests or hands on only the text of a
    subprocess error (`_blind`), each kept only where there is one. One walk of each
    function serves all three."""
    tests: dict[str, int] = {}
    reports: dict[str, int] = {}
    blinds: dict[str, JSON] = {}
    consts = {**consts, **_sequences(tree)}
    for qual, func in function_defs(tree):
        nodes = own_nodes(func.body)
        found, markers = _test_nodes(nodes, consts)
        # names holding a failed command's output (``err = proc.stderr.strip()``, ``msg =
        # f"failed: {err}"``)
        held = _spread(nodes, set(), _output)[0]
        process = _process_handlers(nodes, imports)
        dead, blind = _blind(process, found, held, set(consts) | set(imports) | markers)
        if line := min((getattr(n, "lineno", 0) for n in found if id(n) not in dead),
                       default=0):
            tests[qual] = line
        ids = {id(h) for h, _ in process}
        swallowed = _swallowed(nodes)
        if reported := [line for line in (_reported(n, held, id(n) in ids, swallowed)
                                          for n in nodes) if line]:
            reports[qual] = min(reported)
        if blind:
            blinds[qual] = blind
    return tests, reports, blinds


def _process_handlers(nodes: list[ast.AST], imports: dict[str, str]
                      ) -> list[tuple[ast.ExceptHandler, int]]:
    """Each named ``except`` whose error, when git fails, is a subprocess error, with the
    line that shows it: the ``except`` naming CalledProcessError or TimeoutExpired, or for
    a broad one (``Exception``, bare) the try block's subprocess call that raises
    (``check=True``), unless that block clones with GitPython or raises git's output
    itself."""
    found: list[tuple[ast.ExceptHandler, int]] = []
    for node in nodes:
        if not isinstance(node, ast.Try | ast.TryStar):
            continue
        body = own_nodes(node.body)
        raising = min((line for n in body if isinstance(n, ast.Call)
                       and (line := raising_process_call(n, imports))), default=0)
        if any((isinstance(n, ast.Call) and "clone_from" in (dotted(n.func) or ""))
               or (isinstance(n, ast.Raise) and _output(n)) for n in body):
            raising = 0
        for handler in node.handlers:
            names = set(caught_names(handler) or BROAD)
            shown = (0 if names & LIBRARY_ERRORS else handler.lineno if names & PROCESS_ERRORS
                     else raising if names & BROAD else 0)
            if shown and handler.name:
                found.append((handler, shown))
    return found


def _blind(process: list[tuple[ast.ExceptHandler, int]], found: list[ast.AST],
           held: set[str], known: set[str]) -> tuple[set[int], JSON]:
    """The auth tests in a subprocess error's handler that read only that error's text
    (ids: dead, never true), and the first such handler that tests or hands on only that
    text, never git's output: {"error": the line showing the error is a subprocess error,
    "handler": the except's line, "binds": the lines naming the text (``error = str(e)``),
    "uses": the lines testing or handing it on}, or {} when there is none. `known`: module
    names, constants and auth markers, which are not the error."""
    tested = {id(n) for n in found}
    dead: set[int] = set()
    blind: JSON = {}
    for handler, shown in process:
        # the error's text only (``error = str(e)``), never its output (``e.stderr``)
        text, binds = _spread(own_nodes(handler.body), {str(handler.name)}, lambda _v: False,
                              lambda v: _output(v) or bool(_reads(v) & held))
        inside = [n for n in own_nodes(handler.body) if id(n) in tested
                  and not _output(n) and (reads := _reads(n) - known) and reads <= text]
        dead |= {id(n) for n in inside}
        passed = _carrying(handler.body, lambda n, t=text: isinstance(n, ast.Name)
                           and n.id in t)
        uses = sorted({getattr(n, "lineno", 0) for n in inside} | set(passed))
        if uses and not blind and not _carries(handler.body, lambda n: _held(n, held)):
            blind = {"error": shown, "handler": handler.lineno, "binds": binds[:3],
                     "uses": uses[:3]}
    return dead, blind


def _spread(nodes: list[ast.AST], names: set[str], source: Callable[[ast.expr], bool],
            blocked: Callable[[ast.expr], bool] = lambda _v: False) -> tuple[set[str], list[int]]:
    """`names` and the names the assignments among `nodes` bind, in line order, from a
    value `source` accepts or one reading those names, unless `blocked` refuses the value;
    and the lines binding them."""
    names = set(names)
    lines: list[int] = []
    for node in sorted((n for n in nodes if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
        if (source(node.value) or _reads(node.value) & names) and not blocked(node.value):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            lines.append(node.lineno)
    return names, lines


def _reads(node: ast.AST) -> set[str]:
    """Names read in `node`, not those called (``str`` of ``str(e)``)."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called}


def _held(node: ast.AST, held: set[str]) -> bool:
    """`node` is a command's output (``e.stderr``) or a name holding it."""
    return (isinstance(node, ast.Attribute) and _output(node)) or (
        isinstance(node, ast.Name) and node.id in held)


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


def _test_nodes(nodes: list[ast.AST], consts: dict[str, Any]
                ) -> tuple[list[ast.AST], set[str]]:
    """The nodes that test for an auth failure, and the loop names that run over literal
    auth markers: ``any(m in err for m in MARKERS)``, ``for pattern, code in PATTERNS``
    (each name unpacked from an item)."""
    markers = {dotted(t) for n in nodes if isinstance(n, ast.For | ast.comprehension)
               and _auth_text(n.iter, consts)
               for t in (n.target.elts if isinstance(n.target, ast.Tuple) else [n.target])
               } - {None}
    found = [n for n in nodes if _tests(n, consts) or (
        isinstance(n, ast.Compare) and any(isinstance(o, ast.Name) and o.id in markers
                                           for o in [n.left, *n.comparators]))]
    return found, {str(m) for m in markers}


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
    return any(isinstance(n, ast.Attribute) and n.attr in OUTPUTS for n in ast.walk(node))


def _swallowed(nodes: list[ast.AST]) -> set[int]:
    """The raises (ids) a ``try`` around them catches and drops: the first handler that
    catches what they raise (by name, or ``Exception``) neither raises again nor hands the
    error on (``except Exception: return None``). What they carry never reaches the caller."""
    out: set[int] = set()
    for node in nodes:
        if not isinstance(node, ast.Try | ast.TryStar):
            continue
        for stmt in own_nodes(node.body):
            if not isinstance(stmt, ast.Raise) or stmt.exc is None:
                continue
            raised = dotted(stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc)
            catching = next((h for h in node.handlers if set(caught_names(h) or BROAD) & (
                BROAD | {(raised or "").rsplit(".", 1)[-1]})), None)
            if catching is not None and not any(
                    isinstance(n, ast.Raise) for n in own_nodes(catching.body)) and not (
                    catching.name and _reported(catching, set(), False, set())):
                out.add(id(stmt))
    return out


def _reported(node: ast.AST, held: set[str], process: bool, swallowed: set[int]) -> int:
    """The line passing a failed command's error on, for an ``except`` (`process`: its error
    is a subprocess error, whose output alone carries git's message) or the failure branch
    of a ``.returncode`` test (not by a raise a ``try`` around it drops: `swallowed`);
    else 0."""
    if isinstance(node, ast.ExceptHandler) and node.name:
        # the error, or a name bound from it (``msg = f"failed: {e}"``)
        named = _spread(own_nodes(node.body), {node.name}, lambda _v: False)[0]
        return _carries(node.body, (lambda n: _held(n, held)) if process else
                        lambda n: isinstance(n, ast.Name) and n.id in named)
    if isinstance(node, ast.If) and any(isinstance(n, ast.Attribute) and n.attr == "returncode"
                                        for n in ast.walk(node.test)):
        return _carries([b for b in (node.orelse if _succeeded(node.test) else node.body)
                         if id(b) not in swallowed], lambda n: _held(n, held))
    return 0


def _succeeded(test: ast.expr) -> bool:
    """An exit-status test true when the command succeeded (``returncode == 0``, ``not
    proc.returncode``): its ``else`` is the failure branch."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
        test.ops[0], ast.Eq | ast.Is) and any(isinstance(c, ast.Constant) and c.value == 0
                                             for c in [test.left, *test.comparators])


def _carries(body: list[ast.stmt], wanted: Any) -> int:
    """Line of the first raise, return, yield or call in `body` that passes on a node
    `wanted` accepts (`_carrying`), else 0."""
    return next(iter(_carrying(body, wanted)), 0)


def _carrying(body: list[ast.stmt], wanted: Any) -> list[int]:
    """Lines, in order, of the raises, returns and yields in `body` whose expression holds
    a node `wanted` accepts (the error passed on), and of the calls given it as an argument
    (``log(e)``); a conversion (``str(e)``, ``str(e).lower()``) passes nothing on by
    itself."""
    lines: list[int] = []
    for stmt in body:
        for node in ast.walk(stmt):
            given: list[ast.AST] = []
            if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                                   and node.func.id in CONVERSIONS):
                given = [*node.args, *(k.value for k in node.keywords)]
            elif isinstance(node, ast.Raise | ast.Return | ast.Yield):
                given = [node]
            if any(wanted(sub) for g in given for sub in ast.walk(g)):
                lines.append(getattr(node, "lineno", 0))
    return list(dict.fromkeys(lines))
