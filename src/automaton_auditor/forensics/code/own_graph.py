"""Builders made from a graph class the repository writes itself, not LangGraph's.

A repository may define its own ``StateGraph`` (``class StateGraph:`` in src/graph.py, used
as ``from src.graph import StateGraph``). The calls on it look like LangGraph's, but they do
what that class's code does: its fan-out, joins and routing are in its own methods (threads,
loops), which the auditor neither runs nor models. Such a builder is named for what it is,
and the facts that read its wiring with LangGraph's semantics (the methods LangGraph has, the
nodes it registers, fan-out, fan-in, routing, a linear flow) are not established for it.

A class of the repository that inherits LangGraph's graph class is LangGraph's; a class
imported from outside the repository (or not found) is taken as LangGraph's, as before.
"""

from __future__ import annotations

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.interp import BUILDER_CLASSES
from automaton_auditor.forensics.code.resolve import Resolver
from automaton_auditor.state import Finding
from automaton_auditor.state.models import Pattern

# calls that start work running side by side (a runner's own fan-out)
CONCURRENT = frozenset({"ThreadPoolExecutor", "ProcessPoolExecutor", "Thread", "gather",
                        "create_task", "TaskGroup"})
MAX_HOPS = 5  # re-exports followed (``from .graph import StateGraph`` in a package)
# the facts that read a builder's wiring as LangGraph runs it: (facet, goal, pattern)
WIRING_FACETS: tuple[tuple[str, str, Pattern], ...] = (
    ("graph.topology", "Rebuilt graph topology", "neutral"),
    ("graph.fan_out", "Fan-out: one node branches to parallel nodes", "success"),
    ("graph.fan_in", "Fan-in: a node joins parallel branches", "success"),
    ("graph.conditional_edges", "Conditional edges route the flow", "success"),
    ("graph.linear", "Graph is purely linear", "failure"),
    ("graph.parallel_detectives", "Detectives run in parallel and are joined", "success"),
    ("graph.parallel_judges", "Judges run in parallel and are joined", "success"),
)


def own_class(cls: str | None, path: str, facts: dict[str, JSON], resolver: Resolver,
              hops: int = 0) -> JSON | None:
    """The repository's own class a builder in `path` is made from (``cls``: the name
    called, through the file's imports), as ``{"name", "path", "line", "quote"}``; None
    when it is LangGraph's, inherits LangGraph's, or is not defined in the repository."""
    if not cls or cls.startswith("langgraph") or hops > MAX_HOPS:
        return None
    module, _, name = cls.rpartition(".")
    for file in resolver.files_for(module, path) if module else [path]:
        via = (facts.get(file, {}).get("imports") or {}).get(name)
        if module and via:
            # imported there (a re-export, or LangGraph's with a fallback class beside it
            # for when it is not installed): what it imports is what is called
            return own_class(str(via), file, facts, resolver, hops + 1)
        found = next((c for c in facts.get(file, {}).get("classes") or []
                      if c.get("name") == name), None)
        if found is not None:
            if any(_langgraph_base(str(b), file, facts, resolver, hops)
                   for b in found.get("bases") or []):
                return None
            source = str(found.get("source") or "").splitlines()
            return {"name": name, "path": file, "line": int(found["line"]),
                    "quote": source[0].strip() if source else f"class {name}",
                    "concurrent": concurrent_calls(name, facts.get(file, {}))}
    return None


def factory_schema(cls: str | None, path: str, facts: dict[str, JSON], resolver: Resolver,
                   hops: int = 0) -> JSON:
    """The schemas (``state``, ``input``, ``output``) of the LangGraph builder a repository
    function makes when a builder in `path` is made by calling it (``cls``, through the
    file's imports): ``def StateGraph(name): return _StateGraph(AgentState)`` called as
    ``StateGraph(name="audit")`` gives a graph over AgentState. Empty when `cls` is not such a
    function, or the function makes no builder or more than one."""
    if not cls or cls.startswith("langgraph") or hops > MAX_HOPS:
        return {}
    module, _, name = cls.rpartition(".")
    for file in resolver.files_for(module, path) if module else [path]:
        via = (facts.get(file, {}).get("imports") or {}).get(name)
        if module and via:  # a re-export: what it imports is what is called
            return factory_schema(str(via), file, facts, resolver, hops + 1)
        made = [b for b in facts.get(file, {}).get("builders") or []
                if b.get("scope") == name and b.get("state")]
        if len(made) == 1:
            return {k: made[0].get(k) for k in ("state", "input", "output") if made[0].get(k)}
    return {}


def concurrent_calls(name: str, file_facts: JSON) -> list[str]:
    """``line: call(...)`` of each call in class `name`'s methods that starts work running
    side by side: a thread or process pool, a thread, an asyncio gather or task (at most
    5, in line order)."""
    functions = file_facts.get("functions") or {}
    calls = {(int(c["line"]), str(c["name"])) for q, fn in functions.items()
             if q.startswith(f"{name}.") for c in (fn.get("flow") or {}).get("calls") or []
             if str(c.get("name") or "").rsplit(".", 1)[-1] in CONCURRENT}
    return [f"{line}: {called}(...)" for line, called in sorted(calls)[:5]]


def _langgraph_base(base: str, path: str, facts: dict[str, JSON], resolver: Resolver,
                    hops: int) -> bool:
    """A base class that is LangGraph's graph class (or one not defined here)."""
    if base.startswith("langgraph"):
        return True
    return base.rsplit(".", 1)[-1] in BUILDER_CLASSES and \
        own_class(base, path, facts, resolver, hops + 1) is None


def own_reason(builder: JSON, own: JSON) -> str:
    """Why LangGraph's semantics say nothing about the builder's wiring."""
    called = f" (`{builder['cls']}`)" if builder.get("cls") not in (None, own["name"]) else ""
    return (f"the builder at {builder.get('key', '.')} is {own['name']}{called}, the "
            "repository's own "
            f"class ({own['path']}:{own['line']} `{own['quote']}`), not LangGraph's: what its "
            "calls do is that class's code, which the auditor does not run or model")


def own_builder_findings(builder: JSON, own: JSON, ops: list[JSON],
                         others: list[str]) -> list[Finding]:
    """The graph facts of a main builder made from the repository's own class: one fact
    saying so, and every wiring fact not established (with the reason)."""
    key = str(builder.get("key") or ".")
    reason = own_reason(builder, own)
    calls = "\n".join(f"{op['path']}:{op['line']}: {op['snippet']}" for op in
                      sorted(ops, key=lambda o: (o["path"], o["line"]))[:25]
                      if op.get("snippet"))
    out = [Finding(
        facet="graph.builder", goal="A LangGraph StateGraph is built in code", found=False,
        pattern="success", location=key,
        content=f"{key}: {builder.get('snippet', '')}\n{own['path']}:{own['line']}: "
                f"{own['quote']}",
        rationale=f"No LangGraph StateGraph is built: {reason}.", confidence=1.0,
        data={"state": builder.get("state"), "own_class": own, "other_builders": others})]
    out += [Finding(facet=facet, goal=goal, found=False, pattern=pattern,
                    location=key, content=calls or None,
                    rationale=f"Not established: {reason}.", confidence=0.5,
                    data={"limitation": reason})
            for facet, goal, pattern in WIRING_FACETS]
    if own.get("concurrent"):  # what the class's own code does, quoted: not LangGraph's
        out.append(Finding(
            facet="graph.own_runner", goal="The graph's own runner starts work side by side",
            found=True, pattern="success", location=f"{own['path']}:{own['line']}",
            content="\n".join(f"{own['path']}:{line}" for line in own["concurrent"]),
            rationale=f"{own['name']} ({own['path']}) starts work side by side in its own "
                      "code (a pool, threads or tasks); which nodes it runs that way is not "
                      "modelled.", confidence=0.6, data={"own_class": own["name"]}))
    return out
