"""Evidence and opinions built without the fields their models require.

The rubric's state criterion asks for typed Pydantic ``Evidence`` and ``JudicialOpinion``
models. A model is only a contract when the code that builds it honours it: a call such as
``Evidence(goal=..., found=True, confidence=0.9)`` on a model that also requires
``source_file`` and ``raw_snippet`` raises ``ValidationError`` every time that line runs, so
the detective or judge that makes it never returns its evidence or opinion.

``state.model_calls`` lists such calls: a call of a repository ``BaseModel`` whose name ends
in Evidence or Opinion, passing keywords only (no positional argument, no ``**fields``),
that leaves out a field the model declares without a default (fields of the repository's own
base classes included). Nothing is concluded for a model whose fields are not all known (a
base class from elsewhere), that takes aliases, or that defines its own ``__init__``,
validators run before the fields (``model_validator(mode="before")``) or a ``Config``.
"""

from __future__ import annotations

import re
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.state_schema import class_fields, typed_classes
from automaton_auditor.state import Finding

FACET = "state.model_calls"
GOAL = "Evidence or opinions are built without fields their models require"
MODEL = re.compile(r"(?:Evidence|Opinion)$")
# A model that may fill or rename its fields itself: its calls are not judged.
_CUSTOM = re.compile(r"def __init__|model_config|class Config\b|mode\s*=\s*['\"]before|"
                     r"root_validator\(\s*pre", re.IGNORECASE)
MAX_QUOTED = 8


def required_fields(classes: dict[str, tuple[str, JSON, str]], name: str) -> list[str] | None:
    """The fields model `name` requires, or None when they cannot be known."""
    found = classes.get(name)
    if found is None or found[2] != "BaseModel" or _CUSTOM.search(found[1]["source"]):
        return None
    fields, complete = class_fields(classes, name)
    if not complete or any(f.get("alias") for _, f in fields) or \
            any("required" not in f for _, f in fields):
        return None
    required: dict[str, bool] = {}
    for _, field in fields:  # bases first: a redeclared field decides last
        required[field["name"]] = bool(field["required"])
    return sorted(n for n, must in required.items() if must)


def model_call_finding(facts: dict[str, JSON], graph: CallGraph,
                       repo: Path | None) -> Finding:
    """Finding ``state.model_calls`` (see the module)."""
    classes = typed_classes(facts)
    models = {n for n in classes if MODEL.search(n)}
    broken: list[tuple[str, int, str, list[str]]] = []
    for key in sorted(graph.functions) if models else []:
        for site in graph.sites(key):
            if site.get("args") or site.get("spread"):
                continue
            target = graph.resolve(key, site)
            name = target.qual if target is not None and target.is_class else ""
            needed = required_fields(classes, name) if name in models else None
            missing = [f for f in needed or [] if f not in (site.get("kw") or {})]
            if missing:
                broken.append((key[0], int(site.get("line") or 1), name, missing))
    if not broken:
        return Finding(facet=FACET, goal=GOAL, found=False, pattern="failure",
                       location=".", confidence=0.5,
                       rationale="Every Evidence or opinion built with keywords passes the "
                                 "fields its model requires.", data={"calls": []})
    path, line, name, missing = broken[0]
    text = "; ".join(f"{p}:{n} builds {m} without {', '.join(fields)}"
                     for p, n, m, fields in broken[:4])
    more = f" (and {len(broken) - 4} more)" if len(broken) > 4 else ""
    return Finding(
        facet=FACET, goal=GOAL, found=True, pattern="failure", location=f"{path}:{line}",
        content="\n".join(line_at(repo, p, n) for p, n, _m, _f in broken[:MAX_QUOTED]),
        rationale=f"{text}{more}: Pydantic raises ValidationError each time such a line runs, "
                  "so that evidence or opinion is never returned.",
        confidence=0.8,
        data={"calls": [{"path": p, "line": n, "model": m, "missing": f}
                        for p, n, m, f in broken[:50]]})
