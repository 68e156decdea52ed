"""The destinations of a LangGraph router (the callable given to add_conditional_edges):
node names it returns, ``Send`` targets it (or a helper it calls) builds, lists it returns,
and its ``-> Literal[...]`` annotation, which LangGraph reads when there is no path map."""

from __future__ import annotations

from typing import Any

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.resolve import Resolver

END = "__end__"


def chooses(router: Any, path: str, res: Resolver) -> bool:
    """Does the router pick a branch at run time (two or more outcomes, or a value read from
    the state), rather than return one fixed list of nodes to run at once?"""
    if isinstance(router, dict) and "lambda" in router:
        return bool(router["lambda"].get("chooses"))
    found = res.function(str(router["ref"]), path) \
        if isinstance(router, dict) and router.get("ref") else None
    return found is not None and int(found[1].get("outcomes", 0)) >= 2


def targets_of(router: Any, path_map: Any, path: str, res: Resolver
             ) -> tuple[list[str], set[str], set[str], bool]:
    """(targets, ``Send`` targets, names of a returned list, destinations not determined)
    of one router. Without a path map, LangGraph takes the destinations from the router's
    ``-> Literal[...]`` annotation when it has one, else from what it returns."""
    sends: set[str] = set()
    many: set[str] = set()
    router_targets: list[str] = []
    unknown = False
    if isinstance(router, dict) and "lambda" in router:
        lam = router["lambda"]
        sends = {n for n in (res.name(s, path) for s in lam["sends"]) if n}
        many = {n for n in (res.name(s, path) for s in lam.get("many") or []) if n}
        router_targets = [*lam["strings"], *sends]
    elif isinstance(router, dict) and router.get("ref"):
        sends, many, returns, unknown = _router_targets(str(router["ref"]), path, res, 0)
        found = res.function(str(router["ref"]), path)
        literal = [str(t) for t in (found[1].get("literal") or [])] if found else []
        router_targets = [*sends, *(literal or returns)]
        unknown = unknown and not literal
    mapped = res.value(path_map, path)
    if isinstance(mapped, dict) and "map" in mapped:
        explicit = [res.name(v, path) for _k, v in mapped["map"]]
    elif isinstance(mapped, list):
        explicit = [res.name(v, path) for v in mapped]
    else:
        explicit = []
    chosen = [t for t in explicit if t] or router_targets
    chosen += sorted(sends - set(chosen))
    return sorted(set(chosen)), sends, many, unknown and not any(explicit)


def _router_targets(ref: str, path: str, res: Resolver, depth: int
                    ) -> tuple[set[str], set[str], list[str], bool]:
    """Send targets, names of a returned list, returned node names of a router and
    whether some return is not determined, following ``return helper(...)`` (also through
    a variable: ``out = helper(state); return out``) a few calls deep."""
    found = res.function(ref, path)
    if found is None or depth > 3:
        return set(), set(), [], True
    fpath, info = found
    sends = _function_sends(info, fpath, res)
    # ``return ["a", "b"]`` or a list built up with append: LangGraph runs them all at once
    many = {str(t) for out in info.get("outs") or [] if out.get("many")
            for t in out.get("targets") or [] if t != END}
    names: list[str] = []
    unknown = False
    loops = info.get("loops") or {}
    for item in info.get("returns") or []:
        if isinstance(item, dict) and item.get("call"):
            more_sends, more_many, more, more_unknown = _router_targets(
                str(item["call"]), fpath, res, depth + 1)
            sends |= more_sends
            many |= more_many
            names += more
            unknown = unknown or more_unknown
        elif isinstance(item, dict) and item.get("open"):
            unknown = True
        elif isinstance(item, dict) and item.get("ref") in loops:
            # ``for name in ["a", "b"]: ... return name``
            bound = res.value(loops[item["ref"]], fpath)
            names += [b for b in bound if isinstance(b, str)] if isinstance(bound, list) else []
            unknown = unknown or not isinstance(bound, list)
        else:
            name = res.name(item, fpath)
            if name:
                names.append(name)
    return sends, many, names, unknown


def _function_sends(info: JSON, path: str, res: Resolver) -> set[str]:
    names: set[str] = set()
    loops = info.get("loops") or {}
    for send in info.get("sends") or []:
        if isinstance(send, str):
            names.add(send)
            continue
        ref = send.get("ref") if isinstance(send, dict) else None
        bound = res.value(loops.get(ref), path) if ref in loops else None
        if isinstance(bound, list):
            names.update(b for b in bound if isinstance(b, str))
        elif ref:
            value = res.name({"ref": ref}, path)
            if value:
                names.add(value)
    return names


def fixed_outs(edges: dict[tuple[str, str], JSON], source: str, info: JSON) -> list[JSON]:
    """The one answer of a router that chooses nothing and is no function of the
    repository (``lambda _: ["a", "b"]``: every name at once; ``lambda s: "next"``): it
    always returns its targets (`info`: the router's entry in ``Topology.conditional``,
    `edges`: the topology's). [] for anything else (its answer is not determined)."""
    targets = list(info.get("targets") or [])
    if info.get("chooses") or info.get("router") or info.get("map") or not targets:
        return []
    line = {"line": info["op"].get("line", 0), "guards": []}
    kinds = {edges.get((source, t), {}).get("kind") for t in targets}
    if kinds == {"parallel"}:
        return [{**line, "targets": targets, "many": True}]
    return [{**line, "targets": targets}] if len(targets) == 1 and not info.get("sends") \
        else []
