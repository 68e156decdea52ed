"""What a scoring function computes: the per-function half of the synthesis facts.

For a function that handles scores, the walk records (JSON, by line):

- ``means``: a mean of scores (``sum(s) / len(s)``, the floor mean ``sum(s) // len(s)``,
  ``statistics.mean``, a weighted sum over a total or by constant weights adding up to 1);
  ``spreads``: a score spread (``max(s) - min(s)``, ``stdev``, ``variance``);
- ``weights``: judges weighed differently (``{"TechLead": 2.0, ...}``, ``tl.score * 0.5``);
  weights keyed by a criterion's id (an overall over the criteria) make a mean, not these;
- ``branches``: every ``if``/conditional expression with what its test reads and what its
  body does (``score``, ``cap``, ``flag``, ``text``); a test the function's own flags make
  false on every path (`flag_paths`) carries the lines that make it so (``never``), an ``if``
  taken only when the judges agree (`spreads`) ``agree``, one that scores as every path
  without it (`paths.same_score`) ``same``; ``pred``: what a predicate
  helper's answer rests on (the tests guarding its returns, and each way they can hold:
  `argument_words.or_sides`); ``judge_tests``: literals compared with a ``.judge``.

What a test reads: ``words`` (a literal searched in a judge's argument text), ``evidence``
(the detectives' evidence, its ``found`` flags, cited evidence), ``spread``, ``score``,
``judge``, ``criterion`` (its id) and ``call:<name>`` (a helper whose own ``pred`` is read
across the call graph later). Only code counts.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from automaton_auditor.forensics.code.argument_words import helper_sides, or_sides, text_call
from automaton_auditor.forensics.code.common import JSON, dotted, resolve
from automaton_auditor.forensics.code.dispatch import expand, function_tables
from automaton_auditor.forensics.code.effects import (
    ceiling,
    hands_score,
    is_note,
    local_effect,
    mean_leaves,
    plain_copy,
    returned_effect,
    unheard,
    updated_scores,
)
from automaton_auditor.forensics.code.exprs import (
    MEAN_CALLS,
    SCORE_TARGET,
    SPREAD_CALLS,
    TEXT_CALLS,
    call_name,
    constant_factor,
    evidence_only,
    first_tests,
    handed_on,
    identity_only,
    is_cap,
    is_none,
    is_text,
    judge_tests,
    name_kind,
    numeric,
    own_exprs,
    own_nodes,
    per_criterion,
    plain_kinds,
    summed,
    target_names,
    through,
    unpacks,
    walk_expr,
    weight_table,
    weighted_sum,
)
from automaton_auditor.forensics.code.flag_paths import dead_tests
from automaton_auditor.forensics.code.gates import branch_gates, shape_only, test_gates, value_reads
from automaton_auditor.forensics.code.paths import judge_fallback, same_score
from automaton_auditor.forensics.code.reader import ExprReader
from automaton_auditor.forensics.code.spread_flags import flag_exit, handed_calls, targets_exit
from automaton_auditor.forensics.code.spreads import agreement_test, is_spread, measured, squares

CHANGES = frozenset({"score", "cap", "flag"})  # what a decision does that is more than text
MAX_SETS = 8  # lines where a decision sets the score, recorded to be quoted
SIMPLE = ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Return | ast.Expr


class LogicBuilder:
    """Reads one scoring function."""

    def __init__(self, imports: dict[str, str], consts: dict[str, object] | None = None) -> None:
        self.imports = imports
        self.consts = consts or {}
        self.tables: dict[str, ast.expr] = {}  # the module's literal tables (`dispatch`)

    def summarize(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> JSON:
        """The ``logic`` facts of one function (nested functions are their own)."""
        reader = _Reader(self.imports, node, set(self.consts))
        reader.tables = function_tables(node, self.tables)
        reader.block(node.body)
        reader.out["handed_calls"] = handed_calls(node.body)
        return {k: v for k, v in reader.out.items() if v}


class _Reader(ExprReader):
    def __init__(self, imports: dict[str, str],
                 node: ast.FunctionDef | ast.AsyncFunctionDef, consts: set[str]) -> None:
        super().__init__(imports, node, consts)
        self.body = node.body
        self.guards: list[tuple[set[str], ast.expr]] = []  # enclosing ``if`` tests, reads
        # the names the enclosing ``if`` bodies need to hold a value (`gates.test_gates`), and
        # the gates a flag is set true under (None: it may be true without them)
        self.gate_stack: list[set[str]] = []
        self.flag_gates: dict[str, set[str] | None] = {}
        self.never = dead_tests(node)
        self.tables: dict[str, ast.expr] = {}
        self.fallback: set[int] = set()  # nodes taken only when a judge is missing
        self.out: dict[str, list[JSON]] = {k: [] for k in (
            "means", "spreads", "weights", "branches", "pred", "judge_tests", "spread_keys",
            "passed", "text_calls", "scored")}

    def block(self, body: list[ast.stmt], after: list[ast.stmt] | None = None) -> None:
        # `after`: what runs once the block ends (left out in a loop, ``try`` or ``with``)
        for index, stmt in enumerate(body):
            self.stmt(stmt, [*body[index + 1:], *(after or [])])

    def stmt(self, node: ast.stmt, rest: list[ast.stmt]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return
        for expr in own_exprs(node):
            self.expression(expr)
        if isinstance(node, ast.If | ast.While):
            # the path without the branch: its ``else``, then what runs after it
            after = None if isinstance(node, ast.While) else rest
            count = len(self.out["branches"])
            self.branch(node.test, [*node.body, *node.orelse], node.lineno,
                        same_score(node.body, node.orelse, after, self.sets_score))
            if len(self.out["branches"]) > count:
                self.out["branches"][-1].update(self.marks(node))
            self.guards.append((self.reads(node.test), node.test))
            self.gate_stack.append(test_gates(node.test) if isinstance(node, ast.If) else set())
            self.block(node.body, after)
            self.gate_stack[-1] = set()  # the ``else`` runs when the test fails
            self.guards[-1] = (self.guards[-1][0], ast.UnaryOp(op=ast.Not(), operand=node.test))
            self.block(node.orelse, after)
            self.gate_stack.pop()
            self.guards.pop()
            return
        if isinstance(node, ast.For | ast.AsyncFor) and (bodies := expand(node, self.tables)):
            for body in [*bodies, node.orelse]:  # each entry of a rule table is a rule
                self.block(body)
            return
        if hands_score(node, self.does, self._returned_effect):
            self.out["scored"].append({"line": node.lineno})
        if isinstance(node, ast.Return) and node.value is not None:
            self.returned(node)
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            self.assigned(node, node.value)
        for field in ("body", "orelse", "finalbody"):
            self.block([s for s in getattr(node, field, None) or [] if isinstance(s, ast.stmt)])
        for handler in getattr(node, "handlers", None) or []:
            self.block(handler.body)

    def marks(self, node: ast.If | ast.While) -> JSON:
        """``never``, ``agree`` (with no ``else``: it re-evaluates no disagreement) and
        ``ceiling`` (it only lowers the score to a fixed cap)."""
        out: JSON = {"never": self.never[node.lineno]} if node.lineno in self.never else {}
        if not node.orelse and agreement_test(node.test, self.reads):
            out["agree"] = True
        return {**out, **({"ceiling": True} if ceiling(node, self.sets_score) else {})}

    def expression(self, node: ast.expr) -> None:
        for sub in walk_expr(node):
            if isinstance(sub, ast.IfExp):
                note = is_note(sub, self.binds)  # ``"Disagreement" if spread > 2 else None``
                side = ast.Return if note else ast.Expr
                if not (note and unheard(node, sub)):  # a log line or remediation: no dissent
                    self.branch(sub.test, [side(sub.body), side(sub.orelse)], sub.lineno,
                                choice=True)
                self.fallback.update(map(id, judge_fallback(sub)))
            elif isinstance(sub, ast.BinOp):
                self.binop(sub)
            elif isinstance(sub, ast.Call):
                self.call(sub)
            elif isinstance(sub, ast.Dict) and weight_table(sub):
                self.out["weights"].append({"line": sub.lineno})
            elif isinstance(sub, ast.Compare):
                self.out["judge_tests"] += judge_tests(sub)

    def binop(self, node: ast.BinOp) -> None:
        # ``sum(s) // len(s)``: a floor mean is a mean (``round``/``int`` of one is read inside)
        if id(node) in self.fallback:
            return  # ``tl.score if tl else mean``: the Tech Lead's score, not a mean
        if isinstance(node.op, ast.Div | ast.FloorDiv) and squares(node.left):
            self.out["spreads"].append({"line": node.lineno})  # ``sum((s - m) ** 2) / n``
        elif isinstance(node.op, ast.Div | ast.FloorDiv) and self._averaged(node.left) and \
                not (dotted(node.right) or "").rsplit(".", 1)[-1].isupper():
            products = [s for s in through(node.left, self.binds)
                        if isinstance(s, ast.BinOp) and isinstance(s.op, ast.Mult)]
            # ``(p + 2 * t + d) / 4``, ``sum(W[o.judge] * o.score ...)``: judges weighed
            # differently; ``sum(s * weights[r.criterion_id] ...)`` weighs criteria instead
            weighted = any(not per_criterion(p, self.binds) for p in products)
            # ``sum(dimension_scores.values()) / len(...)``: an overall over the criteria
            over = plain_kinds(summed(node.left)) == {"criterion"} and not products
            self.out["means"].append({"line": node.lineno, "weighted": bool(products),
                                      "criteria": over or (bool(products) and not weighted),
                                      **self.kept(node)})
            if weighted:
                self.out["weights"].append({"line": node.lineno})
        elif isinstance(node.op, ast.Add) and weighted_sum(node) and "score" in self.reads(node):
            self.out["means"].append({"line": node.lineno, "weighted": True, **self.kept(node)})
        elif is_spread(node, self.binds):
            self.out["spreads"].append({"line": node.lineno})
        elif (factor := constant_factor(node)) is not None and 0 < factor < 10 and \
                factor != 1 and "score" in self.reads(node):
            self.out["weights"].append({"line": node.lineno})

    def kept(self, mean: ast.expr) -> JSON:
        """``local`` for a mean whose value never leaves the function (`effects`)."""
        where = mean_leaves(self.body, mean, self.binds)
        return {} if where is None else {"local": where}

    def _averaged(self, numerator: ast.expr) -> bool:
        """A sum of scores: ``sum(scores)``, ``p + d + t``, a running ``total``."""
        return call_name(numerator) == "sum" or (isinstance(numerator, ast.BinOp) and isinstance(
            numerator.op, ast.Add)) or "score" in self.reads(numerator)

    def call(self, node: ast.Call) -> None:
        name = (resolve(dotted(node.func), self.imports) or "").rsplit(".", 1)[-1]
        if name in MEAN_CALLS and node.args and "score" in self.reads(node.args[0]):
            self.out["means"].append({"line": node.lineno, "weighted": False, **self.kept(node)})
        elif name in SPREAD_CALLS and node.args:
            self.out["spreads"].append({"line": node.lineno})
        # ``_flags(op.argument)``: the helper's word tests on that parameter read a judge's text
        if (passed := text_call(node, self.reads)) is not None:
            self.out["text_calls"].append(passed)
        # ``variance_re_evaluation(weighted, dissent)`` with ``dissent`` resting on the spread
        # (or on a helper's answer): a test of that parameter in the callee reads it; a score
        # passed on is not (a spread rule may have set it, testing it decides on the score)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Name) and arg.id not in self.params and not any(
                    p["name"] == arg.id for p in self.out["passed"]):
                every = self.reads(arg)
                reads = sorted(r for r in every if r in ("spread", "gap") or r.startswith("call:"))
                if reads and "score" not in every:
                    self.out["passed"].append({"name": arg.id, "reads": reads})

    def branch(self, test: ast.expr, body: list[ast.stmt], line: int,
               same: tuple[int, ...] = (), choice: bool = False) -> None:
        """One decision; `same`: where the path without it sets the score, when it scores as
        that path (marked ``same``: it changes no score, `unused_rules`); `choice`: a
        conditional expression, whose value goes wherever the expression goes."""
        does = sorted(self.does(body))
        if choice and not does and any(is_none(getattr(s, "value", None)) for s in body):
            does = ["pick"]  # ``helper(ops) if spread > 2 else None``: tested, picks a value
        inner = self.inner_tests(body)
        # ``if not scores: return 3``, ``len(s) >= 3``: the scores' shape reads no score
        own = value_reads(test, self.reads, self.binds, body)
        reads = sorted(own.union(*(self.reads(t) for t in inner)))
        # the parameters it tests: what a caller passes for them is read there (synthesis)
        params = sorted({n.id for t in [test, *inner] for n in walk_expr(t)
                         if isinstance(n, ast.Name) and n.id in self.params
                         and not self.binds.get(n.id) and "score" not in name_kind(n.id)})
        if identity_only(reads) and unpacks(body, lambda t: identity_only(self.reads(t))):
            return  # ``if op.judge == "Defense": d = op.score``: names a score, decides nothing
        if (reads or params) and does:
            extra: JSON = {"gates": g} if (g := self.gates(test, inner)) else {}
            if params:
                extra["params"] = params
            # where the decision's body ends: a router's returns inside it are its choice
            end = max(getattr(s, "end_lineno", None) or line for s in body)
            # where a flag it sets goes (`spread_flags`): a flag kept local decides nothing
            if "flag" in does and not choice:
                extra.update(flag_exit(body, self.body))
            self.out["branches"].append({"line": line, "end": end, "reads": reads, "does": does,
                                         **extra, **self.details(test, body, inner, line, same)})

    def gates(self, test: ast.expr, inner: list[ast.expr]) -> list[str]:
        """What a decision needs to hold a value: its own gates, the enclosing ``if`` bodies'
        (a rule nested under ``if rules and rules.fact_supremacy:`` runs only then), and the
        gates a flag it tests was set true under (``if security_override:``)."""
        flags = [self.flag_gates.get(name) for name in test_gates(test)]
        return sorted(set(branch_gates(test, inner)).union(
            *self.gate_stack, *(f for f in flags if f)))

    def details(self, test: ast.expr, body: list[ast.stmt], inner: list[ast.expr], line: int,
                same: tuple[int, ...]) -> JSON:
        """What else a decision's facts need: each side of an ``or`` (``if not ev.found or
        "insecure" in argument:``, each side fires the rule alone) and the lines it sets the
        score on (a spread's re-evaluation is quoted from them)."""
        out: JSON = {"shape": ["score"]} if shape_only(test, self.binds) else {}
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            out["alts"] = [sorted(value_reads(v, self.reads, self.binds).union(
                *map(self.reads, inner))) for v in test.values]
        out.update(helper_sides(test, inner, self.reads))  # and the sides of a helper's ``or``
        sets = {getattr(n, "lineno", line) for n in own_nodes(body) if isinstance(n, SIMPLE)
                and self.does([n]) & {"score", "cap"}}
        if sets:  # and, if it scores as without it, where the path without it does
            out.update(sets=sorted(sets)[:MAX_SETS], **({"same": {
                "at": sorted(sets)[:MAX_SETS], "over": list(same[:MAX_SETS])}} if same else {}))
        return out

    def sets_score(self, node: ast.AST) -> bool:
        """A statement, or a returned item, that sets the score (`paths.same_score`)."""
        effect = self._returned_effect(node) if isinstance(node, ast.expr) else \
            self.does([node]) if isinstance(node, ast.stmt) else set()
        return bool(effect & {"score", "cap"})

    def inner_tests(self, body: list[ast.stmt]) -> list[ast.expr]:
        """The nested tests that decide when every score change of the body sits under one:
        ``if criterion == "graph": if "modular" in op.argument: return op.score`` decides on
        a word in the argument, not on the criterion alone."""
        plain, nested = first_tests(body)
        if self.does(plain) & CHANGES:
            return []
        return [t.test for t in nested if self.does([*t.body, *t.orelse]) & CHANGES]

    def assigned(self, node: ast.Assign | ast.AnnAssign, value: ast.expr) -> None:
        """``violation = True`` under a test carries what the test read to later tests of
        ``violation``; ``re_evaluate = spread > 2`` is itself a decision (a flag) where the flag
        leaves the function (`handed_on`): one only read by later tests, those tests decide."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                self.spread_key(target.slice, value)
        if self.guards and isinstance(value, ast.Constant):
            for name in (n for t in targets for n in target_names(t)):
                self.guarded.setdefault(name, set()).update(*(r for r, _t in self.guards))
            self.memo.clear()  # what a flag's name reads has grown
        self.flag_set(targets, value)
        if isinstance(value, ast.Compare) and any(
                not isinstance(t, ast.Name) or handed_on(self.body, t.id) for t in targets):
            reads = sorted(self.reads(value))
            if reads:
                self.out["branches"].append({"line": node.lineno, "reads": reads,
                                             "does": ["flag"], **targets_exit(targets, self.body)})

    def flag_set(self, targets: Sequence[ast.expr], value: ast.expr) -> None:
        """A name set true only under gates keeps the gates every such setting is under;
        false values (its start) add none, any other value clears them."""
        if isinstance(value, ast.Constant) and not value.value:
            return
        held = set().union(*self.gate_stack) if isinstance(value, ast.Constant) else set()
        for name in (t.id for t in targets if isinstance(t, ast.Name)):
            before = self.flag_gates.get(name, held)
            self.flag_gates[name] = (before & held) or None if before is not None else None

    def spread_key(self, key: ast.AST | None, value: ast.expr) -> None:
        """``return {"has_variance": flag}`` or ``state["k"] = flag`` where the value rests on
        how far the judges' scores lie apart: a state key a router may branch on."""
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and \
                {"spread", "gap"} & self.reads(value):
            self.out["spread_keys"].append({"line": value.lineno, "key": key.value})

    def returned(self, node: ast.Return) -> None:
        """A predicate's answer: what its returned value and guarding tests read."""
        assert node.value is not None
        if isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                self.spread_key(key, value)
        reads = (answer := self.reads(node.value)).union(*(r for r, _t in self.guards))
        if isinstance(node.value, ast.Constant) or reads - {"score"}:
            self.out["pred"].append({"line": node.lineno, "reads": sorted(reads), **measured(
                node.value, answer), **or_sides(node.value, self.reads, self.guards)})

    def does(self, body: list[ast.stmt]) -> set[str]:
        found: set[str] = set()
        for sub in own_nodes(body):
            if isinstance(sub, ast.Assign | ast.AnnAssign | ast.AugAssign) and \
                    sub.value is not None:
                targets: list[ast.expr] = list(sub.targets) if isinstance(sub, ast.Assign) \
                    else [sub.target]
                found |= self._effect(targets, sub.value)
            elif isinstance(sub, ast.Return) and sub.value is not None:
                found |= self._returned_effect(sub.value)
            elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call) and \
                    TEXT_CALLS.search(dotted(sub.value.func) or ""):
                found.add("text")
            if isinstance(sub, ast.Call) and call_name(sub) == "min" and is_cap(sub):
                found.add("cap")
        return found

    def _effect(self, targets: list[ast.expr], value: ast.expr) -> set[str]:
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            return {"flag"}
        if is_text(value, self.binds) or (isinstance(value, ast.Constant) and
                                          value.value is None):
            return {"text"}
        if isinstance(value, ast.Call) and (fields := updated_scores(value)):
            return set().union(*(self._returned_effect(v) for v in fields))
        names = " ".join(n for t in targets for n in target_names(t, attributes=True))
        if SCORE_TARGET.search(names) or (numeric(value) and "score" in self.reads(value)):
            # ``final = 3`` caps the score; ``tech_weight = 2.0`` weighs a judge's score
            if isinstance(value, ast.Constant) and isinstance(value.value, int | float) and \
                    value.value <= 3 and "weight" not in names.lower():
                return {"cap"}
            return set() if evidence_only(targets, self.binds, self.reads) or \
                plain_copy(value) else local_effect(targets, value, self.body, self.binds)
        if isinstance(value, ast.Compare):
            return {"flag"}
        return set()

    def _returned_effect(self, value: ast.expr) -> set[str]:
        return returned_effect(value, self.binds, self.reads, self.spread_items)
