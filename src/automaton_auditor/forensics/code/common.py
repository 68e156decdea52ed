"""Small helpers shared by the AST fact extractors: name resolution and snippets.

Only the standard library is imported here: these modules also run in worker processes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from automaton_auditor.text import clip

SNIPPET_CHARS = 800
# a repository's test code (a tests/ folder, test_*, *_test.py, conftest.py): not the product
TEST_PATH = re.compile(r"(^|/)(tests?/|test_[^/]*$|[^/]*_test\.py$|conftest\.py$)")
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


# calls that end the process where they stand (``sys.exit``, ``os._exit``, ``os.abort``,
# ``exit()``, ``quit()``), read by the last part of their dotted name
EXIT_CALLS = frozenset({"exit", "_exit", "quit", "abort"})


def parse_module(text: str, filename: str = "<unknown>") -> ast.Module | None:
    """The syntax tree of a module's source, or None when it does not parse (a syntax error,
    a NUL byte, nesting past the parser's limits)."""
    try:
        return ast.parse(text, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def caught_types(handler: ast.ExceptHandler) -> list[ast.expr]:
    """The classes an ``except`` names (one, or each of a tuple); [] for a bare ``except:``."""
    if handler.type is None:
        return []
    return list(handler.type.elts) if isinstance(handler.type, ast.Tuple) else [handler.type]


def class_names(kind: ast.expr) -> list[str]:
    """The dotted class name of each class an expression names, one or each of a tuple ("?"
    for an expression that is no name): an ``except``'s, a RetryPolicy's ``retry_on``."""
    items = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return [dotted(t) or "?" for t in items]


def caught_names(handler: ast.ExceptHandler) -> list[str] | None:
    """The last part of each class name an ``except`` names ("?" for an expression that is
    no name); None for a bare ``except:``, which catches everything."""
    if handler.type is None:
        return None
    return [name.rsplit(".", 1)[-1] for name in class_names(handler.type)]


def own_call_name(func: ast.expr) -> str:
    """The name a call of one of the repository's helpers is written with (``fn``,
    ``self.fn``, ``cls.fn``), else "" (a method of some other object, a computed callee)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
            func.value.id in ("self", "cls"):
        return f"{func.value.id}.{func.attr}"
    return ""


def resolve(name: str | None, imports: dict[str, str]) -> str | None:
    """Expand the first segment of a dotted name through the file's imports
    (``SG`` -> ``langgraph.graph.StateGraph``, ``sp.run`` -> ``subprocess.run``)."""
    if not name:
        return None
    head, _, rest = name.partition(".")
    full = imports.get(head)
    if full is None:
        return name
    return f"{full}.{rest}" if rest else full


def snippet(lines: list[str], node: ast.AST, limit: int = SNIPPET_CHARS) -> str:
    """The source lines of a node, cut to `limit` characters."""
    start = getattr(node, "lineno", 1)
    end = getattr(node, "end_lineno", start) or start
    text = "\n".join(lines[start - 1:end])
    return clip(text, limit)


def unparse(node: ast.AST, limit: int = 300) -> str:
    """``ast.unparse`` that never raises (deep trees) and is cut to `limit`."""
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError, AttributeError):
        return "<unparsable>"
    return clip(text, limit)


def str_value(node: ast.AST | None) -> str | None:
    """The text of a string constant, or the literal parts of an f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values
                       if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return None


def is_literal(node: ast.AST | None, depth: int = 0) -> bool:
    """True when an expression is built only from constants (no data flows in)."""
    if node is None or depth > 50:
        return node is None
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(is_literal(e, depth + 1) for e in node.elts)
    return False


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value of keyword argument `name`, if given."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def is_true(node: ast.AST | None) -> bool:
    """True for the constant ``True``."""
    return isinstance(node, ast.Constant) and node.value is True


def param_defaults(args: ast.arguments, imports: dict[str, str]
                   ) -> tuple[dict[str, str], dict[str, int]]:
    """A function's parameter defaults: those that are names (``schema=JudicialOpinion``,
    through the imports) and those that are int literals (``depth=1``)."""
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults,
                  strict=True), *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    names = {a.arg: resolve(dotted(d), imports) for a, d in pairs if d is not None and dotted(d)}
    numbers = {a.arg: d.value for a, d in pairs
               if isinstance(d, ast.Constant) and type(d.value) is int}
    return {a: n for a, n in names.items() if n}, numbers


def qualified(func: str, cls: str, name: str) -> str:
    """A function's qualified name as the call facts key it: ``outer.inner`` inside a
    function, ``Class.method`` inside a class, else the bare name."""
    owner = func or cls
    return f"{owner}.{name}" if owner else name


def function_defs(tree: ast.Module) -> Iterator[tuple[str, FunctionNode]]:
    """Every function of a module (nested ones too) with its `qualified` name, as the walk
    keys it; lambdas are no functions here."""
    stack: list[tuple[ast.AST, str, str]] = [(tree, "", "")]
    while stack:
        node, func, cls = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                stack.append((child, "", child.name))
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qual = qualified(func, cls, child.name)
                yield qual, child
                stack.append((child, qual, ""))
            elif not isinstance(child, ast.Lambda):
                stack.append((child, func, cls))


def loc(path: str, node: ast.AST | int) -> str:
    """``path:line``."""
    line = node if isinstance(node, int) else getattr(node, "lineno", 1)
    return f"{path}:{line}"


def split_loc(where: str) -> tuple[str, int]:
    """``path:line`` -> (path, line); line 1 when `where` carries none."""
    path, _, line = where.rpartition(":")
    return (path, int(line)) if line.isdigit() else (where, 1)


def reducer_of(annotation: ast.expr, imports: dict[str, str]) -> str | None:
    """The reducer of an ``Annotated[T, reducer]`` hint (``operator.add``, a function...)."""
    if not isinstance(annotation, ast.Subscript):
        return None
    head = resolve(dotted(annotation.value), imports) or ""
    if head.rsplit(".", 1)[-1] != "Annotated" or not isinstance(annotation.slice, ast.Tuple):
        return None
    extras = annotation.slice.elts[1:]
    if not extras:
        return None
    return resolve(dotted(extras[0]), imports) or unparse(extras[0], 120)


JSON = dict[str, Any]


def field_required(value: ast.expr | None, imports: dict[str, str]) -> bool:
    """Whether a model field declared with this value must be given: no value, or
    ``Field(...)`` / ``Field(description=...)`` without a default or default factory."""
    if value is None:
        return True
    if not isinstance(value, ast.Call) or \
            (resolve(dotted(value.func), imports) or "").rsplit(".", 1)[-1] != "Field":
        return False
    if value.args:
        first = value.args[0]
        return isinstance(first, ast.Constant) and first.value is Ellipsis
    return not any(kw.arg in ("default", "default_factory") for kw in value.keywords)


def field_alias(value: ast.expr | None) -> bool:
    """Whether a ``Field(...)`` gives the field another name to be passed by."""
    return isinstance(value, ast.Call) and any(
        kw.arg in ("alias", "validation_alias") for kw in value.keywords)
