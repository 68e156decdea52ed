"""A Chief Justice that nothing runs: ``justice.no_graph``.

The synthesis functions (`synthesis.synthesis_roots`: the graph's Chief Justice node, else
functions named like synthesis) decide verdicts only when something runs them. The fact is
confirmed when the repository builds StateGraphs but gives none of them a node (no
``add_node``/``add_sequence``: `topology.builds_nothing`), so no graph can run a node, and no
code of the product (tests aside) calls a synthesis function or hands it on (its name is
read nowhere but where it is defined, ``module.name`` of an imported module aside): its
rules never decide a verdict. The rubric asks that each rule be reachable from the graph. A
repository with no StateGraph at all, or a synthesis some code calls, gives no fact.
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, TEST_PATH
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.synthesis import synthesis_roots
from automaton_auditor.forensics.code.topology import Topology, builds_nothing
from automaton_auditor.state import Finding


def _mentions(repo: Path, facts: dict[str, JSON], names: set[str]) -> list[Key]:
    """Where product code (tests aside) names one of `names` other than by defining it: a
    call, or the function handed on as a value (``f`` or ``obj.f``); ``module.f`` of an
    imported module is another module's function."""
    found: list[Key] = []
    for path in sorted(p for p, f in facts.items() if "error" not in f and not TEST_PATH.search(p)):
        tree = parse_file(str(repo / path))
        imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(
            n, ast.Import | ast.ImportFrom) for a in n.names} if tree is not None else set()
        for node in ast.walk(tree) if tree is not None else ():
            named = node.id if isinstance(node, ast.Name) else node.attr if isinstance(
                node, ast.Attribute) and not (isinstance(node.value, ast.Name) and
                                              node.value.id in imported) else None
            if named in names:
                found.append((path, f"line {getattr(node, 'lineno', 0)}"))
    return found


def no_graph_finding(repo: Path | None, facts: dict[str, JSON], graph: CallGraph,
                     main: Topology | None, others: list[Topology],
                     wired: Scope | None = None) -> Finding:
    """``justice.no_graph`` (see the module docstring)."""
    builders = [*([main] if main else []), *others]
    roots = synthesis_roots(graph, main, wired)
    callers = sorted({c for r in roots for c, _i in graph.callers(r)
                      if not TEST_PATH.search(c[0])})
    unbuilt = bool(builders) and all(builds_nothing(t) for t in builders)
    if repo is not None and unbuilt and roots and not callers:
        # every file read again: only when the fact would otherwise be confirmed
        callers = _mentions(repo, facts, {q.rsplit(".", 1)[-1] for _p, q in roots})[:10]
    found = unbuilt and bool(roots) and not callers
    keys = ", ".join(str(t.builder.get("key")) for t in builders[:4])
    lines = [(p, int(graph.functions[(p, q)]["line"])) for p, q in roots[:4]]
    return Finding(
        facet="justice.no_graph", goal="The Chief Justice is run by nothing (no graph can be "
        "built and no code calls it)", found=found, pattern="failure",
        location=f"{lines[0][0]}:{lines[0][1]}" if lines else ".",
        content="\n".join(line_at(repo, p, n) for p, n in lines) if found else None,
        confidence=0.85,
        rationale=(f"The synthesis ({', '.join(q for _p, q in roots[:4])}) is run by nothing: "
                   f"every StateGraph ({keys}) is given no node, so no graph can run it, and "
                   "no function of the repository calls it: its rules never decide a verdict."
                   if found else "No synthesis function found." if not roots else
                   f"The synthesis may be run from {callers[0][0]} ({callers[0][1]})."
                   if callers else "A StateGraph is given nodes." if builders else
                   "No StateGraph is built: the synthesis may run without one."),
        data={"roots": [f"{p}:{q}" for p, q in roots[:10]],
              "callers": [f"{p}:{q}" for p, q in callers[:10]]})
