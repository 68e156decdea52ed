"""What a LangGraph ``RetryPolicy`` on a node retries.

A node added with ``add_node(name, fn, retry_policy=RetryPolicy(...))`` (or the older
``retry=``) is run again when it raises, every model call it makes included. Which errors
it retries is ``retry_on``: LangGraph's default (``default_retry_on``) retries a dropped
connection, a 5xx reply or a provider's API error, and never ValueError and its
subclasses, pydantic's ValidationError and LangChain's OutputParserException among them:
a malformed structured reply is not tried again. Such a policy counts as a retry of
malformed output only when its ``retry_on`` names them (`retries.catches_malformed`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.common import (
    JSON,
    class_names,
    dotted,
    keyword,
    resolve,
    unparse,
)
from automaton_auditor.forensics.code.retries import catches_malformed
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.topology import Topology

POLICY_KEYWORDS = ("retry_policy", "retry")


def _add_node_call(tree: ast.Module, line: int) -> ast.Call | None:
    return next((c for c in ast.walk(tree) if isinstance(c, ast.Call) and c.lineno == line
                 and isinstance(c.func, ast.Attribute) and c.func.attr == "add_node"), None)


def _assigned(tree: ast.Module, name: str, before: int) -> ast.expr | None:
    """The value last assigned to `name` before line `before` (``policy = RetryPolicy()``)."""
    found = [a for a in ast.walk(tree) if isinstance(a, ast.Assign) and a.lineno < before
             and any(isinstance(t, ast.Name) and t.id == name for t in a.targets)]
    return max(found, key=lambda a: a.lineno).value if found else None


def _policies(tree: ast.Module, value: ast.expr, line: int,
              imports: dict[str, str]) -> list[ast.Call]:
    """The LangGraph ``RetryPolicy(...)`` calls a node's policy argument holds."""
    if isinstance(value, ast.Name):
        value = _assigned(tree, value.id, line) or value
    items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
    return [i for i in items if isinstance(i, ast.Call) and dotted(i.func)
            and (resolve(dotted(i.func), imports) or "").startswith("langgraph")
            and str(dotted(i.func)).rsplit(".", 1)[-1] == "RetryPolicy"]


def node_policies(facts: dict[str, JSON], repo: Path | None,
                  main: Topology | None) -> list[JSON]:
    """Nodes of the main graph added with a RetryPolicy: the node, the policy's place and
    text, its ``retry_on`` (None: LangGraph's default) and whether that retries a malformed
    reply."""
    found: list[JSON] = []
    trees: dict[str, ast.Module | None] = {}  # each graph file parsed once
    for name, node in sorted((main.nodes if main is not None and repo else {}).items()):
        op = node["op"]
        if repo is None or not set(POLICY_KEYWORDS) & set(op.get("kwargs") or {}):
            continue
        if op["path"] not in trees:
            trees[op["path"]] = parse_file(str(repo / op["path"]))
        tree = trees[op["path"]]
        call = _add_node_call(tree, op["line"]) if tree is not None else None
        value = next((v for k in POLICY_KEYWORDS if call is not None
                      and (v := keyword(call, k)) is not None), None)
        if tree is None or value is None:
            continue
        imports = (facts.get(op["path"]) or {}).get("imports") or {}
        for policy in _policies(tree, value, op["line"], imports):
            retry_on = keyword(policy, "retry_on")
            found.append({"node": name, "path": op["path"], "line": policy.lineno,
                          "func": "", "snippet": line_at(repo, op["path"], policy.lineno)
                          .split(": ", 1)[-1],
                          "retry_on": unparse(retry_on, 80) if retry_on is not None else None,
                          "malformed": retry_on is not None and catches_malformed(
                              class_names(retry_on))})
    return found


def policy_text(policies: list[JSON]) -> str:
    """What the RetryPolicies on nodes retry (see the module docstring)."""
    default = sorted({p["node"] for p in policies if p["retry_on"] is None})
    narrow = sorted({f"{p['node']} (retry_on={p['retry_on']})" for p in policies
                     if p["retry_on"] is not None and not p["malformed"]})
    text = ""
    if default:
        text += (f" Node(s) {', '.join(default)} are added with a RetryPolicy whose retry_on "
                 "is LangGraph's default: it runs the node again after a dropped connection, "
                 "a 5xx reply or a provider's API error, but never after a ValueError, and "
                 "pydantic's ValidationError and LangChain's OutputParserException are "
                 "ValueErrors: a malformed structured reply is not retried.")
    if narrow:
        text += (f" Node(s) {', '.join(narrow)} retry only the errors their retry_on names, "
                 "none of them a malformed reply's.")
    return text
