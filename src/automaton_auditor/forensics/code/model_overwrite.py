"""A model's answer whose scores the code assigns again is not a model verdict.

``report = AuditReport.model_validate(chain.invoke(prompt))`` followed by
``report.criteria = criterion_results`` and ``report.overall_score = overall`` keeps the
model's prose but none of its scores when every field of the answer's schema that holds a
score (a field named for one, or one whose type is a repository model with such a field,
``criteria: list[CriterionResult]``) is assigned again on that object in the same function.
The schema is the class the answer is validated into there (``X.model_validate``,
``X.parse_obj``); when it is unknown, or defined outside the repository, nothing is claimed.
"""

from __future__ import annotations

import re

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.flow import local_calls
from automaton_auditor.forensics.code.state_schema import class_fields

VALIDATORS = frozenset({"model_validate", "model_validate_json", "parse_obj", "parse_raw"})
SCORE = re.compile(r"score", re.I)
IDENT = re.compile(r"[A-Za-z_]\w*")


def score_fields(classes: dict[str, tuple[str, JSON, str]], name: str) -> set[str] | None:
    """The fields of model `name` that hold a score, or None when its fields are not all
    known or none holds one."""
    fields, complete = class_fields(classes, name)
    if not fields or not complete:
        return None
    out = set()
    for _path, field in fields:
        inner = [t for t in IDENT.findall(str(field.get("annotation") or ""))
                 if t in classes and t != name]
        if SCORE.search(str(field["name"])) or any(
                SCORE.search(str(sub["name"])) for t in inner
                for _p, sub in class_fields(classes, t)[0]):
            out.add(str(field["name"]))
    return out or None


def scores_replaced(graph: CallGraph, classes: dict[str, tuple[str, JSON, str]], key: Key,
                    index: int) -> bool:
    """True when the answer of call `index` of function `key` is held by a local whose
    schema's score fields (`score_fields`) the function all assigns again."""
    flow = graph.flow(key)
    sites = graph.sites(key)
    for name, assigned in sorted((flow.get("fields") or {}).items()):
        calls = local_calls(flow.get("binds") or {}, name)
        if index not in calls:
            continue
        schemas = {str(sites[i]["name"]).rsplit(".", 1)[0] for i in calls if i < len(sites)
                   and str(sites[i].get("name") or "").rsplit(".", 1)[-1] in VALIDATORS}
        needed = [score_fields(classes, s.rsplit(".", 1)[-1]) for s in sorted(schemas)]
        if needed and all(n is not None and n <= set(assigned) for n in needed):
            return True
    return False
