"""Whether anything reads the state a run leaves behind, under some of its keys.

A node after which no node runs hands its return to LangGraph, which merges it into the
state and ends the run. What that merge does to a key (an add-reducer list handed back to
itself comes out doubled) reaches only what reads the final state:

- the code that runs the graph: the value of ``graph.invoke(...)`` (``ainvoke``, awaited).
  A graph call is one on a name bound to a ``.compile(...)`` result, or one given a dict
  literal naming a state key. Its value is left unread when the call is a statement of its
  own, or bound to a name only ever read as ``result["k"]`` / ``result.get("k")`` under
  other keys; anything else (``stream``, handing the result on, returning it) reads it;
- a checkpointer (``compile(checkpointer=...)``): the state is stored under the run's
  ``thread_id``, and the next run on that thread, or ``get_state``, reads it. Left unread
  only when every graph call's ``config`` gives a fresh ``thread_id`` (built from a ``uuid``
  call) and every ``get_state``/``get_tuple`` names a thread by a string literal (which a
  fresh id never equals).

Whatever cannot be read (no graph call found, a config not a literal) counts as read.
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON, dotted, keyword
from automaton_auditor.forensics.code.state_writers import product_trees

GRAPH_CALLS = frozenset({"invoke", "ainvoke", "stream", "astream"})
STATE_READS = frozenset({"get_state", "aget_state", "get_state_history",
                         "aget_state_history", "get_tuple", "aget_tuple"})


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _binds(tree: ast.AST) -> dict[str, list[ast.expr]]:
    """Every value each plain name is assigned in the file."""
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in (t for t in node.targets if isinstance(t, ast.Name)):
                out.setdefault(target.id, []).append(node.value)
    return out


def _one(node: ast.expr | None, binds: dict[str, list[ast.expr]]) -> ast.expr | None:
    """`node`, or what a name holds when the file assigns it once."""
    if isinstance(node, ast.Name) and len(binds.get(node.id, [])) == 1:
        return binds[node.id][0]
    return node


def _entry(node: ast.expr | None, name: str) -> ast.expr | None:
    if not isinstance(node, ast.Dict):
        return None
    return next((v for k, v in zip(node.keys, node.values, strict=True)
                 if isinstance(k, ast.Constant) and k.value == name), None)


def _fresh(node: ast.expr | None, binds: dict[str, list[ast.expr]], depth: int = 0) -> bool:
    """Whether a thread id is built from a ``uuid`` call (through names assigned once)."""
    if node is None or depth > 4:
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and "uuid" in (dotted(sub.func) or "").split(".")[0]:
            return True
        if isinstance(sub, ast.Name) and sub is not node and _fresh(_one(sub, binds), binds,
                                                                    depth + 1):
            return True
    one = _one(node, binds)
    return one is not node and _fresh(one, binds, depth + 1)


def _thread(call: ast.Call, binds: dict[str, list[ast.expr]], at: int) -> ast.expr | None:
    """The ``thread_id`` of the config a call is given (`at`: its position), if literal."""
    config = _one(keyword(call, "config") or (call.args[at] if len(call.args) > at else None),
                  binds)
    return _entry(_one(_entry(config, "configurable"), binds), "thread_id")


def _unread(call: ast.Call, parents: dict[int, ast.AST], tree: ast.AST,
            keys: set[str]) -> bool:
    """Whether the value of a graph call is never read under `keys`."""
    holder = parents.get(id(call))
    if isinstance(holder, ast.Await):
        holder = parents.get(id(holder))
    if isinstance(holder, ast.Expr):
        return True
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1
            and isinstance(holder.targets[0], ast.Name)):
        return False
    name = holder.targets[0].id
    for use in ast.walk(tree):
        if not (isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load)):
            continue
        up = parents.get(id(use))
        if isinstance(up, ast.Attribute) and up.attr == "get":
            call_of = parents.get(id(up))
            up = call_of if isinstance(call_of, ast.Call) and call_of.args else None
            key = up.args[0] if isinstance(up, ast.Call) else None
        else:
            key = up.slice if isinstance(up, ast.Subscript) else None
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)) or \
                key.value in keys:
            return False
    return True


def _compiles(tree: ast.AST) -> list[ast.Call]:
    return [c for c in ast.walk(tree) if isinstance(c, ast.Call)
            and isinstance(c.func, ast.Attribute) and c.func.attr == "compile"]


def final_state_read(repo: Path | None, facts: dict[str, JSON], channels: set[str],
                     keys: set[str]) -> bool:
    """Whether anything may read `keys` of the state a run leaves (see the module docstring);
    True when it cannot be told."""
    trees = product_trees(repo, facts) if repo is not None else []
    compiled = {t.id for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Assign)
                and any(n.value is c for c in _compiles(n)) for t in n.targets
                if isinstance(t, ast.Name)}
    saved = any(keyword(c, "checkpointer") is not None for t in trees for c in _compiles(t))
    found = False
    for tree in trees:
        parents, binds = _parents(tree), _binds(tree)
        for call in (c for c in ast.walk(tree) if isinstance(c, ast.Call)):
            func = call.func
            method = func.attr if isinstance(func, ast.Attribute) else ""
            if method in STATE_READS and not isinstance(_thread(call, binds, 0), ast.Constant):
                return True
            given = _one(call.args[0], binds) if call.args else None
            named = isinstance(given, ast.Dict) and any(
                isinstance(k, ast.Constant) and k.value in channels for k in given.keys)
            if method not in GRAPH_CALLS or not isinstance(func, ast.Attribute) or not (
                    named or dotted(func.value) in compiled):
                continue
            found = True
            if method in ("stream", "astream") or not _unread(call, parents, tree, keys) or (
                    saved and not _fresh(_thread(call, binds, 1), binds)):
                return True
    return not found
