"""``judges.score_shift``: a judge's code moves its model's score, per persona, before the
opinion is built.

``score = result.get("score", 1)`` then ``if score > 3: score = max(1, score - 1)`` in the
Prosecutor's judge, or ``opinion.score = clamp(judge_name, opinion.score)`` with
``if judge_name == "Prosecutor": score = min(score, 3)`` in the helper: the model argued one
number and the code hands on another. The judges' disagreement is then written in code, not
argued by the personas on the evidence.

Read in the functions that call a model (`constant_scores.model_functions`: the judges' code
when it is known) and in the repository functions of the same module they hand the answer's
score to (``clamp(opinion.score)``, ``self._adjust(score)``). A move is an assignment to a
score (a name holding ``score`` or an opinion's ``.score`` / ``["score"]``) of an expression
that shifts a score read from the answer by a number (``score - 1``) or bounds it inside the
scale (``min(score, 3)``, ``max(score, 4)``); a bound to the scale's own ends
(``max(1, min(5, raw))``) only validates. It counts when a persona is known for it: it sits in
the body of an ``if`` that tests for a persona's name (``judge_name == "Prosecutor"``), in the
helper or around the helper's call, or in a function whose model calls only one persona's
prompt reaches (`judge_prompts`).

Cap: a code move confines the score as a band the persona's prompt decrees does
(`score_bands`: every persona banded caps 4) and is at least as strong, since the model cannot
argue its way out of it; a band on some personas is the contrarian lens the rubric asks for,
a move in code is no lens the model argues, so any move caps 4. It is weaker than a constant
(`constant_scores`: 3, or 2), since the model's answer still moves the score within the band:
a ceiling only, never weighed (`judging.extras.CEILING_FAILURES`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON, dotted, function_defs
from automaton_auditor.forensics.code.constant_scores import (
    FunctionNode,
    answer_names,
    model_calls_in,
    model_functions,
)
from automaton_auditor.forensics.code.exprs import number_value, own_nodes
from automaton_auditor.forensics.code.fallback_scores import score_value
from automaton_auditor.forensics.code.judge_prompts import Prompt
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.prompt_lines import persona_named
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.state import Finding
from automaton_auditor.text import clip

FACET = "judges.score_shift"
SHIFT_CAP = 4
LOW, HIGH = 1, 5  # the scale's ends: a bound there validates, it moves nothing
MAX_SHOWN = 4  # moves quoted per persona
Move = tuple[str, int, int | None]  # path, the move's line, the line of the if it sits in


def _score_read(node: ast.AST, answers: set[str], scores: set[str]) -> bool:
    """True when `node` reads a score off the model's answer: a name holding it (`scores`:
    ``score = result.get("score")``), or ``answer.score``, ``answer["score"]``,
    ``answer.get("score")`` of a name holding the answer (`answers`)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in scores:
            return True
        base: ast.expr | None = None
        if (isinstance(sub, ast.Attribute) and sub.attr == "score") or (
                isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Constant)
                and sub.slice.value == "score"):
            base = sub.value
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                sub.func.attr == "get" and sub.args and isinstance(sub.args[0], ast.Constant) \
                and sub.args[0].value == "score":
            base = sub.func.value
        if base is not None and any(isinstance(n, ast.Name) and n.id in answers
                                    for n in ast.walk(base)):
            return True
    return False


def _moves(value: ast.expr, answers: set[str], scores: set[str]) -> bool:
    """True when `value` shifts an answer's score by a number or bounds it inside the
    scale (see the module docstring)."""
    for sub in ast.walk(value):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Add | ast.Sub):
            sides = [(sub.left, sub.right), (sub.right, sub.left)]
            if any(number_value(n) is not None and _score_read(o, answers, scores)
                   for n, o in sides):
                return True
        if isinstance(sub, ast.Call) and dotted(sub.func) in ("min", "max"):
            bounds = [b for b in map(number_value, sub.args) if b is not None]
            inside = [b for b in bounds if (b < HIGH if dotted(sub.func) == "min" else b > LOW)]
            if inside and any(_score_read(a, answers, scores) for a in sub.args
                              if number_value(a) is None):
                return True
    return False


def _score_target(target: ast.expr) -> bool:
    """A score the assignment writes: a name holding ``score``, ``x.score``, ``x["score"]``."""
    return (isinstance(target, ast.Name) and "score" in target.id.lower()) or (
        isinstance(target, ast.Attribute) and target.attr == "score") or (
        isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
        and target.slice.value == "score")


def _persona_tests(fn: FunctionNode) -> dict[int, tuple[str, int]]:
    """Per node of `fn` (by id) sitting in the body of an ``if`` that tests for a persona's
    name (``judge_name == "Prosecutor"``, ``role in ("Defense",)``): that persona and the
    if's line. An ``else`` (or ``elif``) is not the named persona's branch."""
    out: dict[int, tuple[str, int]] = {}
    for node in own_nodes(fn.body):
        if not isinstance(node, ast.If):
            continue
        names = {persona_named(c.value) for c in ast.walk(node.test) if isinstance(
            node.test, ast.Compare) and isinstance(c, ast.Constant) and isinstance(c.value, str)}
        persona = next(iter(names)) if len(names) == 1 else None
        if persona is not None and isinstance(node.test, ast.Compare) and all(
                isinstance(op, ast.Eq | ast.In | ast.Is) for op in node.test.ops):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    out.setdefault(id(sub), (persona, node.lineno))
    return out


def _enclosing_if(fn: FunctionNode, node: ast.AST) -> int | None:
    """The line of the innermost ``if`` whose body holds `node` (``if score > 3:``)."""
    best: int | None = None
    for sub in own_nodes(fn.body):
        if isinstance(sub, ast.If) and any(node is n for s in sub.body for n in ast.walk(s)):
            best = sub.lineno if best is None or sub.lineno > best else best
    return best


def _assignments(fn: FunctionNode) -> list[tuple[ast.expr, ast.expr, ast.stmt]]:
    """Each plain assignment of `fn`: target, value, statement."""
    return [(t, n.value, n) for n in own_nodes(fn.body) if isinstance(n, ast.Assign)
            for t in n.targets] + [(n.target, n.value, n) for n in own_nodes(fn.body)
                                   if isinstance(n, ast.AnnAssign) and n.value is not None]


def _callee(defs: dict[str, FunctionNode], qual: str, call: ast.Call) -> FunctionNode | None:
    """The function of the same module a call runs: ``helper(...)`` at module level,
    ``self.helper(...)`` of the caller's class."""
    name = dotted(call.func) or ""
    if name.startswith("self.") and "." in qual:
        return defs.get(f"{qual.rsplit('.', 1)[0]}.{name[5:]}")
    return defs.get(name) if "." not in name else None


def _helper_moves(fn: FunctionNode, seeds: frozenset[str]) -> list[tuple[ast.stmt, str | None]]:
    """The moves a helper makes on the parameters handed the answer's score (`seeds`) and
    the names computed from them, each with the persona whose name the ``if`` around it
    tests."""
    scores = answer_names(fn, [], seeds)
    tests = _persona_tests(fn)
    return [(stmt, tests.get(id(stmt), (None, 0))[0]) for target, value, stmt in
            _assignments(fn) if (_score_target(target) or (
                isinstance(target, ast.Name) and target.id in scores))
            and _moves(value, scores, scores)]


def _function_moves(path: str, tree: ast.Module, qual: str, fn: FunctionNode,
                    calls: list[ast.Call], single: str | None) -> list[tuple[str, Move]]:
    """The persona moves of one judge function (and of the helpers it hands the score to);
    `single`: the one persona whose prompt reaches its model calls, if one."""
    answers = answer_names(fn, calls)
    scores = {n for n in answers if "score" in n.lower()}
    tests = _persona_tests(fn)
    defs = dict(function_defs(tree))
    used = {n.id for node in own_nodes(fn.body) if isinstance(node, ast.Call | ast.Dict)
            and (score := score_value(node)) is not None for n in ast.walk(score)
            if isinstance(n, ast.Name)}
    out: list[tuple[str, Move]] = []
    for target, value, stmt in _assignments(fn):
        if not _score_target(target) or (isinstance(target, ast.Name) and target.id not in used
                                         and target.id not in answers):
            continue
        around = tests.get(id(stmt), (single, 0))[0]
        if _moves(value, answers, scores):
            if around is not None:
                out.append((around, (path, stmt.lineno, _enclosing_if(fn, stmt))))
            continue
        for call in (n for n in ast.walk(value) if isinstance(n, ast.Call)):
            helper = _callee(defs, qual, call)
            if helper is None:
                continue
            params = [a.arg for a in helper.args.args]
            params = params[1:] if params[:1] == ["self"] else params
            handed = frozenset(p for p, a in zip(params, call.args, strict=False)
                               if _score_read(a, answers, scores))
            for moved, persona in _helper_moves(helper, handed) if handed else []:
                if (persona or around) is not None:
                    out.append((str(persona or around),
                                (path, moved.lineno, _enclosing_if(helper, moved))))
    return out


def _single_persona(prompts: dict[str, Prompt], path: str, calls: list[JSON]) -> str | None:
    """The one persona whose prompt reaches the function's model calls, if one."""
    lines = {f"{path}:{c['line']}" for c in calls}
    reach = {p for p, prompt in prompts.items()
             if lines & {prompt.call, *(call for call, _route in prompt.sites)}}
    return next(iter(reach)) if len(reach) == 1 else None


def shift_findings(facts: dict[str, JSON], repo: Path, judges: Scope | None,
                   prompts: dict[str, Prompt]) -> list[Finding]:
    """``judges.score_shift`` (see the module docstring)."""
    moves: dict[str, list[Move]] = {}
    read = False
    for path, tree, qual, fn, invokes in model_functions(facts, repo, judges):
        read = True
        single = _single_persona(prompts, path, invokes)
        for persona, move in _function_moves(path, tree, qual, fn, model_calls_in(
                fn, invokes), single):
            if move not in moves.setdefault(persona, []):
                moves[persona].append(move)
    moves = {p: sorted(moves[p]) for p in sorted(moves)}
    said = "; ".join(f"the {p}'s at " + ", ".join(
        f"{mp}:{line}" + (f" (under :{at})" if at else "") for mp, line, at in ms[:MAX_SHOWN])
        for p, ms in moves.items())
    quoted = clip("\n\n".join(f"[{p}]\n" + "\n".join(
        line_at(repo, mp, n, limit=160) for mp, line, at in ms[:MAX_SHOWN]
        for n in sorted({line, *([at] if at else [])})) for p, ms in moves.items()), 2000)
    first = next(iter(moves.values()))[0] if moves else None
    return [Finding(
        facet=FACET, goal="A judge's code moves its model's score, per persona, before the "
        "opinion is built (the disagreement is written in code)", found=bool(moves),
        pattern="failure" if read else "neutral", confidence=0.8,
        location=f"{first[0]}:{first[1]}" if first else ".", content=quoted or None,
        rationale=(f"The code moves the model's score after it answered: {said}. The "
                   "personas' disagreement there is written in code, not argued by the model "
                   "on the evidence." if moves else
                   "No judge's code moves its model's score by persona after it answered."
                   if read else "No model call in the judges' code was read."),
        data={"moves": {p: [f"{mp}:{line}" for mp, line, _at in ms] for p, ms in moves.items()},
              "personas": sorted(moves), "cap": SHIFT_CAP if moves else None})]

