"""State findings: the graph state class, its reducers, and the evidence/opinion models."""

from __future__ import annotations

import re

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.state import Finding

TYPED_BASES = {"BaseModel", "TypedDict", "MessagesState"}
# A field holds many of a model when the model sits inside a collection type's brackets
# (``Annotated[List[JudicialOpinion], operator.add]``, ``Dict[str, List[Evidence]]``) or the
# type is a collection of its own (``EvidenceCollection``); a single
# ``Optional[JudicialOpinion]`` is one opinion, not the rubric's list of opinions.
_COLLECTION = r"\b(?:List|list|Sequence|Dict|dict|Mapping|Set|set|Tuple|tuple|Iterable)\[[^\]]*"


def holds_many(annotation: str, model: str) -> bool:
    """Whether a field annotation is a collection of `model` (a name part, e.g. "Opinion")."""
    if re.search(_COLLECTION + model, annotation):
        return True
    named = re.findall(rf"\w*{model}\w*", annotation)
    return any(not name.endswith(model) for name in named)


def typed_classes(facts: dict[str, JSON]) -> dict[str, tuple[str, JSON, str]]:
    """Class name -> (path, class facts, root base) for BaseModel/TypedDict classes,
    following inheritance between the repository's own classes."""
    all_classes = [(p, c) for p in sorted(facts) for c in facts[p].get("classes") or []]
    found: dict[str, tuple[str, JSON, str]] = {}
    changed = True
    while changed:
        changed = False
        for path, cls in all_classes:
            if cls["name"] in found:
                continue
            for base in cls["bases"]:
                tail = base.rsplit(".", 1)[-1].split("[")[0]
                root = tail if tail in TYPED_BASES else (found[tail][2] if tail in found
                                                        else None)
                if root:
                    found[cls["name"]] = (path, cls, root)
                    changed = True
                    break
    return found


# Library bases whose keys are known: LangGraph's MessagesState brings ``messages``.
KNOWN_BASES: dict[str, list[JSON]] = {
    "TypedDict": [], "BaseModel": [], "object": [], "Generic": [],
    "MessagesState": [{"name": "messages", "reducer": "add_messages",
                       "annotation": "Annotated[list, add_messages]", "line": 0}]}


def class_fields(classes: dict[str, tuple[str, JSON, str]], name: str | None,
                 depth: int = 0) -> tuple[list[tuple[str, JSON]], bool]:
    """The fields, as (path, field facts), of class `name` and of its bases (bases first, so
    a redeclared field comes last), and whether all are known (False when a class or a base
    is defined outside the repository)."""
    if not name or depth > 5:
        return [], False
    tail = name.rsplit(".", 1)[-1].split("[")[0]
    if tail in KNOWN_BASES:
        return [("", field) for field in KNOWN_BASES[tail]], True
    found = classes.get(tail)
    if found is None:
        return [], False
    out: list[tuple[str, JSON]] = []
    complete = True
    for base in found[1]["bases"]:
        fields, known = class_fields(classes, base, depth + 1)
        out += fields
        complete &= known
    return out + [(found[0], field) for field in found[1]["fields"]], complete


def schema_keys(facts: dict[str, JSON], name: str | None
                ) -> tuple[dict[str, str | None], bool]:
    """Keys (with reducers as written) of a repository class and its base classes, and
    whether they are all known (`class_fields`)."""
    fields, complete = class_fields(typed_classes(facts), name)
    return {f["name"]: f["reducer"] for _, f in fields}, complete


def passthrough(facts: dict[str, JSON], typed: str | None, state: str | None,
                channels: dict[str, str | None]) -> bool:
    """Whether LangGraph hands a router the keys its own node returned that the state does
    not declare (`channels` are the declared keys, `typed` the class the router's state
    parameter is annotated with): not when the state is a Pydantic model (the router is
    given the model, not a dict), nor when `typed` is a class whose keys are all known and
    all declared (LangGraph reads the router's state through it)."""
    classes = typed_classes(facts)
    found = classes.get((state or "").rsplit(".", 1)[-1])
    if found is not None and found[2] == "BaseModel":
        return False
    fields, complete = class_fields(classes, typed) if typed else ([], False)
    return not (complete and fields and all(f["name"] in channels for _p, f in fields))


def state_class(classes: dict[str, tuple[str, JSON, str]],
                 main: Topology | None) -> tuple[str, JSON, str] | None:
    wanted = (main.builder.get("state") or "") if main else ""
    tail = wanted.rsplit(".", 1)[-1]
    if tail in classes:
        return classes[tail]
    for name in sorted(classes, key=lambda n: (n != "AgentState", not n.endswith("State"), n)):
        if name.endswith("State") and classes[name][2] in ("TypedDict", "MessagesState",
                                                          "BaseModel"):
            return classes[name]
    return None


def _f(facet: str, goal: str, found: bool, location: str, content: str | None,
       rationale: str, **data: object) -> Finding:
    return Finding(facet=facet, goal=goal, found=found, pattern="success", location=location,
                   content=content, rationale=rationale, confidence=0.9, data=dict(data))


def state_findings(facts: dict[str, JSON], main: Topology | None) -> list[Finding]:
    """``state.agent_state``, ``state.reducers``, ``state.collections``, ``state.models``."""
    classes = typed_classes(facts)
    state = state_class(classes, main)
    out = [_models(classes)]
    if state is None:
        text = "No TypedDict or BaseModel graph state class was found in code."
        return [*out, _f("state.agent_state", "A typed graph state class is defined", False,
                         ".", None, text),
                _f("state.reducers", "State declares reducers in Annotated hints", False,
                   ".", None, text)]
    path, cls, root = state
    loc = f"{path}:{cls['line']}"
    # fields declared on the repository's own base classes are the state's fields too
    declared = [(where, f) for where, f in class_fields(classes, cls["name"])[0] if where]
    reducers = {f["name"]: f["reducer"] for _, f in declared if f["reducer"]}
    fields = {f["name"]: f["annotation"] for _, f in declared}
    evidence = sorted(n for n, a in fields.items() if holds_many(a, "Evidence"))
    opinions = sorted(n for n, a in fields.items() if holds_many(a, "Opinion"))
    reducer_lines = "\n".join(f"{where}:{f['line']}: {f['name']}: {f['annotation']}"
                              for where, f in declared if f["reducer"])
    return [*out,
            _f("state.agent_state", "A typed graph state class is defined", True, loc,
               cls["source"], f"{cls['name']} ({root}) with {len(fields)} annotated fields.",
               name=cls["name"], base=root, fields=fields),
            _f("state.reducers", "State declares reducers in Annotated hints", bool(reducers),
               loc, reducer_lines or cls["source"],
               (f"Reducers: {', '.join(f'{k}={v}' for k, v in sorted(reducers.items()))}."
                if reducers else f"{cls['name']} has no Annotated reducer: parallel writes "
                "to the same key overwrite each other."), reducers=reducers),
            _f("state.collections", "State holds collections of evidence and opinions",
               bool(evidence and opinions), loc, cls["source"],
               f"Evidence fields: {_kept(evidence, fields, 'evidence')}; opinion fields: "
               f"{_kept(opinions, fields, 'opinion')}.",
               evidence_fields=evidence, opinion_fields=opinions)]


def _kept(typed: list[str], fields: dict[str, str], word: str) -> str:
    """The fields holding a collection of the model, or, with none, the collections of
    untyped items named for it (``opinions: List[dict]``): a field that exists, with no
    model to check its items, is no "none"."""
    if typed:
        return str(typed)
    loose = [f"{name}: {annotation}" for name, annotation in sorted(fields.items())
             if word in name.lower() and re.search(_COLLECTION, annotation)]
    return f"none typed ({', '.join(loose)}: items of no {word} model)" if loose else "none"


def _models(classes: dict[str, tuple[str, JSON, str]]) -> Finding:
    evidence = [n for n in sorted(classes) if re.search(r"Evidence$", n)
                and classes[n][2] == "BaseModel"]
    opinion = [n for n in sorted(classes) if re.search(r"Opinion$", n)
               and classes[n][2] == "BaseModel"]
    chosen = [classes[n] for n in (evidence[:1] + opinion[:1])]
    return _f("state.models", "Evidence and JudicialOpinion are Pydantic models",
              bool(evidence and opinion),
              f"{chosen[0][0]}:{chosen[0][1]['line']}" if chosen else ".",
              "\n\n".join(c[1]["source"][:900] for c in chosen) or None,
              f"Pydantic evidence models: {evidence or 'none'}; opinion models: "
              f"{opinion or 'none'}.",
              evidence_models=evidence, opinion_models=opinion,
              typed_classes=sorted(classes)[:100])
