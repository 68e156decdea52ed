"""Which hard-coded temporary paths (bandit B108, ruff S108) are paths at all.

Ruff flags every string literal that starts like ``"/tmp"``. A literal the code only
compares a path against is no temporary file: ``path.startswith(("/tmp", "/home"))``,
``if d in {"/tmp", "/var/tmp"}``, or a constant tuple of prefixes that is only looped over
in such tests (``any(p.startswith(x) for x in PREFIXES)``). Such hits are dropped; a literal
the code opens, joins, clones into or passes on stays.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON, dotted, function_defs, resolve
from automaton_auditor.forensics.code.facts import call_finding
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.state import Finding

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


TEMP_ROOTS = ("tempfile.gettempdir", "tempfile.gettempdirb")
TEMP_LITERAL = re.compile(r"(/tmp|/var/tmp|/dev/shm)(/|$)")


def fixed_temp_line(repo: Path | None, path: str, line: int, imports: dict[str, str]) -> int:
    """For the clone call at `line` of `path` (whose destination no fresh temp dir was
    proved for): the line that puts its destination at a fixed path under the system temp
    folder (``Path(tempfile.gettempdir()) / "sandbox"``, ``"/tmp/repo"``), followed through
    the function's and the module's assignments; 0 when none does. Such a path is not the
    working directory, but it is predictable, shared between runs and kept (bandit B108)."""
    tree = parse_file(str(repo / path)) if repo is not None else None
    if tree is None:
        return 0
    funcs = [n for _q, n in function_defs(tree) if n.lineno <= line <= (n.end_lineno or 0)]
    scope: ast.AST = max(funcs, key=lambda n: n.lineno) if funcs else tree
    calls = [n for n in ast.walk(scope) if isinstance(n, ast.Call) and n.lineno == line]
    values: list[ast.AST] = [a for c in calls for a in _destinations(c)]
    # the function's assignments, and the module's own (``SANDBOX = Path(...) / "x"``)
    binds = [(dotted(t), n.value) for n in [*ast.walk(scope), *tree.body]
             if isinstance(n, ast.Assign) for t in n.targets]
    seen: set[int] = set()
    while values:
        value = values.pop()
        if id(value) in seen or len(seen) > 200:
            continue
        seen.add(id(value))
        for node in ast.walk(value):
            if _temp_root(node, imports):
                return int(getattr(node, "lineno", line))
            name = dotted(node) if isinstance(node, ast.Name | ast.Attribute) else None
            values += [v for target, v in binds if name and target == name]
    return 0


def _destinations(call: ast.Call) -> list[ast.AST]:
    """What may name a clone's destination: all but GitPython's first argument (the URL)."""
    library = (dotted(call.func) or "").endswith("clone_from")
    return [*(call.args[1:] if library else call.args), *(k.value for k in call.keywords)]


def _temp_root(node: ast.AST, imports: dict[str, str]) -> bool:
    """``tempfile.gettempdir()`` or a string literal under a temp folder."""
    if isinstance(node, ast.Call):
        return (resolve(dotted(node.func), imports) or "") in TEMP_ROOTS
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and \
        bool(TEMP_LITERAL.match(node.value))


def temp_root_finding(fixed: list[tuple[str, JSON]], proved: bool,
                      repo: Path | None) -> Finding:
    """``safety.clone_temp_root``: clones whose destination is a fixed path under the system
    temp folder (`fixed_temp_line`; each call with the line that puts it there, ``root``).
    Between a fresh temporary directory and the working directory: partial credit (a weak
    success fact) while no clone is sandboxed, context beside a sandboxed one."""
    where = "\n".join(f"{p}:{c['root']}: {line_at(repo, p, int(c['root'])).split(': ', 1)[-1]}"
                      for p, c in fixed[:5])
    text = (f"{len(fixed)} clone call(s) write into a fixed path under the system temp folder "
            "(tempfile.gettempdir() or a /tmp literal): not the working directory, but a "
            "predictable directory shared between runs and never made fresh (bandit B108)."
            if fixed else "No clone writes into a fixed path under the system temp folder.")
    finding = call_finding(
        "safety.clone_temp_root", "Clone goes under the system temp folder, not the working "
        "directory", bool(fixed), "success" if fixed and not proved else "neutral", fixed,
        text, confidence=0.5, roots=[f"{p}:{c['root']}" for p, c in fixed[:20]])
    if where:
        finding = finding.model_copy(update={"content": finding.content + "\n" + where
                                             if finding.content else where})
    return finding
