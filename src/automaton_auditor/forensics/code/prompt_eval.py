"""The text a model call receives, read from the code that builds it (nothing is executed).

A small evaluator of string-building code: literals, f-strings, ``+``, ``str.format``,
``"".join``, module constants (dicts of persona configs included), ``D[key]`` and
``D.get(key)``, class attributes read through ``self`` (subclasses override them), and calls
to the repository's own functions and methods with their arguments bound, a few levels deep.
What a model is handed (``.invoke``/``.ainvoke``/... arguments, chat messages, prompt
templates) is recorded with the source line of every piece of text, so that a caller can
tell the text one persona's call receives from the text every persona's call shares.
A JSON or YAML file of the repository that the code loads (``json.load(f)``) is read as
data whose strings keep their lines. Values it cannot know (evidence, anything computed at
run time) add no text; a call handed none that is known is recorded with none.
"""

from __future__ import annotations

import ast
from typing import Any

from automaton_auditor.forensics.code.common import dotted
from automaton_auditor.forensics.code.prompt_values import (
    INVOKES,
    RUN_OPTIONS,
    Fn,
    Frame,
    Inst,
    Program,
    RepoPath,
    Step,
    Txt,
    as_message,
    concat,
    flatten,
    is_static,
    is_super,
    item,
    list_method,
    lit,
    path_method,
    repo_path,
    string_method,
)

DATA_LOADS = {"load", "loads", "safe_load"}
PATH_CALLS = {"Path", "PurePath", "open", "join", "dirname", "abspath", "realpath"}
TEMPLATES = {"from_template", "from_messages", "PromptTemplate", "ChatPromptTemplate"}
MAX_DEPTH = 6
BUDGET = 60_000  # expression nodes per entry: a bound on work, never reached by real judges
MAX_NESTING = 150  # nested expressions (``"a" + "b" + ...`` thousands deep) read no further


class Evaluator:
    """Reads the functions a persona's judge runs and records what its model receives."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.inputs: list[tuple[Txt, str]] = []  # (text handed to a model, path:line)
        self.routes: list[tuple[Step, ...]] = []  # per input: the functions that led to it
        self._stack: list[Step] = []
        self.steps = 0
        self.nesting = 0
        self._consts: dict[tuple[str, str], Any] = {}
        self._busy: set[tuple[str, str]] = set()

    # --- functions ---------------------------------------------------------------------
    def call(self, fn: Fn, args: list[Any], kwargs: dict[str, Any], frame: Frame,
             self_: Inst | None = None, env: dict[str, Any] | None = None,
             site: ast.Call | None = None) -> Any:
        """Run a repository function with its arguments bound (`site`: the call read in the
        caller); its last return value."""
        self.steps += 1
        if frame.depth >= MAX_DEPTH or self.steps > BUDGET:
            return None
        if self._stack:  # a constant of another file read here is no call of this function
            caller = self._stack[-1]
            self._stack[-1] = caller._replace(call=site if caller.path == frame.path else None)
        self._stack.append(Step(fn.path, fn.node, None))
        try:
            return self._body(fn, args, kwargs, frame, self_, env)
        finally:
            self._stack.pop()

    def _body(self, fn: Fn, args: list[Any], kwargs: dict[str, Any], frame: Frame,
             self_: Inst | None, env: dict[str, Any] | None) -> Any:
        node = fn.node
        params = [*node.args.posonlyargs, *node.args.args]
        local: dict[str, Any] = dict(env or {})
        if self_ is not None and params and fn.owner and not is_static(node):
            local[params[0].arg] = self_
            params = params[1:]
        inner = Frame(fn.path, self_, fn.owner, frame.depth + 1)
        defaults = node.args.defaults
        for param, default in zip(params[len(params) - len(defaults):], defaults, strict=True):
            local[param.arg] = self.expr(default, {}, inner)
        for param, default_kw in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True):
            if default_kw is not None:
                local[param.arg] = self.expr(default_kw, {}, inner)
        for param, value in zip(params, args, strict=False):
            local[param.arg] = value
        named = {p.arg for p in [*params, *node.args.kwonlyargs]}
        local.update({k: v for k, v in kwargs.items() if k in named})
        self.block(node.body, local, inner)
        return inner.returns[-1] if inner.returns else None

    def const(self, path: str, name: str) -> Any:
        """A top-level name of a file: a constant's value, a function or a class."""
        found = self.program.lookup(path, name)
        if found is None:
            return None
        where, node = found
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return Fn(where, node)
        if isinstance(node, ast.ClassDef):
            return f"{where}::{node.name}"
        key = (where, name)
        if key not in self._consts and key not in self._busy:
            self._busy.add(key)
            self._consts[key] = self.expr(node, {}, Frame(where))  # type: ignore[arg-type]
            self._busy.discard(key)
        return self._consts.get(key)

    def attribute(self, inst: Inst, name: str, after: str = "") -> Any:
        """``self.name``: an attribute set on the instance, else the first class in its
        method-resolution order that defines it (a subclass overrides its base); with
        `after` (a class key), ``super().name`` read in that class: the classes after it."""
        if name in inst.attrs and not after:
            return inst.attrs[name]
        order = self.program.classes(inst.cls)
        if after:
            keys = [f"{where}::{cls.name}" for where, cls in order]
            order = order[keys.index(after) + 1:] if after in keys else order[1:]
        for where, cls in order:
            for stmt in cls.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and \
                        stmt.name == name:
                    return Fn(where, stmt, f"{where}::{cls.name}")
                if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None \
                        and any(isinstance(t, ast.Name) and t.id == name for t in (
                            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])):
                    return self.expr(stmt.value, {}, Frame(where))
        return None

    def instance(self, cls: str, args: list[Any], kwargs: dict[str, Any],
                 frame: Frame, site: ast.Call | None = None) -> Inst:
        """A new instance, its ``__init__`` run."""
        inst = Inst(cls)
        init = self.attribute(inst, "__init__")
        if isinstance(init, Fn):
            self.call(init, args, kwargs, frame, inst, site=site)
        return inst

    # --- statements --------------------------------------------------------------------
    def block(self, body: list[ast.stmt], env: dict[str, Any], frame: Frame) -> None:
        """Read statements in order; both branches of an ``if``, loop bodies once."""
        for stmt in body:
            if frame.stopped:
                return
            self.stmt(stmt, env, frame)

    def stmt(self, stmt: ast.stmt, env: dict[str, Any], frame: Frame) -> None:
        """Read one statement."""
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            # a closure (``def judge_node(state)`` inside a factory) runs with what it sees
            env[stmt.name] = Fn(frame.path, stmt, frame.owner)
            self.call(Fn(frame.path, stmt), [], {}, frame, frame.self_, env)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            if stmt.value is None:
                return
            value = self.expr(stmt.value, env, frame)
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(stmt, ast.AugAssign):
                    value = concat(self.expr(target, env, frame), value)
                self.bind(target, value, env, frame)
        elif isinstance(stmt, ast.Return):
            frame.returns.append(self.expr(stmt.value, env, frame) if stmt.value else None)
            frame.stopped = frame.uncertain == 0
        elif isinstance(stmt, ast.Expr):
            self.expr(stmt.value, env, frame)
        elif isinstance(stmt, ast.If):
            self.branch(stmt, env, frame)
        elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While | ast.Try | ast.TryStar):
            if isinstance(stmt, ast.For | ast.AsyncFor):
                self.expr(stmt.iter, env, frame)
                self.bind(stmt.target, None, env, frame)
            frame.uncertain += 1
            for block in (stmt.body, *(h.body for h in getattr(stmt, "handlers", [])),
                          stmt.orelse, getattr(stmt, "finalbody", [])):
                self.block(block, env, frame)
            frame.uncertain -= 1
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for with_item in stmt.items:  # ``with open(path) as f``: ``f.read()`` is the file
                if with_item.optional_vars is not None:
                    self.bind(with_item.optional_vars, self.expr(with_item.context_expr, env,
                                                                 frame), env, frame)
            self.block(stmt.body, env, frame)

    def branch(self, stmt: ast.If, env: dict[str, Any], frame: Frame) -> None:
        """The branch a known condition takes (``if persona == "Defense"``), else both."""
        known = self.truth(stmt.test, env, frame)
        if known is not None:
            self.block(stmt.body if known else stmt.orelse, env, frame)
            return
        frame.uncertain += 1
        self.block(stmt.body, env, frame)
        self.block(stmt.orelse, env, frame)
        frame.uncertain -= 1

    def truth(self, test: ast.expr, env: dict[str, Any], frame: Frame) -> bool | None:
        """The value of ``x == "text"``, ``x != ...``, ``x in [...]``, ``not``, ``and``,
        ``or`` when every side is known text; None otherwise."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand, env, frame)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [self.truth(v, env, frame) for v in test.values]
            if isinstance(test.op, ast.And):
                return False if False in values else None if None in values else True
            return True if True in values else None if None in values else False
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        left = self.expr(test.left, env, frame)
        right = self.expr(test.comparators[0], env, frame)
        op = test.ops[0]
        if isinstance(left, Txt) and isinstance(right, Txt) and isinstance(op, ast.Eq | ast.NotEq):
            return (left.text() == right.text()) == isinstance(op, ast.Eq)
        if isinstance(left, Txt) and isinstance(right, list) and \
                all(isinstance(v, Txt) for v in right) and isinstance(op, ast.In | ast.NotIn):
            return (left.text() in [v.text() for v in right]) == isinstance(op, ast.In)
        return None

    def bind(self, target: ast.AST, value: Any, env: dict[str, Any], frame: Frame) -> None:
        """Assign to a name or to an attribute of ``self``."""
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            owner = env.get(target.value.id)
            if isinstance(owner, Inst):
                owner.attrs[target.attr] = value
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.bind(elt, None, env, frame)

    # --- expressions -------------------------------------------------------------------
    def expr(self, node: ast.expr | None, env: dict[str, Any], frame: Frame) -> Any:
        """The value of an expression: Txt, dict, list, Inst, Fn, a class key, or None."""
        self.steps += 1
        if node is None or self.steps > BUDGET or self.nesting > MAX_NESTING:
            return None
        self.nesting += 1
        try:
            return self.value(node, env, frame)
        finally:
            self.nesting -= 1

    def value(self, node: ast.expr, env: dict[str, Any], frame: Frame) -> Any:
        """`expr` without the bounds."""
        if isinstance(node, ast.Constant):
            return lit(node.value, frame.path, node) if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            return concat(*(self.expr(v.value, env, frame) if isinstance(v, ast.FormattedValue)
                            else self.expr(v, env, frame) for v in node.values)) or Txt(())
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left, env, frame), self.expr(node.right, env, frame)
            if isinstance(node.op, ast.BitOr):  # ``prompt | model``: the chain's prompt
                return left
            if isinstance(node.op, ast.Div) and isinstance(left, RepoPath):
                return left.join(right)
            return concat(left, right) if isinstance(node.op, ast.Add | ast.Mod) else None
        if isinstance(node, ast.Name):
            if node.id == "__file__" and node.id not in env:
                return RepoPath(frame.path)
            return env[node.id] if node.id in env else self.const(frame.path, node.id)
        if isinstance(node, ast.Attribute):
            return self.attr_of(node, env, frame)
        if isinstance(node, ast.Subscript):
            container = self.expr(node.value, env, frame)
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if isinstance(container, list) and type(index) is int:  # ``path.parents[2]``
                return container[index] if -len(container) <= index < len(container) else None
            return item(container, self.expr(node.slice, env, frame))
        if isinstance(node, ast.Dict):
            return {k.text(): self.expr(v, env, frame) for k, v in
                    ((self.expr(k, env, frame), v) for k, v in zip(node.keys, node.values,
                                                                   strict=True))
                    if isinstance(k, Txt)}
        if isinstance(node, ast.List | ast.Tuple):
            return [self.expr(e, env, frame) for e in node.elts]
        if isinstance(node, ast.Await):
            return self.expr(node.value, env, frame)
        if isinstance(node, ast.BoolOp):  # ``self.llm or build_llm()``: the first value known
            known = [v for v in (self.expr(e, env, frame) for e in node.values) if v is not None]
            return (known[0] if isinstance(node.op, ast.Or) else known[-1]) if known else None
        if isinstance(node, ast.IfExp):
            body = self.expr(node.body, env, frame)
            return body if body is not None else self.expr(node.orelse, env, frame)
        if isinstance(node, ast.Call):
            return self.call_expr(node, env, frame)
        if isinstance(node, ast.Lambda):  # run by what it is handed to: read where written
            self.expr(node.body, {**env, **{a.arg: None for a in node.args.args}}, frame)
        return None

    def attr_of(self, node: ast.Attribute, env: dict[str, Any], frame: Frame) -> Any:
        """``self.x``, ``instance.x``, ``module.NAME`` or ``Class.NAME``."""
        base = self.expr(node.value, env, frame)
        if isinstance(base, RepoPath):
            return base.attr(node.attr)
        if isinstance(base, Inst):
            return self.attribute(base, node.attr)
        if isinstance(base, str) and "::" in base:  # a class: its class attribute
            return self.attribute(Inst(base), node.attr)
        name = dotted(node.value)
        mod = self.program.module(frame.path)
        full = mod.imports.get(name or "") if mod else None
        other = self.program.file_of(full, frame.path) if full else None
        return self.const(other, node.attr) if other else None

    def _record(self, node: ast.Call, receiver: Any, args: list[Any], kwargs: dict[str, Any],
                frame: Frame) -> None:
        """A model call: what it is handed (no text too) and the functions that led to it. A
        wrapper object's own ``invoke`` is one only when its body makes no model call read
        here (``requests.post`` in ``Provider.chat``)."""
        given = flatten([receiver if isinstance(receiver, Txt) else None, *args,
                         *(v for k, v in kwargs.items() if k not in RUN_OPTIONS)])
        self.inputs.append((given or Txt(()), f"{frame.path}:{node.lineno}"))
        # a constant read in another file runs at module level there, not in `top`
        top = self._stack[-1] if self._stack else None
        fn = top.fn if top is not None and top.path == frame.path else None
        self.routes.append((*self._stack[:-1], Step(frame.path, fn, node)))

    def call_expr(self, node: ast.Call, env: dict[str, Any], frame: Frame) -> Any:
        """A call: a repository function or class, a string method, a chat message or
        template, or a model call (whose input is recorded)."""
        args = [self.expr(a, env, frame) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, env, frame) for k in node.keywords if k.arg}
        func = node.func
        tail = func.attr if isinstance(func, ast.Attribute) else dotted(func) or ""
        receiver = self.expr(func.value, env, frame) if isinstance(func, ast.Attribute) \
            else None
        # a repository object's own ``invoke``: its body is read first (`_wrapped`)
        wrapped = isinstance(receiver, Inst) and isinstance(self.attribute(receiver, tail), Fn)
        if tail in INVOKES and not wrapped:
            self._record(node, receiver, args, kwargs, frame)
        if tail.endswith("Message") or tail in TEMPLATES:
            text = flatten([kwargs.get("content", kwargs.get("template")), *args])
            # ``SystemMessage(content=...)``: one message, its role in the class's name
            return as_message(text, tail[:-len("Message")].lower()) \
                if text is not None and tail.endswith("Message") else text
        if isinstance(receiver, Txt):
            return string_method(receiver, tail, args, kwargs)
        if isinstance(receiver, RepoPath):
            return path_method(receiver, tail, args, self.program)
        if tail in DATA_LOADS and isinstance(func, ast.Attribute) and args and \
                dotted(func.value) in ("json", "yaml"):
            return self.program.data_file(args[0])  # a rubric's text, line by line
        if tail == "dumps" and dotted(func) == "json.dumps" and args:
            return flatten([args[0]])  # the data's text, in the order it is written
        if tail in PATH_CALLS and args:  # ``Path(p)``, ``open(p)``, ``os.path.join(a, b)``
            first = repo_path(args[0].text()) if isinstance(args[0], Txt) else args[0]
            if not isinstance(first, RepoPath):
                return None
            return first if tail == "open" else first.attr("parent") if tail == "dirname" \
                else first.join(*args[1:])
        if isinstance(receiver, list) or (tail in ("list", "tuple") and args and
                                          isinstance(args[0], list)):
            return list_method(receiver if isinstance(receiver, list) else None, tail, args)
        if isinstance(func, ast.Attribute) and func.attr == "get" and isinstance(receiver, dict):
            found = item(receiver, args[0] if args else None)
            return found if found is not None else (args[1] if len(args) > 1 else None)
        target = receiver if isinstance(func, ast.Attribute) else self.expr(func, env, frame)
        if isinstance(func, ast.Attribute) and is_super(func.value) and frame.self_:
            # ``super().__init__(name, PROMPT)``: the base class builds the prompt
            receiver = frame.self_
            target = self.attribute(receiver, func.attr, after=frame.owner)
            return self.call(target, args, kwargs, frame, receiver, site=node) \
                if isinstance(target, Fn) else None
        if isinstance(func, ast.Attribute) and isinstance(receiver, Inst):
            target, before = self.attribute(receiver, func.attr), len(self.inputs)
            out = self.call(target, args, kwargs, frame, receiver, site=node) \
                if isinstance(target, Fn) else None
            if wrapped and tail in INVOKES and len(self.inputs) == before:
                self._record(node, receiver, args, kwargs, frame)  # its body calls no model
            return out
        if isinstance(func, ast.Attribute) and not isinstance(receiver, Inst):
            target = self.attr_of(func, env, frame)
        if isinstance(target, Fn):
            return self.call(target, args, kwargs, frame, site=node)
        if isinstance(target, str) and "::" in target:
            return self.instance(target, args, kwargs, frame, site=node)
        return None
