"""Judges whose model call is handed no evidence.

Every value a judge's model call is handed (its arguments: the messages, the prompt) is read
back to where it comes from, through the function's local bindings (every binding, and what
``x.append(v)``, ``x[k] = v`` add to a local), and through its parameters to the arguments
every caller passes. What it may come from without carrying evidence:

- fixed text (literals, module constants no function of their file changes, library names);
- the criterion the judge rules on: a name the judge stamps on its opinion
  (``criterion_id=x``, ``{"criterion_id": x}``, or passed for such a parameter of the
  function it calls), and the rubric item that id is read from (``d["name"]`` when the
  criterion is ``d["id"]``);
- an evidence lookup by that criterion into a state key (``state["evidences"].get(dim_id,
  [])``) that never finds anything: every key the graph writes under that state key is known
  and none is a criterion id of the rubric the audit runs with (`judge_guards.written_keys`).

``judges.no_evidence`` is confirmed when every model call of each of the three personas'
judges comes only from these: no judge is given any evidence, whatever its persona asks.
Anything else (another state read, a call into the repository's own code, ``self``, a
template chain, a judge that may call tools, a parameter whose callers are not all read)
leaves it not established.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, dotted, function_defs, split_loc
from automaton_auditor.forensics.code.execution import build_model
from automaton_auditor.forensics.code.judge_guards import (
    Fn,
    evidence_lookup,
    local_binds,
    one_value,
    parsed_function,
    stamped,
    state_key,
    state_of,
    written_keys,
)
from automaton_auditor.forensics.code.judge_prompts import Prompt
from automaton_auditor.forensics.code.prompt_eval import TEMPLATES
from automaton_auditor.forensics.code.prompt_values import Program
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import Finding

FACET = "judges.no_evidence"
GOAL = "The judges' model calls are handed no evidence, only fixed text and the criterion id"
# a judge given these may fetch evidence itself; a template chain holds text not read here
AGENTIC = {"bind_tools", "create_react_agent", "AgentExecutor", "initialize_agent",
           "create_tool_calling_agent", "partial", *TEMPLATES}
MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add", "pop", "clear"}
MAX_CALLERS = 3  # parameters followed this many callers up
BUILTINS = set(dir(builtins))
COMPREHENSIONS = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


class Unresolved(Exception):
    """A source of the model's input that is not known to carry no evidence."""


@dataclass
class _Fn:
    """One function being read: where it is, its state parameter, what names it binds, the
    criterion names it stamps and the rubric items those are read from."""

    path: str
    key: Key | None
    node: Fn | None  # None: a module's top level
    state: str | None
    binds: dict[str, list[ast.AST]] = field(default_factory=dict)
    criterion: set[str] = field(default_factory=set)
    items: set[str] = field(default_factory=set)


def _names(fn: Fn) -> set[str]:
    """Names the judge stamps as its opinion's criterion."""
    found = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    return {n for n in found if stamped(fn, ast.Name(id=n))}


def _items(binds: dict[str, list[ast.AST]], criterion: set[str]) -> set[str]:
    """Names whose field is the criterion id (``dim_id = dimension["id"]``): rubric items."""
    out: set[str] = set()
    for name in criterion:
        values = binds.get(name, [])
        roots = {_field_of(v) for v in values}
        if values and len(roots) == 1 and None not in roots:
            out |= {str(r) for r in roots}
    return out


def _field_of(node: ast.AST) -> str | None:
    """``d["k"]``, ``d.get("k"...)`` or ``d.k``: "d"."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(
            node.slice, ast.Constant):
        return node.value.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and isinstance(node.func.value, ast.Name) and \
            node.args and isinstance(node.args[0], ast.Constant):
        return node.func.value.id
    return None


class _Reader:
    """Reads where a model call's input comes from (see the module docstring)."""

    def __init__(self, repo: Path, facts: dict[str, JSON], graph: CallGraph,
                 main: Topology) -> None:
        self.repo, self.facts, self.graph, self.main = repo, facts, graph, main
        self.program = Program(repo, sorted(facts))
        self.ids = {d.id for d in load_rubric().dimensions}
        self.lookups: dict[str, tuple[str, str]] = {}  # path:line -> (state key, lookup key)
        self.passed: set[str] = set()  # path:line of the arguments callers pass for inputs
        self.written: dict[str, set[str] | None] = {}
        self.fixed: dict[str, bool] = {}
        self._seen: set[tuple[str, int, str]] = set()

    def context(self, path: str, fn: Fn, extra: frozenset[str] = frozenset()) -> _Fn:
        """A function to read, with the criterion names it stamps (and `extra`)."""
        tree = parse_file(str(self.repo / path))
        key = next(((path, q) for q, f in function_defs(tree) if f is fn or (
            f.name == fn.name and f.lineno == fn.lineno)), None) if tree else None
        state = state_of(self.repo, self.graph, self.main, path, fn)
        binds = local_binds(fn)
        criterion = _names(fn) | set(extra)
        # an item is the rubric's only when it comes from a state key no node writes (the
        # graph's input): a detective's record that holds an id would carry evidence
        items = {i for i in _items(binds, criterion) if state and all(
            isinstance(b, ast.For) and self._fixed(state_key(one_value(b.iter, binds), state))
            for b in binds.get(i, [None]))}
        return _Fn(path, key, fn, state, binds, criterion, items)

    def _fixed(self, channel: str | None) -> bool:
        """No graph node writes the state key `channel` (it holds the graph's input)."""
        if channel is None:
            return False
        if channel not in self.fixed:
            nodes = build_model(self.facts, self.graph, self.main).nodes.values()
            self.fixed[channel] = not any(channel in n.writes or n.open for n in nodes)
        return self.fixed[channel]

    def site(self, path: str, fn: Fn, call: ast.Call) -> None:
        """Every input of the model call `call` in `fn` (raises `Unresolved`)."""
        tree = parse_file(str(self.repo / path))
        if tree is None or any((dotted(n) or "").rpartition(".")[2] in AGENTIC for n in ast.walk(
                tree) if isinstance(n, ast.Attribute | ast.Name)):
            raise Unresolved(f"{path} builds agents, tools or prompt templates")
        ctx = self.context(path, fn)
        self._seen = set()
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            self.expr(ctx, arg, frozenset(), 0)

    def expr(self, ctx: _Fn, node: ast.AST, local: frozenset[str], depth: int) -> None:
        """Raise `Unresolved` unless `node` carries no evidence."""
        # the lookup itself, not a name bound to it: what is added to that name is read
        if ctx.state and isinstance(node, ast.Call) and (
                found := evidence_lookup(node, ctx.binds, ctx.state)):
            self._lookup(ctx, found, node)
        elif _field_of(node) in ctx.items:
            return  # a rubric item's field: the criterion's own text
        elif isinstance(node, ast.Name):
            self.name(ctx, node.id, local, depth)
        elif isinstance(node, ast.Call):
            self._call(ctx, node, local, depth)
        elif isinstance(node, COMPREHENSIONS | ast.Lambda):
            bound = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(
                n.ctx, ast.Store)} | ({a.arg for a in node.args.args} if isinstance(
                    node, ast.Lambda) else set())
            for child in ast.iter_child_nodes(node):
                self.expr(ctx, child, local | bound, depth)
        else:
            for child in ast.iter_child_nodes(node):
                self.expr(ctx, child, local, depth)

    def _lookup(self, ctx: _Fn, found: tuple[str, ast.expr], node: ast.AST) -> None:
        channel, key = found
        where = f"{ctx.path}:{getattr(node, 'lineno', 0)}"
        if not (isinstance(key, ast.Constant) or (
                isinstance(key, ast.Name) and key.id in ctx.criterion)):
            raise Unresolved(f"{where}: the lookup is not by the criterion id")
        if channel not in self.written:
            self.written[channel] = written_keys(self.repo, self.facts, self.graph, self.main,
                                                 channel)
        keys = self.written[channel]
        if keys is None:
            raise Unresolved(f"{where}: what the graph writes under {channel!r} is not read")
        if keys & self.ids or (isinstance(key, ast.Constant) and key.value in keys):
            raise Unresolved(f"{where}: the graph writes {channel!r} under keys it may find")
        self.lookups[where] = (channel, ast.unparse(key))

    def _call(self, ctx: _Fn, node: ast.Call, local: frozenset[str], depth: int) -> None:
        func = node.func
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        params = [a.arg for a in ctx.node.args.args] if ctx.node is not None else []
        # a local or parameter is read for what it holds (a callable bound to our code
        # fails there); any other name must be a library's
        if isinstance(root, ast.Name) and root.id not in local and root.id not in (
                ctx.binds) and root.id not in params and not self._library(ctx.path, root.id):
            raise Unresolved(f"{ctx.path}:{node.lineno}: calls {dotted(func)}, not read here")
        if isinstance(func, ast.Attribute):
            self.expr(ctx, func.value, local, depth)
        elif not isinstance(func, ast.Name) or func.id not in local:
            self.expr(ctx, func, local, depth)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            self.expr(ctx, arg, local, depth)

    def _ours(self, ctx: _Fn, call: ast.Call) -> bool:
        """`call` runs the repository's own code (which may change what it is handed)."""
        root = call.func
        while isinstance(root, ast.Attribute):
            root = root.value
        params = [a.arg for a in ctx.node.args.args] if ctx.node is not None else []
        return isinstance(root, ast.Name) and (root.id in ("self", "cls") or (
            root.id not in ctx.binds and root.id not in params and
            not self._library(ctx.path, root.id)))

    def _library(self, path: str, name: str) -> bool:
        """`name` is a builtin or imported from outside the repository (no code of ours)."""
        if name in BUILTINS and self.program.lookup(path, name) is None:
            return True
        mod = self.program.module(path)
        full = mod.imports.get(name) if mod else None
        return full is not None and self.program.lookup(path, name) is None and \
            self.program.file_of(full, path) is None and \
            self.program.file_of(full.rpartition(".")[0], path) is None

    def name(self, ctx: _Fn, name: str, local: frozenset[str], depth: int) -> None:
        """Raise `Unresolved` unless the name `name` read in `ctx` carries no evidence."""
        if name in local or name in ctx.criterion or name in ctx.items:
            return
        mark = (ctx.path, getattr(ctx.node, "lineno", 0), name)
        if mark in self._seen:
            return
        self._seen.add(mark)
        if name == ctx.state:
            raise Unresolved(f"{ctx.path}: the judge reads the state beyond the lookup")
        params = {a.arg for a in ast.walk(ctx.node.args) if isinstance(
            a, ast.arg)} if ctx.node is not None else set()
        if name in ctx.binds:
            self._local(ctx, name, depth)
        if name in params:  # a parameter rebound locally still holds what it was passed
            self._param(ctx, name, depth)
        elif name not in ctx.binds:
            self._module(ctx.path, name, depth)

    def _local(self, ctx: _Fn, name: str, depth: int) -> None:
        """Every binding of a local, and what is added to it in place."""
        for bound in ctx.binds[name]:
            value = bound.iter if isinstance(bound, ast.For) else bound.value if isinstance(
                bound, ast.AugAssign | ast.NamedExpr) else bound
            if not isinstance(value, ast.expr):
                raise Unresolved(f"{ctx.path}: {name} is bound otherwise")
            self.expr(ctx, value, frozenset(), depth)
        for node in ast.walk(ctx.node) if ctx.node else ():
            if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for
                                                  a in node.args) and self._ours(ctx, node):
                raise Unresolved(f"{ctx.path}:{node.lineno}: {name} is handed to "
                                 f"{dotted(node.func)}, not read here")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    self.expr(ctx, arg, frozenset(), depth)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript | ast.Attribute) and isinstance(
                            target.value, ast.Name) and target.value.id == name:
                        self.expr(ctx, node.value, frozenset(), depth)

    def _param(self, ctx: _Fn, name: str, depth: int) -> None:
        """A parameter: what every caller passes for it."""
        callers = self.graph.callers(ctx.key) if ctx.key else []
        if depth >= MAX_CALLERS or not callers or ctx.node is None:
            raise Unresolved(f"{ctx.path}: what is passed for {name} is not read")
        params = [a.arg for a in ctx.node.args.args]
        for caller, index in callers:
            outer = parsed_function(self.repo, *caller)
            line = int(self.graph.sites(caller)[index].get("line") or 0)
            calls = [c for c in ast.walk(outer) if isinstance(c, ast.Call) and
                     c.lineno == line and (dotted(c.func) or "").rpartition(".")[2] ==
                     ctx.node.name] if outer else []
            if outer is None or len(calls) != 1:
                raise Unresolved(f"{caller[0]}:{line}: the call is not read")
            given = _arguments(calls[0], params)
            if name not in given:
                raise Unresolved(f"{caller[0]}:{line}: {name} is not passed by position "
                                 "or keyword")
            passed = frozenset(v.id for p, v in given.items() if p in ctx.criterion and
                      isinstance(v, ast.Name))
            self.passed.add(f"{caller[0]}:{given[name].lineno}")
            self.expr(self.context(caller[0], outer, passed), given[name], frozenset(),
                      depth + 1)

    def _module(self, path: str, name: str, depth: int) -> None:
        """A module-level name: a library name, or a constant no function changes."""
        if self._library(path, name):
            return
        found = self.program.lookup(path, name)
        if found is None or not isinstance(found[1], ast.expr):
            raise Unresolved(f"{path}: {name} is not a module constant")
        where, value = found
        tree = parse_file(str(self.repo / where))
        if tree is None or any(_changes(node, name) for node in ast.walk(tree)):
            raise Unresolved(f"{where}: the module value {name} may be changed")
        self.expr(_Fn(where, None, None, None), value, frozenset(), depth)


def _changes(node: ast.AST, name: str) -> bool:
    """`node` changes the module value `name` (``global``, ``name[k] = v``,
    ``name.append(v)``)."""
    if isinstance(node, ast.Global):
        return name in node.names
    if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store):
        return dotted(node.value) == name
    return isinstance(node, ast.Call) and (dotted(node.func) or "") in {
        f"{name}.{m}" for m in MUTATORS}


def _arguments(call: ast.Call, params: list[str]) -> dict[str, ast.expr]:
    """The argument a call passes for each parameter it binds (``self`` skipped for a
    method called on an object)."""
    if params[:1] in (["self"], ["cls"]) and isinstance(call.func, ast.Attribute):
        params = params[1:]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return {}
    out = dict(zip(params, call.args, strict=False))
    out.update({k.arg: k.value for k in call.keywords if k.arg})
    return out


def no_evidence_finding(repo: Path, facts: dict[str, JSON], graph: CallGraph,
                        main: Topology | None, prompts: dict[str, Prompt]) -> Finding:
    """``judges.no_evidence`` (see the module docstring)."""
    reader = _Reader(repo, facts, graph, main) if main is not None else None
    blind: dict[str, list[str]] = {}
    why = "" if reader is not None else "no main graph"
    for persona, prompt in sorted(prompts.items()):
        calls: list[str] = []
        for call, route in prompt.sites:
            last = route[-1] if route else None
            if reader is None or last is None or last.fn is None or not isinstance(
                    last.call, ast.Call):
                why = why or f"{persona}: the model call at {call} is not read"
                break
            try:
                reader.site(last.path, last.fn, last.call)
            except Unresolved as reason:
                why = why or f"{persona}: {reason}"
                break
            calls.append(call)
        else:
            if calls:
                blind[persona] = calls
    every = len(prompts) >= 3 and len(blind) == len(prompts)
    lookups = reader.lookups if reader is not None and every else {}
    passed = reader.passed if reader is not None and every else set()
    where = sorted({c for cs in blind.values() for c in cs} | set(lookups) | passed,
                   key=split_loc)
    keys = sorted({k for v in (reader.written.values() if reader else []) if v for k in v})
    quote = "\n".join(line_at(repo, *split_loc(w), limit=160) for w in where[:8]) or None
    looked = "; their evidence lookups by the criterion id (" + ", ".join(
        f"{w}: {c}.get({k})" for w, (c, k) in sorted(
            lookups.items(), key=lambda i: split_loc(i[0]))[:6]) + \
        f") never find anything: the graph writes that state key only under " \
        f"{', '.join(map(repr, keys)) or 'no key'}, none a criterion id" if lookups else ""
    return Finding(
        facet=FACET, goal=GOAL, found=every, pattern="failure",
        location=where[0] if every else ".", content=quote if every else None,
        confidence=0.85,
        rationale=(f"No judge is given any evidence: the {', '.join(sorted(blind))} judges' "
                   f"model calls ({', '.join(sorted({c for cs in blind.values() for c in cs}))}) "
                   "are handed only fixed text and the criterion they rule on" + looked + "."
                   if every else f"Not established that the judges are given no evidence "
                   f"({why or 'fewer than three personas prompt a model'})."),
        data={"judges": sorted(blind) if every else [],
              "lookups": sorted(lookups, key=split_loc)[:20],
              "written_keys": keys[:20] if lookups else [], "lines": where[:20]})
