"""Words searched in a judge's argument, followed into helpers, and nowhere else.

A keyword rule searches a literal in the text a judge wrote (its argument, reasoning,
charges). A literal searched in the rubric's rule text (``re.search(r"cap\\s*(\\d)",
rule_text)``) or in a config mapping (``"fact_supremacy" in rules``) reads no judge. When
the searched text is one of the function's parameters (``def _flags(text): return any(k in
text for k in KW)``), its callers decide: the test reads words only where a caller passes a
judge's text for that parameter (``_flags(op.argument)``).

Walk time marks such a test ``wordsof:<param>`` (`word_kinds`) and records, per function,
the calls it passes a judge's text to (``text_calls``); `param_words` resolves the marks
across the call graph. `callee` finds the repository function a call names.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, dotted, resolve

WORDS_OF = "wordsof:"
WORD_CALLS = ("search", "match", "fullmatch", "findall", "startswith", "endswith", "find",
              "count")
MAX_DEPTH = 8


def searched_text(node: ast.Call, imports: dict[str, str]) -> ast.expr | None:
    """The text a word call searches: ``re.search(p, text)``'s second argument, or the
    receiver of ``text.startswith("x")``."""
    if not isinstance(node.func, ast.Attribute) or node.func.attr not in WORD_CALLS:
        return None
    name = dotted(node.func) or ""
    if (resolve(name, imports) or name).startswith("re."):
        return node.args[1] if len(node.args) > 1 else None
    return node.func.value


def param_roots(node: ast.AST, params: set[str], binds: dict[str, list[ast.expr]],
                seen: frozenset[str] = frozenset()) -> set[str]:
    """The function's parameters an expression is built from, through its local names."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Name) or sub.id in seen or len(seen) > MAX_DEPTH:
            continue
        if sub.id in params and not binds.get(sub.id):
            found.add(sub.id)
        for value in binds.get(sub.id, []):
            found |= param_roots(value, params, binds, seen | {sub.id})
    return found


def word_kinds(subject: set[str], roots: Callable[[], set[str]]) -> set[str]:
    """What a literal searched in a text reads: ``words`` in a judge's text; in a text built
    only from parameters, ``wordsof:<param>`` (its callers decide); else nothing."""
    if "text" in subject:
        return {"words"}
    return set() if subject else {WORDS_OF + p for p in roots()}


def text_call(node: ast.Call, reads: Callable[[ast.expr], set[str]]) -> JSON | None:
    """A call that passes a judge's text: the positions and keywords it passes it in."""
    name = dotted(node.func) or ""
    args = [i for i, a in enumerate(node.args) if "text" in reads(a)]
    kw = [k.arg for k in node.keywords if k.arg and "text" in reads(k.value)]
    return {"name": name, "args": args, "kw": kw} if name and (args or kw) else None


def callee(graph: CallGraph, key: Key, name: str) -> Key | None:
    """The repository function `key` calls under `name` (its first call that resolves)."""
    for site in graph.sites(key):
        if site["name"] != name:
            continue
        target = graph.resolve(key, site)
        found = graph.function_key(target) if target is not None else None
        if found is not None:
            return found
    return None


def param_words(graph: CallGraph, key: Key, reads: set[str]) -> set[str]:
    """`reads` with each ``wordsof:<param>`` of function `key` made ``words`` where a caller
    passes a judge's text for that parameter, and dropped where none does."""
    wanted = {r[len(WORDS_OF):] for r in reads if r.startswith(WORDS_OF)}
    out = {r for r in reads if not r.startswith(WORDS_OF)}
    if wanted and any(_passes_text(graph, caller, item, key, wanted)
                      for caller, info in graph.functions.items()
                      for item in (info.get("logic") or {}).get("text_calls", [])):
        out.add("words")
    return out


def _passes_text(graph: CallGraph, caller: Key, item: JSON, key: Key,
                 wanted: set[str]) -> bool:
    if item["name"].rsplit(".", 1)[-1] != key[1].rsplit(".", 1)[-1] or \
            callee(graph, caller, item["name"]) != key:
        return False
    params = list(graph.functions[key].get("params") or [])
    if params[:1] in (["self"], ["cls"]) and "." in item["name"]:
        params = params[1:]  # ``self._flags(text)`` binds ``self`` implicitly
    passed = {params[i] for i in item["args"] if i < len(params)} | set(item["kw"])
    return bool(passed & wanted)


MAX_SIDES = 8  # ways a test can hold that are told apart


def _sides(test: ast.expr, reads: Callable[[ast.expr], set[str]]) -> list[set[str]]:
    """What each way `test` can hold reads: the sides of an ``or``, distributed over an
    ``and`` (``a and (b or c)``: ``a, b`` and ``a, c``); a negated test holds one way."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [side for v in test.values for side in _sides(v, reads)][:MAX_SIDES]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        out: list[set[str]] = [set()]
        for v in test.values:
            out = [a | b for a in out for b in _sides(v, reads)][:MAX_SIDES]
        return out
    return [reads(test)]


def or_sides(value: ast.expr, reads: Callable[[ast.expr], set[str]],
             guards: list[tuple[set[str], ast.expr]]) -> JSON:
    """A helper's answer that is an ``or`` (``return (p.score <= 2 and "unsafe" in arg) or
    not ev.found``), or a constant returned under tests with one (``if p.judge == "P" and
    ("security" in arg or p.score <= 2): return True``): what each side reads, as each side
    answers alone."""
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        held = set().union(*(r for r, _t in guards))
        return {"alts": [sorted(reads(v) | held) for v in value.values]}
    sides = _sides(ast.BoolOp(op=ast.And(), values=[t for _r, t in guards]), reads) \
        if guards and isinstance(value, ast.Constant) else []
    return {"alts": [sorted(side) for side in sides]} if len(sides) > 1 else {}


def helper_sides(test: ast.expr, inner: list[ast.expr],
                 reads: Callable[[ast.expr], set[str]]) -> JSON:
    """The helpers a decision's test calls as one of its conditions (``if _override(p):``,
    ``if _override(p) and x:``), each with what its other conditions read: a side of the
    helper's ``or`` fires the decision with those alone (a negated call fires on none)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
        else [test]
    out = [{"call": dotted(part.func), "with": sorted(set().union(
        *(reads(p) for p in parts if p is not part), *(reads(t) for t in inner)))}
        for part in parts if isinstance(part, ast.Call) and dotted(part.func)]
    return {"helper_sides": out} if out else {}
