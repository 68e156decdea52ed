"""Judges told their persona only by a ``Send`` payload: ``for judge in ["Prosecutor",
"Defense", "TechLead"]: sends.append(Send("evaluate_criterion", JudicialTask(judge_name=judge,
...)))``, the node then picking the persona's prompt by the payload's key
(``get_philosophy(task["judge_name"])``).

One entry per persona the payload names under one key, for the node the ``Send`` names when
that name is a function the sending file defines or imports: the function runs with its first
parameter a payload holding that persona's name under the key (other keys unknown). The name
comes from a string literal, or from the loop variable of a ``for`` over a list or tuple of
string literals (written there or bound to a name in the same function). A payload is a dict
literal, a call with keyword arguments (a TypedDict or ``dict(...)``) or a name bound to one
in the same function before the ``Send``.
"""

from __future__ import annotations

import ast
from typing import Any

from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.prompt_eval import Evaluator
from automaton_auditor.forensics.code.prompt_lines import persona_named
from automaton_auditor.forensics.code.prompt_values import Fn, Program, Txt, lit


def _fields(node: ast.expr | None) -> dict[str, ast.expr]:
    """A payload's keys and value expressions (dict literal or keyword call)."""
    if isinstance(node, ast.Dict):
        return {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if isinstance(node, ast.Call):
        return {k.arg: k.value for k in node.keywords if k.arg}
    return {}


def _bound(fn: ast.AST, name: str, line: int) -> ast.expr | None:
    """The value last assigned to `name` in `fn` before `line`."""
    found = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and n.lineno < line and any(
        isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    return max(found, key=lambda n: n.lineno).value if found else None


def _names(fn: ast.AST, value: ast.expr, line: int, path: str) -> list[Txt]:
    """The persona names a payload value stands for, each as the literal that writes it."""
    literals: list[ast.expr] = [value]
    if isinstance(value, ast.Name):  # the variable of a loop around the Send
        loops = [n for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(
            n.target, ast.Name) and n.target.id == value.id and n.lineno < line <= (
                n.end_lineno or 0)]
        items = loops[-1].iter if loops else None
        if isinstance(items, ast.Name):
            items = _bound(fn, items.id, loops[-1].lineno)
        literals = list(items.elts) if isinstance(items, ast.List | ast.Tuple) else []
    return [lit(n.value, path, n) for n in literals if isinstance(n, ast.Constant) and
            isinstance(n.value, str) and persona_named(n.value)]


def sent_entries(program: Program, path: str,
                 scope: Scope | None = None) -> list[tuple[str, str, Any]]:
    """(persona, description, how to run) for the nodes this file's ``Send`` calls name
    with a persona in their payload (see the module docstring)."""
    mod = program.module(path)
    found: list[tuple[str, str, Any]] = []
    for name, top in (mod.names.items() if mod is not None else ()):
        if not isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef) or (
                scope is not None and not scope.runs(path, name)):
            continue
        for call in (n for n in ast.walk(top) if isinstance(n, ast.Call)):
            if getattr(call.func, "id", getattr(call.func, "attr", "")) != "Send" or \
                    len(call.args) != 2 or not isinstance(call.args[0], ast.Constant):
                continue
            target = Evaluator(program).const(path, str(call.args[0].value))
            payload: ast.expr | None = call.args[1]
            if isinstance(payload, ast.Name):
                payload = _bound(top, payload.id, call.lineno)
            params = target.node.args.args if isinstance(target, Fn) else []
            for key, value in _fields(payload).items() if params else ():
                named = _names(top, value, call.lineno, path)
                if len({persona_named(t.text()) for t in named}) < 2:
                    continue
                found += [(str(persona_named(t.text())), f"{path}:{call.lineno} Send("
                           f"{call.args[0].value!r}, {{{key!r}: {t.text()!r}}})",
                           ("fn", target, {params[0].arg: {key: t}})) for t in named]
    return found
