"""Where values come from inside one function: the per-function half of the data flow.

For each function the walk records, in JSON, what every local name, ``self`` attribute and
returned value is built from, and every call it makes with what flows into each argument.
A value is summarised as a sorted list of atoms:

- ``p:<name>`` a parameter, ``v:<name>`` a local name, ``a:<attr>`` an attribute of ``self``;
- ``c:<i>`` the result of the function's i-th recorded call (resolved across the repository
  later, by `callgraph`, through the callee's own returns);
- ``t:<line>`` a fresh temporary directory (``tempfile.mkdtemp()``/``TemporaryDirectory()``);
- ``s:<text>`` a short string literal that is part of the value (``git``, ``clone``).

A path built with ``/`` (``Path(tmp) / "repo"``, also ``f"{tmp}/repo"`` and ``tmp + "/repo"``)
is recorded as a call named ``/`` of its two operands, so a path inside a directory can be
told from the directory itself; a call made
inside an ``except`` handler, or in a failure branch that leaves the function (``if
r.returncode != 0: ...; return``), is marked ``handler`` (it runs only when something failed).

Flow-insensitive and deliberately small: enough to follow a temp dir or a command list
through locals, helpers and wrappers, never an interpreter. Nothing is executed.
"""

from __future__ import annotations

import ast
from typing import Any

from automaton_auditor.forensics.code.common import JSON, dotted, resolve
from automaton_auditor.forensics.code.dispatch import applied_calls, function_tables
from automaton_auditor.forensics.code.primary_reads import Behind, behind_reads

TEMP_MAKERS = ("tempfile.mkdtemp", "tempfile.TemporaryDirectory")
MAX_ATOMS = 24
MAX_CALLS = 400
MAX_STRING = 60
MAX_DEPTH = 40
LIST_GROWERS = frozenset({"append", "extend", "insert"})  # methods that add to a list
PATH_TYPES = frozenset({"Path", "PurePath", "PosixPath", "WindowsPath"})
SUCCESS_FLAGS = frozenset({"ok", "success", "succeeded"})  # ``if not ok:`` is a failure


def _merge(*groups: list[str]) -> list[str]:
    out: set[str] = set()
    for group in groups:
        out.update(group)
    if len(out) > MAX_ATOMS:
        # Keep the atoms that carry meaning first: temp dirs, then calls, names, strings.
        ranked = sorted(out, key=lambda a: ("tcpva s".find(a[0]), a))
        return sorted(ranked[:MAX_ATOMS])
    return sorted(out)


class FlowBuilder:
    """Summarises the data flow of function bodies of one file."""

    def __init__(self, imports: dict[str, str]) -> None:
        self.imports = imports
        self.tables: dict[str, ast.expr] = {}  # the module's literal tables (`dispatch`)

    def summarize(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> JSON:
        """``binds``, ``attrs``, ``calls``, ``rets`` and ``fields`` (attributes assigned on
        a local object) of one function (nested functions and classes are their own scopes
        and are skipped)."""
        scope = _Scope(self, {a.arg for a in _all_args(node)})
        scope.behind = behind_reads(node, scope.params)
        scope.tables = function_tables(node, self.tables)
        for stmt in node.body:
            scope.stmt(stmt)
        return {"binds": scope.binds, "attrs": scope.attrs, "calls": scope.calls,
                "rets": scope.rets, "keys": scope.keys,
                **({"fields": {n: sorted(f) for n, f in sorted(scope.fields.items())}}
                   if scope.fields else {})}


def _has_default(call: ast.Call) -> bool:
    """``d.get("k", value)`` with a value other than None (``d.get("k", None)`` is
    ``d.get("k")``)."""
    given = [*call.args[1:2], *(kw.value for kw in call.keywords if kw.arg == "default")]
    return any(not (isinstance(v, ast.Constant) and v.value is None) for v in given)


def _last_name(node: ast.AST) -> str:
    """``ok`` of ``ok`` or ``result.ok``."""
    return node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else "")


def _all_args(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    args = node.args
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


class _Scope:
    """One function body being summarised."""

    def __init__(self, owner: FlowBuilder, params: set[str]) -> None:
        self.imports = owner.imports
        self.params = params
        self.binds: dict[str, list[str]] = {}
        self.attrs: dict[str, list[str]] = {}
        self.fields: dict[str, set[str]] = {}  # attributes assigned on a local object
        self.calls: list[JSON] = []
        self.rets: list[str] = []
        self.handlers = 0  # how many ``except`` handlers the statement being read is in
        # ``state["k"]``, ``state.get("k")``, ``state["k"] = v`` on a parameter
        self.keys: list[JSON] = []
        # ``.get`` calls whose None is replaced: ``state.get("k") or default``
        self.defaulted: set[int] = set()
        self.tables: dict[str, ast.expr] = {}
        self.behind: Behind = {}  # reads run only when another key's read gave nothing

    def key(self, node: ast.AST, op: str, fallback: bool = False,
            origin: ast.AST | None = None) -> None:
        """Record a keyed access on a parameter (what a node reads from or writes to its
        state); `fallback`: the read supplies a value of its own when the key is absent;
        ``behind``: the keys whose reads it falls back from (`primary_reads`)."""
        behind = sorted(self.behind.get(id(origin or node), ()))
        value = node.value if isinstance(node, ast.Subscript | ast.Attribute) else None
        if isinstance(value, ast.Name) and value.id in self.params and len(self.keys) < 200:
            name = node.attr if isinstance(node, ast.Attribute) else (
                node.slice.value if isinstance(node, ast.Subscript) and
                isinstance(node.slice, ast.Constant) else None)
            if isinstance(name, str):
                self.keys.append({"line": getattr(node, "lineno", 0), "param": value.id,
                                  "key": name, "op": op, **({"fallback": True} if fallback
                                                            else {}),
                                  **({"behind": behind} if behind else {})})

    # --- statements ----------------------------------------------------------------------
    def stmt(self, node: ast.stmt) -> None:
        """Record what one statement binds, returns and calls; recurse into blocks."""
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return
        if isinstance(node, ast.Assign):
            value = self.atoms(node.value)
            for target in node.targets:
                self.bind(target, value)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            if node.value is not None:
                value = self.atoms(node.value)
                if isinstance(node, ast.AugAssign):
                    value = _merge(value, self.atoms(node.target))
                self.bind(node.target, value)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                self.rets = _merge(self.rets, self.atoms(node.value))
        elif isinstance(node, ast.For | ast.AsyncFor):
            self.bind(node.target, self.atoms(node.iter))
            # ``for cond, act in RULES: if cond(x): act(x)`` calls what each entry holds
            for applied in applied_calls(node, self.tables):
                self.atoms(applied)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                value = self.atoms(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, value)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.atoms(child)
        # a failure branch that leaves the function runs only when something failed, like
        # an ``except`` handler (`failure_branch`)
        failing = isinstance(node, ast.If) and self.failure_branch(node)
        for block in ("body", "orelse", "finalbody", "handlers"):
            self.handlers += failing and block == "body"
            for child in getattr(node, block, None) or []:
                if isinstance(child, ast.ExceptHandler):
                    self.handlers += 1
                    for sub in child.body:
                        self.stmt(sub)
                    self.handlers -= 1
                elif isinstance(child, ast.stmt):
                    self.stmt(child)
            self.handlers -= failing and block == "body"
        for case in getattr(node, "cases", None) or []:
            for sub in case.body:
                self.stmt(sub)

    def failure_branch(self, node: ast.If) -> bool:
        """True for ``if <failure test>: ...; return|raise``: a test of a failed result
        (``r.returncode != 0``, ``r.returncode``, ``not ok``, ``r.failed``, ``r is None`` on
        a local bound to a call's result) whose body ends by leaving the function."""
        return bool(node.body) and isinstance(node.body[-1], ast.Return | ast.Raise) and \
            self.failure_test(node.test)

    def failure_test(self, test: ast.expr) -> bool:
        """True when `test` holds only when a result failed (`failure_branch`)."""
        if isinstance(test, ast.BoolOp):
            # ``a and b`` holds only when both do; ``a or b`` when either does
            parts = [self.failure_test(v) for v in test.values]
            return any(parts) if isinstance(test.op, ast.And) else all(parts)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return _last_name(test.operand) in SUCCESS_FLAGS
        if isinstance(test, ast.Attribute):
            return test.attr in ("returncode", "failed")
        if isinstance(test, ast.Name):
            return test.id == "failed"
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return False
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(left, ast.Attribute) and left.attr == "returncode":
            return isinstance(op, ast.NotEq) and isinstance(right, ast.Constant) and \
                right.value == 0
        return isinstance(op, ast.Is) and isinstance(right, ast.Constant) and \
            right.value is None and isinstance(left, ast.Name) and \
            any(a[:2] == "c:" for a in self.binds.get(left.id, []))

    def bind(self, target: ast.AST, value: list[str]) -> None:
        """Merge `value` into what a name, ``self`` attribute or unpacked target holds."""
        if isinstance(target, ast.Name):
            self.binds[target.id] = _merge(self.binds.get(target.id, []), value)
        elif isinstance(target, ast.Attribute) and dotted(target.value) == "self":
            self.attrs[target.attr] = _merge(self.attrs.get(target.attr, []), value)
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.bind(elt.value if isinstance(elt, ast.Starred) else elt, value)
        elif isinstance(target, ast.Subscript | ast.Attribute):
            # ``state.k = v`` is no item access: a Pydantic state takes it, ``state["k"] = v``
            # raises
            self.key(target, "set" if isinstance(target, ast.Subscript) else "setattr")
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                    target.value.id not in self.params:  # ``report.score = s`` on a local
                self.fields.setdefault(target.value.id, set()).add(target.attr)
            self.atoms(target)  # calls inside ``d[f(x)] = ...`` still count

    # --- expressions ---------------------------------------------------------------------
    def atoms(self, node: ast.AST | None, depth: int = 0) -> list[str]:
        """The atoms an expression's value is built from (calls inside are recorded)."""
        if node is None or depth > MAX_DEPTH:
            return []
        if isinstance(node, ast.Constant):
            text = node.value
            return [f"s:{text}"] if isinstance(text, str) and 0 < len(text) <= MAX_STRING \
                else []
        if isinstance(node, ast.Name):
            return [f"p:{node.id}" if node.id in self.params else f"v:{node.id}"]
        if isinstance(node, ast.Attribute):
            if dotted(node.value) == "self":
                return [f"a:{node.attr}"]
            if isinstance(node.ctx, ast.Load):
                self.key(node, "attr")
            return self.atoms(node.value, depth + 1)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            self.key(node, "get")
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        if isinstance(node, ast.Lambda):
            return []
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            # ``state.get("k") or default``: every value but the last has one after it
            self.defaulted.update(id(v) for v in node.values[:-1] if isinstance(v, ast.Call))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and self.path_like(node):
            operands = [self.atoms(node.left, depth + 1), self.atoms(node.right, depth + 1)]
            return self.record({"line": node.lineno, "name": "/", "args": operands, "kw": {}},
                               _merge(*operands))
        head_tail = _text_path(node)
        if head_tail:
            # ``f"{tmp}/repo"``, ``tmp + "/repo"``: a path inside ``tmp``, recorded as the
            # join ``Path(tmp) / "repo"`` is
            operands = [self.atoms(head_tail[0], depth + 1),
                        _merge(*(self.atoms(t, depth + 1) for t in head_tail[1]))]
            return self.record({"line": head_tail[0].lineno, "name": "/", "args": operands,
                                "kw": {}}, _merge(*operands))
        if isinstance(node, ast.Yield | ast.YieldFrom):
            # a generator (``@contextmanager``) hands out what it yields
            value = self.atoms(node.value, depth + 1)
            self.rets = _merge(self.rets, value)
            return value
        if isinstance(node, ast.NamedExpr):
            value = self.atoms(node.value, depth + 1)
            self.bind(node.target, value)
            return value
        parts = [self.atoms(child, depth + 1) for child in ast.iter_child_nodes(node)
                 if isinstance(child, ast.expr | ast.comprehension | ast.keyword)]
        return _merge(*parts)

    def call(self, node: ast.Call, depth: int) -> list[str]:
        """Record a call site; its value is ``c:<index>`` (or ``t:<line>`` for a temp dir)."""
        name = dotted(node.func) or ""
        full = resolve(name, self.imports) or ""
        args = [self.atoms(a.value if isinstance(a, ast.Starred) else a, depth + 1)
                for a in node.args]
        kwargs = {kw.arg: self.atoms(kw.value, depth + 1) for kw in node.keywords if kw.arg}
        receiver: list[str] = []
        if isinstance(node.func, ast.Attribute) and not name:
            receiver = self.atoms(node.func.value, depth + 1)  # ``Path(tmp).joinpath(...)``
        elif isinstance(node.func, ast.Attribute) and name.split(".", 1)[0] not in self.imports:
            receiver = self.atoms(node.func.value, depth + 1)  # ``obj.method(...)``
        if full in TEMP_MAKERS:
            return [f"t:{node.lineno}"]
        if isinstance(node.func, ast.Attribute) and node.func.attr in LIST_GROWERS and \
                isinstance(node.func.value, ast.Name):
            # ``cmd.extend([url, tmp])``: the list now holds what was added to it
            self.bind(node.func.value, _merge(*args))
        if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant):
            self.key(ast.Subscript(value=node.func.value, slice=node.args[0], ctx=ast.Load(),
                                   lineno=node.lineno), "get()",
                     _has_default(node) or id(node) in self.defaulted, node)
        site: dict[str, Any] = {"line": node.lineno, "name": name, "args": args,
                                "kw": kwargs}
        if any(kw.arg is None for kw in node.keywords):
            site["spread"] = True  # ``f(**fields)``: the keywords are not all known
        if receiver:
            site["recv"] = receiver
        return self.record(site, _merge(receiver, *args, *kwargs.values()))

    def record(self, site: dict[str, Any], merged: list[str]) -> list[str]:
        """Append a call site; its value is ``c:<index>`` (`merged`, what it is built from,
        once the function has too many calls to record)."""
        if len(self.calls) >= MAX_CALLS:
            return merged
        if self.handlers:
            site["handler"] = True
        self.calls.append(site)
        return [f"c:{len(self.calls) - 1}"]

    def path_like(self, node: ast.BinOp) -> bool:
        """True when ``a / b`` joins paths: a string operand, a ``Path(...)`` or another
        path join on the left, or a left name bound to a temp dir, a ``Path`` or a join."""
        if any(isinstance(o, ast.JoinedStr) or (isinstance(o, ast.Constant) and
                                                 isinstance(o.value, str))
               for o in (node.left, node.right)):
            return True
        left = node.left
        if isinstance(left, ast.BinOp):
            return isinstance(left.op, ast.Div) and self.path_like(left)
        if isinstance(left, ast.Call):
            return (dotted(left.func) or "").rsplit(".", 1)[-1] in PATH_TYPES
        bound = self.binds.get(left.id, []) if isinstance(left, ast.Name) else []
        return any(a[:2] == "t:" or (a[:2] == "c:" and int(a[2:]) < len(self.calls) and
                   str(self.calls[int(a[2:])]["name"]).rsplit(".", 1)[-1] in {*PATH_TYPES, "/"})
                   for a in bound)


def _text_path(node: ast.AST) -> tuple[ast.expr, list[ast.expr]] | None:
    """(directory, rest) of a string that starts with a value followed by ``/`` and more:
    ``f"{tmp}/repo"``, ``tmp + "/repo"``, ``tmp + "/" + name``, a path inside that value
    (``f"{tmp}/"`` alone is the directory itself); else None."""
    if isinstance(node, ast.JoinedStr):
        parts: list[ast.expr] = [v.value if isinstance(v, ast.FormattedValue) else v
                                 for v in node.values]
        head_ok = bool(node.values) and isinstance(node.values[0], ast.FormattedValue)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        parts = _added(node)
        head_ok = not isinstance(parts[0], ast.Constant | ast.JoinedStr)
    else:
        return None
    if not head_ok or len(parts) < 2 or not isinstance(parts[1], ast.Constant) or \
            not isinstance(parts[1].value, str) or not parts[1].value.startswith("/") or \
            (parts[1].value == "/" and len(parts) == 2):
        return None
    return parts[0], parts[1:]


def _added(node: ast.expr) -> list[ast.expr]:
    """The terms of ``a + b + c``, left to right."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_added(node.left), *_added(node.right)]
    return [node]


def local_calls(binds: dict[str, list[str]], name: str) -> set[int]:
    """Indexes of the calls whose results local `name` is built from, through locals."""
    seen: set[str] = set()
    todo, calls = [name], set()
    while todo:
        current = todo.pop()
        if current in seen or len(seen) > 50:
            continue
        seen.add(current)
        for atom in binds.get(current, []):
            if atom.startswith("c:"):
                calls.add(int(atom[2:]))
            elif atom.startswith("v:"):
                todo.append(atom[2:])
    return calls
