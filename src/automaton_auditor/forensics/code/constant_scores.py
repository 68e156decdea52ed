"""``llm.constant_score`` and ``judges.constant_score``: a judge's score is a number its code
writes even when the model answered.

``reply = self.llm.invoke(messages)`` then ``return JudicialOpinion(score=4,
rationale=reply.content)``: the model's text becomes the opinion's argument, its score is
never read, so the judge's number is the code's whatever the model said. The schema does not
hold the score (structured output is not enforced where it matters), and judges whose scores
are constants cannot disagree numerically: with one number for all, they agree by
construction.

Read in the code the judge nodes run (`structured_output.judge_scope`), or, with that not
known, in every function that calls a model. An opinion (a call or a dict with a ``score``)
counts when it is built on the path the function takes once a model call of its own has
returned (after the call's statement, or in a ``try``'s ``else``, not in its handler: that
is `fallback_scores`), holds the model's answer in another field (so it is the answer's
opinion, not the one for "no evidence" or a failure), and takes its score from a constant: a
literal, or a name every binding of which is a literal (in the function, or once at module
level). Not counted: a score read from the answer, computed from it or clamped
(``max(1, min(5, raw))``), a default the function rebinds or re-assigns later
(``parsed_score = 4`` then ``parsed_score = int(data["score"])``; ``op["score"] = ...``),
and every opinion of a function that elsewhere after its model call scores from the answer
or hands the answer itself on (``return opinion.model_copy(...)``): the constant there is a
fallback branch.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON, dotted, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.facts import calls_of
from automaton_auditor.forensics.code.fallback_scores import score_value
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.structured_output import OPINION
from automaton_auditor.state import Finding
from automaton_auditor.text import clip

MAX_PLACES = 20
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
Place = tuple[str, int, int, int, str]  # path; lines of the model call, the opinion, its
# score; the constant
# where a node sits, one level per block: the compound statement that holds the block (0:
# the function's body), the block (``body``, ``orelse``, ``handlers``...), which handler or
# case, and the statement's index in that block
Level = tuple[int, str, int, int]
# (the call's block, the opinion's block) of one compound statement when the opinion's block
# runs once the call's has completed: a try's else and finally, a loop's else (never an
# if's else: the other branch)
AFTER_BLOCKS = {("try.body", "try.orelse"), ("try.body", "try.finalbody"),
                ("try.orelse", "try.finalbody"), ("try.handlers", "try.finalbody"),
                ("loop.body", "loop.orelse")}
KINDS = {ast.Try: "try", ast.TryStar: "try", ast.For: "loop", ast.AsyncFor: "loop",
         ast.While: "loop"}
OPINION_SCHEMA_KIND = "structured"


def _trails(fn: FunctionNode) -> dict[int, tuple[Level, ...]]:
    """Per node of `fn` (by id; nested definitions left out), the blocks it sits in."""
    out: dict[int, tuple[Level, ...]] = {}

    def visit(body: list[ast.stmt], owner: int, block: str, number: int,
              trail: tuple[Level, ...]) -> None:
        for index, stmt in enumerate(body):
            here = (*trail, (owner, block, number, index))
            out[id(stmt)] = here
            for field, value in ast.iter_fields(stmt):
                if field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    continue
                for part in value if isinstance(value, list) else [value]:
                    for sub in ast.walk(part) if isinstance(part, ast.AST) else ():
                        out[id(sub)] = here
            if isinstance(stmt, FunctionNode | ast.ClassDef):
                continue
            kind = KINDS.get(type(stmt), type(stmt).__name__)
            for field in ("body", "orelse", "finalbody"):
                nested = getattr(stmt, field, None)
                if isinstance(nested, list):
                    visit(nested, id(stmt), f"{kind}.{field}", 0, here)
            for field in ("handlers", "cases"):
                for n, part in enumerate(getattr(stmt, field, None) or []):
                    visit(part.body, id(stmt), f"{kind}.{field}", n, here)

    visit(fn.body, 0, "def.body", 0, ())
    return out


def _after(call: tuple[Level, ...], built: tuple[Level, ...]) -> bool:
    """True when what sits at `built` runs once the call at `call` has returned (not on
    another branch of an ``if``, not in the handler of the call's ``try``)."""
    for (_owner, block, number, index), (_same, other, other_number, other_index) in zip(
            call, built, strict=False):
        if (block, number) != (other, other_number):
            return (block, other) in AFTER_BLOCKS
        if index != other_index:
            return index < other_index
    # the call in the header of the statement whose block builds the opinion, or both in
    # one statement
    return len(call) <= len(built)


def _literal(node: ast.AST | None) -> str | None:
    """The number a literal score writes (``4``, ``3.0``), else None (``True`` is none)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
            and not isinstance(node.value, bool):
        return str(node.value)
    return None


def _bindings(fn: FunctionNode, name: str) -> list[ast.AST | None]:
    """What `fn` binds `name` to: the value of each plain assignment, None for any other
    binding (a parameter, a loop target, an augmented assignment, unpacking, ``global``)."""
    args = fn.args
    if name in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                *filter(None, [args.vararg, args.kwarg])]}:
        return [None]
    found: list[ast.AST | None] = []
    plain: set[int] = set()  # the targets of plain assignments, read with their values
    for node in own_nodes(fn.body):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name) and target.id == name:
                    found.append(node.value)
                    plain.add(id(target))
    for node in own_nodes(fn.body):
        if isinstance(node, ast.Name) and node.id == name and isinstance(
                node.ctx, ast.Store | ast.Del) and id(node) not in plain:
            found.append(None)  # unpacked, a loop, with, walrus or augmented target
        elif isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            found.append(None)
    return found


def _constant(value: ast.expr, fn: FunctionNode, module: dict[str, str]) -> str | None:
    """The number a score expression always is: a literal, or a name every binding of
    which (in `fn`, else once at module level: `module`) is that literal or such a module
    name; else None."""
    if _literal(value) is not None or not isinstance(value, ast.Name):
        return _literal(value)
    bound = _bindings(fn, value.id)
    if not bound:
        return module.get(value.id)
    # ``score = NEUTRAL``: a name of the module bound once to a number, never in `fn`
    numbers = {_literal(v) if not isinstance(v, ast.Name) or _bindings(fn, v.id)
               else module.get(v.id) for v in bound}
    return numbers.pop() if len(numbers) == 1 and None not in numbers else None


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """The module's names bound once, at its top level, to a number."""
    seen: dict[str, list[str | None]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(target, ast.Name):
                    seen.setdefault(target.id, []).append(_literal(stmt.value))
    return {n: v[0] for n, v in seen.items() if len(v) == 1 and v[0] is not None}


def _outside_opinions(node: ast.AST) -> list[ast.AST]:
    """The nodes of an expression, not those inside an opinion it builds with a score."""
    out: list[ast.AST] = []
    stack = [node]
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.Call | ast.Dict) and score_value(sub) is not None:
            continue
        out.append(sub)
        stack.extend(ast.iter_child_nodes(sub))
    return out


def _mentions(node: ast.AST, ids: set[int], names: set[str]) -> bool:
    """True when the expression, outside the opinions it builds, holds one of the calls
    (`ids`) or reads one of `names`."""
    return any(id(n) in ids or (isinstance(n, ast.Name) and n.id in names)
               for n in _outside_opinions(node))


def answer_names(fn: FunctionNode, calls: list[ast.Call],
                 seeds: frozenset[str] = frozenset()) -> set[str]:
    """The locals of `fn` that hold a model call's answer or something computed from it
    (``response = llm.invoke(m)``, ``content = response.content``); not a name bound to
    an opinion built around it (``op = Opinion(score=4, argument=content)``). `seeds`: names
    that hold an answer already (a helper's parameter handed one)."""
    ids = {id(c) for c in calls}
    names: set[str] = set(seeds)
    steps = [n for n in own_nodes(fn.body) if isinstance(
        n, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor | ast.NamedExpr
        | ast.withitem)]
    for _round in range(len(steps) + 1):
        before = len(names)
        for node in steps:
            source = node.iter if isinstance(node, ast.For | ast.AsyncFor) else \
                node.context_expr if isinstance(node, ast.withitem) else node.value
            if source is None or not _mentions(source, ids, names):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [
                node.optional_vars if isinstance(node, ast.withitem) else node.target]
            names |= {n.id for t in targets if t is not None for n in ast.walk(t)
                      if isinstance(n, ast.Name)}
        if len(names) == before:
            break
    return names


def _holds_answer(built: ast.expr, score: ast.expr, calls: list[ast.Call],
                  answers: set[str]) -> bool:
    """True when the opinion holds the model's answer in a field other than its score."""
    ids = {id(c) for c in calls}
    inside_score = {id(n) for n in ast.walk(score)}
    return any(id(n) not in inside_score and (id(n) in ids or (
        isinstance(n, ast.Name) and n.id in answers)) for n in ast.walk(built))


def _rescored(fn: FunctionNode, built: ast.expr) -> bool:
    """True when the name the opinion is bound to is bound again, or its score is set
    afterwards (``op["score"] = ...``, ``op.score = ...``, ``op.update(...)``)."""
    names = {t.id for n in own_nodes(fn.body) if isinstance(n, ast.Assign) and n.value is built
             for t in n.targets if isinstance(t, ast.Name)}
    for name in names:
        bound = [v for v in _bindings(fn, name)]
        stores = [n for n in own_nodes(fn.body) if isinstance(n, ast.Attribute | ast.Subscript)
                  and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
                  and n.value.id == name]
        changes = [n for n in own_nodes(fn.body) if isinstance(n, ast.Call) and (
            (isinstance(n.func, ast.Attribute) and dotted(n.func.value) == name
             and n.func.attr in ("update", "__setitem__", "model_copy", "copy"))
            or (dotted(n.func) == "setattr" and n.args and dotted(n.args[0]) == name))]
        if len(bound) > 1 or stores or changes:
            return True
    return False


def model_calls_in(fn: FunctionNode, invokes: list[JSON]) -> list[ast.Call]:
    """The calls in `fn` the call facts record as model calls (``self.llm.invoke(...)``)."""
    wanted = {(int(c["line"]), str(c.get("receiver") or "")) for c in invokes}
    return [n for n in own_nodes(fn.body) if isinstance(n, ast.Call) and isinstance(
        n.func, ast.Attribute) and (n.lineno, dotted(n.func.value) or "") in wanted]


def _function_places(path: str, fn: FunctionNode, invokes: list[JSON],
                     module: dict[str, str]) -> tuple[list[Place], bool]:
    """The opinions `fn` builds with a constant score once its model answered, and whether
    it builds one there whose score is not a constant (it scores from the answer)."""
    calls = model_calls_in(fn, invokes)
    trails = _trails(fn)
    answers = answer_names(fn, calls)
    places: list[Place] = []
    scored = False
    for node in own_nodes(fn.body):
        score = score_value(node) if isinstance(node, ast.Call | ast.Dict) else None
        after = [c for c in calls if id(node) in trails and id(c) in trails
                 and _after(trails[id(c)], trails[id(node)])]
        if score is None or not after or not isinstance(node, ast.expr):
            continue
        number = _constant(score, fn, module)
        if number is None or _rescored(fn, node):
            scored = True
        elif _holds_answer(node, score, calls, answers):
            places.append((path, after[0].lineno, node.lineno, score.lineno, number))
    # the answer itself handed on (``return opinion.model_copy(...)``, ``return {"opinions":
    # list(batch.opinions)}``): the constant is the branch for an answer that is not one
    ids = {id(c) for c in calls}
    scored |= any(isinstance(n, ast.Return) and n.value is not None and any(
        _after(trails[id(c)], trails[id(n)]) for c in calls if id(n) in trails and id(c) in
        trails) and _mentions(n.value, ids, answers) for n in own_nodes(fn.body))
    return ([] if scored else places), scored


def model_functions(facts: dict[str, JSON], repo: Path, judges: Scope | None
                    ) -> Iterator[tuple[str, ast.Module, str, FunctionNode, list[JSON]]]:
    """Each function that calls a model (in the judges' code when it is known): its path,
    module, qualified name, definition and the call facts of its model calls."""
    invokes: dict[tuple[str, str], list[JSON]] = {}
    for path, call in calls_of(facts, "llm_invoke"):
        if judges is None or judges.runs(path, str(call["func"])):
            invokes.setdefault((path, str(call["func"])), []).append(call)
    for path in sorted({p for p, _f in invokes}):
        tree = parse_file(str(repo / path))
        if tree is None:
            continue
        for qual, fn in function_defs(tree):
            if (path, qual) in invokes:
                yield path, tree, qual, fn, invokes[path, qual]


def _read(facts: dict[str, JSON], repo: Path, judges: Scope | None
          ) -> tuple[list[Place], bool, int]:
    """The places, whether some judge code scores from a model's answer (or through a
    call bound to the opinion schema), and how many functions with a model call were read."""
    places: list[Place] = []
    scored = any(judges is None or judges.runs(p, str(c["func"]))
                 for p, c in calls_of(facts, OPINION_SCHEMA_KIND)
                 if any(OPINION.search(str(s)) for s in c.get("schemas") or []))
    # every judge function with a model call, also one whose definition is not found
    read = len({(p, str(c["func"])) for p, c in calls_of(facts, "llm_invoke")
                if judges is None or judges.runs(p, str(c["func"]))})
    modules: dict[str, dict[str, str]] = {}
    for path, tree, _qual, fn, calls in model_functions(facts, repo, judges):
        module = modules.setdefault(path, _module_constants(tree))
        found, scores = _function_places(path, fn, calls, module)
        places += found
        scored |= scores
    return sorted(set(places)), scored, read


def constant_score_findings(facts: dict[str, JSON], repo: Path,
                            judges: Scope | None) -> list[Finding]:
    """``llm.constant_score`` and ``judges.constant_score`` (see the module docstring)."""
    places, scored, read = _read(facts, repo, judges)
    numbers = sorted({n for *_at, n in places})
    every = bool(places) and not scored
    where = "the judges' code" if judges is not None else \
        "the functions that call a model (the judges' code is not known)"
    said = "; ".join(f"{p}:{line} score {n} after the model call at :{call}"
                     for p, call, line, _s, n in places[:5])
    quoted = clip("\n".join(line_at(repo, p, line) for p, *lines, _n in places[:6]
                            for line in sorted(set(lines))), 2000) or None
    found = (f"{len(places)} opinion(s) in {where} hold the model's answer but a score the "
             f"code writes ({', '.join(numbers)}): {said}. "
             + ("No judge's score comes from a model's answer" if every else
                "Other judge code scores from the model's answer"))
    none = (f"No opinion in {where} takes a constant score once the model answered."
            if read else "No model call in the judges' code was read." if judges is not None
            else "No function of the repository calls a model (none was read).")
    data: JSON = {"places": [f"{p}:{line}" for p, _c, line, _s, _n in places[:MAX_PLACES]],
                  "calls": [f"{p}:{c}" for p, c, *_rest in places[:MAX_PLACES]],
                  "scores": numbers, "every": every, "judges_known": judges is not None}
    pattern = "failure" if read else "neutral"
    location = f"{places[0][0]}:{places[0][2]}" if places else "."
    return [
        Finding(facet="llm.constant_score",
                goal="A judge's score is a constant the code writes even when the model "
                "answered", found=bool(places), pattern=pattern, confidence=0.8,
                location=location, content=quoted,
                rationale=(found + ": the score is not held by any schema the model fills."
                           if places else none), data={**data, "cap": 3 if every else 4}),
        Finding(facet="judges.constant_score",
                goal="The judges' scores are constants the code writes after the model "
                "answered, so they cannot disagree", found=bool(places), pattern=pattern,
                confidence=0.8,
                location=location, content=quoted,
                rationale=(found + ": the personas argue in text, but their numbers cannot "
                           "disagree" + (" (one number for all: they agree by construction)."
                                         if every and len(numbers) == 1 else ".")
                           if places else none),
                data={**data, "cap": (2 if len(numbers) == 1 else 3) if every else 4}),
    ]
