"""Branches of a helper that no call site takes, read from the values its callers pass.

A clone helper often picks its branch by a parameter: ``if dest is None: dest = mkdtemp()``,
``if sandbox: sandbox.run(cmd); return`` then ``subprocess.run(cmd)``. What runs depends on
what the callers pass, not on the helper alone. Here the ``if`` tests that guard a line (the
``if`` around it, and an earlier ``if`` of its block that always returns or raises) are
evaluated with each parameter's value at the helper's call sites, a few callers up:

- ``none``: the parameter is left to its ``None`` default;
- ``temp``: a fresh temporary directory (or a path inside one): a non-empty path, never
  ``None`` and never the process's working directory (tempfile just made it under the
  system temp folder);
- ``object``: an instance of a repository class that defines no ``__bool__``/``__len__``:
  never ``None``, always true.

A line is in a dead branch when, for every value the callers may pass, one of its guards is
false where the line needs it true (or the reverse). Anything else (no caller, a value
unknown at one caller, a test this does not read) leaves the line live: today's facts.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import dotted, function_defs
from automaton_auditor.forensics.code.source import parse_file

MAX_DEPTH = 3
PATH_KEEPERS = {"strip", "lstrip", "rstrip", "abspath", "normpath", "realpath", "expanduser",
                "str", "Path", "resolve", "fspath", "absolute"}  # a path stays the path
CWD_CALLS = {"os.getcwd", "Path.cwd", "pathlib.Path.cwd", "getcwd"}
Guard = tuple[ast.expr, bool]  # an ``if`` test and the value the line needs it to have


def _function(repo: Path, key: Key) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    tree = parse_file(str(repo / key[0]))
    return next((n for q, n in function_defs(tree) if q == key[1]), None) if tree else None


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise)


def _inside(node: ast.AST, line: int) -> bool:
    return int(getattr(node, "lineno", 0)) <= line <= int(getattr(node, "end_lineno", 0) or 0)


def guards(body: list[ast.stmt], line: int) -> list[Guard]:
    """The ``if`` tests that decide whether `line` of a function body runs: each ``if`` it
    sits in (true in its body, false in its ``else``), and each earlier ``if`` of a block
    on the way whose body always returns or raises (false: the line comes after it)."""
    out: list[Guard] = []
    for stmt in body:
        if not _inside(stmt, line):
            if isinstance(stmt, ast.If) and int(stmt.end_lineno or 0) < line \
                    and _exits(stmt.body) and not stmt.orelse:
                out.append((stmt.test, False))
            continue
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return out  # another scope
        if isinstance(stmt, ast.If):
            if _inside(stmt.test, line):
                return out
            taken = any(_inside(s, line) for s in stmt.body)
            return [*out, (stmt.test, taken), *guards(stmt.body if taken else stmt.orelse,
                                                      line)]
        blocks = [getattr(stmt, f, None) or [] for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(stmt, "handlers", None) or []]
        inner = next((b for b in blocks if any(_inside(s, line) for s in b)), None)
        return out + guards(inner, line) if inner else out
    return out


class _Eval:
    """Kleene truth of an ``if`` test under one value per parameter (`env`); the function's
    locals assigned once are read through (``cwd = os.getcwd()``)."""

    def __init__(self, env: dict[str, str], binds: dict[str, ast.expr]) -> None:
        self.env, self.binds, self.depth = env, binds, 0

    def kind(self, node: ast.expr) -> str | None:
        """``temp``, ``none``, ``object``, ``cwd`` or None (not known)."""
        self.depth += 1
        if self.depth > 40:
            return None
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            bound = self.binds.get(node.id)
            return self.kind(bound) if bound is not None else None
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name in CWD_CALLS:
                return "cwd"
            head = node.func.value if isinstance(node.func, ast.Attribute) else None
            inner = node.args[0] if node.args else head if name.split(".")[-1] in \
                {"strip", "lstrip", "rstrip", "resolve", "absolute"} else None
            if name.split(".")[-1] in PATH_KEEPERS and inner is not None:
                found = self.kind(inner)
                return found if found in ("temp", "cwd") else None
        return None

    def truth(self, node: ast.expr) -> bool | None:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.truth(node.operand)
            return None if inner is None else not inner
        if isinstance(node, ast.BoolOp):
            values = [self.truth(v) for v in node.values]
            stop = isinstance(node.op, ast.Or)  # the value that settles it
            return stop if stop in values else None if None in values else not stop
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node.left, node.ops[0], node.comparators[0])
        found = self.kind(node)
        return None if found in (None, "cwd") else found != "none"

    def _compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> bool | None:
        if isinstance(op, ast.Is | ast.IsNot) and isinstance(right, ast.Constant) \
                and right.value is None:
            found = self.kind(left)
            return None if found in (None, "cwd") else (found == "none") == isinstance(op, ast.Is)
        # a directory tempfile just made is not the working directory
        if isinstance(op, ast.Eq | ast.NotEq) and \
                {self.kind(left), self.kind(right)} == {"temp", "cwd"}:
            return isinstance(op, ast.NotEq)
        return None


def _binds(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Locals the function assigns exactly once (``name = value``); a name also bound
    another way (a loop, ``with ... as``, ``+=``) is left out."""
    values = {t.id: n.value for n in ast.walk(func) if isinstance(n, ast.Assign)
              for t in n.targets if isinstance(t, ast.Name)}
    stores = [n.id for n in ast.walk(func) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)]
    return {n: v for n, v in values.items() if stores.count(n) == 1}


def _maybe_none(func: ast.AST | None, name: str) -> bool:
    """`name` may hold None in `func`: assigned a value that is, or may be, ``None``."""
    for node in ast.walk(func) if func is not None else []:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and any(
                isinstance(t, ast.Name) and t.id == name
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])) \
                and any(isinstance(c, ast.Constant) and c.value is None
                        for c in ast.walk(node.value)):
            return True
    return False


def _truthy_class(graph: CallGraph, source: str) -> bool:
    path, _, cls = source[2:].partition("|")
    return all(graph.method(path, cls, m) is None for m in ("__bool__", "__len__"))


def _passed(graph: CallGraph, repo: Path, caller: Key, bound: list[str],
            depth: int) -> set[str] | None:
    """The values the atoms `bound` of `caller` may hold (None: not known)."""
    sources = graph.sources(caller, bound)
    kinds = {s[0] for s in sources}
    func = _function(repo, caller)
    if not sources or any(a[:2] == "v:" and _maybe_none(func, a[2:]) for a in bound):
        return None
    if kinds <= {"t", "s"} and "t" in kinds:
        return {"temp"}
    if kinds == {"o"} and all(_truthy_class(graph, s) for s in sources):
        return {"object"}
    if kinds == {"p"}:
        out: set[str] = set()
        for source in sorted(sources):
            found = values(graph, repo, caller, source[2:], depth + 1)
            if found is None:
                return None
            out |= found
        return out
    return None


def values(graph: CallGraph, repo: Path, key: Key, param: str,
           depth: int = 0) -> set[str] | None:
    """What `key`'s callers may pass for `param` (see the module), a few callers up; None
    when no code calls `key` or one caller's value is not known."""
    callers = graph.callers(key)
    func = _function(repo, key) if callers and depth <= MAX_DEPTH else None
    if func is None or func.decorator_list:  # a decorated one (``@tool``) has other callers
        return None
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional][::-1], args.defaults[::-1], strict=False))
    defaults |= {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d}
    out: set[str] = set()
    for caller, index in callers:
        site = graph.sites(caller)[index]
        bound = graph.argument(caller, index, key, param)
        if bound is None:  # left to its default, unless spread in (``**kwargs``)
            given = defaults.get(param)
            spread = None in (site.get("kw") or {}) or "**" in (site.get("kw") or {})
            found = {"none"} if isinstance(given, ast.Constant) and given.value is None \
                and not spread else None
        else:
            found = _passed(graph, repo, caller, bound, depth)
        if found is None:
            return None
        out |= found
    return out


def untaken(graph: CallGraph, repo: Path | None, key: Key, line: int) -> bool:
    """`line` of function `key` sits in a branch no call site takes (see the module)."""
    func = _function(repo, key) if repo is not None else None
    tests = guards(func.body, line) if func is not None else []
    if repo is None or func is None or not tests:
        return False
    params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    # a parameter the body assigns again may no longer hold what the caller passed
    known = params - {n.id for n in ast.walk(func) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Store)}
    binds = {n: v for n, v in _binds(func).items() if n not in params}
    used = _names([t for t, _w in tests], binds) & known
    choices = [(p, sorted(v)) for p in sorted(used) if (v := values(graph, repo, key, p))]
    if not choices:
        return False
    for combo in itertools.product(*(v for _p, v in choices)):
        env = dict(zip((p for p, _v in choices), combo, strict=True))
        if not any(_Eval(env, binds).truth(test) is (not wanted) for test, wanted in tests):
            return False
    return True


def _names(tests: list[ast.expr], binds: dict[str, ast.expr]) -> set[str]:
    """Names the tests read, also through the locals they read."""
    seen: set[str] = set()
    todo = [n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in binds:
            todo += [n.id for n in ast.walk(binds[name]) if isinstance(n, ast.Name)]
    return seen
