"""Where a flag set on the score spread goes: a flag re-evaluates nothing by itself.

``if spread > 2: dissent = True`` or ``return True, dissent_text`` under a test on the
spread marks a disagreement; the verdict changes only if the flag reaches it. A flag that
stays a local name is read by later tests of the same function, and those tests decide
(they read the spread through it: a test that only picks text writes a dissent). A flag a
helper returns is decided on by its callers' tests in the same way, unless a caller hands
the answer on as itself (stores it in the state or a result, or returns it), where a later
step (a router, a re-run of the judges) may act on it. Only a flag handed on is a decision
on the spread by itself.

Walk time records, per decision that sets a flag, where its flags go (``flag``: ``local``,
``returned`` with the ``flag_index`` in the returned tuple, or ``handed``), and per function
the helpers whose answer it hands on (``handed_calls``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from automaton_auditor.forensics.code.argument_words import callee
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.exprs import call_name, handed_on, own_nodes
from automaton_auditor.forensics.code.spread_routes import SPREAD

STORES = ast.Attribute | ast.Subscript


def _is_flag(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Compare) or (
        isinstance(value, ast.Constant) and isinstance(value.value, bool))


def flag_exit(body: list[ast.stmt], function: list[ast.stmt]) -> JSON:
    """Where the flags a decision's `body` sets go, within the `function`'s body: ``handed``
    when one leaves it as itself, else ``returned`` (with its index in a returned tuple)
    when one is returned to the caller, else ``local``; empty when the body sets no flag."""
    exits: list[tuple[str, int | None]] = []
    for node in own_nodes(body):
        if isinstance(node, ast.Assign | ast.AnnAssign) and _is_flag(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            exits += [("handed", None) if isinstance(t, STORES) else name_exit(function, t.id)
                      for t in targets if isinstance(t, STORES | ast.Name)]
        elif isinstance(node, ast.Return) and node.value is not None:
            items = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            exits += [("returned", i if isinstance(node.value, ast.Tuple) else None)
                      for i, item in enumerate(items)
                      if _is_flag(item) and not isinstance(item, ast.Compare)]
    for where in ("handed", "returned", "local"):
        indexes = [i for w, i in exits if w == where]
        if indexes:
            index = indexes[0] if len(set(indexes)) == 1 else None
            return {"flag": where, **({} if index is None else {"flag_index": index})}
    return {}


def targets_exit(targets: Sequence[ast.expr], function: list[ast.stmt]) -> JSON:
    """Where a flag assigned to `targets` (``re_evaluate = spread > 2``) goes, as
    `flag_exit` says it."""
    exits = [name_exit(function, t.id) if isinstance(t, ast.Name) else ("handed", None)
             for t in targets]
    where, index = min(exits, key=lambda e: e[0] != "handed")
    return {"flag": where, **({} if index is None else {"flag_index": index})}


def name_exit(function: list[ast.stmt], name: str) -> tuple[str, int | None]:
    """Where a flag held in `name` goes: handed on, returned to the caller as itself (with
    its index in the returned tuple, when always the same), or kept local."""
    if handed_on(function, name, plain=False):
        return "handed", None
    if not handed_on(function, name):
        return "local", None
    indexes = {i for node in own_nodes(function) if isinstance(node, ast.Return)
               and isinstance(node.value, ast.Tuple)
               for i, e in enumerate(node.value.elts)
               if isinstance(e, ast.Name) and e.id == name}
    return "returned", indexes.pop() if len(indexes) == 1 else None


def handed_calls(function: list[ast.stmt]) -> list[JSON]:
    """The calls whose answer the function hands on as itself: bound to a name handed on
    (``needs, note = _check(ops)``, the element's index kept), or returned or stored
    directly (``return {"re_evaluate": _check(ops)}``)."""
    out: list[JSON] = []
    for node in own_nodes(function):
        value = getattr(node, "value", None)
        if isinstance(node, ast.Assign) and isinstance(value, ast.Call):
            for target in node.targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                out += [{"name": call_name(value),
                         "index": i if isinstance(target, ast.Tuple) else None}
                        for i, e in enumerate(elts) if isinstance(e, STORES) or (
                            isinstance(e, ast.Name) and handed_on(function, e.id))]
        if isinstance(node, ast.Return) or (isinstance(node, ast.Assign) and any(
                isinstance(t, STORES) for t in node.targets)):
            out += [{"name": call_name(c), "index": None} for c in _carried_calls(value)]
    return [h for h in out if h["name"]]


def _carried_calls(value: object) -> list[ast.Call]:
    """Calls a value holds as itself: the value, an element, a dict value, an argument."""
    if isinstance(value, ast.Call):
        return [value, *(c for a in [*value.args, *(k.value for k in value.keywords)]
                         for c in _carried_calls(a))]
    if isinstance(value, ast.Tuple | ast.List):
        return [c for e in value.elts for c in _carried_calls(e)]
    if isinstance(value, ast.Dict):
        return [c for v in value.values for c in _carried_calls(v)]
    return []


def spread_does(graph: CallGraph, key: Key, branch: JSON, reads: set[str],
                scope: list[Key]) -> set[str]:
    """What a decision does, without the flag it sets on the spread when the flag never
    leaves its function (or its helper's callers) as itself: then the tests that read the
    flag decide, and a flag only read to pick text is a dissent. A function that returns a
    spread returns a constant as the spread (``if len(scores) < 2: return 0.0``): no cap."""
    does = set(branch["does"])
    if does == {"cap"} and any(p.get("spread") for p in (
            graph.functions[key].get("logic") or {}).get("pred", [])):
        return set()
    if "flag" not in does or not SPREAD & reads or _reaches(graph, key, branch, scope):
        return does
    return does - {"flag"}


def _reaches(graph: CallGraph, key: Key, branch: JSON, scope: list[Key]) -> bool:
    where = branch.get("flag")
    if where != "returned":
        return where != "local"  # handed on, or a flag set by the test itself (``x = a > b``)
    index = branch.get("flag_index")
    # a caller that hands on the helper's answer (the flag's element of it, or all of it)
    return any((index is None or item["index"] in (None, index))
               and callee(graph, caller, item["name"]) == key for caller in scope
               for item in (graph.functions[caller].get("logic") or {}).get("handed_calls", []))
