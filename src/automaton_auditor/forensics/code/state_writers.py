"""State keys nothing ever gives a value: declared in the state schema, never written.

A rule gated on ``state.get("synthesis_rules")`` fires only when something puts a value under
that key: a node's return, a store into the state, or the graph's input. The execution model
(`execution`) knows what the nodes it resolves return; when a node's function cannot be
resolved (a bound method of an instance built elsewhere, a module that does not exist) it
knows nothing. This module answers the narrower question across the repository's code: a
required field of the state (no default of its own) is never written when

- the graph's input is read: every ``.invoke``/``.ainvoke``/``.stream``/``.astream`` call given
  a dict literal (directly or through a local name) that names at least one state key is
  found, at least one such call exists, and none unpacks another mapping (``**config``);
- no code of the product (tests aside) names the key other than to read it: no dict key,
  keyword argument, subscript or attribute store, ``setattr``, nor the string anywhere else
  (a list of keys a loop stores under counts as a writer);
- no data file the code could load (``.json``, ``.yaml``, ``.yml``, ``.toml``) holds the name.

Whatever cannot be read leaves the key possibly written.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, TEST_PATH
from automaton_auditor.forensics.code.execution import Model
from automaton_auditor.forensics.code.gates import GateReader
from automaton_auditor.forensics.code.source import parse_file
from automaton_auditor.forensics.code.state_schema import class_fields, typed_classes
from automaton_auditor.safefile import UnsafeFile, open_regular

INVOKES = frozenset({"invoke", "ainvoke", "stream", "astream"})
DATA_FILES = (".json", ".yaml", ".yml", ".toml")
MAX_DATA_BYTES = 2_000_000
MAX_DATA_FILES = 500
SKIPPED = frozenset({"node_modules", "venv", "site-packages", "__pycache__"})


def _reads(tree: ast.AST) -> set[int]:
    """ids of the string constants that only name a key being read: ``x.get("k")``,
    ``x["k"]`` loaded, ``getattr(x, "k")``, ``"k" in x``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else (
                node.func.id if isinstance(node.func, ast.Name) else "")
            if name == "get":
                out.add(id(node.args[0]))
            elif name in ("getattr", "hasattr") and len(node.args) > 1:
                out.add(id(node.args[1]))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            out.add(id(node.slice))
        elif isinstance(node, ast.Compare) and all(
                isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            out.add(id(node.left))
    return out


def _writes(tree: ast.AST, keys: set[str]) -> set[str]:
    """The keys of `keys` that `tree` may write (see the module docstring)."""
    reads = _reads(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in keys and id(node) not in reads:
            found.add(str(node.value))  # a dict key, a stored subscript, a key in a list
        elif isinstance(node, ast.keyword) and node.arg in keys:
            found.add(node.arg)
        elif isinstance(node, ast.Attribute) and node.attr in keys and \
                isinstance(node.ctx, ast.Store):
            found.add(node.attr)
    return found


def _invokes(node: ast.AST) -> bool:
    """``x.invoke(arg, ...)`` or another call that runs a graph on its first argument."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in INVOKES and bool(node.args))


class _Scope:
    """One function (or the module): what each local name is assigned anywhere inside it,
    and the invoke-like calls inside it (nested functions' included)."""

    def __init__(self) -> None:
        self.bound: dict[str, list[ast.expr]] = {}
        self.calls: list[ast.Call] = []


def _inputs(tree: ast.Module) -> Iterator[ast.expr | None]:
    """What each invoke-like call of the file is given first, once per scope enclosing the
    call, a local name read through that scope's single assignment (None: nothing)."""
    scopes: list[_Scope] = [_Scope()]
    # one iterative walk (hostile nesting cannot exhaust the stack), each node with the
    # scopes enclosing it
    todo: list[tuple[ast.AST, tuple[_Scope, ...]]] = [(tree, (scopes[0],))]
    while todo:
        node, enclosing = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scopes.append(_Scope())
            enclosing = (*enclosing, scopes[-1])
        elif isinstance(node, ast.Assign):
            for target in (t for t in node.targets if isinstance(t, ast.Name)):
                for scope in enclosing:
                    scope.bound.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.Call) and _invokes(node):
            for scope in enclosing:
                scope.calls.append(node)
        todo.extend((child, enclosing) for child in ast.iter_child_nodes(node))
    for scope in scopes:
        for call in scope.calls:
            given = call.args[0]
            if isinstance(given, ast.Name) and len(scope.bound.get(given.id, [])) == 1:
                given = scope.bound[given.id][0]
            yield given


def _graph_inputs(trees: list[ast.Module], channels: set[str]) -> list[ast.Dict] | None:
    """The dict literals handed to the graph (a call naming a state key), None when one
    unpacks another mapping or none is found."""
    found: list[ast.Dict] = []
    for tree in trees:
        for given in _inputs(tree):
            if not isinstance(given, ast.Dict):
                continue
            names = {k.value for k in given.keys if isinstance(k, ast.Constant)}
            if not names & channels:
                continue  # a prompt's variables, not the graph's state
            if any(k is None for k in given.keys):
                return None
            found.append(given)
    return found or None


def _in_data_files(repo: Path, keys: set[str]) -> set[str]:
    """The keys a data file of the repository names (hidden and vendored folders aside)."""
    out: set[str] = set()
    seen = 0
    for folder, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED]
        for name in names:
            path = os.path.join(folder, name)
            if not name.endswith(DATA_FILES) or TEST_PATH.search(os.path.relpath(path, repo)):
                continue
            seen += 1
            if seen > MAX_DATA_FILES:
                return set(keys)  # too many to read: any may carry the key
            try:  # the repository's own regular file, never a link out of it, read bounded
                with os.fdopen(open_regular(Path(path), repo), "rb") as handle:
                    text = handle.read(MAX_DATA_BYTES).decode("utf-8", "replace")
            except (OSError, UnsafeFile):
                return set(keys)
            out |= {k for k in keys if k in text}
    return out


def product_trees(repo: Path, facts: dict[str, JSON]) -> list[ast.Module]:
    """The parsed product files of the repository (tests aside)."""
    return [t for p in sorted(facts) if "error" not in facts[p] and not TEST_PATH.search(p)
            if (t := parse_file(str(repo / p))) is not None]


def never_written(repo: Path | None, facts: dict[str, JSON], fields: list[JSON],
                  channels: set[str]) -> set[str]:
    """The required `fields` of the state (names in `channels`) that nothing ever writes
    (see the module docstring); empty when the graph's input cannot be read."""
    keys = {str(f["name"]) for f in fields if f.get("required") and f["name"] in channels}
    if repo is None or not keys:
        return set()
    if _graph_inputs(product_trees(repo, facts), channels) is None:
        return set()
    written = set().union(*(_writes(t, keys) for t in product_trees(repo, facts)))
    return keys - written - _in_data_files(repo, keys)


def _empty(value: ast.expr) -> bool:
    """``None``, ``""``, ``0``, ``False``, ``[]``, ``{}``, ``()``: a literal with nothing in it."""
    if isinstance(value, ast.Constant):
        return not value.value
    return isinstance(value, ast.List | ast.Tuple | ast.Set | ast.Dict) and not (
        value.keys if isinstance(value, ast.Dict) else value.elts)


def input_given(repo: Path | None, facts: dict[str, JSON], channels: set[str]) -> set[str]:
    """The state keys every graph input found gives a value that may be usable (the dict
    literals handed to ``invoke``-like calls, see the module docstring; not ``None`` nor an
    empty literal); none when they cannot be read."""
    if repo is None:
        return set()
    given = _graph_inputs(product_trees(repo, facts), channels) or []
    # a key given None or an empty literal holds no usable value
    named = [{str(k.value) for k, v in zip(d.keys, d.values, strict=True)
              if isinstance(k, ast.Constant) and not _empty(v)} for d in given]
    return set.intersection(*named) & channels if named else set()


def gate_reader(graph: CallGraph, facts: dict[str, JSON], model: Model | None,
                scope: list[Key], roots: list[Key], repo: Path | None) -> GateReader:
    """The gate reader over the state keys that can hold a value: the schema's keys but those
    nothing writes (none when the keys are not all known). The graph's node functions, and
    the synthesis node's (`roots`), receive the state."""
    if model is None:
        return GateReader(graph, scope, None, set())
    nodes = {n.key for n in model.nodes.values() if n.key is not None} | set(roots)
    if not model.complete:
        return GateReader(graph, scope, None, nodes)
    fields = [f for _p, f in class_fields(typed_classes(facts),
                                          model.topo.builder.get("state"))[0]]
    channels = set(model.channels)
    return GateReader(graph, scope, channels, nodes,
                      lambda: never_written(repo, facts, fields, channels))
