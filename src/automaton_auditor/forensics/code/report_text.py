"""Where the text a function returns goes: read by `report_file` for a Markdown serializer
(``AuditReport.to_markdown()``) when no code writes a Markdown file.

A serializer that builds the report's headings and returns the text writes nothing itself;
what its callers do with the text is the fact: each call of the function (by its name,
outside the repository's tests) is followed one step, directly or through a name bound to it
once in the same function (``md = report.to_markdown()``), to a call it is handed to
(``st.download_button(data=md, file_name="audit_report.md")``, ``print(md)``,
``st.markdown(md)``, ``Path(p).write_text(md)``), an attribute or item it is stored in
(``self.state.final_report_md = ...``) or a ``return``. Files are parsed, never imported or
run.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.common import dotted, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.source import parse_file, source_text

MAX_USES = 10
CALLED = "called"  # a call of the function: where its text starts


class Use(NamedTuple):
    """One place the returned text goes: the line and what happens to it there."""

    path: str
    line: int
    how: str  # "handed to st.download_button (as 'audit_report.md')", "returned", ...


def _callee(call: ast.Call) -> str:
    """The called name as written (``st.download_button``), its last part when it is built
    at run time."""
    return dotted(call.func) or (call.func.attr if isinstance(call.func, ast.Attribute)
                                 else "a call")


def _handed(call: ast.Call, value: ast.AST) -> str:
    """How a call that is handed `value` uses it: the callee, with the file name a download
    offers when it is a constant."""
    named = next((k.value.value for k in call.keywords if k.arg == "file_name"
                  and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)),
                 None)
    return f"handed to {_callee(call)}" + (f" (as '{named}')" if named else "")


def _target(node: ast.expr) -> str:
    """An attribute or item as written when it is a dotted name (``self.state.report``),
    else what holds it (``an item of results``)."""
    if isinstance(node, ast.Subscript):
        return f"an item of {dotted(node.value) or 'a value'}"
    return dotted(node) or f"an attribute {getattr(node, 'attr', '')}".strip()


def _passes(call: ast.Call, target: ast.AST) -> bool:
    """Whether `call` passes `target` itself as an argument (a node, or a name read)."""
    values = [*call.args, *(k.value for k in call.keywords)]
    if isinstance(target, ast.Name):
        return any(isinstance(v, ast.Name) and v.id == target.id for v in values)
    return any(v is target for v in values)


def _uses_in(scope: list[ast.stmt], name: str, path: str) -> list[Use]:
    """The uses of the text of each call of `name` among the scope's own statements, each
    call itself first (how: "called")."""
    nodes = own_nodes(scope)
    uses: list[Use] = []
    for call in (n for n in nodes if isinstance(n, ast.Call)):
        tail = call.func.id if isinstance(call.func, ast.Name) else \
            call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if tail != name:
            continue
        uses.append(Use(path, call.lineno, CALLED))
        uses += [Use(path, a.lineno, f"stored in {_target(a.targets[0])}")
                 for a in nodes if isinstance(a, ast.Assign) and a.value is call
                 and isinstance(a.targets[0], ast.Attribute | ast.Subscript)]
        # the text itself, and a name bound to it once
        held: list[ast.AST] = [call] + [
            ast.Name(id=a.targets[0].id) for a in nodes if isinstance(a, ast.Assign)
            and a.value is call and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)]
        for value in held:
            uses += [Use(path, n.lineno, _handed(n, value)) for n in nodes
                     if isinstance(n, ast.Call) and n is not call and _passes(n, value)]
            uses += [Use(path, n.lineno, "returned") for n in nodes
                     if isinstance(n, ast.Return) and n.value is not None and (
                         n.value is value or (isinstance(value, ast.Name) and isinstance(
                             n.value, ast.Name) and n.value.id == value.id))]
    return uses


def text_uses(repo: Path, paths: list[str], name: str) -> list[Use]:
    """Where the text returned by the function called `name` goes, over the files `paths`
    (see the module docstring), in file and line order; its calls as uses `CALLED`."""
    uses: list[Use] = []
    for path in paths:
        if f"{name}(" not in source_text(str(repo / path)):
            continue
        tree = parse_file(str(repo / path))
        if tree is None:
            continue
        scopes = [tree.body, *(node.body for _q, node in function_defs(tree))]
        uses += [u for scope in scopes for u in _uses_in(scope, name, path)]
    return sorted(set(uses), key=lambda u: (u.path, u.line, u.how))[:MAX_USES]
