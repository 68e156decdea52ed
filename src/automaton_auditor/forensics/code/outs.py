"""What a function hands back, return by return: the per-function half of the LangGraph
execution model (`execution`).

Each return becomes one JSON "out" with the guards that lead to it (tests of the state
parameter: ``state.get("k")`` truthy or not) and what it returns:

- ``keys``: the keys of a returned dict (literal, built up in a variable, ``dict(k=...)``,
  ``Command(update={...})``) with what their values surely are (`sure_values`: a literal,
  non-empty, holding a truthy item, a constructed object; a local read through what it
  surely holds at that return), else ``"?"``;
- ``whole``: the state parameter itself (or ``{**state, ...}``) is returned;
- ``echo``: keys returned with the very value the state holds under them (``{"k":
  state["k"]}``, a local bound only to ``state.get("k", [])`` and grown in place, ``state["k"]
  + [x]``): an add reducer appends that list to itself;
- ``targets`` / ``sends``: node names a router returns (strings, ``END``, lists of them) and
  the targets of ``Send(...)`` (``count`` when sent over a literal list); ``gotos`` for
  ``Command(goto=...)``; ``many`` when a list is returned (a literal, or one built up with
  ``append``/``extend``/``+=`` of names): LangGraph runs every name in it at once; names
  added under a test of the state the list was not made under (``if state.get("k"):
  out.append("b")``) are one more out of the same return, ``part`` (as are the names added
  without one), its guards those of the return and of the test: it is taken with the others
  whenever its guards can hold;
- ``call``: the returned value is another function's answer (followed later, by name), also
  awaited or through ``asyncio.wait_for(fn(...))`` / ``asyncio.to_thread(fn, ...)`` /
  ``typing.cast(T, fn(...))``;
- ``open``: anything else (not determined).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from automaton_auditor.forensics.code.common import JSON, dotted, resolve, str_value, unparse
from automaton_auditor.forensics.code.guards import Guard, Tests, opposed
from automaton_auditor.forensics.code.state_echo import mirrors_of, rebound_keys, state_value
from automaton_auditor.forensics.code.sure_values import Kinds, literal, sure_locals

MAX_OUTS = 60
MAX_ANNOTATION = 400  # characters of a quoted annotation read (a real one is short)
# library calls whose answer is their first argument's (an awaitable) or that of the
# function they are given, called with the other arguments
AWAITED_ARG = {"asyncio.wait_for", "asyncio.shield"}
CALLED_ARG = {"asyncio.to_thread"}
CASTS = {"typing.cast", "typing_extensions.cast"}  # they hand back their second argument


def outs_of(node: ast.FunctionDef | ast.AsyncFunctionDef, imports: dict[str, str]) -> list[JSON]:
    """Every return of a function (nested definitions excluded), with its guards."""
    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    state = params[1] if params[:1] in (["self"], ["cls"]) and len(params) > 1 else (
        params[0] if params else "")
    reader = _Outs(state, imports, Tests(node, state))
    mirrors = mirrors_of(node, state)
    reader.rebound = rebound_keys(node, state, mirrors)
    reader.mirrors = {name: key for name, key in mirrors.items() if key not in reader.rebound}
    reader.sure = sure_locals(node)
    reader.block(node.body, [])
    return reader.outs[:MAX_OUTS]


def return_facts(node: ast.FunctionDef | ast.AsyncFunctionDef, imports: dict[str, str]) -> JSON:
    """A function's ``outs``, its ``literal`` destinations and ``typed``: the class its state
    parameter is annotated with (a dotted name, else None). LangGraph reads a router's
    state through that class when it has one, so the router never sees what its own node
    returned that the state does not declare (`execution.Router.passthrough`)."""
    params = [*node.args.posonlyargs, *node.args.args]
    param = params[1] if [a.arg for a in params[:1]] in (["self"], ["cls"]) and \
        len(params) > 1 else (params[0] if params else None)
    ann = param.annotation if param is not None else None
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):  # a quoted annotation
        ann = ast.Name(id=ann.value) if ann.value.isidentifier() else None
    name = dotted(ann) if ann is not None else None
    return {"outs": outs_of(node, imports), "literal": literal_targets(node),
            "typed": resolve(name, imports) or name if name else None}


def literal_targets(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The values of a ``-> Literal["a", "b"]`` return annotation. LangGraph reads them as
    the router's destinations when add_conditional_edges is given no path map."""
    ann = node.returns
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):  # a quoted annotation
        try:
            ann = ast.parse(ann.value[:MAX_ANNOTATION], mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return []
    if not isinstance(ann, ast.Subscript) or \
            (dotted(ann.value) or "").rsplit(".", 1)[-1] != "Literal":
        return []
    out = []
    for item in ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]:
        text = "__end__" if dotted(item) == "END" else str_value(item)
        if text is None:
            return []  # a value not spelled out: the destinations are not read from it
        out.append(text)
    return out


def returned(value: ast.expr, params: list[str], imports: dict[str, str],
             bound: Callable[[str], ast.expr | None], depth: int = 0) -> list[Any]:
    """What one ``return`` of a router names, for the topology: node names (strings),
    ``{"ref": name}`` (a module-level name, resolved across files later), ``{"call": name}``
    (another function's answer, followed later) or ``{"open": text}`` (not determined: a
    value read from the state, an unknown expression). A local variable is read through
    the value bound to it (`bound`), never taken as a node name: ``out = router(state);
    return out`` follows the call. ``Send(...)`` adds nothing here: Sends are recorded
    where they are made, in a list built up or in a helper."""
    def again(item: ast.expr) -> list[Any]:
        return returned(item, params, imports, bound, depth + 1) if depth < 6 else \
            [{"open": unparse(item, 80)}]
    if isinstance(value, ast.List | ast.Tuple | ast.Set):
        return [e for item in value.elts for e in again(item)]
    if isinstance(value, ast.IfExp):
        return again(value.body) + again(value.orelse)
    if isinstance(value, ast.ListComp | ast.GeneratorExp | ast.SetComp):
        return [] if _is_send(value.elt, imports) else [{"open": unparse(value, 80)}]
    if isinstance(value, ast.Constant):
        return [value.value] if isinstance(value.value, str) else []
    name = dotted(value)
    if name is not None:
        if name in ("END", "START") or (resolve(name, imports) or "").endswith(".END"):
            return ["__end__" if name != "START" else "__start__"]
        if name.split(".")[0] in params:
            return [{"open": name}]  # the state's value (or the parameter's)
        local = bound(name)
        return again(local) if local is not None else [{"ref": resolve(name, imports)}]
    if isinstance(value, ast.Call):
        func = dotted(value.func)
        root = (func or "").split(".")[0]
        if _is_send(value, imports):
            return []
        if func and (root not in params or root in ("self", "cls")):
            return [{"call": resolve(func, imports)}]
    return [{"open": unparse(value, 80)}]


def _is_send(node: ast.expr, imports: dict[str, str]) -> bool:
    return isinstance(node, ast.Call) and \
        (resolve(dotted(node.func), imports) or "").rsplit(".", 1)[-1] == "Send"


class _Outs:
    def __init__(self, state: str, imports: dict[str, str], tests: Tests) -> None:
        self.state, self.imports, self.tests = state, imports, tests
        self.dicts: dict[str, JSON] = {}
        self.outs: list[JSON] = []
        self.mirrors: dict[str, str] = {}  # local name -> the state key it holds (`mirrors_of`)
        # a list of node names: the guards it was bound under, and the names added to it
        # under guards of their own (each with those guards)
        self.made: dict[str, list[Guard]] = {}
        self.parts: dict[str, list[JSON]] = {}
        self.rebound: frozenset[str] = frozenset()  # keys stored with a value of its own
        # what the locals surely hold at each return (`sure_values`), and at the one read
        self.sure: dict[int, Kinds] = {}
        self.here: Kinds = {}

    # --- statements ----------------------------------------------------------------------
    def block(self, body: list[ast.stmt], guards: list[Guard]) -> None:
        guards = list(guards)
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if isinstance(stmt, ast.Return):
                if stmt.value is not None:
                    self.here = self.sure.get(id(stmt), {})
                    self.ret(stmt.value, guards, stmt.lineno)
                    self.here = {}
                return
            if isinstance(stmt, ast.If):
                yes, no = self.tests.split(stmt.test)
                self.block(stmt.body, guards + yes)
                self.block(stmt.orelse, guards + no)
                if stmt.body and isinstance(stmt.body[-1], ast.Return | ast.Raise) and \
                        not stmt.orelse:
                    guards += no  # ``if not ok: return "error"`` then the rest
                continue
            self.track(stmt, guards)
            for field in ("body", "orelse", "finalbody"):
                inner = [s for s in getattr(stmt, field, None) or [] if isinstance(s, ast.stmt)]
                if inner:
                    self.block(inner, guards)
            for handler in getattr(stmt, "handlers", None) or []:
                self.block(handler.body, guards)

    def track(self, stmt: ast.stmt, guards: list[Guard]) -> None:
        """Follow a dict being built in a variable: ``out = {}; out["k"] = v``."""
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    self.dicts[target.id] = self.value(stmt.value)
                    self.made[target.id] = list(guards)
                    self.parts.pop(target.id, None)
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and target.value.id in self.dicts:
                    key = str_value(target.slice)
                    if key is not None:
                        self.dicts[target.value.id].setdefault("keys", {})[key] = \
                            literal(stmt.value)
                        if self.echo(stmt.value) == key:
                            self.dicts[target.value.id].setdefault("echo", []).append(key)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and \
                isinstance(stmt.op, ast.Add):
            self.grow(stmt.target.id, stmt.value, guards)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            receiver = call.func.value.id if isinstance(call.func, ast.Attribute) and \
                isinstance(call.func.value, ast.Name) else None
            if receiver not in self.dicts or not isinstance(call.func, ast.Attribute):
                return
            if call.func.attr == "update":
                extra = self.value(call.args[0]) if call.args else {"keys": {
                    kw.arg: literal(kw.value) for kw in call.keywords if kw.arg}}
                self.dicts[receiver] = _union(self.dicts[receiver], extra)
            elif call.func.attr in ("append", "extend") and len(call.args) == 1:
                arg = call.args[0]
                self.grow(receiver, ast.List(elts=[arg]) if call.func.attr == "append" else arg,
                          guards)

    def grow(self, name: str, items: ast.expr, guards: list[Guard]) -> None:
        """``runnable.append("repo")`` / ``.extend([...])`` / ``+= [...]`` on a list of node
        names: the router returns all of them, those added under a test the list was not
        made under only when that test holds. Anything but literal names (a ``Send`` made in
        a loop, a variable) leaves the list not determined, as before."""
        known = self.dicts.get(name)
        if known is None or not known.get("many"):
            return
        names = isinstance(items, ast.List | ast.Tuple) and all(
            str_value(e) is not None for e in items.elts)
        if not names:
            self.dicts[name] = {"open": True}
            self.parts.pop(name, None)
        elif any(g not in self.made.get(name, []) for g in guards):
            self.parts.setdefault(name, []).append({"guards": list(guards),
                                                    **self.value(items)})
        else:
            self.dicts[name] = _union(known, self.value(items))

    # --- returns -------------------------------------------------------------------------
    def ret(self, value: ast.expr, guards: list[Guard], line: int) -> None:
        if isinstance(value, ast.IfExp):
            yes, no = self.tests.split(value.test)
            self.ret(value.body, guards + yes, line)
            self.ret(value.orelse, guards + no, line)
            return
        test = value.args[0] if isinstance(value, ast.Call) and dotted(value.func) == "bool" \
            and len(value.args) == 1 else value
        yes, no = self.tests.split(test) if isinstance(
            test, ast.UnaryOp | ast.Compare) or test is not value else ([], [])
        if yes or no:  # a test returned (``return not state.get("failed")``): True or False
            self.outs += [{"line": line, "guards": guards + when, "targets": [str(result)],
                           "test": True} for result, when in ((True, yes), (False, no))
                          ][:MAX_OUTS - len(self.outs)]
            return
        out = {"line": line, "guards": guards, **self.value(value)}
        parts = [{"line": line, "guards": [*guards, *(g for g in p["guards"] if g not in guards)],
                  **{k: v for k, v in p.items() if k != "guards"}, "part": True}
                 for p in (self.parts.get(value.id, []) if isinstance(value, ast.Name)
                           and out.get("many") else [])
                 if not any(opposed(want, had) for k, want in p["guards"]
                            for held, had in guards if held == k)]
        # names added under a test of their own: one more out each, taken with the others
        outs = ([{**out, "part": True}] if out.get("targets") or out.get("sends") else []) + \
            parts if parts else [out]
        self.outs += outs[:MAX_OUTS - len(self.outs)]

    def value(self, node: ast.expr) -> JSON:
        """What one returned (or assigned) expression is, as an out's fields."""
        if isinstance(node, ast.Await):  # an async node hands back what it awaited
            return self.value(node.value)
        if isinstance(node, ast.Constant):
            return {"targets": [node.value]} if isinstance(node.value, str) else {}
        name = dotted(node)
        if name is not None:
            full = resolve(name, self.imports) or name
            if full.rsplit(".", 1)[-1] == "END":
                return {"targets": ["__end__"]}
            if name == self.state:
                return {"whole": True}
            if name in self.dicts:
                return dict(self.dicts[name])
            return {"open": True}
        if isinstance(node, ast.Dict):
            return self.dict_value(node)
        if isinstance(node, ast.List | ast.Tuple):
            # ``many``: a list of node names, which LangGraph runs all at once
            return {**_union(*(self.value(e) for e in node.elts)), "many": True}
        if isinstance(node, ast.ListComp):
            return self.comprehension(node)
        if isinstance(node, ast.Call):
            return self.call_value(node)
        return {"open": True}

    def dict_value(self, node: ast.Dict) -> JSON:
        keys: dict[str, Any] = {}
        out: JSON = {"keys": keys}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:  # ``{**state, "k": v}`` / ``{**other}``: a copy of what it spreads
                spread = self.value(item)
                spread = {**spread, "copy": True} if spread.get("whole") else spread
                out = _union(out, spread)
                keys = out.setdefault("keys", keys)
                continue
            text = str_value(key)
            if text is None:
                out["open"] = True
            else:
                keys[text] = literal(item, self.here)
                if self.echo(item) == text:
                    out.setdefault("echo", []).append(text)
        return out

    def echo(self, node: ast.expr) -> str | None:
        """The state key whose own value `node` carries (`state_value`), else None; a key
        the function stored a value of its own into is no longer the state's."""
        key = state_value(node, self.state, self.mirrors)
        return None if key in self.rebound else key

    def call_value(self, node: ast.Call) -> JSON:
        full = resolve(dotted(node.func), self.imports) or ""
        tail = full.rsplit(".", 1)[-1]
        if self.copies_state(node, full):  # ``new_state = dict(state)``: every key it holds,
            return {"whole": True, "copy": True}  # in a dict whose stores are not followed
        if tail == "dict" and not node.args:
            return {"keys": {kw.arg: literal(kw.value) for kw in node.keywords if kw.arg}}
        if tail == "Send" and node.args:
            return {"sends": [str_value(node.args[0]) or "?"]}
        if full in CASTS and len(node.args) == 2:
            return self.value(node.args[1])  # ``cast(dict, fn(state))`` is fn's answer
        if full in AWAITED_ARG and node.args:
            return self.value(node.args[0])  # ``wait_for(fn(state), timeout=60)``: fn's answer
        if full in CALLED_ARG and node.args and dotted(node.args[0]):
            return {"call": dotted(node.args[0])}  # ``to_thread(fn, state)``: fn's answer
        if tail == "Command":
            out: JSON = {}
            for kw in node.keywords:
                if kw.arg == "update" and kw.value is not None:
                    out = _union(out, self.value(kw.value))
                elif kw.arg == "goto":
                    goto = self.value(kw.value)
                    out["gotos"] = [*goto.get("targets", []), *goto.get("sends", [])]
            return out
        name = dotted(node.func)
        return {"call": name} if name else {"open": True}

    def copies_state(self, node: ast.Call, full: str) -> bool:
        """``dict(state)``, ``copy.copy(state)``, ``copy.deepcopy(state)``,
        ``state.copy()``, ``state.model_copy()``: a copy of the whole state."""
        if full in ("dict", "copy.copy", "copy.deepcopy") and len(node.args) == 1 \
                and not node.keywords:
            return bool(self.state) and dotted(node.args[0]) == self.state
        return isinstance(node.func, ast.Attribute) and node.func.attr in (
            "copy", "model_copy") and not node.args and bool(self.state) and \
            dotted(node.func.value) == self.state

    def comprehension(self, node: ast.ListComp) -> JSON:
        """``[Send("judge", {...}) for j in ["a", "b"]]``: a Send per item of a literal list."""
        inner = self.value(node.elt)
        if "sends" not in inner or len(node.generators) != 1:
            return {"open": True}
        iterable = node.generators[0].iter
        count = len(iterable.elts) if isinstance(iterable, ast.List | ast.Tuple) else None
        return {"sends": inner["sends"], "count": count}


def _union(*parts: JSON) -> JSON:
    out: JSON = {}
    for part in parts:
        for field, value in part.items():
            if field == "keys":
                out.setdefault("keys", {}).update(value)
            elif isinstance(value, list):
                out[field] = [*out.get(field, []), *value]
            elif isinstance(value, bool):
                out[field] = out.get(field, False) or value
            else:
                out[field] = value
    return out
