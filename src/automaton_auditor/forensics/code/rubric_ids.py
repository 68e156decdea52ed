"""The criteria a repository's own rubric files define, and whether a test on a criterion's
id or name can ever hold for one of them.

A Chief Justice rule keyed on the criterion (``if "security" in op.criterion_id.lower():``)
fires only for a criterion whose id holds that word. When no criterion of any rubric the
repository carries does (the challenge's ids are ``safe_tool_engineering`` and the like), the
rule never fires, whatever its name says. A rubric file is a JSON or YAML file whose top
level lists criteria as mappings with a string ``id`` under ``dimensions``, ``criteria`` or
``rubric``; every such file counts (an old rubric beside the new one widens what may hold).
No rubric file: nothing is said.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path
from typing import Any, NamedTuple

from automaton_auditor.forensics.code.common import own_call_name
from automaton_auditor.forensics.code.data_files import DATA, load_data, read_text
from automaton_auditor.forensics.vendored import is_vendored

MAX_RUBRIC_FILES = 40  # data files read for criteria, no more
MAX_ALTERNATIVES = 16  # ways a test may hold, kept before it is left unread
MAX_HELPER_DEPTH = 3  # helpers of helpers followed into a test's answer
LISTS = ("dimensions", "criteria", "rubric")
CASE = ("lower", "casefold", "upper")
PLAIN = ("strip",)
ID_NAMES = {f"{base}{sep}{field}" for base in ("criterion", "criteria", "dimension", "dim",
                                               "crit", "rubric") for sep in ("_", "")
            for field in ("id", "key")} - {"rubric_key", "rubrickey"}
NAME_NAMES = {f"{base}_{field}" for base in ("criterion", "dimension", "dim", "crit")
              for field in ("name", "title")}
BASES = {"criterion", "dimension", "dim", "crit"}

# a constraint on one criterion: [kind, field, value(s), lowered]; kind "has" (a word in the
# field), "eq" or "among"; or ["call", name]: the answer of a helper, read where it is known
Constraint = list[Any]
Alternatives = list[list[Constraint]]



class Aliases(NamedTuple):
    """A function's local names bound to a criterion's id or name (``cid =
    crit_id.lower()``: the field and the case it is read in), or to a test on one
    (``is_arch = _is_architecture(cid)``: the ways it holds)."""

    sides: dict[str, tuple[str, str]]
    flags: dict[str, Alternatives]


class Rubric(NamedTuple):
    """The criteria (each ``{"id": ..., "name": ...}``) and the files they are read from."""

    criteria: list[dict[str, str]]
    files: list[str]


NO_RUBRIC = Rubric([], [])  # none read: no test on the criterion is judged


def repository_rubric(repo: Path, files: list[str]) -> Rubric:
    """The criteria of every rubric file in the repository (none: an empty rubric)."""
    criteria: list[dict[str, str]] = []
    sources: list[str] = []
    candidates = [f for f in sorted(files) if f.lower().endswith(DATA) and not is_vendored(f)
                  and not any(part.startswith(".") for part in f.split("/"))]
    for rel in candidates[:MAX_RUBRIC_FILES]:
        raw = read_text(repo, rel)
        found = _criteria(load_data(rel, raw)) if raw and "id" in raw else []
        if found:
            criteria += found
            sources.append(rel)
    return Rubric(criteria, sources)


def _criteria(data: Any) -> list[dict[str, str]]:
    if not isinstance(data, dict):
        return []
    out: list[dict[str, str]] = []
    for key in LISTS:
        items = data.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                name = item.get("name")
                out.append({"id": item["id"], **({"name": name} if isinstance(name, str)
                                                 else {})})
    return out


def criterion_test(test: ast.expr, aliases: Aliases | None = None) -> Alternatives | None:
    """The ways `test` may hold that rest on a criterion's id or name compared with string
    literals: each a list of constraints one criterion must meet together. None when the
    test may hold whatever the criterion is (a side that is not such a comparison).
    `aliases`: local names bound to a criterion's id or name (``cid = crit_id.lower()``)."""
    aliases = aliases or Aliases({}, {})
    if isinstance(test, ast.Name) and test.id in aliases.flags:
        return aliases.flags[test.id]
    if isinstance(test, ast.BoolOp):
        parts = [criterion_test(v, aliases) for v in test.values]
        if isinstance(test.op, ast.Or):
            if any(p is None for p in parts):
                return None
            return [alt for p in parts if p is not None for alt in p][:MAX_ALTERNATIVES]
        known = [p for p in parts if p is not None]
        if not known:
            return None
        combos = itertools.islice(itertools.product(*known), MAX_ALTERNATIVES)
        return [[c for alt in combo for c in alt] for combo in combos]
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _comparison(test.left, test.ops[0], test.comparators[0], aliases)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and \
            test.func.id == "any" and len(test.args) == 1:
        return _any_word(test.args[0], aliases)
    if isinstance(test, ast.Call) and not test.keywords and own_call_name(test.func):
        return [[["call", own_call_name(test.func)]]]
    return None


def _any_word(gen: ast.expr, aliases: Aliases) -> Alternatives | None:
    """``any(word in cid for word in ["security", "auth"])``: one way per word."""
    if not isinstance(gen, ast.GeneratorExp) or len(gen.generators) != 1:
        return None
    loop = gen.generators[0]
    words = [_text(e) for e in loop.iter.elts] if isinstance(
        loop.iter, ast.Tuple | ast.List | ast.Set) else []
    if loop.ifs or not words or any(w is None for w in words) or \
            not isinstance(loop.target, ast.Name) or not isinstance(gen.elt, ast.Compare) or \
            len(gen.elt.ops) != 1 or not isinstance(gen.elt.ops[0], ast.In) or \
            not isinstance(gen.elt.left, ast.Name) or gen.elt.left.id != loop.target.id:
        return None
    side = _side(gen.elt.comparators[0], aliases)
    return [[["has", side[0], w, side[1]]] for w in words][:MAX_ALTERNATIVES] if side else None


def _comparison(left: ast.expr, op: ast.cmpop, right: ast.expr,
                aliases: Aliases) -> Alternatives | None:
    if isinstance(op, ast.In) and _text(left) is not None and (side := _side(right, aliases)):
        return [[["has", side[0], _text(left), side[1]]]]
    if isinstance(op, ast.In) and (side := _side(left, aliases)) and \
            isinstance(right, ast.Tuple | ast.List | ast.Set) and right.elts and \
            all(_text(e) is not None for e in right.elts):
        return [[["among", side[0], [_text(e) for e in right.elts], side[1]]]]
    if isinstance(op, ast.Eq):
        for one, other in ((left, right), (right, left)):
            if (side := _side(one, aliases)) and _text(other) is not None:
                return [[["eq", side[0], _text(other), side[1]]]]
    return None


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def _side(node: ast.expr, aliases: Aliases | None = None) -> tuple[str, str] | None:
    """(``id`` or ``name``, the case it is read in) when `node` is a criterion's id or name
    (``criterion_id``, ``op.dimension_id.lower()``, ``(crit_id or "").lower()``,
    ``dim["id"]``, ``crit.name``, or a local name bound to one: `aliases`)."""
    case = ""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in (*CASE, *PLAIN) and not node.args:
        case = case or (node.func.attr if node.func.attr in CASE else "")
        node = node.func.value
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and \
            len(node.values) == 2 and _text(node.values[1]) == "":
        node = node.values[0]  # ``(criterion_id or "")``
    if isinstance(node, ast.Name) and aliases and node.id in aliases.sides:
        bound, known = aliases.sides[node.id]
        return bound, case or known
    field = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(
        node, ast.Name) else _text(node.slice) if isinstance(node, ast.Subscript) else None
    base = node.value if isinstance(node, ast.Attribute | ast.Subscript) else None
    base_name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(
        base, ast.Name) else ""
    lowered = (field or "").lower()
    if lowered in ID_NAMES or (lowered == "id" and base_name.lower() in BASES):
        return "id", case
    if lowered in NAME_NAMES or (lowered in ("name", "title") and base_name.lower() in BASES):
        return "name", case
    return None


def holds(alternatives: Alternatives, rubric: Rubric,
          helpers: dict[str, Alternatives | None]) -> bool:
    """Whether some criterion of `rubric` meets every constraint of some alternative
    (`helpers`: what a called helper's True answer needs, None where it may be True
    whatever the criterion)."""
    for alt in _expanded(alternatives, helpers):
        if any(all(_meets(c, criterion) for c in alt) for criterion in rubric.criteria):
            return True
    return False


def _expanded(alternatives: Alternatives, helpers: dict[str, Alternatives | None],
              depth: int = 0) -> Alternatives:
    """`alternatives` with each helper call replaced by the ways its True answer holds
    (through helpers of helpers, `MAX_HELPER_DEPTH` deep); an unknown helper holds always."""
    out: Alternatives = []
    for alt in alternatives:
        plain = [c for c in alt if c[0] != "call"]
        calls = [helpers.get(str(c[1])) for c in alt if c[0] == "call"]
        known = [h for h in calls if h is not None]
        for combo in itertools.islice(itertools.product(*known), MAX_ALTERNATIVES):
            out.append(plain + [c for part in combo for c in part])
    if depth < MAX_HELPER_DEPTH and any(c[0] == "call" for alt in out for c in alt):
        return _expanded(out[:MAX_ALTERNATIVES], helpers, depth + 1)
    return out[:MAX_ALTERNATIVES]


def _meets(constraint: Constraint, criterion: dict[str, str]) -> bool:
    if constraint[0] == "call":
        return True  # a helper followed no deeper: it may hold for any criterion
    kind, field, value, case = constraint
    text = criterion.get(field)
    if text is None:
        return True  # a name the rubric does not give may be anything
    text = text.upper() if case == "upper" else text.lower() if case else text
    if kind == "has":
        return str(value) in text
    if kind == "eq":
        return text == str(value)
    return text in [str(v) for v in value]


def described(alternatives: Alternatives, helpers: dict[str, Alternatives | None]) -> str:
    """The literals a dead test looks for (a helper's, through `helpers`), for the
    rationale (``a criterion id holding 'security' or 'auth'``)."""
    held: dict[str, list[str]] = {}
    named: list[str] = []
    for alt in _expanded(alternatives, helpers):
        for kind, *rest in alt:
            if kind == "has":
                held.setdefault(str(rest[0]), []).append(repr(rest[1]))
            elif kind in ("eq", "among"):
                values = [rest[1]] if kind == "eq" else list(rest[1])
                named += [f"{v!r}" for v in values]
    parts = [f"a criterion {field} holding {' or '.join(dict.fromkeys(words))}"
             for field, words in held.items()]
    if named:
        parts.append(f"the criterion {' or '.join(dict.fromkeys(named))}")
    return " or ".join(parts) or "a criterion a helper tests for"


def _bind(aliases: Aliases, name: str, value: ast.expr) -> None:
    """What `name` holds once assigned `value`: a criterion's id or name, a test on one, or
    neither (an earlier binding is forgotten)."""
    aliases.sides.pop(name, None)
    aliases.flags.pop(name, None)
    if (side := _side(value, aliases)) is not None:  # ``cid = (criterion_id or "").lower()``
        aliases.sides[name] = side
    elif (alts := criterion_test(value, aliases)) is not None:
        aliases.flags[name] = alts


def criterion_facts(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any]:
    """``criterion_tests``: each ``if``/``while`` (by line) whose test, with the tests that
    enclose it, holds only for some criteria (`criterion_test`); ``true_when``: when the
    function answers True only under such tests (``if "security" in op.criterion_id: return
    True`` ... ``return False``), the ways it may."""
    tests: list[dict[str, Any]] = []
    true_when: Alternatives = []
    free = False
    aliases = Aliases({}, {})

    def visit(body: list[ast.stmt], guards: list[ast.expr]) -> None:
        nonlocal free
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name):
                _bind(aliases, stmt.targets[0].id, stmt.value)
            if isinstance(stmt, ast.Return):
                value = stmt.value
                if isinstance(value, ast.Constant) and value.value in (False, None):
                    continue
                # ``return True`` under its tests, or ``return any(w in cid for w in ...)``
                needs = guards if isinstance(value, ast.Constant) and value.value is True \
                    else [*guards, value] if value is not None else []
                alts = criterion_test(ast.BoolOp(op=ast.And(), values=needs), aliases) \
                    if needs else None
                free = free or alts is None
                true_when.extend(alts or [])
                continue
            if isinstance(stmt, ast.If | ast.While):
                alts = criterion_test(ast.BoolOp(op=ast.And(), values=[*guards, stmt.test]),
                                      aliases)
                if alts is not None:
                    tests.append({"line": stmt.lineno, "alts": alts})
                visit(stmt.body, [*guards, stmt.test])
                visit(stmt.orelse, [*guards, ast.UnaryOp(op=ast.Not(), operand=stmt.test)])
                continue
            for field in ("body", "orelse", "finalbody"):
                visit([s for s in getattr(stmt, field, None) or []
                       if isinstance(s, ast.stmt)], guards)
            for handler in getattr(stmt, "handlers", None) or []:
                visit(handler.body, guards)

    visit(fn.body, [])
    out: dict[str, Any] = {"criterion_tests": tests[:50]} if tests else {}
    if true_when and not free:
        out["true_when"] = true_when[:MAX_ALTERNATIVES]
    return out
