"""Whether an undefined name stops its function or is swallowed by a ``try`` around it.

An undefined name (pyflakes F821) or a local read before its assignment (F823) raises
``NameError`` (``UnboundLocalError`` is a subclass) when its line runs. When that line sits
in the body of a ``try`` of the same function whose handler catches ``NameError`` or a
broader class (``Exception``, ``BaseException``, a bare ``except:``) and does not raise
again, the function goes on: only the rest of that ``try`` block is silently skipped. A read
in a handler, an ``else`` or a ``finally`` is not covered by that ``try``, and a read in a
function or lambda defined inside the ``try`` runs later, outside it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.analysers import diagnostic_name
from automaton_auditor.forensics.code.common import JSON, caught_names
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.source import parse_file

CAUGHT_CODES = ("F821", "F823")  # both raise NameError when their line runs
CATCHES = {"NameError", "Exception", "BaseException"}  # NameError and its bases
_LATER = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _swallows(handler: ast.ExceptHandler) -> bool:
    """The handler catches a NameError and does not raise again."""
    names = caught_names(handler)
    if names is not None and not CATCHES.intersection(names):
        return False
    return not any(isinstance(node, ast.Raise) for node in own_nodes(handler.body))


def _guards(tree: ast.AST, line: int, name: str) -> list[ast.ExceptHandler | None]:
    """For each read of `name` on `line`: the handler that swallows its NameError, or None."""
    found: list[ast.ExceptHandler | None] = []
    todo: list[tuple[ast.AST, ast.ExceptHandler | None]] = [(tree, None)]
    while todo:
        node, guard = todo.pop()
        if isinstance(node, ast.Name) and node.id == name and node.lineno == line \
                and isinstance(node.ctx, ast.Load):
            found.append(guard)
        if isinstance(node, _LATER):
            guard = None  # its body runs when it is called, not inside this ``try``
        inner = guard
        if isinstance(node, ast.Try | ast.TryStar):
            inner = next((h for h in node.handlers if _swallows(h)), None) or guard
        for field, value in ast.iter_fields(node):
            covered = inner if field == "body" else guard
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    todo.append((child, covered))
    return found


def catching_handler(tree: ast.AST, line: int, name: str) -> ast.ExceptHandler | None:
    """The ``except`` that swallows the NameError of every read of `name` on `line`, or
    None when some read of it (or none found) would stop the function."""
    guards = _guards(tree, line, name)
    if not guards or any(g is None for g in guards):
        return None
    return guards[0]


def split_caught(repo: Path | None, diagnostics: list[JSON]
                 ) -> tuple[list[JSON], list[JSON]]:
    """(diagnostics that stop their function, those a ``try`` swallows); each caught one
    gains ``caught``: the handler's clause and its ``path:line``."""
    trees: dict[str, ast.AST | None] = {}
    failing, caught = [], []
    for item in diagnostics:
        handler = None
        if repo is not None and item["code"] in CAUGHT_CODES:
            path = str(item["path"])
            if path not in trees:
                trees[path] = parse_file(str(repo / path))
            tree = trees[path]
            if tree is not None:
                handler = catching_handler(tree, int(item["line"]), diagnostic_name(item))
        if handler is None:
            failing.append(item)
            continue
        clause = "except" + (f" {ast.unparse(handler.type)}" if handler.type else "")
        caught.append({**item, "caught": f"`{clause}` at {item['path']}:{handler.lineno}"})
    return failing, caught


def caught_text(caught: list[JSON]) -> str:
    """How the caught names read in a rationale (empty when there are none)."""
    if not caught:
        return ""
    shown = "; ".join(f"`{diagnostic_name(d)}` at {d['path']}:{d['line']} silently skipped "
                      f"(caught by {d['caught']})" for d in caught[:5])
    return (f" Not charged: {len(caught)} undefined name(s) inside a try whose handler "
            f"swallows the NameError, so the function goes on: {shown}.")
