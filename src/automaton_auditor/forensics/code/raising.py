"""Graph nodes that always raise, and the criteria whose credited code only they run.

A node's function (as the graph names it) always raises when a line it reaches on every run
fails whatever the input (`bad_format`: formatting literals that cannot be formatted, such as
a JSON example with single braces in an f-string), outside any ``try`` whose handler may catch
the error: in the function itself or in a repository function it calls there (followed
`_DEPTH` calls deep). Such a node never returns, so the graph run stops there.

`raise_findings`: ``<family>.always_raises`` for each family of `loading.FAMILIES` whose
success facts cite code that only such nodes run (a line of the node's function, or of a
function no other node reaches). It quotes the failing line and names the error; each of
those success facts says, in its rationale, that the node never finishes.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.bad_format import (
    caught,
    format_error,
    quote_field,
    runs_always,
)
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import (
    FunctionNode,
    dotted,
    function_defs,
    split_loc,
)
from automaton_auditor.forensics.code.loading import FAMILIES, cited_refs
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.state import Finding

_DEPTH = 2  # calls followed from a node's function to the line that fails


class Failure(NamedTuple):
    """Where a function always fails: the line, the error, the field or call that fails,
    and the call lines (``path:line``) that lead there from the node's function."""

    path: str
    line: int
    why: str
    field: str
    via: tuple[str, ...] = ()


class Raiser(NamedTuple):
    """A graph node whose function always raises."""

    node: str
    key: Key
    failure: Failure


class _Failures:
    """Where the functions of a repository always fail (`failure`), each file parsed and
    each function read once."""

    def __init__(self, repo: Path, graph: CallGraph) -> None:
        self.repo, self.graph = repo, graph
        self.trees: dict[str, ast.Module | None] = {}
        self.known: dict[tuple[Key, int], Failure | None] = {}

    def _function(self, key: Key) -> FunctionNode | None:
        if key[0] not in self.trees:
            self.trees[key[0]] = parse_file(str(self.repo / key[0]))
        tree, start = self.trees[key[0]], self.graph.functions[key].get("line")
        return next((fn for qual, fn in function_defs(tree) if qual == key[1]
                     and fn.lineno == start), None) if tree is not None else None

    def _callee(self, key: Key, call: ast.Call) -> Key | None:
        """The repository function a call of `key`'s body runs, when it resolves."""
        name = dotted(call.func)
        site = next((s for s in self.graph.sites(key) if s.get("line") == call.lineno
                     and s.get("name") == name), None)
        target = self.graph.resolve(key, site) if site is not None else None
        if target is None or target.is_class:
            return None
        callee = (target.path, target.qual)
        return callee if callee in self.graph.functions else None

    def failure(self, key: Key, depth: int = 0) -> Failure | None:
        """Where every call of the function at `key` fails, outside any handler that may
        catch the error (`bad_format.runs_always`), or None."""
        if (key, depth) not in self.known:
            self.known[(key, depth)] = None  # a recursive call fails nowhere new
            self.known[(key, depth)] = self._failure(key, depth)
        return self.known[(key, depth)]

    def _failure(self, key: Key, depth: int) -> Failure | None:
        func = self._function(key)
        if func is None:
            return None
        for node, handlers in runs_always(func.body):
            why = format_error(node)
            found = Failure(key[0], getattr(node, "lineno", func.lineno), why,
                            quote_field(node)) if why else None
            if found is None and isinstance(node, ast.Call) and depth < _DEPTH:
                callee = self._callee(key, node)
                inner = self.failure(callee, depth + 1) if callee is not None else None
                if inner is not None:
                    found = inner._replace(via=(f"{key[0]}:{node.lineno}", *inner.via))
            if found is not None and not caught(handlers, found.why):
                return found
        return None


def raising_nodes(repo: Path, graph: CallGraph, main: Topology | None) -> list[Raiser]:
    """The nodes of `main` whose function always raises (`_Failures.failure`)."""
    reader = _Failures(repo, graph)
    out = []
    for name, info in sorted((main.nodes if main else {}).items()):
        key = graph.node_function(info)
        try:
            found = reader.failure(key) if key in graph.functions else None
        except RecursionError:
            found = None  # hostile nesting: nothing is claimed
        if key is not None and found is not None:
            out.append(Raiser(name, key, found))
    return out


def _owner(graph: CallGraph, ref: str, only: dict[Key, Raiser]) -> Raiser | None:
    """The raising node that alone runs the code at `ref` (``path:line`` or
    ``path:function``), if any."""
    path, _, where = ref.partition(":")
    key = graph.function_at(path, int(where)) if where.isdigit() else (path, where)
    return only.get(key) if key is not None else None


def _only_run_by(graph: CallGraph, main: Topology, raisers: list[Raiser]) -> dict[Key, Raiser]:
    """Function -> the raising node that runs it, for the functions no other node reaches."""
    raising = {r.key for r in raisers}
    keys = [graph.node_function(info) for info in main.nodes.values()]
    others = set(graph.reachable([k for k in keys if k is not None and k not in raising]))
    only: dict[Key, Raiser] = {}
    for raiser in raisers:
        for key in graph.reachable([raiser.key]):
            if key not in others:
                only.setdefault(key, raiser)
    return only


def _said(raiser: Raiser) -> str:
    where = f"{raiser.failure.path}:{raiser.failure.line}"
    return (f"Node {raiser.node} ({raiser.key[1]}) always raises at {where}: formatting "
            f"{raiser.failure.field} fails whatever the input ({raiser.failure.why}), on "
            "every run and outside any handler that catches it, so the node never returns")


def raise_findings(repo: Path, graph: CallGraph, main: Topology | None,
                   findings: list[Finding]) -> list[Finding]:
    """`findings` with each success fact citing code only a raising node runs told so, and
    one ``<family>.always_raises`` per family of such facts (see the module docstring)."""
    raisers = raising_nodes(repo, graph, main)
    if not raisers or main is None:
        return findings
    only = _only_run_by(graph, main, raisers)
    out: list[Finding] = []
    voided: dict[str, list[tuple[Finding, Raiser]]] = {}
    for fact in findings:
        family = fact.facet.split(".", 1)[0]
        owner = next((o for r in cited_refs(fact) if (o := _owner(graph, r, only))), None) \
            if fact.found and fact.pattern == "success" and family in FAMILIES else None
        if owner is not None:
            voided.setdefault(family, []).append((fact, owner))
            fact = fact.model_copy(update={"rationale": f"{fact.rationale} But: {_said(owner)}."})
        out.append(fact)
    for family, facts in sorted(voided.items()):
        out.append(_finding(repo, family, facts))
    return out


def _finding(repo: Path, family: str, facts: list[tuple[Finding, Raiser]]) -> Finding:
    raisers = list({r.node: r for _f, r in facts}.values())
    first = raisers[0].failure
    quoted = [q for r in raisers for q in (*r.failure.via, f"{r.failure.path}:{r.failure.line}")]
    goals = "; ".join(dict.fromkeys(f.goal for f, _r in facts))
    what = FAMILIES[family]
    return Finding(
        facet=f"{family}.always_raises",
        goal=f"The {what} run only in a graph node that always raises",
        found=True, pattern="failure", confidence=0.8,
        location=f"{first.path}:{first.line}",
        content="\n".join([*(line_at(repo, *split_loc(q)) for q in dict.fromkeys(quoted)),
                           *(f"  [{r.failure.field}: {r.failure.why}]" for r in raisers)]),
        rationale=(f"{'. '.join(_said(r) for r in raisers)}. The graph run stops there: the "
                   f"{what} credited by these facts never decide anything: {goals}."),
        data={"nodes": [r.node for r in raisers],
              "lines": [f"{r.failure.path}:{r.failure.line}" for r in raisers],
              "errors": [r.failure.why for r in raisers],
              "voided": sorted({f.facet for f, _r in facts})})
