"""Judges that index the Pydantic opinion they are handed: a TypeError after the model call.

``llm.with_structured_output(Model)`` (a Pydantic ``BaseModel``, no ``include_raw=True``) is
a runnable whose ``.invoke``/``.ainvoke`` returns a ``Model`` instance, also at the end of a
``prompt | ...`` chain, through a name, ``self.attr``, a module constant or a repository
function that returns it; ``Model(...)`` and ``Model.model_validate(...)`` return one too. A
``BaseModel`` has no ``__getitem__``/``__setitem__``: ``opinion["judge"] = name`` or
``opinion["score"]`` on it raises ``TypeError`` when the line runs. Such a line counts when it
runs whenever the assignment of the answer does: a later statement of the same block (a
compound statement's header only), before the name is bound again, and not under a ``try``
that catches the error. Only opinion schemas count (the judges' answers, named like the
``llm.opinion_schema`` fact's), in code the graph runs when that is known.

- ``judges.fail_after_model``: some judge answer is indexed so; the judge that receives it
  returns no opinion. Graded (``data["cap"]``): 3 when every schema-bound opinion call is
  followed so (no judge ever returns an opinion), else 4.
- ``llm.fail_after_model``: every schema-bound opinion call is followed so: the schema is
  bound, but no validated opinion ever reaches the state.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.blocked import always_run, always_run_nodes
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.prompt_values import Program
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.state_schema import typed_classes
from automaton_auditor.forensics.code.structured_output import OPINION
from automaton_auditor.state import Finding

Fn = ast.FunctionDef | ast.AsyncFunctionDef
Kind = tuple[str, str, str]  # ("runnable" | "answer", schema, path:line of its binding)
INVOKES = ("invoke", "ainvoke")
VALIDATES = ("model_validate", "model_validate_json", "parse_obj", "parse_raw")
CATCHES = {"TypeError", "Exception", "BaseException"}
MAX_DEPTH = 8  # hops through names, calls and returns
BUDGET = 200_000  # expressions read per repository: a bound on work
MAX_QUOTED = 8


class Answers:
    """Reads which expressions hold a schema-bound runnable or its Pydantic answer."""

    def __init__(self, program: Program, models: set[str]) -> None:
        self.program = program
        self.models = models  # names of the repository's BaseModel classes
        self.classes: dict[int, ast.ClassDef] = {}  # id(method) -> its class
        self.steps = 0

    def schema(self, node: ast.expr | None) -> str | None:
        """The model class an expression names (``Model`` or ``mod.Model``)."""
        name = node.id if isinstance(node, ast.Name) else (
            node.attr if isinstance(node, ast.Attribute) else None)
        return name if name in self.models else None

    def kind(self, path: str, fn: Fn | None, node: ast.expr | None, depth: int = 0) -> Kind | None:
        """What `node` holds, read in `fn` of `path` (None: module level, or not known)."""
        self.steps += 1
        if node is None or depth > MAX_DEPTH or self.steps > BUDGET:
            return None
        if isinstance(node, ast.Await):
            return self.kind(path, fn, node.value, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            right = self.kind(path, fn, node.right, depth)
            return right if right and right[0] == "runnable" else None
        if isinstance(node, ast.Name):
            return self._name(path, fn, node.id, depth)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "self" and fn is not None:
            return self._self_attr(path, fn, node.attr, depth)
        return self._call(path, fn, node, depth) if isinstance(node, ast.Call) else None

    def _call(self, path: str, fn: Fn | None, call: ast.Call, depth: int) -> Kind | None:
        func = call.func
        where = f"{path}:{call.lineno}"
        if isinstance(func, ast.Attribute) and func.attr == "with_structured_output":
            raw = next((k.value for k in call.keywords if k.arg == "include_raw"), None)
            schema = self.schema(call.args[0] if call.args else next(
                (k.value for k in call.keywords if k.arg == "schema"), None))
            # include_raw=True answers a dict {"raw", "parsed", "parsing_error"}
            plain = raw is None or (isinstance(raw, ast.Constant) and raw.value is False)
            return ("runnable", schema, where) if schema and plain else None
        if isinstance(func, ast.Attribute) and func.attr in INVOKES:
            inner = self.kind(path, fn, func.value, depth)
            return ("answer", inner[1], inner[2]) if inner and inner[0] == "runnable" else None
        if isinstance(func, ast.Attribute) and func.attr in VALIDATES:
            schema = self.schema(func.value)
            return ("answer", schema, where) if schema else None
        if (schema := self.schema(func)) is not None:
            return "answer", schema, where
        if isinstance(func, ast.Name):
            found = self.program.lookup(path, func.id)
            if found and isinstance(found[1], ast.FunctionDef | ast.AsyncFunctionDef):
                return self._returns(found[0], found[1], depth + 1)
        return None

    def _returns(self, path: str, fn: Fn, depth: int) -> Kind | None:
        """What every ``return`` of a repository function gives, when they all agree."""
        kinds = {self.kind(path, fn, r.value, depth) for r in _own(fn, ast.Return)}
        return kinds.pop() if len(kinds) == 1 else None

    def _name(self, path: str, fn: Fn | None, name: str, depth: int) -> Kind | None:
        """A name bound in `fn` (only by plain assignments, which must all agree), else a
        module-level one."""
        stores = [n for n in _own(fn, ast.Name) if n.id == name and isinstance(n.ctx, ast.Store)]
        if fn is not None and (stores or name in _params(fn)):
            values = [s.value for s in _own(fn, ast.Assign, ast.AnnAssign) if _binds(s, name)]
            if name in _params(fn) or len(values) != len(stores):
                return None  # a parameter, or bound otherwise (a loop, unpacking, ``with``)
            kinds = {self.kind(path, fn, v, depth + 1) for v in values}
            return kinds.pop() if len(kinds) == 1 else None
        found = self.program.lookup(path, name)
        if found is None or not isinstance(found[1], ast.expr):
            return None
        return self.kind(found[0], None, found[1], depth + 1)

    def _self_attr(self, path: str, fn: Fn, attr: str, depth: int) -> Kind | None:
        """``self.attr`` assigned in the methods of `fn`'s class (every one must agree)."""
        cls = self.classes.get(id(fn))
        if cls is None:
            return None
        kinds: set[Kind | None] = set()
        for method in (m for m in cls.body if isinstance(m, ast.FunctionDef |
                                                             ast.AsyncFunctionDef)):
            for stmt in _own(method, ast.Assign, ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Attribute) and t.attr == attr and
                       isinstance(t.value, ast.Name) and t.value.id == "self" for t in targets):
                    kinds.add(self.kind(path, method, stmt.value, depth + 1))
        return kinds.pop() if len(kinds) == 1 else None


def _own(fn: Fn | None, *types: type) -> Iterator[Any]:
    """The nodes of `types` in `fn`'s own body (not in nested functions or classes)."""
    todo: list[ast.AST] = list(fn.body) if fn is not None else []
    while todo:
        node = todo.pop()
        if isinstance(node, types):
            yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef |
                          ast.Lambda):
            todo += list(ast.iter_child_nodes(node))


def _binds(stmt: ast.Assign | ast.AnnAssign, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return stmt.value is not None and any(isinstance(t, ast.Name) and t.id == name
                                          for t in targets)


def _params(fn: Fn) -> set[str]:
    args = fn.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                            *([args.vararg] if args.vararg else []),
                            *([args.kwarg] if args.kwarg else [])]}


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """Every block of statements directly inside `stmt`."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return []
    out = [getattr(stmt, f) for f in ("body", "orelse", "finalbody")
           if isinstance(getattr(stmt, f, None), list)]
    out += [h.body for h in getattr(stmt, "handlers", [])]
    return out + [c.body for c in getattr(stmt, "cases", [])]


def _placed(block: list[ast.stmt], guarded: bool = False
            ) -> Iterator[tuple[ast.stmt, list[ast.stmt], bool]]:
    """Every statement with its block, and whether a ``try`` around it catches a
    ``TypeError`` (then the error does not end the function)."""
    for stmt in block:
        yield stmt, block, guarded
        catches = isinstance(stmt, ast.Try | ast.TryStar) and any(
            h.type is None or any(isinstance(n, ast.Name | ast.Attribute) and
                                  (n.id if isinstance(n, ast.Name) else n.attr) in CATCHES
                                  for n in ast.walk(h.type)) for h in stmt.handlers)
        for sub in _blocks(stmt):
            inside = guarded or (catches and sub is getattr(stmt, "body", None))
            yield from _placed(sub, inside)


def indexed_after(stmt: ast.stmt, block: list[ast.stmt], name: str) -> int | None:
    """The line of the first ``name[...]`` that runs whenever `stmt` (which binds `name`)
    completes: later statements of its block, before `name` is bound again (None: none)."""
    for later in block[block.index(stmt) + 1:]:
        hits = [n.lineno for n in always_run_nodes(always_run(later))
                if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                and n.value.id == name]
        if hits:
            return min(hits)
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for n in ast.walk(later)) or isinstance(later, ast.Return | ast.Raise |
                                                       ast.Break | ast.Continue):
            return None
    return None


def functions_in(answers: Answers, path: str) -> Iterator[tuple[int, Fn]]:
    """(line, function) for every function and method of a file, registering each
    method's class."""
    mod = answers.program.module(path)
    for top in (mod.names.values() if mod else []):
        if not isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(top):
            if isinstance(node, ast.ClassDef):
                for method in node.body:
                    answers.classes[id(method)] = node
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node.lineno, node


def scan(answers: Answers, facts: dict[str, JSON],
         scope: Scope | None) -> tuple[list[JSON], dict[str, list[bool]]]:
    """The opinion answers indexed after their model call or constructor, and per
    schema-bound opinion call (its binding's ``path:line``), whether each of its invoke
    sites is followed so."""
    hits: list[JSON] = []
    sites: dict[str, list[bool]] = {}
    for path in sorted(facts):
        if "skipped" in facts[path] or "error" in facts[path]:
            continue
        quals = {i["line"]: q for q, i in (facts[path].get("functions") or {}).items()}
        mod = answers.program.module(path)
        tops = [v for v in (mod.names.values() if mod else []) if isinstance(v, ast.expr)]
        if scope is None or scope.runs(path, ""):
            _bindings(answers, path, None, [c for t in tops for c in ast.walk(t)], sites)
        for line, fn in functions_in(answers, path):
            if scope is not None and not scope.runs(path, quals.get(line, "?")):
                continue
            failed: dict[int, JSON] = {}
            for stmt, block, guarded in _placed(fn.body):
                hit = _indexed(answers, path, fn, stmt, block)
                if hit is not None and not guarded:
                    hits.append(hit)
                    failed[id(_unawait(stmt.value))] = hit  # type: ignore[attr-defined]
            calls = list(_own(fn, ast.Call))
            _bindings(answers, path, fn, calls, sites)
            for call, kind in opinion_invokes(answers, path, fn, calls):
                sites.setdefault(kind[2], []).append(id(call) in failed)
    return hits, sites


def opinion_invokes(answers: Answers, path: str, fn: Fn,
                    calls: list[ast.Call]) -> list[tuple[ast.Call, Kind]]:
    """The calls among `calls` (of `fn`) that invoke a runnable bound to an opinion schema,
    each with what it invokes (its binding's ``path:line`` last)."""
    found = []
    for call in calls:
        kind = answers.kind(path, fn, call.func.value) if isinstance(
            call.func, ast.Attribute) and call.func.attr in INVOKES else None
        if kind and kind[0] == "runnable" and OPINION.search(kind[1]):
            found.append((call, kind))
    return found


def _bindings(answers: Answers, path: str, fn: Fn | None, nodes: list[ast.AST],
              sites: dict[str, list[bool]]) -> None:
    """Record every schema binding to an opinion model among `nodes` (no site yet)."""
    for call in nodes:
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                call.func.attr == "with_structured_output":
            kind = answers.kind(path, fn, call)
            if kind and OPINION.search(kind[1]):
                sites.setdefault(kind[2], [])


def _unawait(node: ast.expr | None) -> ast.expr | None:
    return node.value if isinstance(node, ast.Await) else node


def _indexed(answers: Answers, path: str, fn: Fn, stmt: ast.stmt,
             block: list[ast.stmt]) -> JSON | None:
    """``x = <opinion answer>`` followed by ``x[...]`` (see `indexed_after`)."""
    if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
        return None
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        return None
    kind = answers.kind(path, fn, stmt.value)
    if kind is None or kind[0] != "answer" or not OPINION.search(kind[1]):
        return None
    line = indexed_after(stmt, block, targets[0].id)
    if line is None:
        return None
    value = _unawait(stmt.value)
    invoke = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
        value.func.attr in INVOKES
    return {"path": path, "line": line, "assigned": stmt.lineno, "name": targets[0].id,
            "schema": kind[1], "binding": kind[2], "invoke": invoke, "function": fn.name}


def answer_findings(facts: dict[str, JSON], repo: Path, scope: Scope | None = None
                    ) -> list[Finding]:
    """``judges.fail_after_model`` and ``llm.fail_after_model`` (see the module
    docstring); with a `scope`, only code the graph runs."""
    classes = typed_classes(facts)
    # a model that defines item access of its own is indexable
    models = {n for n, (_p, c, root) in classes.items() if root == "BaseModel" and
              "__getitem__" not in str(c.get("source", "")) and
              "__setitem__" not in str(c.get("source", ""))}
    parsed = [p for p, f in facts.items() if "skipped" not in f and "error" not in f]
    answers = Answers(Program(repo, sorted(parsed)), models)
    hits, sites = scan(answers, facts, scope) if models else ([], {})
    hits.sort(key=lambda h: (h["path"], h["line"]))
    every = bool(sites) and all(s and all(s) for s in sites.values())
    quote = "\n".join(
        f"{line_at(repo, h['path'], h['assigned'], 160)}\n"
        f"{line_at(repo, h['path'], h['line'], 160)}" for h in hits[:MAX_QUOTED]) or None
    loc = f"{hits[0]['path']}:{hits[0]['line']}" if hits else "."
    where = ", ".join(f"{h['path']}:{h['line']}" for h in hits[:6])
    schemas = ", ".join(sorted({h["schema"] for h in hits}))
    said = (f"The code indexes with [] the {schemas} object a judge is handed ({where}): a "
            "Pydantic model has no item access, so the line raises TypeError and the judge "
            "returns no opinion"
            + ("; every schema-bound opinion call is followed this way: no judge ever "
               "returns one." if every else ".")
            if hits else "No judge indexes the Pydantic opinion it is handed with [].")
    data: JSON = {"locations": [f"{h['path']}:{h['line']}" for h in hits[:50]],
                  "functions": sorted({h["function"] for h in hits}),
                  "bindings": {b: len(s) for b, s in sorted(sites.items())},
                  "cap": 3 if every else 4}
    return [
        Finding(facet="judges.fail_after_model", goal="A judge indexes the Pydantic opinion "
                "it is handed with [] (TypeError: no opinion returned)", found=bool(hits),
                pattern="failure", location=loc, content=quote, confidence=0.85,
                rationale=said, data=data),
        Finding(facet="llm.fail_after_model", goal="Every schema-bound opinion call's answer "
                "is indexed with [], so no validated opinion reaches the state",
                found=every and bool(hits), pattern="failure", location=loc, content=quote,
                confidence=0.85, rationale=said, data=data),
    ]
