"""``json.loads`` on a model's reply text inside the helper the reply is handed to.

``parsed = _parse_json_fallback(reply.content)`` and, in the helper, ``json.loads`` over a
slice of its ``content`` parameter parse the model's free text as surely as
``json.loads(reply.content)`` in the judge itself (Hiwot-Beyene's retries after the schema
call fails). Read from the call facts (`replies.content_args`: a call of a repository helper
handed a reply's text, with the positions) and the helper's own code: its ``json.loads``
calls whose argument is built from that parameter (through the helper's local
assignments and loops). One level of helper; not followed further.
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, dotted, function_defs
from automaton_auditor.forensics.code.facts import calls_of
from automaton_auditor.forensics.code.source import line_at, parse_file

MAX_ROUNDS = 4  # local assignments followed from the parameter


def _helper(graph: CallGraph, path: str, call: JSON) -> Key | None:
    key = (path, str(call["func"]))
    site = next((s for s in graph.sites(key) if s.get("line") == call["line"]
                 and s.get("name") == call.get("callee")), None) if key in graph.functions \
        else None
    target = graph.resolve(key, site) if site is not None else None
    return graph.function_key(target) if target is not None else None


def _tainted(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> set[str]:
    """`param` and the locals built from it (assignments, loop targets over it)."""
    held = {param}
    for _round in range(MAX_ROUNDS):
        grown = set(held)
        for node in ast.walk(fn):
            value = getattr(node, "value", None) if isinstance(
                node, ast.Assign | ast.AnnAssign | ast.AugAssign) else \
                node.iter if isinstance(node, ast.For | ast.comprehension) else None
            if value is None or not held & {n.id for n in ast.walk(value)
                                            if isinstance(n, ast.Name)}:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [
                node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For |
                                          ast.comprehension) else []
            grown |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if grown == held:
            break
        held = grown
    return held


def helper_parses(facts: dict[str, JSON], graph: CallGraph,
                  repo: Path | None) -> list[tuple[str, JSON]]:
    """``(path, call fact)`` of each ``json.loads`` a helper runs on the reply text it is
    handed, shaped as ``freeform_parse`` facts (line, func, snippet)."""
    found: dict[tuple[str, int], JSON] = {}
    for path, call in calls_of(facts, "content_passed") if repo is not None else []:
        key = _helper(graph, path, call)
        tree = parse_file(str(repo / key[0])) if key is not None and repo is not None \
            else None
        fn = next((f for q, f in function_defs(tree) if q == key[1]), None) \
            if tree is not None and key is not None else None
        if fn is None or key is None:
            continue
        params = [a.arg for a in fn.args.args if a.arg not in ("self", "cls")]
        for index in call.get("args") or []:
            held = _tainted(fn, params[index]) if index < len(params) else set()
            for node in ast.walk(fn):
                if held and isinstance(node, ast.Call) and dotted(node.func) == "json.loads" \
                        and node.args and held & {n.id for n in ast.walk(node.args[0])
                                                  if isinstance(n, ast.Name)}:
                    found[(key[0], node.lineno)] = {
                        "line": node.lineno, "func": key[1], "in_try": True,
                        "snippet": line_at(repo, key[0], node.lineno).split(": ", 1)[-1],
                        "via": f"{path}:{call['line']}"}
    return [(p, c) for (p, _l), c in sorted(found.items())]
