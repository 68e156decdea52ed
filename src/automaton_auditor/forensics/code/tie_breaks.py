"""``justice.tie_break``: the score spread only picks among the judges' scores.

The rubric asks that a variance above 2 trigger "a specific re-evaluation of the evidence
cited". A decision on the spread whose every change to the score takes one of the scores
already given (``final = tech_lead.score``, ``sorted_scores[1]``), a statistic of them
(``statistics.median(scores)``, ``max(p, d, t)``, ``round((p + d + t) / 3)``) or the answer of
a helper that only computes one from the scores it is handed (``_weighted_median(scores,
weights)``: it calls nothing but arithmetic, reads no evidence and returns one of its values)
breaks the tie: it reads no evidence and asks no judge again. Such a decision is no
re-evaluation: `justice.variance` is not credited on it (the two facts are exclusive), and
the criterion is held from full marks. A decision whose test or branch reads the evidence, or
calls anything else (a model, a judge, a helper that does), re-evaluates; a fixed cap on a
detected fact nested in the branch (the security override applied again) is a rule of its
own and leaves the pick a pick. A clamp (``max(1, final - 1)``) picks no judge's score.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection
from pathlib import Path

from automaton_auditor.forensics.code.argument_words import callee
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.exprs import (
    EVIDENCE,
    OPINION_TEXT,
    SCORE_TARGET,
    TEXT_CALLS,
    call_name,
    weighted_sum,
)
from automaton_auditor.forensics.code.paths import unclamped
from automaton_auditor.forensics.code.source import parse_file, statement_at
from automaton_auditor.forensics.code.spread_routes import Route, Rule
from automaton_auditor.state import Finding

FACET = "justice.tie_break"
STATISTICS = frozenset({"median", "median_low", "median_high", "max", "min", "mode", "mean",
                        "fmean", "average", "sorted"})
WRAPPERS = frozenset({"int", "float", "round"})  # a number's form, not a new value
# calls that compute on what they are given and nothing else (arithmetic, containers, text)
PURE = STATISTICS | WRAPPERS | frozenset({
    "len", "sum", "zip", "abs", "enumerate", "range", "list", "tuple", "dict", "set", "any",
    "all", "isinstance", "reversed", "items", "values", "keys", "get", "count", "index",
    "sort", "format", "join", "upper", "lower", "strip", "title", "str", "getattr"})
PURE_MODULES = ("statistics.", "math.", "np.", "numpy.")
MAX_HELPER_DEPTH = 3


def _index(node: ast.expr) -> bool:
    """A position in a list (``1``, ``-1``, ``len(s) // 2``), not a value read elsewhere."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, ast.BinOp):
        return _index(node.left) and _index(node.right)
    return (isinstance(node, ast.Constant) and isinstance(node.value, int)) or \
        call_name(node) == "len"


def _number(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and \
        not isinstance(node.value, bool)


def _evidence_read(node: ast.AST) -> bool:
    """Whether `node` reads the detectives' evidence, the state or a judge's text (a name,
    attribute or key naming them), outside the text a decision only writes."""
    todo = [node]
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.JoinedStr):
            continue  # an f-string's words are text written, not data read
        name = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(
            sub, ast.Attribute) else None
        if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Constant):
            name = str(sub.slice.value)
        if isinstance(sub, ast.Call) and call_name(sub).endswith(".get") and sub.args and \
                isinstance(sub.args[0], ast.Constant):
            name = str(sub.args[0].value)
        if name is not None and (EVIDENCE.search(name) or name in OPINION_TEXT
                                 or name == "state"):
            return True
        todo += list(ast.iter_child_nodes(sub))
    return False


class _Reader:
    """Reads the values a spread decision sets the score to, following helpers through
    the call graph (`callee`) into their files."""

    def __init__(self, graph: CallGraph | None, repo: Path | None) -> None:
        self.graph, self.repo = graph, repo
        self._defs: dict[Key, ast.FunctionDef | ast.AsyncFunctionDef | None] = {}

    def definition(self, key: Key) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The syntax tree of the repository function `key` (None when unreadable)."""
        if key not in self._defs:
            info = self.graph.functions.get(key) if self.graph is not None else None
            tree = parse_file(str(self.repo / key[0])) if self.repo and info else None
            self._defs[key] = next((
                n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                and info and info["line"] in {n.lineno, *(d.lineno for d in n.decorator_list)}
            ), None) if tree is not None else None
        return self._defs[key]

    def helper(self, key: Key, call: ast.Call) -> Key | None:
        """The repository function `call` (made in function `key`) runs."""
        if self.graph is None or key not in self.graph.functions:
            return None
        return callee(self.graph, key, call_name(call))

    def benign(self, key: Key, nodes: list[ast.AST], depth: int,
               notes: tuple[ast.AST, ...] = ()) -> bool:
        """Whether `nodes` only compute on the scores: no evidence read (but in the `notes`,
        text the decision writes), and every call arithmetic, text, or a repository helper
        that is benign itself."""
        if any(_evidence_read(n) for n in nodes if n not in notes):
            return False
        for call in (c for n in nodes for c in ast.walk(n) if isinstance(c, ast.Call)):
            name = call_name(call)
            if name.rsplit(".", 1)[-1] in PURE or name.startswith(PURE_MODULES) or \
                    TEXT_CALLS.search(name):
                continue
            target = self.helper(key, call) if depth < MAX_HELPER_DEPTH else None
            tree = self.definition(target) if target is not None else None
            if tree is None or not self.benign(target or key, list(tree.body), depth + 1):
                return False  # a model, a judge asked again, a helper that reads more
        return True

    def picked(self, value: ast.expr | None, key: Key, depth: int = 0) -> bool:
        """Whether `value` is a score already given, or a statistic of the scores given (a
        clamp to the scale around it, ``max(1, min(5, final))``, aside)."""
        value = unclamped(value) if value is not None else None
        if isinstance(value, ast.Call) and call_name(value) in WRAPPERS and value.args:
            return self.picked(value.args[0], key, depth) and all(
                _number(a) for a in value.args[1:])  # ``round(x, 1)``
        if isinstance(value, ast.Name | ast.Attribute):
            return True  # a score read as it is: one judge's, or one held before
        if isinstance(value, ast.IfExp):  # ``mean if scores else 3``: a default aside
            sides = [value.body, value.orelse]
            return not _evidence_read(value.test) and any(
                self.picked(s, key, depth) for s in sides) and all(
                self.picked(s, key, depth) or _number(s) for s in sides)
        if isinstance(value, ast.BinOp):
            return self._mean(value, key, depth)
        if isinstance(value, ast.Call):
            return self._statistic(value, key, depth)
        if isinstance(value, ast.Subscript):  # one score of a table or a sorted list
            return (_index(value.slice) or isinstance(value.slice, ast.Constant)) and \
                self.picked(value.value, key, depth)
        if isinstance(value, ast.Dict) and value.values:  # a table of scores given, or a
            # record whose score field is set (its text fields beside it are notes)
            scored = [v for k, v in zip(value.keys, value.values, strict=True)
                      if isinstance(k, ast.Constant) and SCORE_TARGET.search(str(k.value))]
            return all(v is not None and self.picked(v, key, depth)
                       for v in scored or value.values)
        if isinstance(value, ast.Tuple) and value.elts:  # ``return final, note, dissent``
            scored = [e for e in value.elts if isinstance(e, ast.Name)
                      and SCORE_TARGET.search(e.id)]
            return bool(scored) and all(self.picked(e, key, depth) for e in scored)
        return False

    def _mean(self, node: ast.BinOp, key: Key, depth: int) -> bool:
        """``(p + d + 2 * t) / 4``, ``sum(s) / len(s)``, ``t * 0.5 + p * 0.5``: a mean of the
        scores given (a constant added or taken away, ``final - 1``, is a penalty)."""
        if isinstance(node.op, ast.Add) and weighted_sum(node):
            return True
        if not isinstance(node.op, ast.Div | ast.FloorDiv) or not (
                _number(node.right) or call_name(node.right) == "len"
                or isinstance(node.right, ast.Name | ast.Attribute)):
            return False
        if call_name(node.left) == "sum" and isinstance(node.left, ast.Call):
            return not _evidence_read(node.left)
        terms, todo = [], [node.left]
        while todo:
            current = todo.pop()
            if isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
                todo += [current.left, current.right]
            elif isinstance(current, ast.BinOp) and isinstance(current.op, ast.Mult) and (
                    _number(current.left) or _number(current.right)):
                terms.append(current.right if _number(current.left) else current.left)
            else:
                terms.append(current)
        return len(terms) >= 2 and all(self.picked(t, key, depth) for t in terms)

    def _statistic(self, call: ast.Call, key: Key, depth: int) -> bool:
        """``median(scores)``, ``max(p, d, t)`` (not the clamp ``max(1, base - 1)``), or a
        helper whose every answer is a pick of the scores it is handed."""
        name = call_name(call).rsplit(".", 1)[-1]
        if name in STATISTICS:
            return bool(call.args) and not call.keywords and (len(call.args) == 1 or all(
                self.picked(a, key, depth) for a in call.args)) and \
                not _evidence_read(call)
        target = self.helper(key, call) if depth < MAX_HELPER_DEPTH else None
        tree = self.definition(target) if target is not None else None
        if target is None or tree is None or _evidence_read(call) or \
                not self.benign(target, list(tree.body), depth + 1):
            return False
        answers = [n.value for n in ast.walk(tree) if isinstance(n, ast.Return)]
        return any(self.picked(a, target, depth + 1) for a in answers if not _number(a)) \
            and all(_number(a) or self.picked(a, target, depth + 1) for a in answers)


def _set_values(repo: Path | None, path: str) -> dict[int, ast.expr]:
    """The value each assignment or return of the file sets, by its line (the file parsed
    once for every line a decision sets the score on)."""
    tree = parse_file(str(repo / path)) if repo is not None else None
    values: dict[int, ast.expr] = {}
    for node in ast.walk(tree) if tree is not None else []:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.Return) and node.value is not None:
            values.setdefault(node.lineno, node.value)  # the first statement of a line
    return values


def _branch(repo: Path | None, rule: Rule, skip: set[int]) -> list[ast.AST] | None:
    """The test of the decision at `rule.line` and what it runs when it holds or not, leaving
    out the nested tests at the lines `skip` (None when the test cannot be read)."""
    tree = parse_file(str(repo / rule.path)) if repo is not None else None
    test = next((n for n in ast.walk(tree) if isinstance(n, ast.If | ast.IfExp)
                 and n.lineno == rule.line), None) if tree is not None else None
    if test is None:
        return None
    out: list[ast.AST] = []
    # the test itself counts too: ``if spread > 2 and not ev.found`` reads the evidence (a
    # flag an earlier rule set, ``and not dissent``, does not)
    todo: list[ast.AST] = [test.test, *test.body, *test.orelse] if isinstance(test, ast.If) \
        else [test.test, test.body, test.orelse]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and node.lineno in skip:
            continue
        if isinstance(node, ast.If | ast.For | ast.While | ast.With | ast.Try):
            todo += [node.test] if isinstance(node, ast.If | ast.While) else []
            todo += [getattr(node, f) for f in ("iter", "target") if hasattr(node, f)]
            todo += [s for f in ("body", "orelse", "finalbody") for s in getattr(node, f, [])]
            todo += [s for h in getattr(node, "handlers", []) for s in h.body]
        else:
            out.append(node)
    return out


def _notes(branch: list[ast.AST], used: list[ast.expr | None]) -> tuple[ast.AST, ...]:
    """The statements of a decision that only write a note: a name no score is set from
    and no test reads (``remediation = tech_lead.argument[:300]``, returned beside the
    score). A judge's argument read there is text passed on, not weighed again."""
    scored = [e for u in used for e in (u.elts if isinstance(u, ast.Tuple) else [u])
              if e is not None and not (isinstance(u, ast.Tuple) and isinstance(e, ast.Name)
                                        and not SCORE_TARGET.search(e.id))]
    read = {n.id for u in scored for n in ast.walk(u) if isinstance(n, ast.Name)}
    read |= {n.id for b in branch if isinstance(b, ast.expr) for n in ast.walk(b)
             if isinstance(n, ast.Name)}  # the tests `_branch` lists
    return tuple(n for n in branch if isinstance(n, ast.Assign) and all(
        isinstance(t, ast.Name) and not SCORE_TARGET.search(t.id) and t.id not in read
        for t in n.targets))


def _one_score(value: ast.expr | None) -> bool:
    """A score read as it is (``final = t_score``, ``return final, note``), not a statistic."""
    value = unclamped(value) if value is not None else None
    if isinstance(value, ast.Tuple):
        return any(_one_score(e) for e in value.elts if isinstance(e, ast.Name)
                   and SCORE_TARGET.search(e.id))
    return isinstance(value, ast.Name | ast.Attribute)


def tie_breaks(rules: list[Rule], graph: CallGraph | None, repo: Path | None,
               inert: Collection[Rule] | None = None) -> dict[Rule, tuple[int, ...]]:
    """The decisions on the score spread that only pick among the judges' scores, with the
    lines they pick on: each line they set the score on takes a score given or a statistic
    of them, and nothing in their test or branch reads the evidence or calls more than
    arithmetic and text. Of the `inert` ones (they score as the path without them,
    `unused_rules`), only one that adopts one judge's score (``final = t_score`` where the
    default is ``t_score`` too) picks; one that takes the same mean only writes a note."""
    reader, out = _Reader(graph, repo), {}
    values: dict[str, dict[int, ast.expr]] = {}
    for rule in (r for r in [*rules, *(inert or [])] if r.kind == "spread"):
        nested = [o for o in rules if o.path == rule.path and rule.line < o.line <= rule.end]
        # a fixed cap on a detected fact inside the branch is the override applied again
        caps = [o for o in nested if o.ceiling]
        lines = [n for n in rule.sets if all(n not in o.sets for o in caps)]
        if not {"score", "cap"} & set(rule.does) or not lines or any(
                o.kind == "evidence" and not o.ceiling for o in nested):
            continue
        path, _, qual = rule.fn.rpartition(":")
        key = (path or rule.path, qual)
        if rule.path not in values:
            values[rule.path] = _set_values(repo, rule.path)
        branch = _branch(repo, rule, {o.line for o in caps})
        used = [values[rule.path].get(n) for n in lines]
        if rule in (inert or []) and not all(_one_score(value) for value in used):
            continue
        if all(reader.picked(value, key) for value in used) and (branch is None or reader.benign(
                key, branch, 0, _notes(branch, used))):
            out[rule] = tuple(lines)
    return out


def _same(ties: dict[Rule, tuple[int, ...]], inert: dict[Rule, tuple[int, ...]]) -> str:
    """What the rationale says of a pick that scores as the path without it (`inert`, with
    the lines that path sets the score on): it gives the same score as without it."""
    same = [(r, ", ".join(f":{n}" for n in inert[r][:4])) for r in sorted(ties) if r in inert]
    return "".join(f" The decision at {r.path}:{r.line} gives the same score as without it "
                   f"(every path without it sets it so: {over})." for r, over in same[:2])


def tie_break_finding(ties: dict[Rule, tuple[int, ...]], rules: list[Rule],
                      routes: list[Route], repo: Path | None,
                      inert: dict[Rule, tuple[int, ...]] | None = None) -> Finding:
    """``justice.tie_break`` (see the module docstring): every decision on the spread only
    picks (`tie_breaks`), and no router sends the spread to a node the synthesis reads; one
    of `inert` (`unused_rules`) is said to give the same score as without it."""
    spread = [r for r in [*rules, *(inert or {})] if r.kind == "spread"]
    picks = sorted({(r.path, n) for r, lines in ties.items() for n in lines})
    found = bool(spread) and len(ties) == len(spread) and not any(r.feeds for r in routes)
    quoted = [statement_at(repo, p, n) for p, n in picks[:6]]
    return Finding(
        facet=FACET, goal="The score spread only picks among the judges' scores (a tie-break, "
        "no re-evaluation of the evidence)", found=found, pattern="failure", confidence=0.7,
        location=f"{picks[0][0]}:{picks[0][1]}" if found else ".",
        content="\n".join(quoted) if found else None,
        rationale=("Every change the score spread makes to the score takes a score already "
                   "given or a statistic of them: " + "; ".join(
                       q.split(": ", 1)[-1].strip() for q in quoted[:3]) + "." + _same(
                           ties, inert or {}) + " No evidence is read again and no judge is "
                   "asked again." if found else
                   "No decision on the score spread only picks among the judges' scores."),
        data={"lines": [f"{p}:{n}" for p, n in picks[:20]] if found else []})


def tie_facts(rules: list[Rule], routes: list[Route], ties: dict[Rule, tuple[int, ...]],
              repo: Path | None, variance: Callable[[list[Rule]], Finding],
              inert: dict[Rule, tuple[int, ...]] | None = None) -> list[Finding]:
    """``justice.variance`` (built by `variance` from the rules it may credit) and
    ``justice.tie_break``, exclusive on one decision (`ties`, from `tie_breaks`): where the
    tie-break fires, the spread decision is quoted but not credited as a re-evaluation; where
    it does not, the decisions that only pick are left out of the re-evaluation's credit.
    `inert`: decisions on the spread that score as the path without them (`unused_rules`),
    not among `rules`, with the lines that path sets the score on: one that takes a judge's
    score is a tie-break all the same, said to give the same score as without it."""
    tie = tie_break_finding(ties, rules, routes, repo, inert)
    if not tie.found:
        return [variance([r for r in rules if r not in ties]), tie]
    return [variance(rules).model_copy(update={"found": False, "rationale": (
        f"The score spread only picks among the judges' scores ({tie.location}): no evidence "
        "is read again and no judge is asked again, so nothing is re-evaluated.")}), tie]
