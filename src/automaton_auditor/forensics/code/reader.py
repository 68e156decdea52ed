"""What an expression in a scoring function reads: the kinds of data a test or a value
depends on (``words``, ``evidence``, ``spread``, ``gap``, ``score``, ``judge``, ``criterion``,
``text``, ``call:<name>``), followed through the function's own assignments."""

from __future__ import annotations

import ast

from automaton_auditor.forensics.code.argument_words import param_roots, searched_text, word_kinds
from automaton_auditor.forensics.code.common import is_literal
from automaton_auditor.forensics.code.exprs import (
    attr_kind,
    call_name,
    call_reads,
    name_kind,
    own_nodes,
    paired,
    plain_kinds,
    target_names,
    unnormalised,
    walk_expr,
)
from automaton_auditor.forensics.code.spreads import is_spread, is_variance

MAX_DEPTH = 12


class ExprReader:
    """The reads of one function's expressions (through its local assignments)."""

    def __init__(self, imports: dict[str, str],
                 node: ast.FunctionDef | ast.AsyncFunctionDef, consts: set[str]) -> None:
        self.imports = imports
        self.memo: dict[tuple[int, int, frozenset[str]], frozenset[str]] = {}
        self.consts = consts  # module-level string and list-of-string constants
        self.guarded: dict[str, set[str]] = {}  # flag -> what the tests that set it read
        self.binds: dict[str, list[ast.expr]] = {}
        args = node.args
        self.params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        for sub in own_nodes(node.body):
            if isinstance(sub, ast.Assign | ast.AnnAssign | ast.AugAssign) and \
                    sub.value is not None:
                for target in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                    for name, value in paired(target, sub.value):
                        self.binds.setdefault(name, []).append(value)
            elif isinstance(sub, ast.For | ast.comprehension):
                for name in target_names(sub.target):
                    self.binds.setdefault(name, []).append(sub.iter)
        # ``max(p, d, t) - min(p, d, t)``: what a spread is taken over are the judges' scores,
        # whatever their names (``return t`` then returns a judge's score)
        self.spread_items = {a.id for sub in own_nodes(node.body) if isinstance(sub, ast.BinOp)
                             and is_spread(sub, self.binds) for side in (sub.left, sub.right)
                             if isinstance(side, ast.Call)
                             for a in side.args if isinstance(a, ast.Name)}


    def reads(self, node: ast.AST, depth: int = 0, seen: frozenset[str] = frozenset()
              ) -> set[str]:
        """The kinds of data an expression depends on (through local assignments)."""
        found: set[str] = set()
        key = (id(node), depth, seen)
        if depth > MAX_DEPTH or key in self.memo:
            return set(self.memo.get(key, found))
        searched = {id(n) for s in self.searched(node, depth, seen) for n in walk_expr(s)}
        for sub in walk_expr(node):
            if id(sub) in searched:
                continue
            if isinstance(sub, ast.Attribute):
                found |= attr_kind(sub.attr)
            elif isinstance(sub, ast.Name):
                if self.constant(sub):
                    continue  # ``for role in ["Defense", ...]``: a constant, not data
                found |= name_kind(sub.id) | self.guarded.get(sub.id, set())
                if sub.id in self.spread_items:
                    found.add("score")
                if sub.id not in seen:
                    for value in self.binds.get(sub.id, []):
                        found |= self.reads(value, depth + 1, seen | {sub.id})
            elif isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Constant) and \
                    isinstance(sub.slice.value, str):
                found |= attr_kind(sub.slice.value)
            elif isinstance(sub, ast.Call):
                found |= self._call(sub, depth, seen) | self._gap(sub, depth, seen)
            elif isinstance(sub, ast.Compare):
                found |= self._compare_reads(sub, depth, seen)
            elif is_spread(sub, self.binds) or is_variance(sub):
                found.add("spread")
        self.memo[key] = frozenset(found)
        return found

    def _call(self, node: ast.Call, depth: int, seen: frozenset[str]) -> set[str]:
        """`call_reads`, with a word search (``re.search(r"os\\.system", text)``) reading
        words only in a judge's text (`argument_words`), and ``op.get("argument")`` a
        judge's text as ``op["argument"]`` is."""
        found = call_reads(node, self.imports)
        if "words" in found:
            text = searched_text(node, self.imports)
            found.discard("words")
            if text is not None:
                found |= self._words_in(text, depth, seen)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant) and \
                attr_kind(str(node.args[0].value)) == {"text"}:
            found.add("text")
        return found

    def _words_in(self, text: ast.expr, depth: int, seen: frozenset[str]) -> set[str]:
        """What searching a literal in `text` reads (`argument_words.word_kinds`)."""
        subject = self.reads(text, depth + 1, seen) | plain_kinds(text)
        return word_kinds(subject, lambda: param_roots(text, self.params, self.binds))

    def _gap(self, node: ast.Call, depth: int, seen: frozenset[str]) -> set[str]:
        """``abs(p.score - d.score)``: how far two judges' scores lie apart (a ``gap``)."""
        arg = node.args[0] if call_name(node) == "abs" and node.args else None
        return {"gap"} if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub) and all(
            "score" in self.reads(side, depth + 1, seen) for side in (arg.left, arg.right)) \
            else set()

    def constant(self, node: ast.AST, depth: int = 0) -> bool:
        """True for a name bound only to literals (not to an empty list filled later)."""
        if depth > 4:
            return False
        if isinstance(node, ast.Name):
            if node.id in self.guarded:
                return False  # a flag set under a test carries what the test read
            bound = self.binds.get(node.id, [])
            if not bound:  # a module constant (``KEYWORDS = frozenset({...})``)
                return node.id in self.consts or node.id.lstrip("_").isupper()
            return all(self.constant(b, depth + 1) for b in bound)
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict) and not (
                getattr(node, "elts", None) or getattr(node, "keys", None)):
            return False
        return is_literal(node)

    def searched(self, node: ast.AST, depth: int, seen: frozenset[str]) -> list[ast.expr]:
        """Texts holding a judge's argument that a literal is searched in: words a judge
        wrote, whatever else the text joins (its citations are words it wrote too)."""
        return [c.comparators[-1] for c in walk_expr(node) if isinstance(c, ast.Compare)
                and isinstance(c.ops[-1], ast.In | ast.NotIn) and self.literal(c.left)
                and "text" in self.reads(c.comparators[-1], depth + 1, seen)]

    def literal(self, node: ast.expr) -> bool:
        """A string literal or a name bound only to literals (``k.lower()`` too)."""
        node = unnormalised(node)
        return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or (
            isinstance(node, ast.Name) and self.constant(node))

    def _compare_reads(self, node: ast.Compare, depth: int, seen: frozenset[str]) -> set[str]:
        sides = [node.left, *node.comparators]
        found: set[str] = set()
        if any((isinstance(s, ast.Constant) and isinstance(s.value, str)) or
               (isinstance(s, ast.Name) and self.constant(s)) or _strings(s) for s in sides):
            # ``op.judge == "TechLead"``, ``"graph" in criterion_id.lower()``,
            # ``dimension_id in ("graph_orchestration", "state_management_rigor")``
            for side in sides:
                if not self.constant(side):
                    found |= plain_kinds(side)
        # ``judgment.score_variance > 2``: an attribute a property of the repository may
        # compute (`spread_routes.resolved_reads` reads what the property's answer rests on)
        if any(isinstance(s, ast.Constant) and type(s.value) in (int, float) for s in sides):
            found |= {f"prop:{s.attr}" for s in sides
                      if isinstance(s, ast.Attribute) and not attr_kind(s.attr)}
        if not any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            return found
        # ``"os.system" in argument_lower`` / ``any(k in text for k in KEYWORDS)``
        if self.literal(node.left):
            found |= self._words_in(node.comparators[-1], depth, seen)
        return found


def _strings(node: ast.expr) -> bool:
    """A tuple, list or set of string literals (what a membership test names)."""
    return isinstance(node, ast.Tuple | ast.List | ast.Set) and bool(node.elts) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
