"""Lines that fail whatever a function is given: formatting a literal that cannot be formatted.

An f-string field whose value and format spec are both literals (``f"... { "score": 5 } ..."``:
a JSON example with single braces is read by Python as the expression ``"score"`` with the
format spec `` 5 ``) is checked by calling `format` on those literals: only Python's own
formatter runs, on constants, never the audited code. When it raises, the line raises every
time it runs. ``"...".format(...)`` on a literal template is checked the same way with
`string.Formatter.parse`: a lone brace, or a named field the call never passes (and no
``**`` mapping could pass), fails every time.

`runs_always` reads which of these a function reaches on every call: a statement of the
function's top level (not under an ``if``, a loop, a ``with``, nor in a ``try`` whose handler
may catch the error), in the parts of its expressions that are always evaluated (not the arms
of ``a if c else b``, the operands after the first of ``and``/``or``, a lambda's body, nor a
comprehension's element), before any ``return`` or ``raise`` of the top level.
"""

from __future__ import annotations

import ast
import builtins
import re
import string
from collections.abc import Callable, Iterator

from automaton_auditor.forensics.code.common import FunctionNode, caught_types, dotted, unparse
from automaton_auditor.text import clip

# a format spec asking for a huge width or precision would make the check itself allocate it
_HUGE = re.compile(r"\d{5,}")
_CONVERT: dict[int, Callable[[object], str]] = {ord("s"): str, ord("r"): repr, ord("a"): ascii}


def _literal_spec(spec: ast.expr | None) -> str | None:
    """The format spec as a string when it is only literal text, else None."""
    if spec is None:
        return ""
    if isinstance(spec, ast.JoinedStr) and all(
            isinstance(v, ast.Constant) and isinstance(v.value, str) for v in spec.values):
        return "".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant))
    return None


def _field_error(node: ast.FormattedValue) -> str | None:
    """Why formatting this f-string field fails, when its value and spec are literals."""
    spec = _literal_spec(node.format_spec)
    if not isinstance(node.value, ast.Constant) or spec is None or _HUGE.search(spec):
        return None
    value = node.value.value
    try:
        convert = _CONVERT.get(node.conversion)
        format(convert(value) if convert else value, spec)
    except (ValueError, TypeError, OverflowError) as exc:
        return _said(exc)
    return None


def _said(exc: Exception, field: bool = True) -> str:
    """``ValueError: Invalid format specifier``, on one line: for a field, the message up
    to the spec it quotes (the field is quoted on its own)."""
    text = " ".join((str(exc).split(" '", 1)[0] if field else str(exc)).split())
    return clip(f"{type(exc).__name__}: {text}", 90)


def _template_error(call: ast.Call) -> str | None:
    """Why ``"<literal>".format(...)`` fails: a lone brace, or a named field that no keyword
    of the call passes (when no ``**`` mapping could pass it)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "format"
            and isinstance(func.value, ast.Constant) and isinstance(func.value.value, str)):
        return None
    try:
        fields = [f for _text, f, _spec, _conv in string.Formatter().parse(func.value.value)
                  if f is not None]
    except ValueError as exc:
        return _said(exc, field=False)
    if any(k.arg is None for k in call.keywords):
        return None  # ``**fields``: any name may be passed
    passed = {k.arg for k in call.keywords}
    for field in fields:
        name = re.split(r"[.\[]", field, maxsplit=1)[0]
        if name and not name.isdigit() and name not in passed:
            return f"KeyError: {name!r}"
    return None


def format_error(node: ast.AST) -> str | None:
    """Why formatting at `node` always fails (an f-string field or a ``.format`` call on
    literals), else None."""
    if isinstance(node, ast.FormattedValue):
        return _field_error(node)
    if isinstance(node, ast.Call):
        return _template_error(node)
    return None


def evaluated(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of an expression that are evaluated whenever it is, in a fixed order."""
    todo = [node]
    while todo:
        item = todo.pop()
        yield item
        if isinstance(item, ast.IfExp):
            todo.append(item.test)
        elif isinstance(item, ast.BoolOp):
            todo.append(item.values[0])
        elif isinstance(item, ast.Lambda):
            todo += [*item.args.defaults, *(d for d in item.args.kw_defaults if d)]
        elif isinstance(item, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            todo.append(item.generators[0].iter)  # the rest runs per element, if any
        else:
            todo += reversed(list(ast.iter_child_nodes(item)))


def _catches(handler: ast.ExceptHandler, error: type[BaseException]) -> bool:
    """Whether the handler may catch `error`: a bare ``except``, a base class of it, or a
    name that is no built-in exception (it may be an alias of one)."""
    if handler.type is None:
        return True
    for node in caught_types(handler):
        known = getattr(builtins, dotted(node) or "", None)
        if not (isinstance(known, type) and issubclass(known, BaseException)) \
                or issubclass(error, known):
            return True
    return False


def _error_type(why: str) -> type[BaseException]:
    known = getattr(builtins, why.split(":", 1)[0], None)
    return known if isinstance(known, type) and issubclass(known, BaseException) \
        else BaseException


def caught(handlers: tuple[ast.ExceptHandler, ...], why: str) -> bool:
    """Whether one of the enclosing handlers may catch the error `why` names."""
    error = _error_type(why)
    return any(_catches(h, error) for h in handlers)


def _statement_parts(stmt: ast.stmt) -> tuple[list[ast.AST], list[ast.stmt]]:
    """The expressions of a statement evaluated whenever it runs, and the statements run
    whenever it does (a ``try`` body)."""
    if isinstance(stmt, ast.If | ast.While):
        return [stmt.test], []
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return [stmt.iter], []
    if isinstance(stmt, ast.With | ast.AsyncWith):  # a context manager may swallow the error
        return [i.context_expr for i in stmt.items], []
    if isinstance(stmt, ast.Match):
        return [stmt.subject], []
    if isinstance(stmt, FunctionNode | ast.ClassDef):
        return [*stmt.decorator_list], []
    if isinstance(stmt, ast.Try | ast.TryStar):
        return [], stmt.body
    return list(ast.iter_child_nodes(stmt)), []


def runs_always(body: list[ast.stmt], handlers: tuple[ast.ExceptHandler, ...] = ()
                ) -> Iterator[tuple[ast.AST, tuple[ast.ExceptHandler, ...]]]:
    """The calls and formatted fields every run of `body` evaluates, in order, each with
    the handlers of the ``try`` blocks around it; up to the first ``return`` or ``raise``
    of the body."""
    for stmt in body:
        exprs, inner = _statement_parts(stmt)
        for expr in exprs:
            for node in evaluated(expr):
                if isinstance(node, ast.Call | ast.FormattedValue):
                    yield node, handlers
        if isinstance(stmt, ast.Try | ast.TryStar):
            yield from runs_always(inner, (*handlers, *stmt.handlers))
            if any(isinstance(s, ast.Return | ast.Raise) for s in inner):
                return
        if isinstance(stmt, ast.Return | ast.Raise):
            return


def quote_field(node: ast.AST) -> str:
    """The failing field or call, as written, cut short."""
    if isinstance(node, ast.FormattedValue):
        spec = re.sub(r"\s+", " ", _literal_spec(node.format_spec) or "")
        value = node.value.value if isinstance(node.value, ast.Constant) else "?"
        return clip(f"the field {{{value!r}:{spec}}}", 60)
    return unparse(node, 60)
