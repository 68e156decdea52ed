"""Functions nothing in the repository names: code that never runs.

A function runs only when something names it: a call, a callback handed on, an import, a
decorator that registers it, or an entry point a config file names (``pyproject.toml``'s
scripts, ``langgraph.json``'s graphs). A function whose name no parsed code reads, no file
imports and no config file mentions is dead code, however safe or unsafe its body: beside a
clone the code runs, the sandbox rule does not count a clone there for or against the
repository.

The test errs towards "named": a method or a nested function counts as named when its
class or enclosing function is (a framework calls the methods it overrides, such as a tool's
``_run``), unless the class has no base class to override (``RepoSandbox.cleanup()`` that
no code calls never runs), a dunder or a function a library's decorator may register always
does, and a
Python file the facts skipped (no trigger words, too large, not parsed) names every word it
holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.walk import repo_bytes

CONFIG_FILES = ("pyproject.toml", "setup.cfg", "langgraph.json")


def _read_names(facts: dict[str, JSON]) -> set[str]:
    """The last part of every name the parsed files read or import."""
    names: set[str] = set()
    for data in facts.values():
        for read in (data.get("refs") or {}).values():
            names |= {name.rsplit(".", 1)[-1] for name in read}
        names |= {name.rsplit(".", 1)[-1] for name in (data.get("imports") or {}).values()}
    return names


def _unparsed_texts(facts: dict[str, JSON], repo: Path | None) -> list[bytes]:
    if repo is None:
        return []
    skipped = [p for p, data in sorted(facts.items()) if "functions" not in data]
    return [text for p in [*skipped, *CONFIG_FILES] if (text := repo_bytes(repo, p))]


def _registered(decorators: list[str], local: set[str]) -> bool:
    """Whether a decorator may register the function (a library's ``@tool``, ``@app.command``):
    any decorator but the repository's own, which the facts show as a relative import or a
    name under one of its modules (``@disk_cache`` from ``.cache`` wraps, it names nothing)."""
    return any(not (name.startswith(".") or name.split(".")[0] in local)
               for name in decorators)


def _naming(data: JSON, parts: list[str]) -> list[str]:
    """The names that name a function: itself, or its class or enclosing function too (a
    framework calls the methods a class overrides), but a method of a class with no base
    class only by its own name."""
    classes = {c.get("name"): c for c in data.get("classes") or []}
    owner = classes.get(parts[-2]) if len(parts) >= 2 else None
    if owner is not None and not [b for b in owner.get("bases") or [] if b != "object"]:
        return parts[-1:]
    return parts


def named_nowhere(facts: dict[str, JSON], keys: Iterable[Key],
                  repo: Path | None) -> set[Key]:
    """The functions of `keys` (``(path, qual)``) that nothing names (see the module)."""
    candidates = {(path, qual) for path, qual in keys if qual and qual != "<module>"}
    if not candidates:
        return set()
    read = _read_names(facts)
    local = {part.removesuffix(".py") for path in facts for part in path.split("/")}
    texts: list[bytes] | None = None
    dead: set[Key] = set()
    for path, qual in sorted(candidates):
        parts = qual.split(".")
        info = (facts.get(path, {}).get("functions") or {}).get(qual) or {}
        if _registered(info.get("decorators") or [], local) or parts[-1].startswith("__") \
                or any(part in read for part in _naming(facts.get(path, {}), parts)):
            continue
        if texts is None:
            texts = _unparsed_texts(facts, repo)
        word = re.compile(rb"\b" + re.escape(parts[-1].encode()) + rb"\b")
        if not any(word.search(text) for text in texts):
            dead.add((path, qual))
    return dead
