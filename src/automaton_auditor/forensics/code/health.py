"""Code health as evidence: what the analysers (`analysers`) and the AST say about whether
the graph's code can run at all, routed to the criteria it bears on.

- ``graph.undefined_names``: names used but never defined (or used before assignment) in the
  modules that build the graph or hold its nodes' functions, and names they import from a
  repository module that does not define them (`imports`): such a graph cannot import or
  fails when the node runs (graph_orchestration); a name read inside a ``try`` whose
  handler swallows the NameError (`caught`) only skips that block: it is named in the
  rationale as silently skipped, never charged;
- ``state.undefined_names``: the same in the module that defines the graph's state
  (state_management_rigor);
- ``state.subscript_on_model``: nodes index a Pydantic state (``state["k"]``), which raises
  ``TypeError`` when LangGraph passes them the model;
- ``safety.shell_injection``, ``safety.code_injection``, ``safety.insecure_temp``,
  ``safety.unsafe_deserialization``: bandit's checks (ruff's ``S`` rules), security failures
  when data reaches them (safe_tool_engineering).

Every fact quotes ``path:line: code`` and the analyser's message.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.analysers import Analysis, diagnostic_name
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.caught import caught_text, split_caught
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.execution import state_param
from automaton_auditor.forensics.code.imports import CODE as IMPORT
from automaton_auditor.forensics.code.imports import ImportChecks
from automaton_auditor.forensics.code.loading import unimportable
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.state_schema import state_class, typed_classes
from automaton_auditor.forensics.code.temp_paths import used_as_paths
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.state import Finding

UNDEFINED = ("F821", "F822", "F823")
SECURITY: dict[str, tuple[str, str, float]] = {
    # facet: (goal, codes, confidence when data reaches it)
    "safety.shell_injection": ("A shell runs a command built from data (bandit B602/B605)",
                               "S602 S604 S605 S609", 0.9),
    "safety.code_injection": ("eval/exec on data (bandit B307/B102)", "S307 S102", 0.8),
    "safety.insecure_temp": ("Hard-coded temporary paths (bandit B108)", "S108", 0.5),
    "safety.unsafe_deserialization": ("pickle or yaml.load on data (bandit B301/B506)",
                                      "S301 S506", 0.7),
}
LOCAL_ANNOTATION = re.compile(r"^[A-Za-z_][\w.]*\s*:\s*([^=]+?)\s*(?:=(.*))?$")
SAFE_HINT = "seems safe"  # ruff's message for a shell call on a constant command
MAX_QUOTED = 15
MISSING_METHOD = "ATTR"  # the diagnostic code of a builder call to a method StateGraph lacks


def inherited(repo: Path, facts: dict[str, JSON], analysis: Analysis, modules: set[str],
              checks: ImportChecks) -> list[JSON]:
    """The graph's modules that import, when they load, a repository module that cannot be
    imported (`loading.unimportable`; their own failing lines are `ImportChecks`'): each
    fails on that import line, as a diagnostic."""
    failed = unimportable(repo, facts, analysis, modules, checks)
    return [{"path": path, "line": why["line"], "code": IMPORT, "import_time": True,
             "target": why["via"], "name": why["via"], "as_type": False,
             "message": f"imports {why['via']}, which cannot be imported"}
            for path, why in sorted(failed.items()) if path in modules and why.get("via")]


def graph_modules(graph: CallGraph, main: Topology | None) -> set[str]:
    """Files that build the main graph or define its nodes' functions."""
    if main is None:
        return set()
    return {op["path"] for op in main.ops} | {
        key[0] for key in node_functions(graph, main).values()}


def node_functions(graph: CallGraph, main: Topology | None) -> dict[str, Key]:
    """Node name -> its function, for the nodes whose function resolves."""
    found: dict[str, Key] = {}
    for name, node in sorted((main.nodes if main else {}).items()):
        key = graph.node_function(node)
        if key is not None:
            found[name] = key
    return found


def _quote(repo: Path | None, items: list[JSON]) -> str | None:
    lines = [f"{line_at(repo, d['path'], d['line'])}  [{d['code']} {d['message']}]"
             for d in items[:MAX_QUOTED]]
    return "\n".join(lines) or None


def _finding(facet: str, goal: str, items: list[JSON], analysis: Analysis,
             repo: Path | None, rationale: str, confidence: float, security: bool = False,
             where: str = ".", **data: Any) -> Finding:
    loc = f"{items[0]['path']}:{items[0]['line']}" if items else where
    if not analysis.ran:
        rationale = f"Not checked: {analysis.tool} {analysis.status}."
        confidence = 0.0
    return Finding(facet=facet, goal=goal, found=bool(items), pattern="failure", location=loc,
                   content=_quote(repo, items), rationale=rationale, security=security,
                   confidence=confidence,
                   data={"tool": analysis.tool, "status": analysis.status,
                         "locations": [f"{d['path']}:{d['line']}" for d in items[:100]],
                         **data})


def health_findings(facts: dict[str, JSON], repo: Path | None, analysis: Analysis,
                    graph: CallGraph, main: Topology | None,
                    checks: ImportChecks | None = None) -> list[Finding]:
    """Code-health and analyser findings (see the module docstring); `checks`: the
    repository's import checks, shared with the other callers."""
    undefined, caught = split_caught(repo, [
        {**d, "import_time": not _in_function(graph, d)}
        for d in analysis.diagnostics if d["code"] in UNDEFINED
        and not _local_annotation(graph, repo, d)])
    modules = graph_modules(graph, main)
    if repo is not None:  # a name imported from a repository module that lacks it
        checks = checks or ImportChecks(repo, facts)
        undefined += checks.broken(modules) + inherited(repo, facts, analysis, modules, checks)
    undefined += _missing_methods(graph, main)
    state = state_class(typed_classes(facts), main)
    state_file = state[0] if state else None
    # what fails on import first, in line order: the line that stops the module loading
    in_graph = sorted((d for d in undefined if d["path"] in modules),
                      key=lambda d: (not d["import_time"], d["path"], d["line"]))
    in_state = [d for d in undefined if d["path"] == state_file]
    # a name inside a try that swallows its NameError skips that block, the node goes on
    caught_graph = [d for d in caught if d["path"] in modules]
    caught_state = [d for d in caught if d["path"] == state_file]
    out = [
        _finding("graph.undefined_names", "The graph's modules use names that are never "
                 "defined", in_graph, analysis, repo,
                 _undefined_text(in_graph, modules) + caught_text(caught_graph),
                 # a module that cannot import is no graph at all, nor is a builder called
                 # with a method StateGraph lacks (the wiring itself fails); a name in one
                 # function fails only when that line runs (often an error path)
                 0.9 if any(d["import_time"] or d["code"] == MISSING_METHOD
                            for d in in_graph) else 0.6,
                 where=str(main.builder.get("key") or ".") if main else ".",
                 names=sorted({diagnostic_name(d) for d in in_graph}), modules=sorted(modules),
                 import_time=[f"{d['path']}:{d['line']}" for d in in_graph
                              if d["import_time"]][:50],
                 repository_total=len(undefined), caught=_caught_data(caught_graph)),
        _finding("state.undefined_names", "The state module uses names that are never "
                 "defined", in_state, analysis, repo,
                 (f"{len(in_state)} undefined name(s) in {state_file}." if in_state else
                  "No undefined name in the state module." if state_file else
                  "No state module found.") + caught_text(caught_state),
                 0.85 if any(d["import_time"] for d in in_state) else 0.6,
                 names=sorted({diagnostic_name(d) for d in in_state}),
                 caught=_caught_data(caught_state)),
        _subscript_finding(graph, main, state, repo),
    ]
    for facet, (goal, codes, confidence) in SECURITY.items():
        items = [d for d in analysis.diagnostics if d["code"] in codes.split()]
        if facet == "safety.insecure_temp":
            out.append(_temp_finding(facet, goal, items, analysis, repo, confidence))
            continue
        data_driven = [d for d in items if SAFE_HINT not in d["message"]]
        chosen = data_driven or items
        out.append(_finding(
            facet, goal, chosen, analysis, repo,
            (f"{len(data_driven)} call(s) on data, {len(items) - len(data_driven)} on "
             "constants only." if items else "None found."),
            confidence if data_driven else 0.4, security=bool(data_driven) and
            confidence >= 0.7, codes=codes.split()))
    return out


def _temp_finding(facet: str, goal: str, items: list[JSON], analysis: Analysis,
                  repo: Path | None, confidence: float) -> Finding:
    """``safety.insecure_temp``: the temporary paths the code uses; a literal it only
    compares paths against (a tuple of prefixes to exclude) is no temporary file."""
    used = used_as_paths(repo, items)
    compared = sorted({f"{d['path']}:{d['line']}" for d in items if d not in used})
    text = (f"{len(used)} hard-coded temporary path(s) the code uses as a path."
            if used else "None used as a path." if items else "None found.")
    if compared:
        text += (f" Left out: {len(compared)} line(s) whose literal is only compared against "
                 f"({', '.join(compared[:5])}).")
    return _finding(facet, goal, used, analysis, repo, text, confidence, codes=["S108"],
                    compared=compared[:20])


def _undefined_text(items: list[JSON], modules: set[str]) -> str:
    if not items:
        return f"No undefined name in the {len(modules)} graph module(s)."
    early = sum(1 for d in items if d["import_time"])
    return (f"{len(items)} undefined name(s) in the modules that build the graph or define "
            f"its nodes; {early} run when the module is imported (it cannot import), "
            f"{len(items) - early} fail when their function runs.")


def _caught_data(caught: list[JSON]) -> list[str]:
    return [f"{d['path']}:{d['line']} {diagnostic_name(d)}: {d['caught']}" for d in caught[:50]]


def _missing_methods(graph: CallGraph, main: Topology | None) -> list[JSON]:
    """Calls on the builder to methods StateGraph does not have (``add_fan_out``), as
    diagnostics: each raises AttributeError when its line runs."""
    found = []
    # a builder of the repository's own class has the methods that class defines
    for op in sorted((main.ops if main and main.custom is None else []),
                     key=lambda o: (o["path"], o["line"])):
        if op["op"] == "missing_method":
            item = {"path": op["path"], "line": op["line"], "code": MISSING_METHOD,
                    "message": f"`{op['method']}` is not a method of StateGraph"}
            found.append({**item, "import_time": not _in_function(graph, item)})
    return found


def _in_function(graph: CallGraph, diagnostic: JSON) -> bool:
    return any(info["line"] < diagnostic["line"] <= info["end"]
               for (path, _q), info in graph.functions.items() if path == diagnostic["path"])


def _local_annotation(graph: CallGraph, repo: Path | None, diagnostic: JSON) -> bool:
    """``x: Dict[str, int] = {}`` inside a function: local annotations are never
    evaluated, so an undefined name there breaks nothing."""
    if not _in_function(graph, diagnostic):
        return False
    code = line_at(repo, diagnostic["path"], diagnostic["line"]).split(": ", 1)[-1]
    match = LOCAL_ANNOTATION.match(code)
    if match is None:
        return False
    word = re.compile(rf"\b{re.escape(diagnostic_name(diagnostic))}\b")
    return word.search(match.group(1)) is not None and word.search(match.group(2) or "") is None


def _subscript_finding(graph: CallGraph, main: Topology | None,
                       state: tuple[str, JSON, str] | None, repo: Path | None) -> Finding:
    """Nodes that use ``state["k"]`` on a Pydantic (BaseModel) state."""
    hits: list[JSON] = []
    if state is not None and state[2] == "BaseModel":
        for name, key in node_functions(graph, main).items():
            first = state_param(graph, key)
            for access in graph.flow(key).get("keys", []):
                if access["param"] == first and access["op"] in ("get", "set"):
                    hits.append({"path": key[0], "line": access["line"], "code": name,
                                 "message": f"state[{access['key']!r}] on {state[1]['name']}"})
    hits.sort(key=lambda d: (d["path"], d["line"]))
    state_name = state[1]["name"] if state else "the state"
    return Finding(
        facet="state.subscript_on_model", goal="Nodes index a Pydantic state with []",
        found=bool(hits), pattern="failure",
        location=f"{hits[0]['path']}:{hits[0]['line']}" if hits else ".",
        content=_quote(repo, hits), confidence=0.85,
        rationale=(f"{len(hits)} item access(es) on {state_name}, a BaseModel: LangGraph "
                   "passes the model itself, so state['key'] raises TypeError." if hits
                   else "No node indexes a Pydantic state with []."),
        data={"nodes": sorted({str(d["code"]) for d in hits}),
              "locations": [f"{d['path']}:{d['line']}" for d in hits[:100]]})
