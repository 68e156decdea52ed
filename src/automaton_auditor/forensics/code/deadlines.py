"""Calls bounded in time by ``asyncio.wait_for``, read from the AST.

``await asyncio.wait_for(aw, timeout)`` cancels `aw` once `timeout` seconds have passed, so
the call `aw` is made of is bounded as a ``timeout=`` on it would be:

- ``asyncio.wait_for(run_git(["clone", url, dest]), timeout=60)``: the wrapped call itself;
- ``proc = await asyncio.create_subprocess_exec("git", "clone", ...)`` then
  ``await asyncio.wait_for(proc.communicate(), 120)`` (or ``proc.wait()``): waiting for the
  process is bounded, and cancelling the wait kills it, so the process call is bounded too.

A ``wait_for`` without a timeout (none given, or ``None``) bounds nothing. A clone in a
function every caller of which awaits it that way (``asyncio.wait_for(clone(url, dest),
60)``) is bounded too (`caller_bounded`).
"""

from __future__ import annotations

import ast

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import (
    JSON,
    dotted,
    function_defs,
    keyword,
    resolve,
)
from automaton_auditor.forensics.code.exprs import own_nodes

WAIT_FOR = "asyncio.wait_for"
WAITED = "wait_for"  # a call fact's ``timeout`` when its time limit is such a wait
PROCESS_WAITS = {"communicate", "wait"}


def wait_bounded(tree: ast.Module, imports: dict[str, str]) -> list[int]:
    """Lines of the calls an ``asyncio.wait_for(..., timeout)`` bounds (see the module)."""
    lines: set[int] = set()
    for _qual, func in function_defs(tree):
        nodes = own_nodes(func.body)
        made = {t.id: value.lineno for n in nodes if isinstance(n, ast.Assign)
                for value in [_unawaited(n.value)] if isinstance(value, ast.Call)
                for t in n.targets if isinstance(t, ast.Name)}
        for node in nodes:
            inner = _waited(node, imports)
            if inner is None:
                continue
            lines.add(inner.lineno)
            method = inner.func if isinstance(inner.func, ast.Attribute) else None
            if method is not None and method.attr in PROCESS_WAITS and \
                    isinstance(method.value, ast.Name) and method.value.id in made:
                lines.add(made[method.value.id])  # the call that started the process
    return sorted(lines)


def _unawaited(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Await) else node


def _waited(node: ast.AST, imports: dict[str, str]) -> ast.Call | None:
    """The call an ``asyncio.wait_for`` with a timeout waits for, else None."""
    if not isinstance(node, ast.Call) or resolve(dotted(node.func), imports) != WAIT_FOR:
        return None
    inner = node.args[0] if node.args else keyword(node, "fut") or keyword(node, "aw")
    limit = node.args[1] if len(node.args) > 1 else keyword(node, "timeout")
    if limit is None or (isinstance(limit, ast.Constant) and limit.value is None):
        return None
    inner = _unawaited(inner) if inner is not None else None
    return inner if isinstance(inner, ast.Call) else None


def caller_bounded(facts: dict[str, JSON], graph: CallGraph, path: str, call: JSON) -> bool:
    """A clone call with no time limit of its own in a function that every caller awaits
    through ``asyncio.wait_for(clone(url, dest), timeout)`` (the lines `wait_bounded` of
    each file keeps as its ``wait_bounded`` fact)."""
    callers = graph.callers((path, call["func"])) if not call.get("timeout") else []
    return bool(callers) and all(
        graph.sites(k)[i]["line"] in (facts.get(k[0], {}).get("wait_bounded") or ())
        for k, i in callers)
