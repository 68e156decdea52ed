"""Where the audited repository defines things: modules, functions, classes and methods.

Functions are keyed by ``(path, qualified name)`` (``("src/tools/git.py", "Repo.clone")``).
A dotted name is looked up through the files that may hold its module (absolute and relative
imports, a package's ``__init__`` re-exporting a name) and a method also in the base classes.
"""

from __future__ import annotations

from typing import NamedTuple

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.resolve import module_name
from automaton_auditor.forensics.tails import Tails

Key = tuple[str, str]  # (path, qualified function name)


class Target(NamedTuple):
    """What a call resolves to: a function, or a class (its constructor)."""

    path: str
    qual: str
    is_class: bool = False


class Definitions:
    """The repository's modules, functions and classes, and lookups of names among them."""

    def __init__(self, facts: dict[str, JSON]) -> None:
        self.facts = facts
        self.modules = {p: module_name(p) for p in sorted(facts)}
        self._tails = Tails(((p, m) for p, m in self.modules.items()), ".")
        self.functions: dict[Key, JSON] = {
            (p, q): info for p in sorted(facts)
            for q, info in sorted((facts[p].get("functions") or {}).items())}
        self.classes: dict[Key, JSON] = {
            (p, c["name"]): c for p in sorted(facts) for c in facts[p].get("classes") or []}
        self._files: dict[tuple[str, str], tuple[str, ...]] = {}

    def module_files(self, module: str, from_path: str) -> tuple[str, ...]:
        """Files that may hold `module` imported from `from_path` (relative imports too)."""
        found = self._files.get((module, from_path))
        if found is None:
            found = self._files[(module, from_path)] = self._find_files(module, from_path)
        return found

    def _find_files(self, module: str, from_path: str) -> tuple[str, ...]:
        level = len(module) - len(module.lstrip("."))
        name = module.lstrip(".")
        if level:
            base = self.modules.get(from_path, "").split(".")
            # ``from . import x`` in pkg/a.py names pkg; a package's __init__ names itself
            keep = len(base) - level + (1 if from_path.endswith("__init__.py") else 0)
            name = ".".join([*base[:max(keep, 0)], *([name] if name else [])])
        if not name:
            return ()
        # An index, not a scan of every module: one scan per import is quadratic
        # (12,000 modules took minutes).
        exact = tuple(self._tails.exact(name))
        if exact:
            return exact
        suffix = min(self._tails.longer(name), key=lambda p: (p.count("/"), p), default=None)
        return (suffix,) if suffix is not None else ()

    def _symbol(self, path: str, qual: str) -> Target | None:
        if (path, qual) in self.functions:
            return Target(path, qual)
        if (path, qual) in self.classes:
            return Target(path, qual, True)
        return None

    def _dotted(self, path: str, full: str, depth: int = 0) -> Target | None:
        """``pkg.mod.func`` / ``pkg.mod.Cls.method`` / ``.mod.func`` to a definition, also
        through a package that re-exports it (``from pkg.mod import func`` in pkg/__init__)."""
        lead = len(full) - len(full.lstrip("."))
        parts = full.lstrip(".").split(".")
        for cut in range(len(parts) - 1, -1, -1):
            module = "." * lead + ".".join(parts[:cut])
            files = self.module_files(module, path) if module.strip(".") or lead else ()
            for file in files:
                hit = self._symbol(file, ".".join(parts[cut:]))
                if hit is not None:
                    return hit
                imported = (self.facts[file].get("imports") or {}).get(parts[cut]) \
                    if cut < len(parts) else None
                if imported and depth < 3 and imported != full:
                    found = self._dotted(file, ".".join([imported, *parts[cut + 1:]]),
                                         depth + 1)
                    if found is not None:
                        return found
        return None

    def inline_lambda(self, path: str, name: str) -> Key | None:
        """The function an inline lambda of `path` is recorded as (`lambdas.inline_name`:
        named where it is written, inside whichever function holds it)."""
        written = self.facts.get(path, {}).get("functions") or {}
        return next(((path, q) for q in written if q.rpartition(".")[2] == name), None)

    def class_of(self, key: Key) -> str | None:
        """The class a method belongs to (the longest class-name prefix of its name)."""
        path, qual = key
        parts = qual.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            if (path, ".".join(parts[:cut])) in self.classes:
                return ".".join(parts[:cut])
        return None

    def method(self, path: str, cls: str, name: str, depth: int = 0) -> Target | None:
        """`name` defined on class `cls` of `path` or, failing that, on its bases."""
        hit = self._symbol(path, f"{cls}.{name}")
        if hit is not None or depth > 4:
            return hit
        for base in (self.classes.get((path, cls)) or {}).get("bases") or []:
            owner = self.class_target(path, base)
            if owner is not None:
                found = self.method(owner.path, owner.qual, name, depth + 1)
                if found is not None:
                    return found
        return None

    def class_target(self, path: str, name: str) -> Target | None:
        """The repository class a (resolved) name refers to from `path`."""
        hit = self._symbol(path, name)
        if hit is not None and hit.is_class:
            return hit
        found = self._dotted(path, name) if "." in name else None
        return found if found is not None and found.is_class else None

    def applied(self, path: str, ref: str) -> tuple[str, JSON] | None:
        """(file, ``{"fn", "decos"}``) of a module-level ``name = deco(fn)`` that `ref`
        written in `path` names (`walk.module_applied`), here or imported."""
        found = self.module_entry(path, ref, "applied")
        return (found[0], found[1]) if found and isinstance(found[1], dict) else None

    def module_entry(self, path: str, ref: str, field: str) -> tuple[str, object] | None:
        """(file, entry) of the module-level name `ref` written in `path` names, here or
        imported, in the file facts' `field` (``applied``, ``objects``)."""
        head, _, rest = ref.partition(".")
        imports = self.facts.get(path, {}).get("imports") or {}
        places = [(path, ref)] if not rest else []
        # a name through the file's imports, or already written in full (``pkg.mod.name``)
        full = imports[head] + (f".{rest}" if rest else "") if head in imports else \
            ref if rest else ""
        if full:
            module, _, name = full.rpartition(".")
            places += [(f, name) for f in self.module_files(module, path)]
        for file, name in places:
            entry = (self.facts.get(file, {}).get(field) or {}).get(name)
            if entry is not None:
                return file, entry
        return None
