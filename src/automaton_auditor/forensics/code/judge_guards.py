"""Judges whose model call sits behind an evidence lookup that never finds anything.

A judge node reads a state key and looks it up by the criterion it rules on (``evidence =
state.get("evidences", {}).get(criterion_id, [])``), and reaches its model call only when
the lookup finds something (``if not evidence: ... continue``). What the lookup can find is
what the graph writes under that key: the keys of the dicts each node returns for it (a dict
literal, or a local dict built with literal keys, or the key's own value read back and given
more literal keys), and those of the dicts the graph is invoked with (``.invoke(x)`` with a
dict literal, or a local bound to one; an input built elsewhere is not read). Every node's
write must be read; a node whose writes are not determined, a key computed at run time,
``**`` or ``update`` leaves the fact unestablished. The function holding the lookup must be
handed the graph's state: a node's function, or a helper every caller of which is a node
passing its own state parameter first.

``judges.model_unreached`` is confirmed for a persona when every model call its judges make
(`judge_prompts`) needs such a lookup to succeed, and the key it looks up by is the criterion
id the judge stamps on its opinion (``criterion_id=`` or a ``"criterion_id"`` entry given
the same name), while no key the graph ever writes is a criterion id of the rubric
(`rubric.load_rubric`): the lookup is always empty, so the judge returns whatever its code
fixes for that case and never sends its prompt. Every persona so: graded 3 (distinct
prompts exist but none is ever sent); some: 4.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON, function_defs, split_loc
from automaton_auditor.forensics.code.execution import build_model
from automaton_auditor.forensics.code.exprs import CRITERION
from automaton_auditor.forensics.code.judge_coverage import chain_to
from automaton_auditor.forensics.code.judge_prompts import Prompt
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import Finding

FACET = "judges.model_unreached"
GOAL = "A judge's model call sits behind an evidence lookup that never finds anything"
INVOKES = {"invoke", "ainvoke", "stream", "astream"}
UPDATES = {"update", "setdefault", "__setitem__", "__ior__"}
Fn = ast.FunctionDef | ast.AsyncFunctionDef


def _empty(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value in (None, "")) or (
        isinstance(node, ast.List | ast.Tuple | ast.Set) and not node.elts) or (
        isinstance(node, ast.Dict) and not node.keys)


def local_binds(fn: Fn) -> dict[str, list[ast.AST]]:
    """Every binding of each local name (an assignment's value, else the binding node)."""
    out: dict[str, list[ast.AST]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.For | ast.AugAssign | ast.NamedExpr):
            target = node.target
            for name in (n for n in ast.walk(target) if isinstance(n, ast.Name)):
                out.setdefault(name.id, []).append(node)
    return out


def one_value(node: ast.AST, binds: dict[str, list[ast.AST]]) -> ast.AST:
    """A local name's one assigned value (the node itself otherwise)."""
    if isinstance(node, ast.Name) and len(binds.get(node.id, [])) == 1 and \
            isinstance(binds[node.id][0], ast.expr):
        return binds[node.id][0]
    return node


def state_key(node: ast.AST, state: str) -> str | None:
    """``state.get("k", ...)`` or ``state["k"]``: "k"."""
    key = node.args[0] if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "get" and isinstance(
        node.func.value, ast.Name) and node.func.value.id == state and node.args else \
        node.slice if isinstance(node, ast.Subscript) and isinstance(
            node.value, ast.Name) and node.value.id == state else None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def evidence_lookup(node: ast.AST, binds: dict[str, list[ast.AST]],
            state: str) -> tuple[str, ast.expr] | None:
    """``d.get(key, <empty>)`` where ``d`` is a state key's value: (state key, key)."""
    node = one_value(node, binds)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
            node.func.attr == "get" and 1 <= len(node.args) <= 2 and not node.keywords and
            _empty(node.args[1] if len(node.args) == 2 else None)):
        return None
    channel = state_key(one_value(node.func.value, binds), state)
    return (channel, node.args[0]) if channel else None


def _needs(fn: Fn, call: ast.AST) -> list[tuple[ast.expr, int]]:
    """Expressions that must be truthy for `call` to run, with the line of their test:
    the tests of the ``if``s around it, and the negated tests of the ``if``s before it whose
    body leaves (``continue``, ``break``, ``return``, ``raise``)."""
    needs: list[tuple[ast.expr, int]] = []
    for parent, child in itertools.pairwise(chain_to(fn, call) or []):
        if isinstance(parent, ast.If) and child is not parent.test:
            needs.append((parent.test if any(s is child for s in parent.body) else
                          ast.UnaryOp(op=ast.Not(), operand=parent.test), parent.lineno))
        for block in (getattr(parent, f, None) for f in ("body", "orelse", "finalbody")):
            if not isinstance(block, list) or not any(s is child for s in block):
                continue
            for stmt in block[:next(i for i, s in enumerate(block) if s is child)]:
                if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and isinstance(
                        stmt.body[-1], ast.Continue | ast.Break | ast.Return | ast.Raise):
                    needs.append((ast.UnaryOp(op=ast.Not(), operand=stmt.test), stmt.lineno))
    return needs


def _truthy(need: ast.expr) -> ast.expr | None:
    """The expression `need` requires to be truthy (``not not x``, ``len(x) > 0``)."""
    while isinstance(need, ast.UnaryOp) and isinstance(need.op, ast.Not) and isinstance(
            need.operand, ast.UnaryOp) and isinstance(need.operand.op, ast.Not):
        need = need.operand.operand
    negated = isinstance(need, ast.UnaryOp) and isinstance(need.op, ast.Not)
    inner = need.operand if isinstance(need, ast.UnaryOp) and negated else need
    if isinstance(inner, ast.Compare) and len(inner.ops) == 1:
        left, op, right = inner.left, inner.ops[0], inner.comparators[0]
        sized = isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and \
            left.func.id == "len" and len(left.args) == 1
        zero = isinstance(right, ast.Constant) and right.value == 0
        if isinstance(left, ast.Call) and sized and zero and isinstance(
                op, ast.Eq if negated else ast.Gt | ast.NotEq):
            return left.args[0]
        if _empty(right) and isinstance(op, ast.Is | ast.Eq if negated else
                                        ast.IsNot | ast.NotEq):
            return left
        return None
    return None if negated else inner


def parsed_function(repo: Path, path: str, qual: str) -> Fn | None:
    """The definition of function `qual` of file `path` (None when unreadable)."""
    tree = parse_file(str(repo / path))
    return next((f for q, f in function_defs(tree) if q == qual), None) if tree else None


def _dict_keys(value: ast.AST, fn: Fn, state: str, channel: str) -> set[str] | None:
    """The keys a dict written for `channel` may hold (None: not all read)."""
    binds = local_binds(fn)
    origin = one_value(value, binds)
    if isinstance(origin, ast.Dict):
        keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
                for k in origin.keys]
        if None in keys:
            return None
        found = {str(k) for k in keys}
    elif state_key(origin, state) == channel:
        found = set()  # the key's own value read back: what it already holds
    else:
        return None
    if not isinstance(value, ast.Name):
        return found
    for node in ast.walk(fn):  # what the local dict is given before it is returned
        stored = [t for t in (node.targets if isinstance(node, ast.Assign) else [])
                  if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and
                  t.value.id == value.id]
        for target in stored:
            if not (isinstance(target.slice, ast.Constant) and isinstance(
                    target.slice.value, str)):
                return None
            found.add(target.slice.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in UPDATES and isinstance(node.func.value, ast.Name) and \
                node.func.value.id == value.id:
            return None
    return found


def _node_writes(repo: Path, graph: CallGraph, node: Any, channel: str) -> set[str] | None:
    """The keys one graph node writes under `channel` (None: not all read)."""
    if channel not in node.writes:
        return set() if not node.open else None
    if node.key is None or node.whole or node.open:
        return None
    fn = parsed_function(repo, *node.key)
    state = (graph.functions[node.key].get("params") or [None])[0]
    if fn is None or state is None:
        return None
    found: set[str] = set()
    for ret in (r for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None):
        if not isinstance(ret.value, ast.Dict):
            return None  # a helper's answer or a name: not read here
        for key, value in zip(ret.value.keys, ret.value.values, strict=True):
            if key is None:
                return None
            if isinstance(key, ast.Constant) and key.value == channel:
                keys = _dict_keys(value, fn, str(state), channel)
                if keys is None:
                    return None
                found |= keys
    return found


def _inputs(repo: Path, paths: list[str], channel: str) -> set[str] | None:
    """The keys of `channel` in the dicts the repository invokes a graph with."""
    found: set[str] = set()
    for path in paths:
        tree = parse_file(str(repo / path))
        for _q, fn in function_defs(tree) if tree else ():
            binds = local_binds(fn)
            for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(
                    c.func, ast.Attribute) and c.func.attr in INVOKES and c.args):
                given = one_value(call.args[0], binds)
                for key, value in zip(*((given.keys, given.values) if isinstance(
                        given, ast.Dict) else ([], [])), strict=True):
                    if key is None:
                        return None
                    if isinstance(key, ast.Constant) and key.value == channel:
                        keys = _dict_keys(value, fn, "", channel)
                        if keys is None:
                            return None
                        found |= keys
    return found


def written_keys(repo: Path, facts: dict[str, JSON], graph: CallGraph, main: Topology,
                 channel: str) -> set[str] | None:
    """Every key the graph's nodes and its callers' inputs write under `channel`."""
    model = build_model(facts, graph, main)
    found: set[str] = set()
    for name in sorted(model.nodes):
        keys = _node_writes(repo, graph, model.nodes[name], channel)
        if keys is None:
            return None
        found |= keys
    given = _inputs(repo, sorted(p for p, f in facts.items() if "error" not in f), channel)
    return None if given is None else found | given


def stamped(fn: Fn, key: ast.expr) -> bool:
    """The judge writes `key` as its opinion's criterion (``criterion_id=key`` or
    ``{"criterion_id": key}``)."""
    if isinstance(key, ast.Constant):
        return True
    pairs = [(k.arg, k.value) for c in ast.walk(fn) if isinstance(c, ast.Call)
             for k in c.keywords] + [
        (k.value, v) for d in ast.walk(fn) if isinstance(d, ast.Dict)
        for k, v in zip(d.keys, d.values, strict=True) if isinstance(k, ast.Constant)]
    return isinstance(key, ast.Name) and any(
        isinstance(name, str) and CRITERION.search(name) and isinstance(value, ast.Name) and
        value.id == key.id for name, value in pairs)


def guard_of(fn: Fn, call: ast.AST, state: str) -> tuple[str, ast.expr, list[int]] | None:
    """The state key, lookup key, and lines (test, lookup) of an evidence lookup `call`
    needs to succeed."""
    binds = local_binds(fn)
    for need, line in _needs(fn, call):
        truthy = _truthy(need)
        found = evidence_lookup(truthy, binds, state) if truthy is not None else None
        if truthy is not None and found is not None and stamped(fn, found[1]):
            return found[0], found[1], sorted({line, getattr(
                one_value(truthy, binds), "lineno", line)})
    return None


def _first(fn: Fn) -> str | None:
    params = [a.arg for a in fn.args.args]
    return params[1] if params[:1] == ["self"] and len(params) > 1 else \
        params[0] if params else None


def state_of(repo: Path, graph: CallGraph, main: Topology, path: str, fn: Fn) -> str | None:
    """The parameter `fn` receives the graph's state in: it is a node's function, or every
    caller is one and hands it its own state parameter first (None otherwise)."""
    nodes = {k for info in main.nodes.values() if (k := graph.node_function(info))}
    tree = parse_file(str(repo / path))
    key = next(((path, q) for q, f in function_defs(tree) if f.name == fn.name and
                f.lineno == fn.lineno), None) if tree else None
    if key is None or _first(fn) is None:
        return None
    if key in nodes:
        return _first(fn)
    callers = graph.callers(key)
    for caller, index in callers:
        line = int(graph.sites(caller)[index].get("line") or 0)
        outer = parsed_function(repo, *caller)
        passed = [c.args[0] for c in ast.walk(outer) if isinstance(c, ast.Call) and
                  c.lineno == line and c.args] if outer else []
        if caller not in nodes or outer is None or not passed or not all(
                isinstance(a, ast.Name) and a.id == _first(outer) for a in passed):
            return None
    return _first(fn) if callers else None


def unreached_finding(repo: Path, facts: dict[str, JSON], graph: CallGraph,
                      main: Topology | None, prompts: dict[str, Prompt]) -> Finding:
    """``judges.model_unreached`` (see the module docstring)."""
    ids = {d.id for d in load_rubric().dimensions}
    said: dict[str, list[str]] = {}
    written: dict[str, set[str] | None] = {}
    for persona, prompt in sorted(prompts.items()):
        lines: list[str] = []
        for call, route in prompt.sites:
            last = route[-1] if route else None
            if last is None or last.fn is None or last.call is None or main is None:
                break
            state = state_of(repo, graph, main, last.path, last.fn)
            guard = guard_of(last.fn, last.call, state) if state else None
            if guard is None:
                break
            if guard[0] not in written:
                written[guard[0]] = written_keys(repo, facts, graph, main, guard[0])
            keys = written[guard[0]]
            if keys is None or keys & ids or (isinstance(guard[1], ast.Constant) and
                                              guard[1].value in keys):
                break
            lines += [*(f"{last.path}:{n}" for n in guard[2]), call]
        else:
            if lines:
                said[persona] = lines
    every = bool(said) and len(said) == len(prompts) >= 3
    wrote = sorted({k for v in written.values() if v is not None for k in v})
    where = sorted({w for ws in said.values() for w in ws}, key=split_loc)
    quote = "\n".join(line_at(repo, *split_loc(w), limit=160) for w in where[:8]) or None
    return Finding(
        facet=FACET, goal=GOAL, found=bool(said), pattern="failure",
        location=where[0] if where else ".", content=quote, confidence=0.85,
        rationale=(f"The {', '.join(said)} judge(s) reach their model call only when the "
                   f"evidence lookup by the criterion they rule on finds something "
                   f"({', '.join(where[:6])}), but the graph writes that state key only "
                   f"under {', '.join(map(repr, wrote)) or 'no key'}, none a criterion id: "
                   "the lookup is always empty, so " + (
                       "no persona prompt is ever sent." if every else
                       "their prompts are never sent.")
                   if said else "No judge's model call waits on an evidence lookup that "
                   "never finds anything."),
        data={"judges": sorted(said), "written_keys": wrote[:20], "lines": where[:20],
              "cap": 3 if every else 4})
