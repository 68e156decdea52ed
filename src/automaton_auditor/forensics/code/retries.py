"""What a ``try`` in a loop of attempts retries: the failures after which it goes round again.

A handler goes round again when one of its paths ends in ``continue`` or falls off its end
(the loop's next attempt). When every such path of every handler sits under a test of the
caught error itself (``if "429" in str(e): continue``, ``if isinstance(e, RateLimitError)``)
and the handler otherwise leaves the loop (``break``, ``return``, ``raise``), the loop retries
only the errors that test selects: a malformed reply, or any other failure, is never tried
again. Such a loop still retries malformed replies when a selecting test names them (a literal
or an exception class about parsing, JSON, validation or a schema). A test that only hands
the error to a helper (``if should_retry(e)``) is not read: what the helper selects is
unknown, so the loop keeps counting as a retry.

`leaves_on_reply`: a try whose body takes the model's reply and leaves the loop with it
unread (``response = chain.invoke(p); if response: break``, or ``return chain.invoke(p)``)
goes round again only when the call raises; whether a malformed reply raises depends on the
binding (``with_structured_output`` does, ``bind_tools`` does not).

`handler_retries`: a try around a model call whose handler calls the same model again (the
same receiver and method, often after appending a corrective message) retries once, loop or
not, when the handler catches any error or the ``ValueError`` a malformed structured reply
raises (pydantic's ValidationError and LangChain's OutputParserException derive from it), or
an error named for parsing or validation. A handler of other errors only (a rate limit, a
missing API key) does not retry a malformed reply.
"""

from __future__ import annotations

import ast
import re

from automaton_auditor.forensics.code.common import JSON, class_names, dotted, resolve, unparse
from automaton_auditor.forensics.code.exprs import walk_expr
from automaton_auditor.forensics.code.replies import LLM_METHODS, LLM_RECEIVER

INVOKES = {"invoke", "ainvoke"}
RETRY_NAME = re.compile(r"retr(y|ies)|attempt|backoff", re.I)  # a loop counter, a parameter
LOGGING = re.compile(r"^(?:print|logger\.\w+|logging\.\w+|log\.\w+)$")
MALFORMED = re.compile(r"pars|json|valid|schema|decod|malformed|format", re.I)
MAX_WORDS = 8
# what a handler must catch to catch a malformed structured reply: any error, or the
# ValueError that pydantic's ValidationError and LangChain's OutputParserException derive from
BROAD = {"Exception", "BaseException", "ValueError"}


def calls_param(node: ast.Try | ast.TryStar, params: list[str]) -> bool:
    """Whether the try's body calls what its function is handed (``fn()``, ``chain.invoke``
    on a parameter): a retry loop there retries whatever the caller hands in."""
    handed = set(params) - {"self", "cls"}
    return any(isinstance(c, ast.Call) and (dotted(c.func) or "").split(".")[0] in handed
               for stmt in node.body for c in ast.walk(stmt))


def retried(node: ast.Try | ast.TryStar) -> JSON:
    """``retries``: ``any`` (some path goes round again whatever the error), ``selected``
    (only under a test of the error) or ``none``; with the test lines, their literals, the
    line where other errors leave, and whether a selecting test names malformed replies."""
    ends: list[tuple[str, bool, int]] = []
    tests: list[ast.expr] = []
    for handler in node.handlers:
        err = {handler.name} if handler.name else set()
        for tested in _paths(handler.body, err, False, ends, tests):
            ends.append(("again", tested, handler.end_lineno or handler.lineno))
    again = [tested for outcome, tested, _ in ends if outcome == "again"]
    kind = "any" if False in again else "selected" if again else "none"
    words = sorted({str(s.value) for t in tests for s in walk_expr(t)
                    if isinstance(s, ast.Constant) and isinstance(s.value, str)})[:MAX_WORDS]
    names = {dotted(s) or "" for t in tests for s in walk_expr(t)
             if isinstance(s, ast.Name | ast.Attribute)}
    return {"line": node.lineno, "end": node.end_lineno or node.lineno, "retries": kind,
            "tests": sorted({t.lineno for t in tests}), "words": words,
            "exit": min((line for outcome, _, line in ends if outcome == "out"), default=None),
            "malformed": any(MALFORMED.search(w) for w in [*words, *names]),
            "leaves": leaves_on_reply(node)}


def _model_call(value: ast.expr | None) -> bool:
    value = value.value if isinstance(value, ast.Await) else value
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and value.func.attr in INVOKES


def _unread(stmt: ast.stmt, reply: set[str]) -> bool:
    """A statement that leaves the loop with the reply unread: ``break``, ``return`` of the
    reply itself or of the call, or either under a test of the reply's mere presence."""
    if isinstance(stmt, ast.Break):
        return True
    if isinstance(stmt, ast.Return):
        value = stmt.value
        return value is None or _model_call(value) or (
            isinstance(value, ast.Name) and value.id in reply)
    if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1:
        test = stmt.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.ops[0], ast.IsNot) and isinstance(test.comparators[0],
                                                                   ast.Constant):
            test = test.left  # ``if response is not None``
        return isinstance(test, ast.Name) and test.id in reply and _unread(stmt.body[0], reply)
    return False


def leaves_on_reply(node: ast.Try | ast.TryStar) -> int | None:
    """The line where the try's body leaves the loop with the model's reply unread, when
    everything before it only takes the reply (or logs): any reply, a malformed one
    included, ends the attempts."""
    reply: set[str] = set()
    for stmt in node.body:
        if _unread(stmt, reply):
            return stmt.lineno
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and _model_call(stmt.value):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            reply |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                  and LOGGING.match(dotted(stmt.value.func) or "")):
            return None
    return None


def _paths(body: list[ast.stmt], err: set[str], tested: bool,
           ends: list[tuple[str, bool, int]], tests: list[ast.expr]) -> list[bool]:
    """Walk one block: record the paths it ends (``again``/``out``, under an error test,
    line) in `ends`, and return whether each path falling off its end was tested."""
    live = [tested]
    for stmt in body:
        if isinstance(stmt, ast.Continue | ast.Break | ast.Return | ast.Raise):
            outcome = "again" if isinstance(stmt, ast.Continue) else "out"
            ends.extend((outcome, t, stmt.lineno) for t in live)
            return []
        if isinstance(stmt, ast.If):
            on_error = _tests_error(stmt.test, err)
            if on_error:
                tests.append(stmt.test)
            live = sorted({r for t in live for block in (stmt.body, stmt.orelse)
                           for r in _paths(block, err, t or on_error, ends, tests)})
        elif isinstance(stmt, ast.With | ast.AsyncWith | ast.Try | ast.TryStar):
            live = sorted({r for t in live for r in _paths(stmt.body, err, t, ends, tests)})
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None and \
                _mentions(stmt.value, err):
            # ``err_str = str(e).lower()``: a name derived from the error is the error
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            err |= {t.id for t in targets if isinstance(t, ast.Name)}
        if not live:
            return []
    return live


def _mentions(node: ast.AST, err: set[str]) -> bool:
    return any(isinstance(s, ast.Name) and s.id in err for s in walk_expr(node))


def _tests_error(test: ast.expr, err: set[str]) -> bool:
    """A test that reads the caught error itself: a comparison with it (its text, its
    status) or an ``isinstance`` of it, not a helper the error is handed to."""
    for sub in walk_expr(test):
        if isinstance(sub, ast.Compare) and _mentions(sub, err):
            return True
        if isinstance(sub, ast.Call) and dotted(sub.func) == "isinstance" and sub.args and \
                _mentions(sub.args[0], err):
            return True
    return False


def _model_calls(body: list[ast.stmt]) -> list[ast.Call]:
    """Calls of a model method (``invoke``...) on a receiver named like a model, in order."""
    calls = [sub for stmt in body for sub in ast.walk(stmt) if isinstance(sub, ast.Call)
             and isinstance(sub.func, ast.Attribute) and sub.func.attr in LLM_METHODS
             and LLM_RECEIVER.search((dotted(sub.func.value) or "").rsplit(".", 1)[-1])]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def catches_malformed(names: list[str] | None) -> bool:
    """Whether a handler of these classes (`common.class_names`; None: a bare ``except``)
    catches the error a malformed structured reply raises."""
    return names is None or any(n.rsplit(".", 1)[-1] in BROAD or MALFORMED.search(n)
                                for n in names)


def handler_retries(node: ast.Try | ast.TryStar) -> list[tuple[ast.Call, str, int]]:
    """A handler's call of the model its try calls (see the module docstring): the call,
    how it retries, and the line of the call it tries again."""
    tried: dict[str, int] = {}
    for call in _model_calls(node.body):
        tried.setdefault(str(dotted(call.func)), call.lineno)
    found: list[tuple[ast.Call, str, int]] = []
    for handler in node.handlers if tried else []:
        again = [c for c in _model_calls(handler.body) if str(dotted(c.func)) in tried]
        if again and catches_malformed(class_names(handler.type) if handler.type else None):
            caught = unparse(handler.type, 80).strip("()") if handler.type else "any error"
            name = str(dotted(again[0].func))
            found.append((again[0], f"{name} called again in its except handler ({caught})",
                          tried[name]))
    return found


def attempt_loop(node: ast.AST, imports: dict[str, str]) -> bool:
    """A loop that repeats one action: ``while``, ``for _ in range(n)``/``count()``, a
    counter named like an attempt, or a chain of models (`model_chain`). A loop over items
    (``for dimension in dims``) is not a retry, even when each item's call sits in a try: a
    failure there moves on, it does not call again."""
    if isinstance(node, ast.While):
        return True
    if not isinstance(node, ast.For | ast.AsyncFor):
        return False
    if RETRY_NAME.search(dotted(node.target) or ""):
        return True
    full = resolve(dotted(node.iter.func), imports) or "" \
        if isinstance(node.iter, ast.Call) else ""
    return full in ("range", "itertools.count", "itertools.repeat") or model_chain(node)


def model_chain(loop: ast.For | ast.AsyncFor) -> bool:
    """``for model in llms: try: model.with_structured_output(S).invoke(p); break except:
    continue``: each round tries the same action on the next model, a retry with fallback.
    Read from the code: a try in the loop's body calls a method of the loop's item (or of a
    name bound from one), and the loop is left once a call succeeds (``break``/``return``
    in that try's body)."""
    if not isinstance(loop.target, ast.Name):
        return False
    held = {loop.target.id}
    for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and _receiver(node.value) in held:
            held.add(node.targets[0].id)  # ``structured = model.with_structured_output(S)``
    for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
        if isinstance(node, ast.Try) and any(
                isinstance(c, ast.Call) and _receiver(c) in held for c in ast.walk(
                    ast.Module(body=node.body, type_ignores=[]))) and any(
                isinstance(s, ast.Break | ast.Return) for s in ast.walk(
                    ast.Module(body=node.body, type_ignores=[]))):
            return True
    return False


def _receiver(node: ast.AST) -> str:
    """The name a method call's chain starts from (``model`` of ``model.a(x).b(y)``)."""
    while isinstance(node, ast.Call | ast.Attribute):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""
