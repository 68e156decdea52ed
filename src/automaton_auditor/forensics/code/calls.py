"""The iterative walk that records calls, functions, prompt strings and identifiers.

Every fact comes from a code node (a call, an assignment, a return); docstrings and other
bare string statements are skipped, and comments are not in the AST at all.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from automaton_auditor.forensics.code.classify import classify_call
from automaton_auditor.forensics.code.common import (
    JSON,
    dotted,
    field_alias,
    field_required,
    is_literal,
    is_true,
    keyword,
    param_defaults,
    qualified,
    reducer_of,
    resolve,
    snippet,
    str_value,
    unparse,
)
from automaton_auditor.forensics.code.exprs import handles_scores
from automaton_auditor.forensics.code.flow import FlowBuilder
from automaton_auditor.forensics.code.lambdas import as_def
from automaton_auditor.forensics.code.logic import LogicBuilder
from automaton_auditor.forensics.code.outs import return_facts, returned
from automaton_auditor.forensics.code.recorder import Ctx
from automaton_auditor.forensics.code.retries import (
    RETRY_NAME,
    attempt_loop,
    calls_param,
    handler_retries,
    retried,
)
from automaton_auditor.forensics.code.rubric_ids import criterion_facts
from automaton_auditor.forensics.code.unused_decisions import unused_marks

PERSONA_WORDS = re.compile(r"prosecutor|defen[cs]e|tech[\s_-]?lead|persona|judge", re.I)
TEMP_NAME = re.compile(r"^(TemporaryDirectory|mkdtemp)$|te?mp\w*_?dir|temporary_?dir|sandbox",
                       re.I)
JUDGE_KEYS = ("judge", "judge_name", "persona", "role", "judge_type", "judge_role")
MAX_STRING = 6000


# Fields that never hold child nodes worth visiting (names, operators, load/store markers).
_NOT_CHILDREN = {"ctx", "op", "ops", "type_comment", "kind", "id", "attr", "name", "arg",
                 "asname", "module", "level", "conversion", "is_async", "type_ignores"}
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Name: ()}
_GUARDS: dict[type, str] = {ast.Try: "in_try", ast.TryStar: "in_try", ast.For: "loop",
                            ast.AsyncFor: "loop", ast.While: "loop",
                            ast.With: "tempdir", ast.AsyncWith: "tempdir"}


def _child_fields(cls: type) -> tuple[str, ...]:
    # reversed: children are pushed on a stack, so the first field must be pushed last
    fields = tuple(reversed([f for f in getattr(cls, "_fields", ()) if f not in _NOT_CHILDREN]))
    _FIELDS[cls] = fields
    return fields


class CallCollector:
    """Collects call facts, functions, persona strings and justice identifiers."""

    def __init__(self, path: str, lines: list[str], imports: dict[str, str],
                 consts: dict[str, Any] | None = None) -> None:
        self.path, self.lines, self.imports = path, lines, imports
        self.consts = consts or {}
        self.calls: list[JSON] = []
        self.functions: dict[str, JSON] = {}
        self.strings: list[JSON] = []
        # values a judge's identity is given (``JudicialOpinion(judge="Prosecutor")``)
        self.judge_values: set[str] = set()
        self.classes: list[JSON] = []
        self._skip: set[int] = set()
        self.lambdas: dict[int, str] = {}  # lambdas read as functions (`lambdas`): id -> name
        # (function, name) -> the last expression assigned, for ``cmd = [...]; run(cmd)``
        self.assigned: dict[tuple[str, str], ast.expr] = {}
        # every value assigned so far, in order: ``text = text.strip()`` reads the one before
        self.history: dict[tuple[str, str], list[ast.expr]] = {}
        self.flow = FlowBuilder(imports)
        self.logic = LogicBuilder(imports, self.consts)

    def walk(self, tree: ast.Module) -> None:
        """Walk the whole module in source order with an explicit stack.

        Children are found through a per-type table of fields that can hold nodes (about
        three times faster than ``ast.iter_child_nodes``), and the guards (try, loop,
        temporary directory) change only for the ``body`` of the statement that sets them.
        """
        stack: list[tuple[ast.AST, Ctx]] = [(tree, Ctx())]
        pop, push = stack.pop, stack.append
        dispatch = self._dispatch()
        while stack:
            node, ctx = pop()
            cls = type(node)
            handler = dispatch.get(cls)
            if handler is not None:
                result = handler(node, ctx)
                if result is False:
                    continue
                if isinstance(result, Ctx):
                    ctx = result
            fields = _FIELDS.get(cls)
            if fields is None:
                fields = _child_fields(cls)
            guard = _GUARDS.get(cls)
            for name in fields:
                value = getattr(node, name, None)
                if value is None:
                    continue
                child_ctx = self._guarded(node, ctx, guard) if guard and name == "body" else ctx
                if type(value) is list:
                    for child in reversed(value):
                        if isinstance(child, ast.AST):
                            push((child, child_ctx))
                elif isinstance(value, ast.AST):
                    push((value, child_ctx))

    def _dispatch(self) -> dict[type, Any]:
        return {
            ast.FunctionDef: self._function, ast.AsyncFunctionDef: self._function,
            ast.ClassDef: self._class, ast.Call: self._call,
            ast.Assign: self._assigned_string, ast.AnnAssign: self._assigned_string,
            ast.Dict: self._dict_strings, ast.Return: self._return,
            ast.For: self._loop_binding, ast.comprehension: self._loop_binding,
            ast.Constant: self._constant, ast.Expr: self._bare_expr,
            ast.Name: self._ident, ast.Attribute: self._ident,
            ast.Try: self._try, ast.TryStar: self._try, ast.Lambda: self._lambda}

    def _lambda(self, node: ast.Lambda, ctx: Ctx) -> Ctx | None:
        # a node's lambda (or a named one) is a def returning its expression (`lambdas`)
        if (name := self.lambdas.get(id(node))) is None:
            return None
        fn, ret = as_def(node, name)
        inner = self._function(fn, ctx)
        self._return(ret, inner)
        return inner

    def _try(self, node: ast.Try | ast.TryStar, ctx: Ctx) -> None:
        facts = self.functions.get(ctx.func) if ctx.func and ctx.in_attempt_loop else None
        if facts is not None:
            # which failures each try of an attempt loop goes round again for
            facts.setdefault("attempt_tries", []).append(retried(node))
        if facts is not None and "try_in_attempt_loop" not in facts:
            # ``for attempt in range(n): try: ... except: continue`` -- a retry loop
            facts["try_in_attempt_loop"] = {"line": node.lineno, "calls_param": calls_param(
                node, facts["params"]), "snippet": snippet(self.lines, node, 400)}
        for call, how, tried in handler_retries(node):  # the model called again on failure
            self.add("retry", call, ctx, how=how, covers=tried)

    def _guarded(self, node: ast.AST, ctx: Ctx, guard: str) -> Ctx:
        if guard == "tempdir":
            items = getattr(node, "items", [])
            if any(self._is_tempdir(item.context_expr) for item in items):
                return ctx._replace(tempdir=True)
            return ctx
        if guard == "in_try":
            return ctx._replace(in_try=True)
        return ctx._replace(in_attempt_loop=True) if attempt_loop(node, self.imports) else ctx

    def _bare_expr(self, node: ast.Expr, _ctx: Ctx) -> bool | None:
        # Docstrings and other bare strings say nothing about what the code does.
        return False if isinstance(node.value, ast.Constant | ast.JoinedStr) else None

    def _constant(self, node: ast.Constant, ctx: Ctx) -> None:
        if isinstance(node.value, str) and id(node) not in self._skip:
            self._string(node.value, node.lineno, "", ctx)
            self._ident(node, ctx)

    def _is_tempdir(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        full = resolve(dotted(node.func), self.imports) or ""
        # tempfile itself, or a project wrapper named like one (``temporary_directory()``)
        return bool(TEMP_NAME.search(full.rsplit(".", 1)[-1]))

    def _class(self, node: ast.ClassDef, ctx: Ctx) -> Ctx:
        fields = []
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                fields.append({"name": stmt.target.id, "line": stmt.lineno,
                               "annotation": unparse(stmt.annotation, 200),
                               "reducer": reducer_of(stmt.annotation, self.imports),
                               "required": field_required(stmt.value, self.imports),
                               "alias": field_alias(stmt.value)})
        self.classes.append({
            "name": node.name, "line": node.lineno,
            "bases": [resolve(dotted(b), self.imports) or unparse(b, 80) for b in node.bases],
            "fields": fields, "source": snippet(self.lines, node, 4000)})
        return ctx._replace(cls=node.name, func="")

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Ctx) -> Ctx:
        qual = qualified(ctx.func, ctx.cls, node.name)
        params = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        defaults, numbers = param_defaults(node.args, self.imports)
        listed = node.decorator_list
        decorators = [resolve(dotted(d.func if isinstance(d, ast.Call) else d), self.imports)
                      or unparse(d, 80) for d in listed]
        self.functions[qual] = {"line": node.lineno, "end": node.end_lineno or node.lineno,
                                "params": params, "defaults": defaults,
                                "retry_hint": any(RETRY_NAME.search(p) for p in params),
                                "decorators": decorators, "sends": [],
                                # ``@deco(arg)`` (its answer decorates), not ``@deco``
                                "decorator_called": [isinstance(d, ast.Call) for d in listed],
                                "returns": [], "gotos": [], "loops": {},
                                "flow": self.flow.summarize(node),
                                **({"int_defaults": numbers} if numbers else {}),
                                **return_facts(node, self.imports), **criterion_facts(node)}
        if handles_scores(self.lines, node.lineno, node.end_lineno or node.lineno):
            self.functions[qual]["logic"] = unused_marks(node, self.logic.summarize(node))
        for deco in decorators:
            if deco.rsplit(".", 1)[-1] in ("retry", "on_exception", "on_predicate"):
                self.add("retry", node, ctx._replace(func=qual), how=f"@{deco}")
        return ctx._replace(func=qual, in_try=False, in_attempt_loop=False)

    def add(self, kind: str, node: ast.AST, ctx: Ctx, **extra: Any) -> None:
        """Record one call fact of `kind` at `node`, with its snippet."""
        self.calls.append({"kind": kind, "line": getattr(node, "lineno", 1), "func": ctx.func,
                           "snippet": snippet(self.lines, node), **extra})

    def defaults(self, func: str) -> dict[str, str]:
        """Parameter defaults of function `func` (``schema=JudicialOpinion``)."""
        return (self.functions.get(func) or {}).get("defaults") or {}

    def int_defaults(self, func: str) -> dict[str, int]:
        """Parameters of function `func` whose default is an int literal (``depth=1``)."""
        return (self.functions.get(func) or {}).get("int_defaults") or {}

    def note(self, func: str, key: str, value: Any) -> None:
        """Append `value` to the list `key` (``sends``, ``gotos``) of function `func`."""
        facts = self.functions.get(func)
        if facts is not None:
            facts[key].append(value)

    # --- strings -----------------------------------------------------------------------
    def _string(self, text: str, line: int, var: str, ctx: Ctx) -> None:
        if ctx.cls and not ctx.func and var:
            var = f"{ctx.cls}.{var}"  # ``class ProsecutorJudge: system_prompt = "..."``
        persona_var = bool(var and PERSONA_WORDS.search(var))
        if len(text) < 30 or not (persona_var or (len(text) >= 60 and
                                                  PERSONA_WORDS.search(text))):
            return
        self.strings.append({"line": line, "var": var, "func": ctx.func,
                             "text": text[:MAX_STRING]})

    def _assigned_string(self, node: ast.Assign | ast.AnnAssign, ctx: Ctx) -> None:
        value = node.value
        targets_ = node.targets if isinstance(node, ast.Assign) else [node.target]
        if value is not None:
            for target in targets_:
                if isinstance(target, ast.Name):
                    self.assigned[(ctx.func, target.id)] = value
                    self.history.setdefault((ctx.func, target.id), []).append(value)
        text = self.text_of(value, ctx) if value is not None else None
        if text is None or value is None:
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        self._skip.add(id(value))
        self._string(text, node.lineno, dotted(targets[0]) or "", ctx)

    def text_of(self, node: ast.AST | None, ctx: Ctx, depth: int = 0) -> str | None:
        """The text a string expression builds: literals, ``BASE + "..."``, f-strings
        over known strings, and names bound to strings in this module or function."""
        if node is None or depth > 20:
            return None
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.text_of(node.left, ctx, depth + 1), self.text_of(
                node.right, ctx, depth + 1)
            return None if left is None and right is None else (left or "") + (right or "")
        if isinstance(node, ast.JoinedStr):
            parts = [self.text_of(v.value if isinstance(v, ast.FormattedValue) else v, ctx,
                                  depth + 1) for v in node.values]
            return "".join(p for p in parts if p)
        if isinstance(node, ast.Name):
            bound = self.assigned.get((ctx.func, node.id)) or self.assigned.get(("", node.id))
            if bound is not None and bound is not node:
                return self.text_of(bound, ctx._replace(func=""), depth + 1)
            value = self.consts.get(node.id)
            return value if isinstance(value, str) else None
        return None

    def _dict_strings(self, node: ast.Dict, ctx: Ctx) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            text = self.text_of(value, ctx)
            name = str_value(key) if key is not None else None
            if name in JUDGE_KEYS and isinstance(value, ast.Constant) and \
                    isinstance(value.value, str):
                self.judge_values.add(value.value)
            if text is not None and name is not None:
                self._skip.add(id(value))
                self._string(text, value.lineno, name, ctx)

    # --- functions: what a router can return -------------------------------------------
    def _return(self, node: ast.Return, ctx: Ctx) -> None:
        facts = self.functions.get(ctx.func) if ctx.func else None
        if facts is None or node.value is None:
            return
        # how many outcomes the function's returns spell out (`x if c else y` is two): a
        # router with two or more chooses a branch, one returning a fixed list only fans out
        facts["outcomes"] = int(facts.get("outcomes", 0)) + (
            2 if isinstance(node.value, ast.IfExp) else 1)
        # a returned list (LangGraph runs all of its names at once) is read from the
        # function's outs (`outs`, ``many``); a local variable through its binding
        params = [p for p in facts["params"] if p not in ("self", "cls")]
        facts["returns"] += returned(node.value, params, self.imports,
                                     lambda name: self.assigned.get((ctx.func, name)))

    def _loop_binding(self, node: ast.For | ast.comprehension, ctx: Ctx) -> None:
        facts = self.functions.get(ctx.func) if ctx.func else None
        target = dotted(node.target)
        if facts is None or target is None:
            return
        if isinstance(node.iter, ast.List | ast.Tuple):
            values: Any = [str_value(e) for e in node.iter.elts]
        else:
            values = {"ref": resolve(dotted(node.iter), self.imports)} if dotted(node.iter) \
                else None
        if values is not None:
            facts["loops"][target] = values

    def _ident(self, node: ast.AST, ctx: Ctx) -> None:
        if not ctx.func:
            return
        if isinstance(node, ast.Name) and type(node.ctx) is ast.Store and \
                RETRY_NAME.search(node.id):
            self.functions[ctx.func]["retry_hint"] = True

    # --- calls -------------------------------------------------------------------------
    def _call(self, node: ast.Call, ctx: Ctx) -> None:
        name = dotted(node.func)
        full = resolve(name, self.imports) or ""
        tail = full.rsplit(".", 1)[-1]
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        classify_call(self, node, ctx, name or "", full, tail, attr)
        for kw in node.keywords:
            if kw.arg in JUDGE_KEYS and isinstance(kw.value, ast.Constant) and \
                    isinstance(kw.value.value, str):
                self.judge_values.add(kw.value.value)

    def is_send(self, node: ast.Call) -> bool:
        """True when the call constructs LangGraph's ``Send``."""
        full = resolve(dotted(node.func), self.imports) or ""
        return full.rsplit(".", 1)[-1] == "Send"

    def bound(self, name: str, ctx: Ctx, before: ast.expr | None = None) -> ast.expr | None:
        """The value last assigned to the local `name` before this point (None: unknown), or
        the one assigned before the value `before` (read inside ``x = x.strip()``)."""
        if before is None:
            return self.assigned.get((ctx.func, name))
        values = self.history.get((ctx.func, name)) or []
        at = next((i for i, v in enumerate(values) if v is before), 0)
        return values[at - 1] if at else None

    def first_arg(self, node: ast.Call, ctx: Ctx) -> ast.expr | None:
        """The command argument of a process call (positional or ``args=``/``cmd=``),
        looked through one local assignment (``cmd = ["git", "clone", url]``)."""
        arg = node.args[0] if node.args else (
            keyword(node, "args") or keyword(node, "cmd") or keyword(node, "command"))
        if isinstance(arg, ast.Name):
            return self.assigned.get((ctx.func, arg.id), arg)
        return arg

    def literal(self, node: ast.expr | None, ctx: Ctx | None = None, depth: int = 0) -> bool:
        """True when the argument carries no data: constants, lists of them, and names,
        concatenations and f-strings built only from constants (``CMD = "ls"``)."""
        if node is None or is_literal(node):
            return True
        if depth > 10:
            return False
        func = ctx.func if ctx else ""
        if isinstance(node, ast.Name):
            if node.id in (self.functions.get(func) or {}).get("params", ()):
                return False  # a parameter shadows any module constant of that name
            bound = self.assigned.get((func, node.id)) or self.assigned.get(("", node.id))
            if bound is not None and bound is not node:
                return self.literal(bound, ctx, depth + 1)
            return isinstance(self.consts.get(node.id), str | list)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.literal(node.left, ctx, depth + 1) and self.literal(node.right, ctx,
                                                                             depth + 1)
        if isinstance(node, ast.JoinedStr):
            return all(self.literal(v.value if isinstance(v, ast.FormattedValue) else v, ctx,
                                    depth + 1) for v in node.values)
        if isinstance(node, ast.List | ast.Tuple):
            return all(self.literal(e, ctx, depth + 1) for e in node.elts)
        return False

    def shell(self, node: ast.Call) -> bool:
        """True for ``shell=True``."""
        return is_true(keyword(node, "shell"))
