"""The package's layout holds: imports flow one way (cli → service → graph → nodes → analysis
packages → storage → foundation), there is no import cycle (imports inside functions count),
no module reaches into another's private names, modules stay short and every package says
what it owns."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "automaton_auditor"
# Higher layers may import lower ones, never the reverse; equal ranks may not import each
# other unless they are the same layer.
RANKS = {
    "__main__": 10, "cli": 9, "queue": 8.5, "batch": 8, "service": 7, "graph": 6, "nodes": 5,
    "output": 4,
    "judging": 3, "forensics": 3, "storage": 2,
    "rubric": 1, "state": 1, "exits": 1, "text": 0, "retry": 0, "settings": 0,
    "safefile": -1, "containment": -1,
}
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) for every import of ours, at any depth of the file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "automaton_auditor"):
            out.append((str(node.module), [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith("automaton_auditor")]
    return out


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for module, names in _imports(path):
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
            targets += [module] if len(targets) < len(names) or not names else []
            edges[name] |= {t for t in targets if t in MODULES and t != name}
    return edges


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "package"


def test_every_module_has_a_layer() -> None:
    layers = {_layer(m) for m in MODULES} - {"package"}
    assert layers <= set(RANKS), f"unranked top-level modules: {layers - set(RANKS)}"


def test_imports_flow_one_way() -> None:
    upward = []
    for name, targets in _edges().items():
        for target in targets:
            a, b = _layer(name), _layer(target)
            if a == b or "package" in (a, b):
                continue
            if RANKS[a] <= RANKS[b]:
                upward.append(f"{name} -> {target}")
    assert upward == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    item = stack.pop()
                    on_stack.discard(item)
                    component.append(item)
                    if item == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_even_inside_functions() -> None:
    assert _cycles(_edges()) == []


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    # the check above must be able to fail
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_no_module_imports_another_modules_private_names() -> None:
    private = [f"{name}: from {module} import {n}"
               for name, path in MODULES.items() for module, names in _imports(path)
               for n in names if n.startswith("_") and not n.startswith("__")]
    assert private == []


def test_no_module_uses_another_modules_private_attributes() -> None:
    offenders = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {a.asname or a.name for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom)
                   and (node.module or "").startswith("automaton_auditor")
                   for a in node.names if f"{node.module}.{a.name}" in MODULES}
        offenders += [f"{name}:{node.lineno} {node.value.id}.{node.attr}"
                      for node in ast.walk(tree)
                      if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                      and node.value.id in aliases and node.attr.startswith("_")
                      and not node.attr.startswith("__")]
    assert offenders == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_is_short(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines"


@pytest.mark.parametrize("name", sorted(n for n, p in MODULES.items() if p.name == "__init__.py"))
def test_every_package_says_what_it_owns(name: str) -> None:
    doc = ast.get_docstring(ast.parse(MODULES[name].read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 8, f"{name} has no docstring saying what it owns"
