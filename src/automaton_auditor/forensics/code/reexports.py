"""Names a graph operation refers to, and the modules a package re-exports them from."""

from __future__ import annotations

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.resolve import module_name


def op_refs(value: object, out: set[str]) -> None:
    """Add to `out` the dotted names (``{"ref": "pkg.mod.name"}``) a graph operation's
    arguments refer to."""
    if isinstance(value, dict):
        for key in ("ref", "each"):
            ref = value.get(key)
            if isinstance(ref, str) and "." in ref:
                out.add(ref.lstrip("."))
        for item in value.values():
            op_refs(item, out)
    elif isinstance(value, list):
        for item in value:
            op_refs(item, out)


def module_suffixes(paths: list[str]) -> dict[str, str]:
    """Each dotted tail of each path's module name (``pkg.mod``, ``mod``) -> the first path
    that has it."""
    found: dict[str, str] = {}
    for path in paths:
        parts = module_name(path).split(".")
        for cut in range(len(parts)):
            found.setdefault(".".join(parts[cut:]), path)
    return found


def reexported_modules(facts: dict[str, JSON]) -> list[str]:
    """Prefilter-skipped modules a graph operation names through a package that re-exports
    the name (``add_node("vision", vision_node)`` with ``from .vision import vision_node`` in
    the package's __init__): the functions of the nodes they hold, parsed on demand."""
    skipped = module_suffixes(sorted(p for p, f in facts.items() if "skipped" in f))
    packages = module_suffixes(sorted(p for p, f in facts.items() if p.endswith("__init__.py")
                               and "skipped" not in f))
    refs: set[str] = set()
    for facts_of in facts.values():
        for op in facts_of.get("ops") or []:
            op_refs([op.get("args"), op.get("kwargs")], refs)
    wanted = set()
    for ref in refs:
        parts = ref.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            package = packages.get(".".join(parts[:cut]))
            exported = (facts[package].get("imports") or {}).get(parts[cut]) if package else None
            if exported:  # ".vision.vision_node": the module is the one named before the name
                hit = skipped.get(".".join(str(exported).lstrip(".").split(".")[:-1]))
                wanted |= {hit} if hit else set()
                break
    return sorted(wanted)
