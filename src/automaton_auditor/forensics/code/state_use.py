"""Whether the typed state is what the code really runs on (state_management_rigor):

- ``state.no_graph``: the repository defines the typed graph state, but no StateGraph is
  built over it: no StateGraph call in any Python file, or every builder is given no node
  (no graph can be compiled). The state's reducers then never run: whatever the nodes do to
  it is plain dict or object handling;
- ``state.missing_models``: modules import from the module that defines the state (or its
  Evidence/Opinion models) a name it does not define and use it as a type
  (`imports.broken_imports`): each such import raises ``ImportError`` when the module loads,
  and the model that code expects is not the state's. A missing name used otherwise (a
  ``StateGraph`` imported from the state module) is noted only: it breaks that module, not
  the state (the graph's undefined names charge it where it builds the graph).

Each fact quotes the lines it rests on; nothing is claimed when no typed state is found.
"""

from __future__ import annotations

import re
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.imports import ImportChecks
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.own_graph import own_reason
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.state_schema import state_class, typed_classes
from automaton_auditor.forensics.code.topology import Topology, builds_nothing
from automaton_auditor.state import Finding

MAX_QUOTED = 15
_MODEL = re.compile(r"(?:Evidence|Opinion)$")


def _f(facet: str, goal: str, found: bool, location: str, content: str | None,
       rationale: str, **data: object) -> Finding:
    return Finding(facet=facet, goal=goal, found=found, pattern="failure", location=location,
                   content=content, rationale=rationale, confidence=0.85, data=dict(data))


def state_use_findings(facts: dict[str, JSON], repo: Path | None, main: Topology | None,
                       others: list[Topology], checks: ImportChecks | None = None,
                       scope: Scope | None = None) -> list[Finding]:
    """``state.no_graph`` and ``state.missing_models`` (see the module docstring; `scope`:
    what the graph runs, when known)."""
    classes = typed_classes(facts)
    state = state_class(classes, main)
    if state is None:
        return []
    path, cls, _root = state
    # the state's module and the modules of its Evidence/Opinion models
    files = {path} | {p for name, (p, _c, root) in classes.items()
                      if root == "BaseModel" and _MODEL.search(name)}
    return [_no_graph(repo, path, cls, [*([main] if main else []), *others]),
            _missing_models(facts, repo, files, f"{path}:{cls['line']}", checks, scope)]


def _no_graph(repo: Path | None, path: str, cls: JSON, builders: list[Topology]) -> Finding:
    own = [t for t in builders if t.custom is not None]
    if own and len(own) == len(builders):
        # the repository's own graph class: whether its runner applies the reducers is its
        # own code, which is not modelled
        reason = own_reason(own[0].builder, own[0].custom or {})
        return _f("state.no_graph", "No StateGraph is built over the typed state", False,
                  f"{path}:{cls['line']}", None, f"Not established: {reason}.",
                  state=cls["name"], builders=[str(t.builder.get("key")) for t in own][:20],
                  limitation=reason)
    unbuilt = all(builds_nothing(t) for t in builders)
    keys = [str(t.builder.get("key")) for t in builders]
    where = ", ".join(keys[:5])
    return _f(
        "state.no_graph", "No StateGraph is built over the typed state", unbuilt,
        f"{path}:{cls['line']}", line_at(repo, path, cls["line"]) if unbuilt else None,
        (f"{cls['name']} is defined, but no StateGraph is built in any Python file: no "
         "graph runs on it, so its reducers never run." if not builders else
         f"{cls['name']} is defined, but every StateGraph ({where}) is given no node: no "
         "graph can be built over it, so its reducers never run." if unbuilt else
         f"A StateGraph is built with nodes ({where})."),
        state=cls["name"], builders=keys[:20])


def _missing_models(facts: dict[str, JSON], repo: Path | None, files: set[str],
                    loc: str, checks: ImportChecks | None, scope: Scope | None) -> Finding:
    broken = [d for d in (checks or ImportChecks(repo, facts)).broken(facts)
              if d["target"] in files] \
        if repo is not None else []
    # a module the graph never loads breaks nothing the graph runs: noted, not charged
    idle = sorted({d["path"] for d in broken if scope is not None and
                   d["path"] not in scope.files})
    missing = [d for d in broken if d["as_type"] and d["path"] not in idle]
    quotes = "\n".join(line_at(repo, d["path"], d["line"]) for d in missing[:MAX_QUOTED])
    untyped = sorted({f"{d['name']} ({d['path']}:{d['line']})" for d in broken
                      if not d["as_type"]})
    note = (" Also imported from it without being defined, not used as a type: "
            + ", ".join(untyped[:6]) + "." if untyped else "") + (
        f" Not charged: {', '.join(idle[:4])}, which nothing the graph runs imports."
        if idle else "")
    return _f(
        "state.missing_models", "Modules use as types names the state's module does not "
        "define", bool(missing), f"{missing[0]['path']}:{missing[0]['line']}" if missing
        else loc, quotes or None,
        (_missing_text(missing) if missing else
         "Every name the code imports from the state's module and uses as a type is defined "
         "there.") + note,
        names=sorted({d["name"] for d in missing}), modules=sorted({d["path"] for d in missing}),
        targets=sorted(files), untyped=untyped[:20])


def _missing_text(missing: list[JSON]) -> str:
    """Who imports which missing model from where, grouped by name."""
    by_name: dict[tuple[str, str], list[str]] = {}
    for d in missing:
        by_name.setdefault((d["name"], d["target"]), []).append(f"{d['path']}:{d['line']}")
    return "; ".join(f"{', '.join(sites[:4])} import{'s' if len(sites) == 1 else ''} {name} "
                     f"from {target}, which does not define it"
                     for (name, target), sites in sorted(by_name.items())[:6]) + (
        ": ImportError when such a module loads, and the model its code expects (it uses the "
        "name as a type) is not the state's.")
