"""Graph nodes whose function does nothing: what the graph runs there is a stub.

A node's function is followed through the calls it only hands its work to (``inspector =
VisionInspector(); return inspector.investigate(state)``) to the function that does the work;
that one is a stub when it only passes, logs or returns its input or nothing
(`stubs.does_nothing`), or returns a fixed placeholder that says so ("Visual inspection not
implemented": `stubs.placeholder_lines`). Each stub node is given with the lines that show it,
so a report that says the node works can be read against them
(`forensics.contradictions.stub_but_described`).
"""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.reexports import reexported_modules
from automaton_auditor.forensics.code.source import function_source, line_at
from automaton_auditor.forensics.code.stubs import delegated_call, does_nothing, placeholder_lines
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.forensics.code.walk import read_facts

_HOPS = 3  # calls followed from a node's function to the one that does its work
_QUOTED = 4  # lines quoted per function


def stub_nodes(facts: dict[str, JSON], repo: Path, topo: Topology | None
               ) -> dict[str, list[str]]:
    """Node name -> the lines (``path:line: code``) that show the function it runs does
    nothing, for each node of `topo` whose function is a stub. A module the prefilter
    skipped that holds a node's function re-exported by its package is read here, for this
    only: parsed for every fact, it would change what other facts see."""
    extra = {path: read_facts(repo, path, force=True) for path in reexported_modules(facts)}
    graph = CallGraph({**facts, **extra})
    found: dict[str, list[str]] = {}
    for name, info in sorted((topo.nodes if topo else {}).items()):
        key = graph.node_function(info)
        lines = _stub_lines(graph, repo, key) if key is not None else []
        if lines:
            found[name] = lines
    return found


def _stub_lines(graph: CallGraph, repo: Path, key: Key) -> list[str]:
    """The lines that show the function at `key`, or the one it hands its work to, is a
    stub; empty when it is not (or cannot be read)."""
    quoted: list[str] = []
    for _ in range(_HOPS + 1):
        info = graph.functions.get(key) or {}
        start = int(info.get("line") or 0)
        source = function_source(repo, key[0], start, int(info.get("end") or start))
        if not source:
            return []
        if does_nothing(source):
            count = len(source.splitlines())
            return [*quoted, *(line_at(repo, key[0], start + i)
                               for i in range(min(count, _QUOTED)))]
        said = placeholder_lines(source)
        if said:
            return [*quoted, *(line_at(repo, key[0], start + n - 1) for n in said[:_QUOTED])]
        callee = delegated_call(source)
        site = next((s for s in graph.sites(key) if s.get("name") == callee), None)
        target = graph.resolve(key, site) if site is not None else None
        if site is None or target is None or target.is_class \
                or (target.path, target.qual) not in graph.functions:
            return []
        quoted.append(line_at(repo, key[0], int(site.get("line") or start)))
        key = (target.path, target.qual)
    return []
