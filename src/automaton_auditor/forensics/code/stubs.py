"""Whether a function is a stub: it only passes, logs, or returns its input or nothing."""

from __future__ import annotations

import ast
import re
import textwrap

_NOOP_CALLS = re.compile(r"^(?:print|log\w*\.\w+|logger\.\w+|logging\.\w+)$")


def _inert(stmt: ast.stmt, params: set[str]) -> bool:
    """A statement that computes nothing: ``pass``, a docstring, a print or log call,
    ``return`` of nothing, a constant, an empty collection or a parameter unchanged."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr):
        value = stmt.value
        return isinstance(value, ast.Constant) or (
            isinstance(value, ast.Call) and bool(_NOOP_CALLS.match(ast.unparse(value.func))))
    if isinstance(stmt, ast.Return):
        returned = stmt.value
        empty = (isinstance(returned, ast.Dict) and not returned.keys) or (
            isinstance(returned, (ast.List, ast.Tuple)) and not returned.elts)
        return returned is None or isinstance(returned, ast.Constant) or empty or (
            isinstance(returned, ast.Name) and returned.id in params)
    return False


def does_nothing(source: str | None) -> bool:
    """Whether a function's source only passes, logs, or returns its input or nothing (a
    stub: ``def chief_justice_node(state): return state``)."""
    try:
        tree = ast.parse(textwrap.dedent(source or ""))
    except (SyntaxError, ValueError, RecursionError):
        return False  # cut or unreadable: nothing is claimed
    func = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                None)
    if func is None:
        return False
    params = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    return all(_inert(stmt, params) for stmt in func.body)


# A string a function returns to say it has no real output ("Visual inspection not
# implemented (optional feature)"): what it hands the graph says it is a stand-in.
_PLACEHOLDER = re.compile(r"\bnot\s+(?:yet\s+)?implemented\b|\bunimplemented\b|\bstub(?:bed)?\b|"
                          r"\bplaceholder\b|\bTODO\b|\bcoming\s+soon\b|\bdummy\b",
                          re.IGNORECASE)
# Calls that read nothing the function is given: a clock, a log line.
_CLOCK = re.compile(r"^(?:time\.(?:time|perf_counter|monotonic)|(?:datetime\.)?datetime\."
                    r"(?:now|utcnow))$")


def _function(source: str | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(source or ""))
    except (SyntaxError, ValueError, RecursionError):
        return None  # cut or unreadable: nothing is claimed
    return next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                None)


def _fixed(expr: ast.expr | None, known: set[str]) -> bool:
    """An expression whose value the function's input cannot change: constants, containers
    and f-strings of them, locals holding them, objects built from them (``Evidence(
    found=False, ...)``: a class named in CamelCase), a clock reading, arithmetic on them."""
    if expr is None or isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in known
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return all(_fixed(e, known) for e in expr.elts)
    if isinstance(expr, ast.Dict):
        return all(_fixed(e, known) for e in [*expr.keys, *expr.values] if e is not None)
    if isinstance(expr, ast.JoinedStr):
        return all(_fixed(v.value if isinstance(v, ast.FormattedValue) else v, known)
                   for v in expr.values)
    if isinstance(expr, ast.BinOp):
        return _fixed(expr.left, known) and _fixed(expr.right, known)
    if isinstance(expr, ast.Call):
        callee = ast.unparse(expr.func)
        built = re.fullmatch(r"[A-Z][a-z0-9]+[A-Z]?\w*", callee) is not None
        return (built or bool(_CLOCK.match(callee))) and all(
            _fixed(a, known) for a in [*expr.args, *(k.value for k in expr.keywords)])
    return False


def _fixed_body(body: list[ast.stmt], known: set[str], outs: list[ast.AST]) -> bool:
    """Whether the statements compute only fixed values (`_fixed`), log or raise; the values
    they return or raise are added to `outs`, the locals they set to `known`."""
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and _fixed(stmt.value, known):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                return False
            known |= {t.id for t in targets if isinstance(t, ast.Name)}
            outs.append(stmt)
        elif isinstance(stmt, (ast.Return, ast.Raise)):
            value = stmt.value if isinstance(stmt, ast.Return) else stmt.exc
            if not _fixed(value, known):
                return False
            outs.append(stmt)
        elif isinstance(stmt, ast.Try):
            if not all(_fixed_body(part, known, outs)
                       for part in (stmt.body, stmt.orelse, stmt.finalbody)):
                return False
            # a handler may re-raise what it caught (``raise NodeError(name, e)``)
            if not all(_fixed_body(h.body, known | ({h.name} if h.name else set()), outs)
                       for h in stmt.handlers):
                return False
        elif not _inert(stmt, set()):
            return False
    return True


def placeholder_lines(source: str | None) -> list[int]:
    """Lines (1 = the ``def`` line) where a function returns a placeholder: everything it
    computes is fixed whatever it is given (`_fixed`: it reads no argument, calls nothing but
    a clock, a log or a constructor) and a string it returns says so ("... not
    implemented"); empty otherwise."""
    func = _function(source)
    outs: list[ast.AST] = []
    if func is None or not _fixed_body(func.body, set(), outs):
        return []
    said = sorted({n.lineno for out in outs for n in ast.walk(out) if isinstance(
        n, ast.Constant) and isinstance(n.value, str) and _PLACEHOLDER.search(n.value)})
    # what it hands back: its returns, else what it raises
    ends = [out.lineno for out in outs if isinstance(out, ast.Return)] or \
        [out.lineno for out in outs if isinstance(out, ast.Raise)]
    if not said or not ends:
        return []
    return sorted({func.lineno, *said, *ends})


def delegated_call(source: str | None) -> str | None:
    """The callee a function hands its work to when that is all it does (``inspector =
    VisionInspector(); return inspector.investigate(state)``): the call's name as written."""
    func = _function(source)
    if func is None or not func.body:
        return None
    *before, last = [s for s in func.body if not _inert(s, set())] or [func.body[-1]]
    if not isinstance(last, ast.Return) or not isinstance(last.value, ast.Call):
        return None
    for stmt in before:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
                and re.fullmatch(r"[A-Z]\w*", ast.unparse(stmt.value.func))):
            return None
    return ast.unparse(last.value.func)
