"""What a scoring function does with a value: what a returned item does to the score, whether
a decision only puts a ceiling on it, and whether a mean of the scores leaves the function.

A mean becomes a verdict only if its value leaves the function as a value: returned, stored
on an attribute or under a key, handed to a call, or through the names and the decisions
bound from it. A mean that only fills text (an f-string, a log line), the squares of a
variance (``(s - mean) ** 2``), or a label picked by a test on it (``if avg >= 4.5: grade =
"MASTER"``) is a report statistic, whatever it is named.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from automaton_auditor.forensics.code.exprs import (
    SCORE_TARGET,
    call_name,
    is_cap,
    is_text,
    numeric,
    target_names,
)

Binds = dict[str, list[ast.expr]]
Reads = Callable[[ast.AST], set[str]]
MAX_NAMES = 50  # names followed from a mean
# calls whose arguments become text: a log line, ``str(x)``, ``"{}".format(x)``
TEXT_SINKS = {"print", "info", "debug", "warning", "warn", "error", "log", "str", "format"}
# the text sinks that only log (not ``str``/``format``, which build text a caller may keep)
LOG_CALLS = (TEXT_SINKS - {"str", "format"}) | {"exception", "critical"}
# text fields that advise the student rather than record the judges' disagreement
ADVICE = re.compile(r"remediat|recommend", re.I)


def returned_effect(value: ast.expr, binds: Binds, reads: Reads,
                    spread_items: set[str]) -> set[str]:
    """What returning `value` does to the score (``score``, ``cap``, ``flag``, ``text``)."""
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    out: set[str] = set()
    for item in items:
        if isinstance(item, ast.Dict):
            # ``return {"final_score": 3, "dissent": "..."}``
            for key, val in zip(item.keys, item.values, strict=True):
                if isinstance(key, ast.Constant) and SCORE_TARGET.search(str(key.value)):
                    out |= returned_effect(val, binds, reads, spread_items)
        elif isinstance(item, ast.Call) and (scored := [
                k.value for k in item.keywords if k.arg and SCORE_TARGET.search(k.arg)]):
            for val in scored:  # ``return Opinion(judge="CJ", score=2)``: its score
                out |= returned_effect(val, binds, reads, spread_items)
        elif is_text(item, binds) or (isinstance(item, ast.Constant) and item.value is None):
            out.add("text")  # ``return None``: no text where another path returns text
        elif isinstance(item, ast.Constant) and isinstance(item.value, bool):
            out.add("flag")
        elif isinstance(item, ast.Constant) and isinstance(item.value, int | float):
            out.add("cap" if item.value <= 3 else "score")
        elif ((numeric(item) or (isinstance(item, ast.Name) and item.id in spread_items))
              and "score" in reads(item)) or SCORE_TARGET.search(
                " ".join(target_names(item, attributes=True))) or isinstance(item, ast.Call):
            out.add("score")  # ``return _weighted_score(...)`` from a scoring function
    return out


def plain_copy(value: ast.expr) -> bool:
    """An unfiltered comprehension copying what it reads (``{o.judge: o.score for o in ops}``):
    the judges' own scores, none changed, so binding it to a score-like name sets no score."""
    if not isinstance(value, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        return False
    items = [value.key, value.value] if isinstance(value, ast.DictComp) else [value.elt]
    return not any(g.ifs for g in value.generators) and all(
        isinstance(e, ast.Name | ast.Attribute | ast.Subscript | ast.Constant) for e in items)


def updated_scores(call: ast.Call) -> list[ast.expr]:
    """The score fields a copy of a record is given: ``op.model_copy(update={"score": 1})``
    sets that opinion's score to 1."""
    return [v for k in call.keywords if isinstance(k.value, ast.Dict)
            for key, v in zip(k.value.keys, k.value.values, strict=True)
            if isinstance(key, ast.Constant) and SCORE_TARGET.search(str(key.value))]


def ceiling(node: ast.If | ast.While, sets_score: Callable[[ast.AST], bool]) -> bool:
    """True when every statement of the taken side of `node` that sets the score puts a
    ceiling on it (``final = min(final, 3)``, ``final = 2``): the decision lowers the score
    to a fixed cap and weighs no judge's score against anything."""
    setting = [s for s in ast.walk(ast.Module(body=node.body, type_ignores=[]))
               if isinstance(s, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Return)
               and sets_score(s)]
    return bool(setting) and all(_capped(getattr(s, "value", None)) for s in setting)


def _capped(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Call) and call_name(value) == "min":
        return is_cap(value)
    return isinstance(value, ast.Constant) and isinstance(value.value, int | float) and \
        not isinstance(value.value, bool) and value.value <= 3


def hands_score(node: ast.stmt, does: Callable[[list[ast.stmt]], set[str]],
                effect: Callable[[ast.expr], set[str]]) -> bool:
    """True when a statement hands a score out of its function: returns it, stores it on an
    attribute or under a key, or hands a result carrying it to a call (``results.append(
    CriterionResult(score=s))``)."""
    if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Attribute | ast.Subscript) for t in node.targets):
        return bool(does([node]) & {"score", "cap"})
    call = node.value if isinstance(node, ast.Expr) else None
    values = [node.value] if isinstance(node, ast.Return) and node.value is not None else [
        a for a in [*call.args, *(k.value for k in call.keywords)]
        if isinstance(a, ast.Call | ast.Dict)] if isinstance(call, ast.Call) else []
    return any(effect(v) & {"score", "cap"} for v in values)


def local_effect(targets: list[ast.expr], value: ast.expr, body: list[ast.stmt],
                 binds: Binds) -> set[str]:
    """What binding a score to local names does: ``score``, unless the value never leaves
    the function (``median_score = median(s)`` read only in an f-string: ``text``)."""
    if not all(isinstance(t, ast.Name) for t in targets):
        return {"score"}
    kept = mean_leaves(body, value, binds)
    return {"score"} if kept is None else {"text"} if kept == "text" else set()


def mean_leaves(body: list[ast.stmt], mean: ast.expr, binds: Binds) -> str | None:
    """None when the value of `mean` leaves the function `body` as a value (see the module
    docstring); else ``text`` when it fills text or labels, ``spread`` when it only feeds a
    variance (or nothing)."""
    parents = {id(c): p for p in ast.walk(ast.Module(body=body, type_ignores=[]))
               for c in ast.iter_child_nodes(p)}
    seen: set[str] = set()
    sinks: set[str] = set()
    todo: list[ast.AST] = [mean]
    while todo and len(seen) < MAX_NAMES:
        names = _use(todo.pop(), parents, binds, sinks)
        if names is None:
            return None
        for name in names - seen:
            seen.add(name)
            todo += [n for s in body for n in ast.walk(s) if isinstance(n, ast.Name)
                     and n.id == name and isinstance(n.ctx, ast.Load)]
    return "text" if "text" in sinks else "spread"


def _use(node: ast.AST, parents: dict[int, ast.AST], binds: Binds,
         sinks: set[str]) -> set[str] | None:
    """The names a use of `node` binds its value to (empty: it goes nowhere, or only into
    text or a variance, added to `sinks`), or None when it leaves the function."""
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Pow):
            return set()
        if isinstance(parent, ast.JoinedStr | ast.FormattedValue) or (
                isinstance(parent, ast.Call) and child is not parent.func and
                call_name(parent).rsplit(".", 1)[-1] in TEXT_SINKS):
            sinks.add("text")
            return set()
        if isinstance(parent, ast.Call) and child is not parent.func and \
                call_name(parent) not in ("round", "int", "float", "min", "max", "abs"):
            return None  # handed to a call: ``CriterionResult(score=avg)``
        child, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.If | ast.While) and child is parent.test:
        sinks.add("text")  # a label picked on the mean
        return _picked(parent, binds)
    if isinstance(parent, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if all(isinstance(t, ast.Name | ast.Tuple | ast.List) for t in targets):
            return {n for t in targets for n in target_names(t)}
    return None if not isinstance(parent, ast.Expr) else set()


def _picked(test: ast.If | ast.While, binds: Binds) -> set[str] | None:
    """What a test on a mean picks: the names its sides bind to values other than text,
    or None when a side returns or stores such a value."""
    names: set[str] = set()
    for stmt in [*test.body, *test.orelse]:
        for sub in ast.walk(stmt):
            value = getattr(sub, "value", None)
            if not isinstance(sub, ast.Return | ast.Assign | ast.AnnAssign) or \
                    not isinstance(value, ast.expr) or is_text(value, binds):
                continue
            if isinstance(sub, ast.Return):
                return None
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            if any(isinstance(t, ast.Attribute | ast.Subscript) for t in targets):
                return None
            names |= {n for t in targets for n in target_names(t)}
    return names


def is_note(choice: ast.IfExp, binds: Binds) -> bool:
    """True when a conditional expression picks text (``"Disagreement" if spread > 2 else
    None``): the choice writes a note."""
    sides = (choice.body, choice.orelse)
    return any(is_text(v, binds) for v in sides) and all(
        is_text(v, binds) or (isinstance(v, ast.Constant) and v.value is None) for v in sides)


def unheard(root: ast.expr, note: ast.expr) -> bool:
    """True when a note picked by a test (`note`, within the expression `root`) goes only to
    a log line (``logger.info("%s", "[DISSENT]" if v.dissent else "")``) or to a remediation
    field (``Result(remediation="\\n".join(r) if r else "None")``): neither is a dissent the
    report records, whatever the test reads."""
    parents = {id(c): p for p in ast.walk(root) for c in ast.iter_child_nodes(p)}
    child: ast.AST = note
    parent = parents.get(id(note))
    while parent is not None:
        if isinstance(parent, ast.keyword):
            return bool(parent.arg and ADVICE.search(parent.arg))
        if isinstance(parent, ast.Call) and child is not parent.func and \
                call_name(parent).rsplit(".", 1)[-1] in LOG_CALLS:
            return True
        child, parent = parent, parents.get(id(parent))
    return False
