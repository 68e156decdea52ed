"""Cross-file resolution: constants, functions and builders named in other modules."""

from __future__ import annotations

from typing import Any

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.loop_items import is_item, render
from automaton_auditor.forensics.tails import Tails


def module_name(path: str) -> str:
    """``src/pkg/nodes.py`` -> ``src.pkg.nodes`` (``__init__`` names its package)."""
    stem = path[:-3] if path.endswith(".py") else path
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


class Resolver:
    """Looks up constants and functions by possibly-qualified names across the repo."""

    def __init__(self, facts: dict[str, JSON]) -> None:
        self.facts = facts
        self.modules = {path: module_name(path) for path in facts}
        self._tails = Tails(((p, m) for p, m in self.modules.items()), ".")
        self.functions: dict[str, list[tuple[str, str, JSON]]] = {}
        for path in sorted(facts):
            for qual, info in (facts[path].get("functions") or {}).items():
                tail = qual.rsplit(".", 1)[-1]
                self.functions.setdefault(tail, []).append((path, qual, info))

    def files_for(self, module: str, path: str) -> list[str]:
        """The files of the repository a (possibly relative) module name can mean from
        `path`."""
        module = module.lstrip(".")
        if not module:
            return [path]
        same_dir = path.rsplit("/", 1)[0].replace("/", ".") if "/" in path else ""
        # indexed: scanning every module per look-up is quadratic in the repository's size
        found = {*self._tails.exact(module), *self._tails.longer(module)}
        if same_dir:
            found.update(self._tails.exact(f"{same_dir}.{module}"))
        return sorted(found)

    def const(self, ref: str, path: str) -> Any:
        """The constant a name refers to from `path`, or None."""
        local = (self.facts.get(path, {}).get("consts") or {})
        if ref in local:
            return local[ref]
        parts = ref.split(".")
        for k in (1, 2):
            if len(parts) <= k:
                continue
            attr, module = ".".join(parts[-k:]), ".".join(parts[:-k])
            for candidate in self.files_for(module, path):
                consts = self.facts[candidate].get("consts") or {}
                if attr in consts:
                    return consts[attr]
        return None

    def value(self, value: Any, path: str) -> Any:
        """Replace ``{"ref": name}`` by the constant it names, recursively."""
        if isinstance(value, list):
            return [self.value(v, path) for v in value]
        if isinstance(value, dict) and "ref" in value and value["ref"]:
            found = self.const(str(value["ref"]), path)
            return found if found is not None else value
        return value

    def name(self, value: Any, path: str) -> str | None:
        """A node name: a string, a resolved constant, else the referenced name's tail."""
        value = self.value(value, path)
        if isinstance(value, str):
            return value
        if is_item(value):  # a copy of a loop over run-time data (`loop_items`)
            return render(value)
        if isinstance(value, dict) and value.get("ref"):
            return str(value["ref"]).rsplit(".", 1)[-1]
        return None

    def function(self, ref: str | None, path: str) -> tuple[str, JSON] | None:
        """The function a (possibly dotted) name refers to, preferring the same file."""
        if not ref:
            return None
        tail = ref.rsplit(".", 1)[-1]
        candidates = self.functions.get(tail, [])
        for cand_path, _qual, info in candidates:
            if cand_path == path:
                return cand_path, info
        module = ref.rsplit(".", 1)[0] if "." in ref else ""
        for cand_path, _qual, info in candidates:
            if module and self.modules[cand_path].endswith(module.lstrip(".")):
                return cand_path, info
        return (candidates[0][0], candidates[0][2]) if len(candidates) == 1 else None
