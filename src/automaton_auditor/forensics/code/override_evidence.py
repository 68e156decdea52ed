"""A cap on the detectives' evidence that fires on the evidence of a check that found nothing.

The synthesis caps a score when a predicate over the evidence of one criterion holds (``for
ev in evidences.get("safe_tool_engineering", []): if ev.found and "os.system" in
ev.content.lower(): return True``). A detective writes that criterion's evidence from a flag
its check sets (``found_os_system = False``, set to ``True`` where the check matches):
``Evidence(..., found=not found_os_system, content="... os.system at ..." if
found_os_system else "No os.system() calls detected")``.

``justice.inverted_override`` is confirmed when, for such a piece of evidence, the predicate
holds while the flag keeps the value it starts with (the check matched nothing) and cannot
hold once the check sets it (it matched): the cap falls on the repositories the check found
clean and never on those it caught. The predicate is read from the code (``found``, the
evidence's text, ``in``, ``startswith``, ``any`` over literal markers, ``not``/``and``/
``or``, ``if ...: continue`` guards); the text is what the evidence's literals spell, parts
filled at run time unknown. Whatever cannot be read leaves the fact unconfirmed; a predicate
whose answer no score cap reads gives no fact.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from automaton_auditor.forensics.code.callgraph import Key
from automaton_auditor.forensics.code.common import JSON, function_defs
from automaton_auditor.forensics.code.evidence_tests import (
    Item,
    Pred,
    Text,
    fields,
    holds,
    predicates,
    text_of,
)
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.state import Finding

FACET = "justice.inverted_override"
GOAL = ("A cap on the detectives' evidence fires when their check finds nothing, and never "
        "when it finds something (the override is inverted)")


class Written(NamedTuple):
    """Evidence written from a check's flag: the item when the flag keeps its first value
    (the check matched nothing) and when the check set it."""

    path: str
    line: int
    flag: str
    clean: Item
    caught: Item
    quoted: tuple[int, ...] = ()  # the lines of its found flag and its text


def _first_value(fn: ast.FunctionDef | ast.AsyncFunctionDef, flag: str) -> bool | None:
    """The bool a flag starts with in `fn`, when every later assignment (nested under a
    check) sets the other bool; None otherwise."""
    stores = [n for n in ast.walk(fn) if isinstance(n, ast.Assign | ast.AugAssign |
                                                     ast.AnnAssign)
              and any(isinstance(t, ast.Name) and t.id == flag for t in (
                  n.targets if isinstance(n, ast.Assign) else [n.target]))]
    first = next((s for s in fn.body if s in stores), None)
    if not isinstance(first, ast.Assign) or not isinstance(first.value, ast.Constant) or \
            not isinstance(first.value.value, bool):
        return None
    start = first.value.value
    later = [s for s in stores if s is not first]
    if not later or any(not isinstance(s, ast.Assign) or not isinstance(s.value, ast.Constant)
                        or s.value.value is not (not start) for s in later):
        return None
    return start


def _on_flag(node: ast.AST | None) -> tuple[str, bool] | None:
    """``flag`` -> (flag, True); ``not flag`` -> (flag, False)."""
    if isinstance(node, ast.Name):
        return node.id, True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and \
            isinstance(node.operand, ast.Name):
        return node.operand.id, False
    return None


def _text_when(node: ast.AST | None, flag: str, value: bool) -> Text | None:
    if isinstance(node, ast.IfExp):
        on = _on_flag(node.test)
        if on is None or on[0] != flag:
            return None
        return text_of(node.body if value is on[1] else node.orelse)
    return text_of(node)


def written(path: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, key: str,
            field: str) -> Iterator[Written]:
    """Evidence for criterion `key` built in `fn` with ``found`` and `field` set from one
    flag of a check."""
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        if "found" not in kw or field not in kw or not any(
                isinstance(v, ast.Constant) and v.value == key for v in kw.values()):
            continue
        on = _on_flag(kw["found"])
        start = _first_value(fn, on[0]) if on else None
        if on is None or start is None:
            continue
        texts = [_text_when(kw[field], on[0], v) for v in (start, not start)]
        text = kw[field]
        branches = [text.body, text.orelse] if isinstance(text, ast.IfExp) else []
        if texts[0] is not None and texts[1] is not None:
            yield Written(path, call.lineno, on[0], Item(start is on[1], texts[0], field),
                          Item((not start) is on[1], texts[1], field), tuple(sorted(
                              {kw["found"].lineno, text.lineno, *(b.lineno for b in branches)})))


def functions(repo: Path, paths: list[str]) -> Iterator[tuple[str, str, Any]]:
    """(path, qualified name, node) of every function in `paths`."""
    for path in paths:
        tree = parse_file(str(repo / path))
        for qual, fn in function_defs(tree) if tree is not None else ():
            yield path, qual, fn


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(
        func, ast.Attribute) else None


def _tests_at(fn: ast.AST, line: int) -> list[ast.expr]:
    return [n.test for n in ast.walk(fn) if isinstance(n, ast.If | ast.IfExp | ast.While)
            and n.lineno == line]


def _reads(test: ast.expr, names: set[str], calls: list[ast.Call]) -> bool:
    return any((isinstance(n, ast.Name) and n.id in names) or any(n is c for c in calls)
               for n in ast.walk(test))


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]


def capping(name: str, fns: dict[Key, Any], rules: list[Any]) -> list[tuple[str, int]]:
    """The score caps (`rules` that cap) whose test reads the answer of function `name`:
    in the function that calls it, or in one it hands the answer to."""
    caps = [r for r in rules if "cap" in r.does]
    found: set[tuple[str, int]] = set()
    for (path, qual), fn in fns.items():
        calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and _called(c) == name]
        names = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and any(
            n.value is c for c in calls) for t in n.targets if isinstance(t, ast.Name)}
        found |= {(r.path, r.line) for r in caps if r.fn == f"{path}:{qual}" and any(
            _reads(t, names, calls) for t in _tests_at(fn, r.line))}
        for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call) and names):
            handed = [(i, None) for i, a in enumerate(call.args) if isinstance(a, ast.Name)
                      and a.id in names] + [(-1, k.arg) for k in call.keywords if isinstance(
                          k.value, ast.Name) and k.value.id in names]
            for (cpath, cqual), callee in fns.items() if handed else ():
                if cqual.rsplit(".", 1)[-1] != _called(call):
                    continue
                params = _params(callee)[1 if "." in cqual else 0:]
                got = {k or (params[i] if i < len(params) else "") for i, k in handed}
                found |= {(r.path, r.line) for r in caps if r.fn == f"{cpath}:{cqual}" and
                          any(_reads(t, got, []) for t in _tests_at(callee, r.line))}
    return sorted(found)


def inverted_override(repo: Path, facts: dict[str, JSON], scope: list[Key],
                      rules: list[Any]) -> Finding:
    """``justice.inverted_override`` (see the module docstring)."""
    fns = {(p, q): fn for p, q, fn in functions(repo, sorted({k[0] for k in scope}))
           if (p, q) in set(scope)}
    parsed = sorted(p for p, f in facts.items() if "skipped" not in f and "error" not in f)
    every: list[tuple[str, str, Any]] | None = None
    for (_path, _qual), fn in sorted(fns.items()):
        for pred in predicates(_path, fn):
            read, caps = fields(pred), capping(fn.name, fns, rules)
            if len(read) != 1 or not caps:
                continue
            every = every if every is not None else list(functions(repo, parsed))
            for wpath, _q, wfn in every:
                for w in written(wpath, wfn, pred.key, next(iter(read))):
                    if holds(pred, w.clean) is True and holds(pred, w.caught) is False:
                        return _finding(repo, pred, w, caps)
    return Finding(facet=FACET, goal=GOAL, found=False, pattern="failure", location=".",
                   content=None, confidence=0.85,
                   rationale="No score cap on the evidence is read to fire on the evidence "
                             "of a check that found nothing.")



def _finding(repo: Path, pred: Pred, w: Written, caps: list[tuple[str, int]]) -> Finding:
    tests = sorted({t.lineno for tests, _ in pred.fires for t in tests if hasattr(t, "lineno")})
    lines = [*((pred.path, n) for n in tests), *((w.path, n) for n in w.quoted or (w.line,)),
             *caps]
    quote = "\n".join(line_at(repo, p, n, limit=160) for p, n in lines[:10])
    clean = "".join(p if p is not None else "…" for p in w.clean.text.parts)
    where = ", ".join(f"{p}:{n}" for p, n in caps[:3])
    return Finding(
        facet=FACET, goal=GOAL, found=True, pattern="failure",
        location=f"{pred.path}:{pred.fn.lineno}", content=quote, confidence=0.85,
        rationale=(f"The score cap at {where} reads {pred.fn.name} ({pred.path}:"
                   f"{pred.fn.lineno}), which answers true on an item of the "
                   f"{pred.key!r} evidence by its found flag and {w.clean.field}. The evidence "
                   f"written at {w.path}:{w.line} takes both from the flag {w.flag}: while the "
                   f"flag keeps the value it starts with (the check matched nothing) it holds "
                   f"found={w.clean.found} and {w.clean.field} {clean!r}, on which the "
                   f"predicate holds; once the check sets it, found={w.caught.found}, on which "
                   "it cannot. The cap falls on the repositories the check finds clean and "
                   "never on those it catches."),
        data={"predicate": f"{pred.path}:{pred.fn.lineno}", "written": f"{w.path}:{w.line}",
              "flag": w.flag, "caps": [f"{p}:{n}" for p, n in caps], "key": pred.key})
