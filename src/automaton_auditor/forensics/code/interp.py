"""Symbolic evaluation of the code that builds a LangGraph ``StateGraph``.

Each scope (module body, function body) is read statement by statement with a small
environment of string and list-of-string values, so that builder variables, aliases,
loops over literal lists (unrolled), method chains and list-form ``add_edge`` are
followed. Nothing is executed. Values are JSON-friendly: ``str``, ``list``, ``None``
(unknown), ``{"ref": "name"}`` (resolved later across files) or ``{"builder": key}``.
"""

from __future__ import annotations

import ast
from typing import Any

from automaton_auditor.forensics.code.common import dotted, resolve, snippet, str_value, unparse
from automaton_auditor.forensics.code.lambdas import inline_name, node_action
from automaton_auditor.forensics.code.loop_items import (
    COPIES,
    extend,
    is_item,
    item,
    joined,
    key_suffix,
    wires_graph,
)

GRAPH_METHODS = {"add_node", "add_edge", "add_conditional_edges", "set_entry_point",
                 "set_finish_point", "set_conditional_entry_point", "add_sequence", "compile"}
# every method a StateGraph builder has (langgraph 1.x; the 0.x ones are a subset)
BUILDER_METHODS = GRAPH_METHODS | {"validate", "set_node_defaults"}
BUILDER_CLASSES = ("StateGraph", "MessageGraph", "Graph")
MAX_UNROLL = 64
SPECIAL = {"START": "__start__", "END": "__end__"}
WHEN = "?when"  # env key: the ``if`` tests the current statement sits under (not a name)
LOOP = "?loop"  # env key: the loop over run-time data read as symbolic copies (`loop_items`)


def flag_key(name: str) -> str:
    """The environment key of a boolean parameter's default (no name can collide with it)."""
    return f"?{name}"


def default_flags(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any]:
    """``{flag_key(p): bool}`` for the parameters with a literal True/False default that the
    body never rebinds: ``def build_graph(parallel: bool = True)`` builds, when called as
    the code usually calls it, the ``if parallel:`` branch only."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults,
                     strict=True)) + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults,
                                                            strict=True) if d is not None]
    rebound = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)
               and isinstance(n.ctx, ast.Store)}
    return {flag_key(a.arg): d.value for a, d in pairs
            if isinstance(d, ast.Constant) and isinstance(d.value, bool) and a.arg not in rebound}


def taken_branch(test: ast.expr, env: dict[str, Any]) -> bool | None:
    """True or False when the test reads only a defaulted flag (`default_flags`), else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = taken_branch(test.operand, env)
        return None if inner is None else not inner
    if isinstance(test, ast.Name) and flag_key(test.id) in env:
        return bool(env[flag_key(test.id)])
    return None


class Interp:
    """Interprets the graph-building statements of one file."""

    def __init__(self, path: str, lines: list[str], imports: dict[str, str],
                 has_langgraph: bool, consts: dict[str, Any] | None = None) -> None:
        self.path, self.lines, self.imports = path, lines, imports
        self.consts = consts or {}
        self.has_langgraph = has_langgraph
        self.builders: list[dict[str, Any]] = []
        self.ops: list[dict[str, Any]] = []

    # --- values ------------------------------------------------------------------------
    def ev(self, node: ast.AST | None, env: dict[str, Any], depth: int = 0) -> Any:
        """The symbolic value of an expression."""
        if node is None or depth > 30:
            return None
        text = str_value(node)
        if isinstance(node, ast.Constant):
            return text
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return [self.ev(e, env, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict):  # ``{True: "a", False: "b"}`` maps a returned test
            return {"map": [[str(k.value) if isinstance(k, ast.Constant) and isinstance(
                k.value, bool) else self.ev(k, env, depth + 1), self.ev(v, env, depth + 1)]
                            for k, v in zip(node.keys, node.values, strict=True)]}
        if isinstance(node, ast.Lambda):
            return {"lambda": self.lambda_targets(node, env)}
        if isinstance(node, ast.JoinedStr | ast.BinOp | ast.Subscript | ast.Call):
            return self.composed(node, env, depth)
        name = dotted(node)
        if name is None:
            return None
        if name in env:
            return env[name]
        root, _, rest = name.partition(".")
        if is_item(env.get(root)):  # ``spec.name`` on a symbolic loop item
            return extend(env[root], f".{rest}")
        if name in self.consts:  # a module-level list or string of this file
            return self.consts[name]
        full = resolve(name, self.imports) or name
        tail = full.rsplit(".", 1)[-1]
        if tail in SPECIAL and (full.startswith("langgraph") or name == tail):
            return SPECIAL[tail]
        return {"ref": full}

    def composed(self, node: ast.expr, env: dict[str, Any], depth: int) -> Any:
        """An f-string or ``a + b`` of known parts (strings, symbolic loop items) as one
        string; a constant key of a symbolic item (``dim["id"]``, ``dim.get("id")``) as a
        part of it."""
        if isinstance(node, ast.Subscript):
            return self.part(node.value, node.slice, env, depth)
        if isinstance(node, ast.Call):
            func = node.func
            return self.part(func.value, node.args[0], env, depth) if isinstance(
                func, ast.Attribute) and func.attr == "get" and node.args else None
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, ast.Add):
                return None
            return joined([self.ev(node.left, env, depth + 1),
                           self.ev(node.right, env, depth + 1)])
        assert isinstance(node, ast.JoinedStr)
        parts: list[Any] = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                # a conversion or a format spec changes the text: not rendered
                plain = value.conversion == -1 and value.format_spec is None
                parts.append(self.ev(value.value, env, depth + 1) if plain else None)
            else:
                parts.append(str_value(value))
        return joined(parts)

    def part(self, base: ast.expr, key: ast.expr, env: dict[str, Any], depth: int) -> Any:
        """``base[key]`` for a symbolic loop item and a constant key, else None."""
        value, suffix = self.ev(base, env, depth + 1), key_suffix(key)
        return extend(value, suffix) if is_item(value) and suffix else None

    def lambda_targets(self, node: ast.Lambda, env: dict[str, Any]) -> dict[str, Any]:
        """Strings, ``Send`` targets and names of a returned list (``lambda _: ["a", "b"]``:
        ``many``, LangGraph runs all of them at once) a lambda can return."""
        strings: list[Any] = []
        sends: list[Any] = []
        many: list[Any] = []
        for sub in ast.walk(node.body):
            if isinstance(sub, ast.Call) and self.is_send(sub.func) and sub.args:
                sends.append(self.ev(sub.args[0], env))
            elif isinstance(sub, ast.List | ast.Tuple):
                many += [e.value for e in sub.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                strings.append(sub.value)
            elif dotted(sub) in ("END", "START"):
                strings.append(SPECIAL[str(dotted(sub))])
        # it chooses a branch when it branches, or returns what the state or a call says
        body = node.body
        chooses = any(isinstance(sub, ast.IfExp | ast.BoolOp) for sub in ast.walk(body)) or (
            isinstance(body, ast.Subscript | ast.Attribute | ast.Name)
            or (isinstance(body, ast.Call) and not self.is_send(body.func)))
        return {"strings": strings, "sends": sends, "many": many, "chooses": chooses}

    def is_send(self, func: ast.AST) -> bool:
        """True when a call target is LangGraph's ``Send``."""
        full = resolve(dotted(func), self.imports) or ""
        return full.rsplit(".", 1)[-1] == "Send"

    def is_builder_class(self, func: ast.AST) -> bool:
        """True when a call creates a StateGraph (through any alias)."""
        name = dotted(func)
        full = resolve(name, self.imports) or ""
        tail = full.rsplit(".", 1)[-1]
        if tail not in BUILDER_CLASSES:
            return False
        # ``import langgraph as lg; lg.StateGraph``: only langgraph.graph's modules have it
        return full.startswith("langgraph.graph.") or (tail != "Graph" and name == tail)

    # --- statements --------------------------------------------------------------------
    def run_scope(self, scope: str, body: list[ast.stmt], env: dict[str, Any]) -> None:
        """Interpret a block in order; nested functions are their own scopes."""
        for stmt in body:
            self.stmt(scope, stmt, env)

    def stmt(self, scope: str, stmt: ast.stmt, env: dict[str, Any]) -> None:
        """Interpret one statement."""
        if isinstance(stmt, ast.Assign):
            value = self.expr(scope, stmt.value, env)
            for target in stmt.targets:
                self.bind(target, value, env, scope)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.bind(stmt.target, self.expr(scope, stmt.value, env), env, scope)
        elif isinstance(stmt, ast.Expr | ast.Return) and stmt.value is not None:
            self.expr(scope, stmt.value, env)
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            self.loop(scope, stmt, env)
        elif isinstance(stmt, ast.If | ast.While):
            taken = taken_branch(stmt.test, env) if isinstance(stmt, ast.If) else None
            test = unparse(stmt.test, 120) if isinstance(stmt, ast.If) and taken is None \
                and "__name__" not in unparse(stmt.test, 120) else None
            if taken is not False:
                self.guarded(scope, stmt.body, env, test, stmt.lineno)
            if taken is not True:
                self.guarded(scope, stmt.orelse, env, f"not ({test})" if test else None,
                             stmt.lineno)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                self.expr(scope, item.context_expr, env)
            self.run_scope(scope, stmt.body, env)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, *[h.body for h in stmt.handlers], stmt.orelse,
                          stmt.finalbody):
                self.run_scope(scope, block, env)

    def guarded(self, scope: str, body: list[ast.stmt], env: dict[str, Any], test: str | None,
                line: int) -> None:
        """Interpret a branch of an ``if`` whose test is only known at run time (a
        configuration flag): the graph operations in it carry the test (``when``)."""
        saved = env.get(WHEN)
        if test:
            env[WHEN] = [*(saved or []), {"test": test, "line": line}]
        self.run_scope(scope, body, env)
        if test:
            env[WHEN] = saved

    def bind(self, target: ast.AST, value: Any, env: dict[str, Any], scope: str = "") -> None:
        """Record an assignment (names and ``self.x`` attributes only)."""
        name = dotted(target)
        if name is not None:
            env[name] = value
            if name.startswith("self.") and isinstance(value, dict) and "builder" in value:
                # ``self.graph = StateGraph(...)`` in __init__, edges added in other methods
                self.ops.append({"op": "alias", "builder": value["builder"],
                                 "alias": self.attr_key(scope, name), "line": 0,
                                 "path": self.path, "args": [], "kwargs": {}, "snippet": ""})
        elif isinstance(target, ast.Tuple | ast.List) and is_item(value):
            for index, elt in enumerate(target.elts):  # ``for name, fn in pairs``
                self.bind(elt, extend(value, f"[{index}]"), env)
        elif isinstance(target, ast.Tuple | ast.List):
            values = value if isinstance(value, list) and len(value) == len(target.elts) \
                else [None] * len(target.elts)
            for elt, part in zip(target.elts, values, strict=True):
                self.bind(elt, part, env)

    def loop(self, scope: str, stmt: ast.For | ast.AsyncFor, env: dict[str, Any]) -> None:
        """Unroll a loop over a known list; read one that wires the graph over run-time data
        as two symbolic copies (`loop_items`); otherwise read its body once."""
        items = self.ev(stmt.iter, env)
        if isinstance(items, list) and 0 < len(items) <= MAX_UNROLL:
            for value in items:
                self.bind(stmt.target, value, env)
                self.run_scope(scope, stmt.body, env)
        elif isinstance(items, dict) and items.get("ref") and isinstance(stmt.target, ast.Name):
            # A list defined in another module: unrolled when the files are combined.
            self.bind(stmt.target, {"each": items["ref"]}, env)
            self.run_scope(scope, stmt.body, env)
        elif wires_graph(stmt.body) and not isinstance(items, list):
            # a loop over run-time data wiring the graph: two symbolic copies of its body
            base = items["item"] if is_item(items) else unparse(stmt.iter, 80)
            saved = env.get(LOOP)
            env[LOOP] = {"line": stmt.lineno, "iter": base, "path": self.path}
            for copy in range(1, COPIES + 1):
                self.bind(stmt.target, item(f"{base}[#{copy}]"), env)
                self.run_scope(scope, stmt.body, env)
            env[LOOP] = saved
        else:
            self.bind(stmt.target, None, env)
            self.run_scope(scope, stmt.body, env)
        self.run_scope(scope, stmt.orelse, env)

    # --- calls -------------------------------------------------------------------------
    def expr(self, scope: str, node: ast.expr, env: dict[str, Any]) -> Any:
        """Evaluate an expression, recording any graph-building call in it."""
        if isinstance(node, ast.Await):
            node = node.value
        if not isinstance(node, ast.Call):
            return self.ev(node, env)
        if self.is_builder_class(node.func):
            key = f"{self.path}:{node.lineno}"
            state = node.args[0] if node.args else next(
                (kw.value for kw in node.keywords if kw.arg in ("state_schema", "schema")), None)
            schemas = {kw.arg.removesuffix("_schema"): resolve(dotted(kw.value), self.imports)
                       for kw in node.keywords if kw.arg in ("input", "output", "input_schema",
                                                             "output_schema")}
            # ``cls``: the class called, through the imports (``src.graph.StateGraph`` is
            # the repository's own when src/graph.py defines it: `own_class`)
            self.builders.append({"key": key, "line": node.lineno, "scope": scope,
                                  "cls": resolve(dotted(node.func), self.imports),
                                  "state": resolve(dotted(state), self.imports),
                                  "input": schemas.get("input"), "output": schemas.get("output"),
                                  "snippet": snippet(self.lines, node)})
            return {"builder": key}
        if (resolve(dotted(node.func), self.imports) or "").rsplit(".", 1)[-1] in BUILDER_CLASSES:
            return {"no_builder": True}  # no StateGraph (``lg.StateGraph``, ``nx.Graph``)
        if isinstance(node.func, ast.Attribute) and node.func.attr in GRAPH_METHODS:
            return self.method(scope, node, env)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
            self.grow(node, env)
        got = self.composed(node, env, 0)
        if got is not None:  # ``dim.get("id")`` on a symbolic loop item
            return got
        if isinstance(node.func, ast.Attribute) and node.func.attr not in BUILDER_METHODS:
            receiver = self.ev(node.func.value, env)
            if isinstance(receiver, dict) and "builder" in receiver:
                # ``graph.add_fan_out(...)``: StateGraph has no such method (AttributeError)
                self.ops.append({"op": "missing_method", "method": node.func.attr,
                                 "builder": receiver["builder"], "line": node.lineno,
                                 "path": self.path, "args": [], "kwargs": {},
                                 "snippet": snippet(self.lines, node, 300)})
        self.pass_builder(scope, node, env)
        return None

    def method(self, scope: str, node: ast.Call, env: dict[str, Any]) -> Any:
        """A builder method call; chains evaluate their receiver first."""
        assert isinstance(node.func, ast.Attribute)
        receiver = self.expr(scope, node.func.value, env)
        if not isinstance(receiver, dict) or "builder" not in receiver:
            name = dotted(node.func.value)
            if name is None or not self.has_langgraph or receiver == {"no_builder": True}:
                return None
            # An untyped helper such as ``def wire(g): g.add_edge(...)``: its own builder,
            # merged with the caller's when the caller passes its builder in.
            key = self.attr_key(scope, name) if name.startswith("self.") \
                else f"{self.path}::{scope}::{name}"
            receiver = {"builder": key}
        op = node.func.attr
        args = [self.ev(a, env) for a in node.args]
        kwargs = {kw.arg: self.ev(kw.value, env) for kw in node.keywords if kw.arg}
        record = {"op": op, "builder": receiver["builder"], "line": node.lineno,
                  "args": args, "kwargs": kwargs, "path": self.path,
                  "snippet": snippet(self.lines, node, 300)}
        if env.get(WHEN):
            record["when"] = env[WHEN]
        if env.get(LOOP):
            record["loop"] = env[LOOP]
        if op == "add_node" and node.args:
            args.append(dotted(node.args[-1]) or "")
            action = node_action(node)
            wraps = self.call_value(action, env) if action is not None else None
            if wraps is not None:
                record["wraps"] = wraps  # a node built by a call: a wrapper or a factory
            if isinstance(action, ast.Lambda):  # recorded as a function by the walk
                record["lambda"] = inline_name(action)
        self.ops.append(record)
        return None if op == "compile" else receiver

    def call_value(self, node: ast.AST, env: dict[str, Any], depth: int = 0) -> Any:
        """A call building a node's callable, ``{"call": name as written, "full": name
        through the imports, "args": [...], "kw": {...}}`` (nested calls likewise), so the
        function it runs can be found (`callgraph.CallGraph.node_function`)."""
        if not isinstance(node, ast.Call) or depth > 3:
            return None
        name = dotted(node.func)
        if name is None:
            return None
        return {"call": name, "full": resolve(name, self.imports),
                "args": [self.action_arg(a, env, depth) for a in node.args],
                "kw": {kw.arg: self.action_arg(kw.value, env, depth)
                       for kw in node.keywords if kw.arg}}

    def action_arg(self, node: ast.expr, env: dict[str, Any], depth: int) -> Any:
        """An argument of such a call: a nested call, a loop variable's value, or a name as
        written (resolved where it is written, like a node's plain function)."""
        name = dotted(node)
        if name is not None and name not in env:
            return {"ref": name}
        return self.call_value(node, env, depth + 1) or self.ev(node, env)

    def attr_key(self, scope: str, name: str) -> str:
        """One builder key per ``self.<attr>`` per class, shared by all its methods."""
        owner = scope.rsplit(".", 1)[0] if "." in scope else scope
        return f"{self.path}::{owner}::{name}"

    def grow(self, node: ast.Call, env: dict[str, Any]) -> None:
        """``names.append("x")`` / ``names.extend([...])`` on a known list of names."""
        assert isinstance(node.func, ast.Attribute)
        name = dotted(node.func.value)
        if name is None or not isinstance(env.get(name), list) or not node.args:
            return
        value = self.ev(node.args[0], env)
        if node.func.attr == "append":
            env[name] = [*env[name], value]
        elif isinstance(value, list):
            env[name] = [*env[name], *value]

    def pass_builder(self, scope: str, node: ast.Call, env: dict[str, Any]) -> None:
        """Record ``helper(builder)`` so the helper's edges join the caller's graph."""
        for index, arg in enumerate(node.args):
            value = self.ev(arg, env)
            if isinstance(value, dict) and "builder" in value:
                self.ops.append({"op": "pass_builder", "builder": value["builder"],
                                 "line": node.lineno, "path": self.path,
                                 "func": resolve(dotted(node.func), self.imports),
                                 "index": index, "args": [], "kwargs": {}, "snippet": ""})

