"""What a graph node hands LangGraph: its function's returns (`outs`), followed into the
helpers it returns from, the Pydantic model it returns, and the decorators around it.

A node registered as a decorated function (``@deco def node(state)``, ``@deco(60)``) or as
a decorator applied by hand (``timed = timeout_wrapper(900)(node)``; ``add_node("n",
timed)``) runs the wrapper the decorator returns, not the function itself. What it hands
LangGraph is therefore the wrapper's returns, where ``return fn(*args, **kwargs)`` (the
wrapped function's answer) stands for the function's own returns:

- a repository decorator ``def deco(fn): ... def wrapper(*a, **k): ...; return wrapper``
  (or one level deeper when the decorator is called: ``@deco(arg)``) is followed into
  ``wrapper`` when some return of ``wrapper`` hands back ``fn(...)``'s answer (directly,
  awaited, through a local); ``def deco(fn): ...; return fn`` leaves the function as it is;
- a library's decorator on a definition (``@traceable``, ``@retry``) is taken to hand the
  function's answer back, as before; a library callable applied by hand is only when it is
  one that runs what it is given (``partial``, ``RunnableLambda``);
- anything else (a repository decorator of another shape, a class) leaves what the node
  returns not determined.

A constructed object returned under a key (``{"final_report": report}``, `sure_values`) is
known non-empty when its class is a Pydantic model of the repository that defines no
``__bool__`` or ``__len__`` (`always_truthy`), else not known.
"""

from __future__ import annotations

from dataclasses import dataclass

from automaton_auditor.forensics.code.callgraph import PASS_THROUGH, CallGraph, Key, Target
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.state_schema import class_fields, typed_classes
from automaton_auditor.forensics.code.sure_values import NEW, NONEMPTY, UNKNOWN

MAX_BASES = 8  # classes followed up an inheritance chain
IDENTITY = "identity"  # the decorator hands the function back unchanged
Wrap = tuple[Key, str] | str | None  # (wrapper, parameter holding the function) | IDENTITY


@dataclass(frozen=True)
class Deco:
    """One decorator around a node function, as written in `path`."""

    path: str
    name: str  # through the file's imports
    called: bool  # ``@deco(arg)``: the call's answer is the decorator
    by_hand: bool  # ``deco(fn)`` in an assignment, not ``@deco`` on the definition


def node_target(graph: CallGraph, info: JSON) -> tuple[Key | None, list[Deco]]:
    """The function a graph node runs and the decorators around it, innermost first."""
    key = graph.node_function(info)
    outer: list[Deco] = []
    ref = str(info.get("fn") or "")
    if key is None and ref:
        hit = graph.applied(info["op"]["path"], ref)
        if hit is None:
            return None, []
        path, entry = hit
        key = graph.named(path, str(entry["fn"]))
        outer = [Deco(path, str(d["name"]), bool(d["called"]), True)
                 for d in reversed(entry["decos"])]
    if key is None:
        return None, []
    facts = graph.functions[key]
    names = facts.get("decorators") or []
    called = facts.get("decorator_called") or [False] * len(names)
    own = [Deco(key[0], str(n), bool(c), False) for n, c in zip(names, called, strict=False)]
    return key, [*reversed(own), *outer]


def wrapper_of(graph: CallGraph, deco: Deco) -> Wrap:
    """What a decorator puts around the function it is given (`Wrap`); None: not known."""
    target = graph.target(deco.path, deco.name)
    if target is None:  # not the repository's own
        known = not deco.by_hand or deco.name.rsplit(".", 1)[-1] in PASS_THROUGH
        return IDENTITY if known else None
    key: Key | None = (target.path, target.qual)
    if target.is_class or key not in graph.functions:
        return None
    if deco.called:
        key = _closure(graph, key)  # ``deco(arg)`` returns the decorator itself
    param = _first_param(graph, key) if key is not None else None
    if key is None or param is None:
        return None
    returns = graph.functions[key].get("returns") or []
    if returns and all(r == {"open": param} for r in returns):
        return IDENTITY  # ``return fn``: registers or marks the function, nothing more
    wrapper = _closure(graph, key)
    if wrapper is None or not any(o.get("call") == param
                                  for o in graph.functions[wrapper].get("outs") or []):
        return None  # no return hands back the wrapped function's answer: not followed
    return wrapper, param


def _closure(graph: CallGraph, key: Key) -> Key | None:
    """The nested function a function returns, when every return returns that one."""
    refs = {str(r.get("ref")) if isinstance(r, dict) else "" for r in
            graph.functions[key].get("returns") or []}
    if len(refs) != 1:
        return None
    closure = (key[0], f"{key[1]}.{refs.pop()}")
    return closure if closure in graph.functions else None


def _first_param(graph: CallGraph, key: Key) -> str | None:
    params = [p for p in graph.functions[key].get("params") or [] if p not in ("self", "cls")]
    return params[0] if params else None


def resolved_outs(graph: CallGraph, key: Key, depth: int = 0,
                  wrapped: dict[str, list[JSON]] | None = None) -> list[JSON]:
    """A function's outs, with ``return helper(...)`` replaced by the helper's own outs (and
    in a decorator's wrapper, ``return fn(...)`` by the outs `wrapped` gives for ``fn``)."""
    out: list[JSON] = []
    for item in (graph.functions.get(key) or {}).get("outs") or []:
        item = {"path": key[0], **item}  # the file its line is in
        inner = (wrapped or {}).get(str(item.get("call")))
        callee = graph.resolve(key, {"name": item["call"]}) \
            if item.get("call") and inner is None else None
        called = graph.function_key(callee) if callee is not None else None
        if inner is None and called is not None and depth < 3:
            inner = resolved_outs(graph, called, depth + 1)
        if inner is not None:
            out += [_around(item, sub) for sub in inner]
        elif callee is not None and callee.is_class and (keys := model_keys(graph, callee)):
            out.append({**item, "keys": keys})
        elif item.get("call"):
            out.append({**item, "open": True})
        else:
            out.append(_objects(graph, item))
    return out


def _objects(graph: CallGraph, item: JSON) -> JSON:
    """The out with each constructed object it returns under a key (`sure_values.NEW`) read:
    non-empty when its class's instances are always truthy (`always_truthy`), else not
    known."""
    keys = item.get("keys") or {}
    if not any(str(v).startswith(NEW) for v in keys.values()):
        return item
    return {**item, "keys": {k: (NONEMPTY if always_truthy(graph, item["path"], v[len(NEW):])
                                 else UNKNOWN) if str(v).startswith(NEW) else v
                             for k, v in keys.items()}}


def always_truthy(graph: CallGraph, path: str, name: str) -> bool:
    """Whether the class `name` (as written in `path`) is a Pydantic model of the repository
    whose instances are always truthy: it and each of its bases is ``BaseModel`` or such a
    model, and none defines ``__bool__`` or ``__len__``."""
    classes = typed_classes(graph.facts)
    target = graph.resolve((path, "<module>"), {"name": name})
    todo = [(target.path, target.qual)] if target is not None and target.is_class else []
    if not todo:
        return False
    for _ in range(MAX_BASES):
        if not todo:
            return True
        where, qual = todo.pop()
        found = classes.get(qual)
        if found is None or found[0] != where or found[2] != "BaseModel" or any(
                (where, f"{qual}.{m}") in graph.functions for m in ("__bool__", "__len__")):
            return False
        for base in found[1]["bases"]:
            if base.rsplit(".", 1)[-1] == "BaseModel":
                continue
            parent = graph.target(where, base)
            if parent is None or not parent.is_class:
                return False
            todo.append((parent.path, parent.qual))
    return False


def _around(item: JSON, sub: JSON) -> JSON:
    """An out of a called function as the caller returns it: under the caller's guards,
    with the keys the caller set on the answer (``out = fn(s); out["k"] = 1``)."""
    keys = {**(sub.get("keys") or {}), **(item.get("keys") or {})}
    return {**sub, "guards": item["guards"] + sub["guards"], **({"keys": keys} if keys else {})}


def node_outs(graph: CallGraph, key: Key, decos: list[Deco]) -> list[JSON]:
    """What a node function returns through the decorators around it (`node_target`)."""
    outs = resolved_outs(graph, key)
    for deco in decos:
        wrap = wrapper_of(graph, deco)
        if isinstance(wrap, tuple):
            outs = resolved_outs(graph, wrap[0], wrapped={wrap[1]: outs})
        elif wrap is None:  # a wrapper of another shape: what it returns is not known
            outs = [{"line": graph.functions[key]["line"], "guards": [], "open": True}]
    return outs


def model_keys(graph: CallGraph, target: Target) -> dict[str, str]:
    """The keys LangGraph takes from a returned Pydantic model instance: its fields (every
    one known, or none). A node that returns ``Evidence(goal=...)`` writes ``goal``, not
    ``evidences``."""
    classes = typed_classes(graph.facts)
    found = classes.get(target.qual)
    if found is None or found[2] != "BaseModel" or found[0] != target.path:
        return {}
    fields, complete = class_fields(classes, target.qual)
    return {f["name"]: UNKNOWN for _, f in fields} if complete else {}
