"""Graph wiring inside a loop over run-time data, read as two symbolic copies.

``for dim in rubric["dimensions"]: graph.add_node(f"judge_{dim['id']}", ...)`` registers
one node per item of a list the static reader cannot see. A loop is written for several
items, so the loop's body is read twice, with the loop variable bound to a symbolic item
(``{"item": "rubric['dimensions'][#1]"}``, then ``[#2]``). Names made from it (a subscript,
an attribute, an f-string, a ``+``) keep the item's text, so two loops over the same list
name the same copies, and edges from one node to each copy are a fan-out, edges from every
copy to one node a fan-in. A name that cannot be rendered stays unknown (`topology` then
calls the wiring partial).
"""

from __future__ import annotations

import ast
from typing import Any

COPIES = 2
# builder calls that wire the graph (a loop around only ``compile`` wires nothing)
WIRING = {"add_node", "add_edge", "add_conditional_edges", "add_sequence", "set_entry_point",
          "set_finish_point", "set_conditional_entry_point"}


def item(text: str) -> dict[str, str]:
    """A symbolic item of a run-time list (or a part of one), named by its text."""
    return {"item": text}


def is_item(value: Any) -> bool:
    """True for a value made by `item`."""
    return isinstance(value, dict) and isinstance(value.get("item"), str)


def extend(value: dict[str, str], suffix: str) -> dict[str, str]:
    """A part of a symbolic item: ``dim`` -> ``dim['id']``."""
    return item(value["item"] + suffix)


def render(value: Any) -> str | None:
    """The text a string or a symbolic item contributes to a node name, else None."""
    if isinstance(value, str):
        return value
    return "{" + value["item"] + "}" if is_item(value) else None


def wires_graph(body: list[ast.stmt]) -> bool:
    """True when a block calls a graph-wiring builder method (nested functions excluded:
    they are their own scopes)."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda |
                      ast.ClassDef):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in WIRING:
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def key_suffix(node: ast.expr) -> str | None:
    """``['id']`` for a constant subscript or ``.get("id")`` key, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int) and \
            not isinstance(node.value, bool):
        return f"[{node.value!r}]"
    return None


def joined(parts: list[Any]) -> str | None:
    """The text of an f-string or a ``+`` whose every part is known (a string or an item)."""
    texts = [render(p) for p in parts]
    return None if any(t is None for t in texts) else "".join(str(t) for t in texts)
