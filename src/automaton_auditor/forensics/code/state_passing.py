"""Keys a node reads through the helpers it hands its whole state to.

``doc_analyst(state)`` calling ``_collect_report_accuracy(chunks, dim, state)``, which reads
``state.get("repo_path")``, reads ``repo_path`` as surely as if the node read it itself:
LangGraph gives the helper the same state the node was given. Each such read is placed on the
line of the call that hands the state on (a line of the node's own function, to quote), and
followed through helpers of helpers `MAX_DEPTH` deep. A helper given one of the state's
values (``state["repo_path"]``) is the node's own read of that key already.
"""

from __future__ import annotations

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON

MAX_DEPTH = 3


def _param_for(graph: CallGraph, key: Key, index: int, callee: Key, atom: str) -> str | None:
    """The callee's parameter site `index` of `key` hands `atom` to alone
    (`CallGraph.argument`: by position or keyword, ``self`` bound)."""
    return next((str(p) for p in graph.functions[callee].get("params") or []
                 if graph.argument(key, index, callee, str(p)) == [atom]), None)


def passed_reads(graph: CallGraph, key: Key, state: str | None) -> dict[str, int]:
    """Keys the helpers `key` hands its parameter `state` to read from it, each at the line
    of the call in `key` (the first such call for each key)."""
    out: dict[str, int] = {}
    for access in passed_accesses(graph, key, state):
        out.setdefault(str(access["key"]), int(access["line"]))
    return out


def passed_accesses(graph: CallGraph, key: Key, state: str | None,
                    depth: int = 0) -> list[JSON]:
    """The reads (`flow` key accesses: ``fallback``, ``behind`` kept) the helpers `key`
    hands its parameter `state` to make of it, each placed at the line of the call in `key`.
    A helper's read behind a primary key (`primary_reads`) stays behind it in the node."""
    out: list[JSON] = []
    if state is None or depth >= MAX_DEPTH:
        return out
    for index, site in enumerate(graph.sites(key)):
        target = graph.resolve(key, site)
        callee = graph.function_key(target) if target is not None else None
        param = _param_for(graph, key, index, callee, f"p:{state}") \
            if callee is not None and callee != key else None
        if callee is None or param is None:
            continue
        line = int(site["line"])
        inner = [a for a in graph.flow(callee).get("keys", [])
                 if a["param"] == param and a["op"] not in ("set", "setattr")]
        for access in [*inner, *passed_accesses(graph, callee, param, depth + 1)]:
            out.append({**access, "param": state, "line": line})
    return out
