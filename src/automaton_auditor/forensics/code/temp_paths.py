"""Which hard-coded temporary paths (bandit B108, ruff S108) are paths at all.

Ruff flags every string literal that starts like ``"/tmp"``. A literal the code only
compares a path against is no temporary file: ``path.startswith(("/tmp", "/home"))``,
``if d in {"/tmp", "/var/tmp"}``, or a constant tuple of prefixes that is only looped over
in such tests (``any(p.startswith(x) for x in PREFIXES)``). Such hits are dropped; a literal
the code opens, joins, clones into or passes on stays.
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.source import parse_file

_TESTS = ("startswith", "endswith")


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _parsed(path: str) -> tuple[ast.AST, dict[ast.AST, ast.AST]] | None:
    tree = parse_file(path)
    return None if tree is None else (tree, _parents(tree))


def _tested(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """`node` is only compared against: an operand of a comparison, or the argument of
    ``str.startswith`` / ``str.endswith``."""
    parent = parents.get(node)
    if isinstance(parent, ast.Compare):
        return True
    return (isinstance(parent, ast.Call) and node in parent.args
            and isinstance(parent.func, ast.Attribute) and parent.func.attr in _TESTS)


def _loop_only_tested(node: ast.Name, tree: ast.AST,
                      parents: dict[ast.AST, ast.AST]) -> bool:
    """`node` is what a loop or comprehension runs over, and its loop variable is only
    compared against."""
    parent = parents.get(node)
    if not isinstance(parent, (ast.For, ast.comprehension)) or parent.iter is not node \
            or not isinstance(parent.target, ast.Name):
        return False
    scope = parents.get(parent) if isinstance(parent, ast.comprehension) else parent
    var = parent.target.id
    uses = [n for n in ast.walk(scope or tree) if isinstance(n, ast.Name) and n.id == var
            and isinstance(n.ctx, ast.Load)]
    return bool(uses) and all(_tested(n, parents) for n in uses)


def _name_only_tested(name: str, tree: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, ast.Load)]
    return bool(uses) and all(_tested(n, parents) or _loop_only_tested(n, tree, parents)
                              for n in uses)


def _only_compared(literal: ast.Constant, tree: ast.AST,
                   parents: dict[ast.AST, ast.AST]) -> bool:
    if _tested(literal, parents):
        return True
    group = parents.get(literal)
    if not isinstance(group, (ast.Tuple, ast.Set)) or \
            not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in group.elts):
        return False  # a list may be a command line that writes there
    if _tested(group, parents):
        return True
    owner = parents.get(group)
    targets = owner.targets if isinstance(owner, ast.Assign) else \
        [owner.target] if isinstance(owner, ast.AnnAssign) else []
    return len(targets) == 1 and isinstance(targets[0], ast.Name) and \
        _name_only_tested(targets[0].id, tree, parents)


def used_as_paths(repo: Path | None, diagnostics: list[JSON]) -> list[JSON]:
    """The S108 hits that are temporary paths the code uses, not literals it only compares
    paths against (see the module); each file is parsed once. Unknown (no checkout,
    unparsable) counts as used."""
    if repo is None:
        return list(diagnostics)
    trees: dict[str, tuple[ast.AST, dict[ast.AST, ast.AST]] | None] = {}
    used = []
    for diagnostic in diagnostics:
        path = diagnostic["path"]
        if path not in trees:
            trees[path] = _parsed(str(repo / path))
        parsed = trees[path]
        if parsed is None or _used(diagnostic, *parsed):
            used.append(diagnostic)
    return used


def _used(diagnostic: JSON, tree: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    literals = [n for n in ast.walk(tree) if isinstance(n, ast.Constant)
                and isinstance(n.value, str) and n.lineno == diagnostic["line"]
                and n.value.startswith("/") and n.value in diagnostic["message"]]
    return not literals or not all(_only_compared(n, tree, parents) for n in literals)
