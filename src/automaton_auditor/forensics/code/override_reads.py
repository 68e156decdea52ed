"""What a score cap on the evidence actually reads: notes that qualify ``justice.rules``.

A rule credited as the security override may read less, or other, than its name says:

- scope: the test sits in the loop over the criteria (``for dimension in rubric:`` ...
  ``ops = [o for o in opinions if o.criterion_id == dim_id]``) but reads nothing that loop
  picks per criterion (``security_evidence = any(e.dimension_id == "safe_tool_engineering"
  and not e.found for e in evidences.get("repo", []))``; ``if security_evidence:``): it
  holds for every criterion alike or for none;
- skipped scores: a helper whose answer the decision reads loops over opinions and skips the
  low ones (``for op in prosecutor_ops: if op.score <= 3: continue``): a judge who scores
  the criterion low never counts toward it;
- negated text: the helper fires on a word in an evidence's text (``if "os.system" in
  content: return True``), and every text the code writes for evidence that holds the word
  says it is absent (``content="... no os.system with user input."``);
- a decreed score: any rule whose test compares one judge's score with a number
  (``if scores["Prosecutor"] <= 3:``) that every score the judge's own prompt allows
  satisfies (``Never 4-5.``: `score_bands`): it fires whatever the evidence.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.common import str_value
from automaton_auditor.forensics.code.exprs import call_name
from automaton_auditor.forensics.code.override_evidence import functions
from automaton_auditor.forensics.code.score_bands import Band, decreed
from automaton_auditor.forensics.code.source import statement_at
from automaton_auditor.forensics.code.spread_routes import Rule

# a word said absent: "no os.system", "not using eval(", "without shell=True"
NEGATION = re.compile(r"\b(?:no|not|never|without|avoids?|none)\b[\w\s()\-]{0,30}$", re.I)
TEXT_FIELDS = ("content", "rationale")


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _mutated(node: ast.AST) -> str | None:
    """``flags.append(x)`` as a statement: it changes ``flags``."""
    call = node.value if isinstance(node, ast.Expr) else None
    func = call.func if isinstance(call, ast.Call) else None
    return func.value.id if isinstance(func, ast.Attribute) and isinstance(
        func.value, ast.Name) else None


def _targets(node: ast.AST) -> set[str]:
    if (changed := _mutated(node)) is not None:
        return {changed}
    if isinstance(node, ast.Assign):
        return {n for t in node.targets for n in _names(t)}
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
        return _names(node.target)
    return set()


def _per_item(loop: ast.For) -> set[str]:
    """The names the loop's body derives from its item (by value, or by being set under a
    test on it), to a fixed point."""
    tainted = _names(loop.target)
    changed = True
    while changed:
        changed = False

        def visit(stmts: list[ast.stmt], under: bool) -> None:
            nonlocal changed
            for stmt in stmts:
                own = [getattr(stmt, f) for f in ("value", "test", "iter")
                       if isinstance(getattr(stmt, f, None), ast.AST)]
                reads = under or any(_names(e) & tainted for e in own)
                # a name changed in place (``n += 1``, ``seen.append(x)``) differs per pass
                varies = reads or isinstance(stmt, ast.AugAssign) or _mutated(stmt) is not None
                if varies and not _targets(stmt) <= tainted:
                    tainted.update(_targets(stmt))
                    changed = True
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(stmt, field, []), reads if isinstance(
                        stmt, ast.If | ast.For | ast.While) else under)
        visit(loop.body, False)
    return tainted


def _selects(loop: ast.For, tainted: set[str]) -> bool:
    """Whether the loop picks items by its own item (``o.criterion_id == dim_id``,
    ``evidences.get(dim_id)``, ``by_id[dim_id]``): a loop over the criteria."""
    for node in ast.walk(loop):
        if isinstance(node, ast.Compare) and len(node.comparators) == 1:
            sides = [node.left, node.comparators[0]]
            if any(isinstance(s, ast.Name) and s.id in tainted for s in sides) and any(
                    isinstance(s, ast.Attribute) for s in sides):
                return True
        key = node.slice if isinstance(node, ast.Subscript) else node.args[0] if isinstance(
            node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and node.args else None
        if isinstance(key, ast.Name) and key.id in tainted:
            return True
    return False


def _unscoped(fn: Any, line: int) -> tuple[ast.For, ast.If] | None:
    """The loop over the criteria holding the test at `line`, when neither that test, a test
    around it in the loop, nor a test in what it guards reads anything the loop picks per
    criterion."""
    for loop in (n for n in ast.walk(fn) if isinstance(n, ast.For)):
        ifs = [n for n in ast.walk(loop) if isinstance(n, ast.If)]
        test = next((n for n in ifs if n.lineno == line), None)
        if test is None or loop.lineno == line:
            continue
        tainted = _per_item(loop)
        around = [n for n in ifs if n is test or any(s is test for b in (n.body, n.orelse)
                                                     for s in ast.walk(ast.Module(b, [])))]
        # neither the test, a test around it, nor a test in what it guards reads the criterion
        inner = [n for stmt in test.body for n in ast.walk(stmt)
                 if isinstance(n, ast.If | ast.IfExp | ast.While)]
        if _selects(loop, tainted) and not any(
                _names(n.test) & tainted for n in [*around, *inner]):
            return loop, test
    return None


def _binding(fn: Any, expr: ast.AST, line: int) -> ast.stmt | None:
    """The last assignment, before `line`, of a name `expr` reads."""
    names = _names(expr)
    stores = [n for n in ast.walk(fn) if isinstance(n, ast.Assign | ast.AnnAssign) and
              _targets(n) & names and n.lineno < line]
    return max(stores, key=lambda n: n.lineno) if stores else None


def _calls(fn: Any, line: int, helper: str) -> bool:
    """Whether the test at `line` calls `helper` or reads a name bound from its answer."""
    name = helper.rsplit(".", 1)[-1].rsplit(":", 1)[-1]
    tests = [n.test for n in ast.walk(fn) if isinstance(n, ast.If) and n.lineno == line]
    bound = {t for n in ast.walk(fn) if isinstance(n, ast.Assign) and any(
        isinstance(c, ast.Call) and call_name(c) == name for c in ast.walk(n.value))
             for t in _targets(n)}
    return any((isinstance(n, ast.Call) and call_name(n) == name) or (
        isinstance(n, ast.Name) and n.id in bound) for t in tests for n in ast.walk(t))


def _skips(fn: Any) -> Iterator[tuple[ast.For, ast.If, int]]:
    """Loops over opinions that skip the low scores: ``if op.score <= 3: continue``."""
    for loop in (n for n in ast.walk(fn) if isinstance(n, ast.For)):
        item = loop.target.id if isinstance(loop.target, ast.Name) else None
        for stmt in loop.body:
            if not isinstance(stmt, ast.If) or not isinstance(stmt.body[0], ast.Continue):
                continue
            test = stmt.test
            if not isinstance(test, ast.Compare) or len(test.ops) != 1:
                continue
            left, right = test.left, test.comparators[0]
            bound = right.value if isinstance(right, ast.Constant) else None
            if isinstance(left, ast.Attribute) and left.attr == "score" and isinstance(
                    left.value, ast.Name) and left.value.id == item and isinstance(
                    bound, int) and isinstance(test.ops[0], ast.LtE | ast.Lt):
                yield loop, stmt, bound if isinstance(test.ops[0], ast.LtE) else bound - 1


def _markers(fn: Any) -> list[tuple[str, int]]:
    """Literal words the function tests an evidence text for (``"os.system" in content``,
    ``any(k in text for k in [...])``), never under ``not``."""
    negated = {id(n) for u in ast.walk(fn) if isinstance(u, ast.UnaryOp) and isinstance(
        u.op, ast.Not) for n in ast.walk(u.operand)}
    found: list[tuple[str, int]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In) and \
                id(node) not in negated and isinstance(word := str_value(node.left), str) \
                and _evidence_text(fn, node.comparators[0]):
            found.append((word, node.lineno))
    return found


def _evidence_text(fn: Any, node: ast.expr, depth: int = 0) -> bool:
    """Whether an expression reads an evidence's text (``e.content``, ``e.rationale``), by
    itself or through a name the function binds to it."""
    if any(isinstance(n, ast.Attribute) and n.attr in TEXT_FIELDS for n in ast.walk(node)):
        return True
    names = _names(node)
    return depth < 3 and any(_evidence_text(fn, a.value, depth + 1) for a in ast.walk(fn)
                             if isinstance(a, ast.Assign) and _targets(a) & names)


def _texts(repo: Path, paths: list[str]) -> Iterator[tuple[str, int, str]]:
    """The literal texts written as an evidence's content or rationale (keyword arguments)."""
    for path, _qual, fn in functions(repo, paths):
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            for kw in call.keywords:
                text = str_value(kw.value) if kw.arg in TEXT_FIELDS else None
                if text:
                    yield path, kw.value.lineno, text


def _negated(repo: Path, paths: list[str], fn: Any) -> tuple[str, list[tuple[str, int]]]:
    """A word `fn` fires on whose every written text (one at least) says it is absent."""
    texts = list({t for t in _texts(repo, paths)})
    for word, _line in _markers(fn):
        low = word.lower()
        holding = [(p, n, t) for p, n, t in texts if low in t.lower()]
        if holding and all(NEGATION.search(t.lower()[:i]) for _p, _n, t in holding
                           for i in _at(t.lower(), low)):
            return word, sorted({(p, n) for p, n, _t in holding})
    return "", []


def _at(text: str, word: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(word), text)]


def override_notes(repo: Path | None, rules: list[Rule], facts: dict[str, Any],
                   bands: dict[str, Band] | None = None) -> str:
    """Clauses for ``justice.rules`` on what its score caps on the evidence read, and on the
    rules a judge's prompt decides (`bands`: `score_bands`; see the module docstring), each
    quoting the lines it rests on."""
    if repo is None:
        return ""
    paths = sorted(p for p, f in facts.items() if "skipped" not in f and "error" not in f)
    fns = {f"{p}:{q}": fn for p, q, fn in functions(repo, sorted({
        r.fn.rsplit(":", 1)[0] for r in rules if r.fn}))}
    deciding = [r for r in rules if r.kind == "evidence" and {"cap", "flag", "score"} & set(
        r.does)]
    notes = [_scope_note(repo, r, fns[r.fn]) for r in deciding if r.fn in fns]
    notes += _decreed_notes(repo, rules, fns, bands or {})
    readers: dict[str, list[Rule]] = {}
    for r in deciding:
        for h in r.helpers:
            readers.setdefault(h, []).append(r)
    for hkey, by in readers.items():
        helper, hpath = fns.get(hkey) or _find(repo, hkey), hkey.rsplit(":", 1)[0]
        # the decisions whose test calls the helper (or a name bound from its answer)
        by = [r for r in by if r.fn in fns and _calls(fns[r.fn], r.line, hkey)] or by[:1]
        lines = ", ".join(f"{r.path}:{r.line}" for r in by[:3])
        for loop, skip, low in _skips(helper) if helper is not None else ():
            bound = _binding(helper, loop.iter, loop.lineno)
            quoted = (*([bound.lineno] if bound else []), loop.lineno, skip.lineno)
            notes.append(f"the decision(s) at {lines} read {helper.name}, which skips every "
                         f"opinion scoring {low} or less (" + "; ".join(
                             _q(repo, hpath, n) for n in quoted) +
                         "): a judge who scores the criterion low never counts toward it")
        caps = [r for r in by if "cap" in r.does]
        word, where = _negated(repo, paths, helper) if helper and caps else ("", [])
        if word:
            notes.append(f"the cap(s) at {', '.join(f'{r.path}:{r.line}' for r in caps[:3])} "
                         f"fire on {word!r} in an evidence's text ({helper.name}), and every "
                         f"text the code itself spells for evidence holding {word!r} says it "
                         "is absent (" + "; ".join(_q(repo, p, n) for p, n in where[:2]) +
                         "): they fall on evidence reporting the flaw absent")
    return "".join(f"; {n}" for n in dict.fromkeys(n for n in notes if n))


def _decreed_notes(repo: Path, rules: list[Rule], fns: dict[str, Any],
                   bands: dict[str, Band]) -> list[str]:
    """A rule that changes the score whose test one judge's own prompt always satisfies."""
    notes: list[str] = []
    for r in sorted({r for r in rules if r.fn in fns and {"cap", "score", "flag"} & set(
            r.does)}, key=lambda r: (r.path, r.line)):
        tests = [n.test for n in ast.walk(fns[r.fn])
                 if isinstance(n, ast.If | ast.IfExp | ast.While) and n.lineno == r.line]
        hit = next((h for t in tests if (h := decreed(t, bands)) is not None), None)
        if hit is None:
            continue
        persona, band = hit
        loc, sentence = band.where[0]
        notes.append(f"the test {_q(repo, r.path, r.line)} holds on every score the {persona}'s "
                     f"own prompt lets it give ({band.lo}-{band.hi}: {sentence!r}, {loc}): "
                     "wherever it is reached, the rule it decides fires whatever the evidence "
                     "(unconditional)")
    return list(dict.fromkeys(notes))


def _scope_note(repo: Path, r: Rule, fn: Any) -> str:
    hit = _unscoped(fn, r.line)
    if hit is None:
        return ""
    bound = _binding(fn, hit[1].test, hit[1].lineno)
    return (f"the evidence test at {r.path}:{r.line} sits in the loop over the criteria "
            f"({_q(repo, r.path, hit[0].lineno)}) but reads nothing that loop picks per "
            "criterion" + (f" ({_q(repo, r.path, bound.lineno)})" if bound else "") +
            ", nor does a test in what it guards: it holds, and acts, for every criterion alike or "
            "for none")


def _find(repo: Path, key: str) -> Any:
    path, qual = key.rsplit(":", 1)
    return next((fn for _p, q, fn in functions(repo, [path]) if q == qual), None)


def _q(repo: Path, path: str, line: int) -> str:
    """``code``, path:line (a statement over several lines joined on one)."""
    return f"`{statement_at(repo, path, line, limit=160).split(': ', 1)[-1]}`, {path}:{line}"
