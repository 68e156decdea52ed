"""``llm.fallback_score``: a judge whose model call fails still hands out a score.

The rubric's Tech Lead asks that failures cannot leak into scores. A judge that, when its
model call raises or every retry fails, returns an opinion with a score its code writes
(``except Exception as e: return JudicialOpinion(score=3, argument=f"Error: {e}")``, or the
same after a retry loop runs out) puts a number no judge reasoned about into the Chief
Justice's ruling: a neutral 3 lifts a failing criterion, a 1 sinks a sound one.

Read in the code the judge nodes run (`structured_output.judge_scope`): an opinion (a call or
a dict) with a ``score`` built in an ``except`` whose ``try`` calls something (no model
answered there: a constant, a parameter, a heuristic over the evidence are all the code's
score), or by a function of the same file such a handler returns the answer of; or built with
a constant score after a loop that tries its attempts (the code after it runs when every
attempt failed; a score read from the answer there is the model's). An opinion bound once to
a name and returned there counts where it is built (``fallback = {"score": 3}`` before the
attempts, ``return fallback`` after them); a ``try`` that only imports the model's client is
a failed call too; and a helper that answers None when its attempts run out, or when the
reply cannot be parsed (a handler of ``JSONDecodeError``/``ValidationError``), is followed
to the branch the judge takes on that None. A constant score on another path (no evidence
at all: score 1) is a rule, not a failure, and not read. With the judges' code unknown the
fact is not established (a context line), never "not found".

A defect the rubric's Tech Lead names, not the criterion's failure pattern (free text parsed
by hand, no schema, no retry): weighed against the schema binding and the retries, not
charged as that pattern (confidence under the Prosecutor's charge).
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.common import function_defs, keyword
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.state import Finding
from automaton_auditor.text import clip

FACET = "llm.fallback_score"
GOAL = "A failed judge call still hands out a score its code writes"
MAX_PLACES = 20
# errors a reply that cannot be read raises (not a model call's failure: its answer's)
PARSE_ERRORS = frozenset({"JSONDecodeError", "ValidationError", "OutputParserException"})

Place = tuple[str, int, str, str]  # path, line, the score as written, where it is handed out


def score_value(node: ast.AST) -> ast.expr | None:
    """The expression an opinion built by `node` takes its score from (``3`` of
    ``Opinion(score=3)``, ``x`` of ``{"score": x}``), or None when `node` builds none."""
    if isinstance(node, ast.Call):
        return keyword(node, "score")
    if isinstance(node, ast.Dict):
        return next((v for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant) and k.value == "score"), None)
    return None


def _written_score(node: ast.AST) -> str | None:
    """The score an opinion built by `node` carries, as the code writes it (``3`` of
    ``Opinion(score=3)`` or ``{"score": 3}``; the expression otherwise: ``fallback_score``,
    ``_heuristic(evidence)``), else None. In a handler of the model call's failure, no
    model answered: whatever the expression, the code wrote the score."""
    value = score_value(node)
    if value is None or (isinstance(value, ast.Constant) and (
            isinstance(value.value, bool) or not isinstance(value.value, int | float))):
        return None
    if isinstance(value, ast.Constant) and isinstance(value.value, int | float):
        return str(int(value.value))
    return f"`{ast.unparse(value)[:60]}`"


def _builds(body: list[ast.stmt], makers: dict[str, str],
            kept: dict[str, ast.expr] | None = None) -> list[tuple[int, str]]:
    """(line, score as written) of each opinion `body` builds with a score, or takes from a
    call to one of `makers` (a function of the file whose every return builds one), or
    returns from a name of `kept` (the opinion the function bound it to before)."""
    found = []
    for node in own_nodes(body):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name) \
                and node.value.id in (kept or {}):
            node = (kept or {})[node.value.id]  # cited where the code writes the score
        score = _written_score(node)
        if score is None and isinstance(node, ast.Call):
            name = _callee(node)
            made = makers.get(name)  # a fixed fallback's number, or the helper that scores
            score = made if made is None or made.isdigit() else f"from {name}()"
        if score is not None:
            found.append((getattr(node, "lineno", 0), score))
    return sorted(set(found))


def _kept(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """The names `fn` binds once to an opinion with a score (ephrata: ``fallback =
    {"score": 3, ...}`` before the attempts, ``return fallback`` after them)."""
    bound: dict[str, list[ast.expr]] = {}
    for node in own_nodes(fn.body):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
    # a name bound twice may hold the model's answer by the time it is returned
    return {name: values[0] for name, values in bound.items()
            if len(values) == 1 and _written_score(values[0]) is not None}


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else ""


def _makers(tree: ast.Module) -> dict[str, str]:
    """The file's functions (by name) whose every return builds an opinion with a score
    (a fixed fallback, or a heuristic that scores the evidence without the model)."""
    out: dict[str, str] = {}
    for qual, fn in function_defs(tree):
        scores = [_written_score(r.value) for r in own_nodes(fn.body)
                  if isinstance(r, ast.Return) and r.value is not None]
        if scores and all(s is not None for s in scores):
            out[qual.rsplit(".", 1)[-1]] = str(scores[0])
    return out


def _errors_kept(loop: ast.For | ast.While | ast.AsyncFor) -> set[str]:
    """The names the loop's handlers keep the error in (``except Exception as exc:
    last_exc = exc``)."""
    return {t.id for h in own_nodes(loop.body) if isinstance(h, ast.ExceptHandler) and h.name
            for n in own_nodes(h.body) if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Name) and n.value.id == h.name
            for t in n.targets if isinstance(t, ast.Name)}


def _tries(loop: ast.For | ast.While | ast.AsyncFor) -> bool:
    return any(isinstance(n, ast.Try) for n in own_nodes(loop.body))


def _gives_up(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """True when `fn` answers None once its attempts run out: a loop that tries, then
    ``return None`` (or the end of the function) with no ``raise`` after it (MamaMoh's
    ``_invoke_judicial_chain``: three tries, then ``return None``)."""
    for index, stmt in enumerate(fn.body):
        if isinstance(stmt, ast.For | ast.While | ast.AsyncFor) and _tries(stmt):
            rest = fn.body[index + 1:]
            if any(isinstance(s, ast.Raise) for s in rest):
                return False
            returns = [s for s in rest if isinstance(s, ast.Return)]
            return not returns or any(
                r.value is None or (isinstance(r.value, ast.Constant) and r.value.value is None)
                for r in returns)
    return False


def _drops_unread(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """True when `fn` answers None where the model's reply cannot be read: a handler of a
    parse error (``except (json.JSONDecodeError, ValueError):``) that returns None
    (ephrata's ``_parse_opinion``; the judge then scores ``_partial_opinion(...)``)."""
    for handler in (n for n in own_nodes(fn.body) if isinstance(n, ast.ExceptHandler)):
        caught = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(handler.type)
                  if isinstance(n, ast.Name | ast.Attribute)} if handler.type else set()
        if caught & PARSE_ERRORS and any(
                isinstance(r, ast.Return) and (r.value is None or (isinstance(
                    r.value, ast.Constant) and r.value.value is None))
                for r in own_nodes(handler.body)):
            return True
    return False


def _quitters(tree: ast.Module) -> dict[str, str]:
    """The file's functions (by name) that answer None when the model gives no opinion,
    with when that is."""
    out: dict[str, str] = {}
    for qual, fn in function_defs(tree):
        how = "when every attempt fails" if _gives_up(fn) else \
            "when the reply cannot be parsed" if _drops_unread(fn) else None
        if how is not None:
            out[qual.rsplit(".", 1)[-1]] = how
    return out


def _none_branch(test: ast.expr, names: set[str]) -> str | None:
    """Which branch of an ``if`` runs when one of `names` is None: "body" for ``if not x``
    and ``if x is None``, "orelse" for ``if x`` and ``if x is not None``; None otherwise."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if isinstance(inner, ast.Compare) and len(inner.ops) == 1 and isinstance(
            inner.comparators[0], ast.Constant) and inner.comparators[0].value is None:
        negated ^= isinstance(inner.ops[0], ast.Is)
        inner = inner.left if isinstance(inner.ops[0], ast.Is | ast.IsNot) else test
    if not (isinstance(inner, ast.Name) and inner.id in names):
        return None
    return "body" if negated else "orelse"


def _after_giving_up(fn: ast.FunctionDef | ast.AsyncFunctionDef,
                     quitters: dict[str, str]) -> list[tuple[str, list[ast.stmt]]]:
    """The statements `fn` runs when a helper of `quitters` answered None (the branch of an
    ``if`` on the name its answer was bound to), with when that is."""
    bound = {t.id: quitters[_callee(n.value)] for n in own_nodes(fn.body)
             if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
             and _callee(n.value) in quitters
             for t in n.targets if isinstance(t, ast.Name)}
    branches: list[tuple[str, list[ast.stmt]]] = []
    for node in own_nodes(fn.body) if bound else []:
        if not isinstance(node, ast.If):
            continue
        side = _none_branch(node.test, set(bound))
        if side is not None:
            tested = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)} & set(bound)
            branches.append((bound[min(tested)], getattr(node, side)))
    return branches


def _places(path: str, fn: ast.FunctionDef | ast.AsyncFunctionDef,
            makers: dict[str, str], quitters: dict[str, str]) -> list[Place]:
    kept = _kept(fn)
    places: list[Place] = [(path, line, score, how)
                           for how, branch in _after_giving_up(fn, quitters)
                           for line, score in _builds(branch, makers, kept)]
    for node in own_nodes(fn.body):
        tried = [n for n in own_nodes(node.body) if isinstance(n, ast.Call | ast.Import |
                                                                 ast.ImportFrom)] \
            if isinstance(node, ast.Try) else []
        # a try that only imports the model's client: when it fails no model can answer
        how = "when the call raises" if any(isinstance(n, ast.Call) for n in tried) else \
            "when the model's client fails to import"
        for handler in node.handlers if tried and isinstance(node, ast.Try) else []:
            places += [(path, line, score, how)
                       for line, score in _builds(handler.body, makers, kept)]
    blocks = [fn.body, *(b for node in own_nodes(fn.body) for b in (
        getattr(node, f, None) for f in ("body", "orelse", "finalbody")) if isinstance(b, list))]
    for block in blocks:
        for index, stmt in enumerate(block):
            # after the loop runs on success too (a break with the answer): only a
            # constant there is the fallback, or any score under a test on the error the
            # attempts kept (``if last_exc is not None:``)
            if isinstance(stmt, ast.For | ast.While | ast.AsyncFor) and _tries(stmt):
                errors = _errors_kept(stmt)
                for after in block[index + 1:]:
                    failed = isinstance(after, ast.If) and bool(errors & {
                        n.id for n in ast.walk(after.test) if isinstance(n, ast.Name)})
                    places += [(path, line, score, "when every attempt fails")
                               for line, score in _builds(after.body if failed else [after],
                                                          makers, kept)
                               if failed or score.isdigit()]
    return places


def fallback_finding(repo: Path | None, paths: list[str], judges: Scope | None) -> Finding:
    """``llm.fallback_score`` (see the module docstring), over the judges' functions."""
    places: list[Place] = []
    for path in sorted({p for p, _q in judges.functions} if judges and repo else set()):
        tree = parse_file(str(repo / path)) if repo is not None and path in paths else None
        if tree is None:
            continue
        makers = _makers(tree)
        quitters = _quitters(tree)
        for qual, fn in function_defs(tree):
            if judges is not None and judges.runs(path, qual):
                places += _places(path, fn, makers, quitters)
    places = sorted(set(places))[:MAX_PLACES]
    said = "; ".join(f"{p}:{line} score {score} {how}" for p, line, score, how in places[:5])
    # with the judges' code unknown nothing was read: no "not found", a context line
    known = judges is not None
    return Finding(
        facet=FACET, goal=GOAL, found=bool(places), pattern="failure" if known else "neutral",
        confidence=0.6, location=f"{places[0][0]}:{places[0][1]}" if places else ".",
        content=clip("\n".join(line_at(repo, p, line) for p, line, _s, _h in places[:8]),
                     2000) or None,
        rationale=(f"{len(places)} place(s) in the judges' code hand out a score the code "
                   f"writes when the model call fails: {said}. That number enters the "
                   "ruling as if a judge had reasoned it." if places else
                   "No score the code writes is handed out when a judge's model call fails."
                   if known else "Not established: the judges' code is not known (no judge "
                   "node of the graph is followed into the repository's code), so no "
                   "fallback score was looked for."),
        data={"places": [f"{p}:{line}" for p, line, _s, _h in places], "established": known})
