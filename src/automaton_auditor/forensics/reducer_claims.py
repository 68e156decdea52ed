"""Report sentences that bind a reducer to a state field, read against the state's hints.

"operator.add for Evidence lists" names a reducer and the field it merges; the state class
declares its reducers in `Annotated` hints (the repo detective's `state.reducers` fact, with
its lines). Only two library reducers that differ are a contradiction: a custom reducer may
wrap the operator the report names, and a sentence whose words match no field says nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from automaton_auditor.state import FeatureClaim, Finding

# Reducers that do the same merge under another name are one reducer here.
_SAME = {"operator.iadd": "operator.add", "operator.concat": "operator.add",
         "operator.or_": "operator.ior", "operator.__or__": "operator.ior",
         "operator.__add__": "operator.add"}
_KNOWN = {"operator.add", "operator.ior", "operator.and_", "operator.mul", "add_messages"}
_LINE = re.compile(r"^(?P<loc>\S+:\d+): (?P<field>\w+): (?P<annotation>.+)$")
_LEAD = r"(?:the|all|each|every|its|our|their|any|a|an)\s+"
_CONTAINERS = {"dict", "list", "annotated", "optional", "sequence", "mapping", "set", "tuple",
               "str", "int", "float", "bool", "any", "union", "none", "typing", "operator",
               "notrequired", "required"}

@dataclass(frozen=True)
class Declared:
    """One state field with the reducer its `Annotated` hint declares."""

    field: str
    reducer: str
    annotation: str
    location: str

    def names(self) -> set[str]:
        """How a report may name the field: its name, its parts, the classes it holds
        ("Evidence", "JudicialOpinion" and its last word), singular."""
        words = {self.field, *self.field.split("_")}
        for cls in re.findall(r"\b[A-Z]\w*", self.annotation):
            if cls.lower() not in _CONTAINERS:
                words |= {cls, *re.findall(r"[A-Z][a-z0-9]+$", cls)}
        return {_singular(w) for w in words if len(w) > 2}


def _singular(word: str) -> str:
    word = word.lower()
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _same(reducer: str) -> str:
    name = reducer.strip().lower()
    return _SAME.get(name, name)


def declared_reducers(code: Sequence[Finding]) -> list[Declared]:
    """The state fields with reducers, from the repo detective's `state.reducers` fact (its
    content lists `path:line: field: annotation`, its data maps field to reducer)."""
    fact = next((f for f in code if f.facet == "state.reducers" and f.found), None)
    if fact is None:
        return []
    reducers = fact.data.get("reducers") or {}
    declared = []
    for line in (fact.content or "").splitlines():
        match = _LINE.match(line.strip())
        if match and isinstance(reducers.get(match["field"]), str):
            declared.append(Declared(match["field"], reducers[match["field"]],
                                     match["annotation"], match["loc"]))
    return declared


def _targets(sentence: str, token: re.Match[str]) -> str | None:
    """The words a reducer mention is bound to: "R for/on <target>" after it, or
    "<field>: Annotated[..., R]" / "<target> merged via R" / "<target> is annotated with R"
    before it."""
    after = re.sub(r"^\s*\([^()]{0,60}\)", "", sentence[token.end():])
    forward = re.match(r"\s*(?:reducers?\s+)?(?:for|on|over)\s+(?:" + _LEAD + r")?"
                       r"(?P<t>[\w\"'\[\].]+)", after, re.IGNORECASE)
    if forward:
        return forward["t"]
    before = sentence[: token.start()]
    backward = re.search(
        r"(?P<t>[\w\"'\[\].]+)\s*(?::\s*Annotated\[[^;:]{0,80},\s*|:?\s*(?:is\s+|are\s+)?"
        r"(?:merged|combined|reduced|accumulated|appended|concatenated|annotated)\s+"
        r"(?:via|with|by|using|through)\s+(?:the\s+)?)$", before, re.IGNORECASE)
    return backward["t"] if backward else None


def _fields_named(target: str, declared: list[Declared]) -> list[Declared]:
    words = re.findall(r"[A-Za-z_]\w*", target)
    key = _singular(words[-1]) if words else ""
    return [d for d in declared if key and key in d.names()]


def reducer_contradictions(claim: FeatureClaim, declared: list[Declared]
                           ) -> list[tuple[str, Declared]]:
    """(reducer the report binds, the field's declaration) for each binding in the sentence
    that names declared fields which all use another library reducer (operator.*,
    add_messages)."""
    custom = {d.reducer for d in declared if not d.reducer.startswith("operator.")}
    names = "|".join(re.escape(n) for n in sorted(_KNOWN | custom | set(_SAME), key=len,
                                                   reverse=True))
    wrong: list[tuple[str, Declared]] = []
    for token in re.finditer(rf"(?<![\w.])(?:{names})(?!\w)", claim.sentence):
        target = _targets(claim.sentence, token)
        fields = _fields_named(target, declared) if target else []
        said = _same(token.group(0))
        # A custom reducer may well wrap the operator the report names: only two library
        # reducers that differ are a contradiction.
        if fields and all(_same(d.reducer) in _KNOWN and _same(d.reducer) != said
                          for d in fields):
            wrong.extend((token.group(0), d) for d in fields)
    return wrong
