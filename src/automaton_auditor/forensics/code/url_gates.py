"""A test of the repository URL that an earlier graph node makes, and the route that stops
the run before the clone when it fails.

A clone function need not test the URL itself: a node that runs first may. Such a check
counts only when the code shows all of this:

- the graph node that clones (whose function reaches the clone) is given the URL from a
  state key (the clone's argument is built from ``state["k"]``);
- another node lies on every path from START to it (it always runs first) and reads that
  key, and its function tests the value (`url_checks.value_tests`: a prefix test, a
  pattern, a parse, a membership test or a checker) in the test of an ``if``;
- a branch of that ``if`` stops the run: it raises (outside any ``try`` of the node), or it
  records an error under a state key the node returns (``errors.append(...)`` of a local
  returned as ``{"errors": errors}``, or ``return {"error": "..."}``) and, with that key so
  set, no route leads to the cloning node: each router return that leads towards it needs
  the key the other way (``if state.get("errors"): return END`` before ``return
  ["RepoInvestigator"]``). A router whose returns are not known lets every route through.

The check is quoted with the route that stops the run, and said for what it is: a prefix
test keeps out only what does not begin with the prefix (no host or pattern checked).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, function_defs, str_value
from automaton_auditor.forensics.code.execution import state_param, state_reads
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.guards import FALSY, NO_ITEM, state_read
from automaton_auditor.forensics.code.node_returns import resolved_outs
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.topology import START, Topology
from automaton_auditor.forensics.code.url_checks import test_kind, value_tests

ADDERS = frozenset({"append", "extend", "add", "insert", "update"})


class Gate(NamedTuple):
    """A URL check of an earlier node that stops the run before the clone's node."""

    clone_node: str
    check_node: str
    kind: str  # `url_checks.test_kind`
    quotes: list[str]  # the test, then what stops the run (a raise, or a record and a route)
    prefix: str  # the literal a required prefix test needs ("" for any other test)
    raised: bool  # the run stops by the raise quoted second, not by a route


def upstream_gates(clones: list[tuple[str, JSON]], repo: Path | None, graph: CallGraph,
                   main: Topology | None) -> dict[str, Gate | None]:
    """Each graph node of `main` whose function reaches a clone -> the check of an earlier
    node that stops the run before it on a bad URL (None: none shown)."""
    if main is None or main.custom is not None or repo is None or not clones:
        return {}
    targets = {(p, str(c["func"])) for p, c in clones}
    funcs = {name: key for name, info in sorted(main.nodes.items())
             if (key := graph.node_function(info)) is not None}
    cloning = {name: key for name, key in funcs.items()
               if set(graph.reachable([key])) & targets}
    out: dict[str, Gate | None] = {}
    for node, key in cloning.items():
        urls = _url_keys(graph, key, targets)
        out[node] = next((g for name, other in funcs.items() if name not in cloning
                          and urls & set(state_reads(graph, other))
                          and _before_every(main, name, node)
                          for g in _gates(graph, repo, main, (name, other), node, urls)), None)
    return out


def _url_keys(graph: CallGraph, key: Key, targets: set[Key]) -> set[str]:
    """State keys the node function `key` reads and hands, as part of an argument, to the
    call that leads to a clone."""
    reads = set(state_reads(graph, key))
    found: set[str] = set()
    for site in graph.sites(key):
        target = graph.resolve(key, site)
        callee = graph.function_key(target) if target is not None else None
        if callee is None or not set(graph.reachable([callee])) & targets:
            continue
        atoms = [a for arg in [*site.get("args", []), *(site.get("kw") or {}).values()]
                 for a in arg]
        found |= {a[2:] for a in graph.sources(key, atoms) if a.startswith("s:")} & reads
    return found


def _before_every(main: Topology, check: str, node: str) -> bool:
    """`check` lies on every path from START to `node`."""
    return not _reaches({e for e in main.taken() if check not in e}, START, node)


def _gates(graph: CallGraph, repo: Path, main: Topology, check: tuple[str, Key], node: str,
           urls: set[str]) -> list[Gate]:
    """The checks of `check`'s function of a key of `urls` that stop the run before
    `node`."""
    name, key = check
    tree = parse_file(str(repo / key[0]))
    func = next((f for q, f in function_defs(tree) if q == key[1]), None) if tree else None
    state = state_param(graph, key)
    if tree is None or func is None or state is None:
        return []
    given = _bound(func, state, urls)
    found: list[Gate] = []
    for test, guards in value_tests(func, given, tree):
        for guard in guards:
            if not isinstance(guard, ast.If):
                continue
            for branch, in_else in ((guard.body, False), (guard.orelse, True)):
                raised = _raises(func, guard, branch, key[0], repo)
                stop = raised or _routed(graph, repo, main, (name, node),
                                         [(key[0], *r) for r in _records(func, branch)])
                if stop:
                    quotes = [line_at(repo, key[0], test.lineno), *stop]
                    found.append(Gate(node, name, test_kind(test), quotes,
                                      _prefix(test, guard, in_else), bool(raised)))
    return found


def _bound(func: ast.AST, state: str, keys: set[str]) -> set[str]:
    """Names standing for the state's value under `keys`: ``state.k``, and locals bound to
    a read of it or to an expression of such a local (``url = state["k"].strip()``)."""
    names = {f"{state}.{k}" for k in keys}
    binds = [(t.id, n.value) for n in ast.walk(func) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)]
    for _ in range(3):
        more = {t for t, value in binds if any(
            (isinstance(sub, ast.expr) and state_read(sub, state)[0] in keys)
            or (isinstance(sub, ast.Name) and sub.id in names) for sub in ast.walk(value))}
        if not more - names:
            break
        names |= more
    return names


def _raises(func: ast.AST, guard: ast.If, branch: list[ast.stmt], path: str,
            repo: Path) -> list[str]:
    """The quoted raise of `branch` when the node lets it out (no ``try`` of the node
    around the ``if``): the run ends there."""
    inside = any(isinstance(t, ast.Try) and t.body and t.body[0].lineno <= guard.lineno
                 <= (t.body[-1].end_lineno or 0) for t in ast.walk(func))
    raised = [n for n in own_nodes(branch) if isinstance(n, ast.Raise)]
    return [line_at(repo, path, raised[0].lineno)] if raised and not inside else []


def _records(func: ast.AST, branch: list[ast.stmt]) -> list[tuple[str, bool, int]]:
    """(key, whether its value is truthy, line) of each state key `branch` sets: a dict it
    returns, or a local it adds to (``errors.append(...)``) that the function returns
    under a key (``return {"errors": errors}``)."""
    found: list[tuple[str, bool, int]] = []
    grown: dict[str, int] = {}
    for n in own_nodes(branch):
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Dict):
            found += [(k, _truthy(v), n.lineno) for k, v in _items(n.value)]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(
                n.func.value, ast.Name) and n.func.attr in ADDERS:
            grown.setdefault(n.func.value.id, n.lineno)
    for made in (n.value for n in ast.walk(func) if isinstance(n, ast.Return)):
        found += [(k, True, grown[v.id]) for k, v in (
            _items(made) if isinstance(made, ast.Dict) else [])
            if isinstance(v, ast.Name) and v.id in grown]
    return found


def _items(node: ast.Dict) -> list[tuple[str, ast.expr]]:
    return [(k, v) for key, v in zip(node.keys, node.values, strict=True)
            if key is not None and (k := str_value(key))]


def _truthy(value: ast.expr) -> bool:
    """Whether a returned value is surely truthy (a non-empty literal, a formatted text)."""
    if isinstance(value, ast.Constant):
        return bool(value.value)
    return isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.List | ast.Tuple | ast.Set) and bool(value.elts))


def _routed(graph: CallGraph, repo: Path, main: Topology, nodes: tuple[str, str],
            records: list[tuple[str, str, bool, int]]) -> list[str]:
    """For the first record (path, key, truthy, line) after which no route from the
    checking node leads to the cloning node: the quoted record and the routers' reads of
    its key."""
    check, node = nodes
    for path, key, truthy, line in records:
        if not truthy:
            continue  # a route needing the key set would be cut by an empty value: not read
        allowed, reads = _routes_with(graph, main, key)
        if reads and not _reaches(allowed, check, node):
            return [line_at(repo, path, line), *(line_at(repo, p, n) for p, n in reads)]
    return []


def _routes_with(graph: CallGraph, main: Topology, key: str
                 ) -> tuple[set[tuple[str, str]], list[tuple[str, int]]]:
    """The edges a run may take once `key` holds a truthy value, and where a router that
    turns a route away on it reads the key and returns when it is set."""
    taken = main.taken()
    allowed = {e for e, info in taken.items()
               if info["kind"] == "static" or e[0] not in main.conditional}
    reads: list[tuple[str, int]] = []
    for src, first in main.conditional.items():
        for info in first.get("routers") or [first]:
            fn = graph.node_function(info, "router")
            outs = resolved_outs(graph, fn) if fn else []
            known = bool(outs) and not any(o.get("open") or o.get("call") for o in outs)
            mapping = info.get("map") or {}
            ok = [t for o in outs if not _cut(o, key)
                  for t in [*(o.get("targets") or []), *(o.get("sends") or [])]] \
                if known else list(info.get("targets") or [])
            allowed |= {(src, str(mapping.get(t, t))) for t in ok} & set(taken)
            if known and fn and any(_cut(o, key) for o in outs):
                # the router's read of the key, then each return it makes when the key is set
                reads.append((fn[0], state_reads(graph, fn).get(key, int(outs[0]["line"]))))
                reads += [(str(o.get("path") or fn[0]), int(o["line"])) for o in outs
                          if [key, True] in (o.get("guards") or [])][:2]
    return allowed, reads


def _cut(out: JSON, key: str) -> bool:
    """The router's return needs `key` empty (or None, or no truthy item of it)."""
    return any(k == key and (w in FALSY or w == NO_ITEM) for k, w in out.get("guards") or [])


def _reaches(edges: set[tuple[str, str]], start: str, node: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        here = todo.pop()
        for src, dst in edges:
            if src == here and dst not in seen:
                seen.add(dst)
                todo.append(dst)
    return node in seen


def _prefix(test: ast.expr, guard: ast.If, in_else: bool) -> str:
    """The literal a prefix test requires, when the branch that stops the run (the ``else``
    with `in_else`) is the one taken without it (``if not url.startswith("http"):
    errors.append(...)``); else ""."""
    negated = isinstance(guard.test, ast.UnaryOp) and isinstance(guard.test.op, ast.Not) \
        and guard.test.operand is test
    plain = guard.test is test
    if test_kind(test) != "prefix" or not isinstance(test, ast.Call) or not (
            (negated and not in_else) or (plain and in_else)):
        return ""
    args = [str(a.value) for a in test.args if isinstance(a, ast.Constant)]
    return args[0] if len(args) == 1 else ""
