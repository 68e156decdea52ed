"""Small readers of expressions for the scoring-logic summary (`logic`): what kind of data
a name, attribute or comparison side stands for, what a statement's own nodes are."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from automaton_auditor.forensics.code.common import dotted, resolve

# what a judge writes: its argument, and the charges and mitigations some opinions list
OPINION_TEXT = {"argument", "reasoning", "rationale", "explanation", "justification",
                "comment", "comments", "feedback", "opinion_text", "content_lower",
                "charges", "mitigations"}
# scores, a judge's own text (an evidence's ``rationale`` or ``content`` is no judge's
# argument) or a spread (``max(p, d, t) - min(p, d, t)`` over a helper's parameters)
SCORE_OR_TEXT = re.compile(r"score|argument|reasoning|justification|max\(|stdev|variance")
EVIDENCE = re.compile(r"evidence|^found$|cited|citation", re.I)
CRITERION = re.compile(r"criteri|dimension|dim_id|dim$|rubric_id|^crit(?:_id)?$", re.I)
JUDGE_ATTR = re.compile(r"^(judge|judge_name|persona|role|judge_type|judge_role)$", re.I)
PERSONA = re.compile(r"prosecut|defen[cs]e|tech[\s_-]?lead", re.I)
SCORE_TARGET = re.compile(r"score|final|verdict|grade|rating|weight|result|capped|raw", re.I)
SPREAD_CALLS = {"stdev", "pstdev", "variance", "pvariance", "std", "var"}
MEAN_CALLS = {"mean", "fmean", "average", "median_low"}
MAX_TEXT_DEPTH = 12  # names followed when telling a text being built
TEXT_CALLS = re.compile(r"(^|\.)(print|info|debug|warning|warn|error|log|append|extend)$")


def attr_kind(attr: str) -> set[str]:
    """The kind of data an attribute or key name holds (text, score, evidence)."""
    if attr in OPINION_TEXT:
        return {"text"}
    if attr == "score" or attr.endswith("_score") or attr == "scores":
        return {"score"}
    if EVIDENCE.search(attr):
        return {"evidence"}
    return set()


def plain_kinds(node: ast.AST) -> set[str]:
    """Judge or criterion identity named in one side of a comparison."""
    found: set[str] = set()
    for sub in walk_expr(node):
        name = sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(
            sub, ast.Name) else attr_name(sub) if isinstance(sub, ast.Call) else None
        if name and CRITERION.search(name):
            found.add("criterion")
        elif name and JUDGE_ATTR.match(name):
            found.add("judge")
    return found


def name_kind(name: str) -> set[str]:
    """The kind of data a variable name holds."""
    kinds = attr_kind(name)
    if "score" in name.lower():
        kinds.add("score")
    return kinds


def attr_name(node: ast.AST) -> str | None:
    """The attribute read by ``x.a``, ``getattr(x, "a")`` or ``x["a"]``."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and call_name(node) == "getattr" and len(node.args) > 1 \
            and isinstance(node.args[1], ast.Constant):
        return str(node.args[1].value)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    return None


def number_value(node: ast.AST) -> float | None:
    """A literal number's value (``True`` is no number); None for anything else."""
    return float(node.value) if isinstance(node, ast.Constant) and isinstance(
        node.value, int | float) and not isinstance(node.value, bool) else None


def numeric(node: ast.AST) -> bool:
    """An arithmetic expression (not a string or a container being built)."""
    if isinstance(node, ast.BinOp):
        return not isinstance(node.op, ast.Mod) or not isinstance(node.left, ast.Constant)
    return call_name(node).rsplit(".", 1)[-1] in ("round", "int", "float", "min", "max",
                                                    "mean", "median", "fmean", "sum")


def call_name(node: ast.AST) -> str:
    """The dotted callee of a call (empty for anything else)."""
    return (dotted(node.func) or "") if isinstance(node, ast.Call) else ""


def is_cap(node: ast.Call) -> bool:
    """``min(score, 3)``: a ceiling below the top of the scale (``min(5, x)`` clamps)."""
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, int | float) and \
                not isinstance(arg.value, bool) and arg.value not in (5, 10, 100):
            return True
        name = dotted(arg) or ""
        if name.rsplit(".", 1)[-1].isupper() and "CAP" in name.upper():
            return True  # ``min(final, SECURITY_CAP)``
    return False


def target_names(target: ast.AST, attributes: bool = False) -> list[str]:
    """Names an assignment target binds (and attribute/key names, if asked)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for e in target.elts for n in target_names(e, attributes)]
    if attributes and isinstance(target, ast.Attribute):
        return [target.attr]
    if attributes and isinstance(target, ast.Subscript):
        # ``state["final_score"]`` names its key; ``final_scores[cid]`` (a run-time key) its table
        return [str(target.slice.value)] if isinstance(target.slice, ast.Constant) else \
            target_names(target.value, attributes)
    return []


def paired(target: ast.AST, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """The names an assignment binds, each with its own value: ``lo, hi = min(s), max(s)``
    binds ``lo`` to ``min(s)`` and ``hi`` to ``max(s)`` (else every name to the whole
    value)."""
    if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
            and len(target.elts) == len(value.elts) and \
            not any(isinstance(e, ast.Starred) for e in target.elts):
        return [pair for t, v in zip(target.elts, value.elts, strict=True)
                for pair in paired(t, v)]
    return [(name, value) for name in target_names(target)]


def walk_expr(node: ast.AST) -> list[ast.AST]:
    """Nodes of an expression, not descending into lambdas or nested definitions."""
    out: list[ast.AST] = []
    stack = [node]
    while stack and len(out) < 5000:
        sub = stack.pop()
        out.append(sub)
        if not isinstance(sub, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef |
                          ast.ClassDef):
            stack.extend(ast.iter_child_nodes(sub))
    return out


def own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of a block, nested definitions excluded."""
    return [n for stmt in body for n in walk_expr(stmt)]


def own_exprs(node: ast.stmt) -> list[ast.expr]:
    """The expressions of a statement itself (not of its nested blocks)."""
    return [child for field, child in ast.iter_fields(node)
            if field not in ("body", "orelse", "finalbody", "handlers") and
            isinstance(child, ast.expr)]


def handed_on(body: list[ast.stmt], name: str, plain: bool = True) -> bool:
    """True when a local flag leaves its function as itself: returned (without `plain`, not
    as itself or in a tuple, to a caller that tests it), stored on an attribute or under a
    key (``state["re_evaluate"] = flag``), or through names rebound to it. Text built from
    it (``'Yes' if flag else 'No'``) carries a label, not the flag."""
    names, todo = {name}, [name]
    while todo and len(names) < 50:
        current = todo.pop()
        for sub in own_nodes(body):
            value = getattr(sub, "value", None)
            if not isinstance(value, ast.expr) or not carries(value, current):
                continue
            if isinstance(sub, ast.Return) and not plain and isinstance(
                    value, ast.Name | ast.Tuple) and not any(
                    isinstance(e, ast.Dict | ast.Call) and carries(e, current)
                    for e in getattr(value, "elts", [])):
                continue
            if isinstance(sub, ast.Return) or (isinstance(sub, ast.Assign) and any(
                    isinstance(t, ast.Attribute | ast.Subscript) for t in sub.targets)):
                return True
            if isinstance(sub, ast.Assign):
                new = {n for t in sub.targets for n in target_names(t)} - names
                names |= new
                todo.extend(new)
    return False


def carries(value: ast.expr, name: str) -> bool:
    """True when `value` is the name itself or holds it as an element, a dict value or a
    call's argument (``Command(update={"flag": flag})``)."""
    if isinstance(value, ast.Name):
        return value.id == name
    if isinstance(value, ast.Tuple | ast.List | ast.Set):
        return any(carries(e, name) for e in value.elts)
    if isinstance(value, ast.Dict):
        return any(carries(v, name) for v in value.values)
    if isinstance(value, ast.Call):
        return any(carries(a, name) for a in [*value.args, *(k.value for k in value.keywords)])
    return False


def weight_table(node: ast.Dict) -> bool:
    """``{"Prosecutor": 1.0, "TechLead": 2.0}``: judges keyed to different numbers."""
    keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and
            isinstance(k.value, str) and PERSONA.search(k.value)]
    numbers = [v for v in node.values if isinstance(v, ast.Constant) and
               isinstance(v.value, int | float) and not isinstance(v.value, bool)]
    return len(keys) >= 2 and len(numbers) >= 2 and len({n.value for n in numbers}) > 1


def judge_tests(node: ast.Compare) -> list[dict[str, object]]:
    """``op.judge == "TechLead"``: a persona literal compared with a judge-like attribute."""
    if not any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
        return []
    sides = [node.left, *node.comparators]
    attrs = [a for a in (attr_name(s) for s in sides) if a and JUDGE_ATTR.match(a)]
    return [{"line": node.lineno, "attr": attr, "value": side.value} for side in sides
            if isinstance(side, ast.Constant) and isinstance(side.value, str)
            and PERSONA.search(side.value) for attr in attrs]


_BLOCKS = (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try)


def first_tests(body: list[ast.stmt]) -> tuple[list[ast.stmt], list[ast.If | ast.While]]:
    """The simple statements of a block (through loops, ``with`` and ``try``) and the tests
    met first on the way down, whose blocks are left to those tests."""
    plain: list[ast.stmt] = []
    nested: list[ast.If | ast.While] = []
    for stmt in body:
        if isinstance(stmt, ast.If | ast.While):
            nested.append(stmt)
        elif isinstance(stmt, _BLOCKS):
            inner = [*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", []),
                     *(s for h in getattr(stmt, "handlers", []) for s in h.body)]
            more_plain, more_nested = first_tests(inner)
            plain += more_plain
            nested += more_nested
        elif not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            plain.append(stmt)
    return plain, nested


def evidence_only(targets: list[ast.expr], binds: dict[str, list[ast.expr]],
                  reads: Callable[[ast.AST], set[str]]) -> bool:
    """True when every target is a local name that each of its `binds` fills from the
    detectives' evidence alone (``collab_score = collab_evidence.get(...)``): no judge's
    score ever reaches it, so setting it rules on no conflict between the judges (it is the
    evidence's own score, for a criterion of its own)."""
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    values = [v for n in names for v in binds.get(n, [])]
    return bool(values) and len(names) == len(targets) and all(
        "evidence" in (kinds := reads(v)) and not kinds & {"score", "judge"} for v in values)


def handles_scores(lines: list[str], start: int, end: int) -> bool:
    """True when a function's source mentions scores, a judge's argument text or a spread at
    all (a cheap prefilter: a helper that only searches words in the argument decides scores
    for the function testing its answer)."""
    return any(SCORE_OR_TEXT.search(line) for line in lines[start - 1:end])


def through(node: ast.AST, binds: dict[str, list[ast.expr]]) -> list[ast.AST]:
    """The nodes of an expression and of what its names are bound to (one step)."""
    nodes = list(walk_expr(node))
    for sub in list(nodes):
        if isinstance(sub, ast.Name):
            for bound in binds.get(sub.id, [])[:4]:
                nodes.extend(walk_expr(bound))
    return nodes


NORMALISE = {"lower", "upper", "casefold", "strip", "lstrip", "rstrip", "title"}


def unnormalised(node: ast.expr) -> ast.expr:
    """``k.lower().strip()`` -> ``k``: the text a case or space normalisation is applied to."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in NORMALISE and not node.args:
        node = node.func.value
    return node


def identity_only(reads: set[str] | list[str]) -> bool:
    """A test that reads a judge's identity and nothing else (helpers aside)."""
    return {r for r in reads if not r.startswith(("call:", "prop:"))} == {"judge"}


def score_copy(node: ast.AST) -> bool:
    """``op.score``, ``op["score"]``, ``getattr(op, "score")``, ``int(op.score)``: one
    judge's score as it is."""
    if isinstance(node, ast.Call) and call_name(node) in ("int", "float") and \
            len(node.args) == 1:
        node = node.args[0]
    return attr_name(node) == "score"


def unpacks(stmts: list[ast.stmt], identity_test: Callable[[ast.expr], bool]) -> bool:
    """Statements that only bind a judge's own score to a name, under tests of the judge's
    identity (``if op.judge == "Defense": d = op.score elif ...``): bookkeeping that names
    each judge's score, no decision; how the names are combined decides."""
    return bool(stmts) and all(
        (isinstance(s, ast.Assign) and score_copy(s.value)) or (
            isinstance(s, ast.If) and identity_test(s.test) and unpacks(s.body, identity_test)
            and (not s.orelse or unpacks(s.orelse, identity_test)))
        for s in stmts)


def weighted_sum(node: ast.BinOp) -> bool:
    """``t * 0.4 + p * 0.3 + d * 0.3``: products by constant weights that add up to 1, a
    weighted mean with no division."""
    terms: list[ast.expr] = []
    todo: list[ast.expr] = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
            todo += [current.left, current.right]
        else:
            terms.append(current)
    weights = [constant_factor(term) for term in terms]
    return len(terms) >= 2 and all(w is not None for w in weights) and \
        abs(sum(w or 0.0 for w in weights) - 1.0) < 0.011


def constant_factor(term: ast.expr) -> float | None:
    """The constant one side of a product holds (``t * 0.4`` -> 0.4), else None."""
    if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
        for side in (term.left, term.right):
            if isinstance(side, ast.Constant) and isinstance(side.value, int | float) and \
                    not isinstance(side.value, bool):
                return float(side.value)
    return None


def summed(numerator: ast.expr) -> ast.expr:
    """What ``sum(x)`` or ``sum(x.values())`` adds up (``x``); else the numerator itself."""
    if call_name(numerator) == "sum" and isinstance(numerator, ast.Call) and numerator.args:
        inner = numerator.args[0]
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and \
                inner.func.attr == "values" and not inner.args:
            return inner.func.value
        return inner
    return numerator


def call_reads(node: ast.Call, imports: dict[str, str]) -> set[str]:
    """What a call's answer rests on: a spread, an attribute named by ``getattr``, words a
    literal is searched for, or ``call:<name>`` (a local helper read across the call graph)."""
    name = dotted(node.func) or ""
    tail = (resolve(name, imports) or name).rsplit(".", 1)[-1]
    if tail in SPREAD_CALLS:
        return {"spread"}
    if tail == "getattr" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
        return attr_kind(str(node.args[1].value))
    if tail in ("search", "match", "findall", "startswith", "endswith", "find", "count"):
        return {"words"} if any(isinstance(a, ast.Constant) for a in node.args) else set()
    if name and not name.startswith(("str.", "len", "max", "min", "sum", "round", "int",
                                     "float", "abs", "any", "all", "sorted", "list")) \
            and "." not in name.removeprefix("self.").removeprefix("cls."):
        return {f"call:{name}"}
    return set()


def is_none(node: object) -> bool:
    """The constant ``None``."""
    return isinstance(node, ast.Constant) and node.value is None


def is_text(node: ast.AST, binds: dict[str, list[ast.expr]], depth: int = 0) -> bool:
    """True for a string being built: literals, f-strings, sums and names of them."""
    if depth > MAX_TEXT_DEPTH:
        return False
    if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and
                                           isinstance(node.value, str)):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return is_text(node.left, binds, depth + 1) or is_text(node.right, binds, depth + 1)
    if isinstance(node, ast.BoolOp):
        return any(is_text(v, binds, depth + 1) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("join", "format", "strip")
    if isinstance(node, ast.Name) and binds.get(node.id):
        return all(b is not node and is_text(b, binds, depth + 1)
                   for b in binds[node.id][:8])
    return False


def per_criterion(product: ast.BinOp, binds: dict[str, list[ast.expr]]) -> bool:
    """True for a product whose factors (through local assignments) are keyed by a
    criterion's id and never by a judge's identity: ``score * weights[r.criterion_id]``
    weighs one criterion against another, not one judge against another."""
    kinds: set[str] = set()
    todo: list[ast.AST] = [product]
    seen: set[str] = set()
    while todo and len(seen) < 50:
        for sub in walk_expr(todo.pop()):
            kinds |= plain_kinds(sub) if isinstance(sub, ast.Attribute | ast.Name) \
                else set()
            if isinstance(sub, ast.Name) and sub.id not in seen:
                seen.add(sub.id)
                todo.extend(binds.get(sub.id, [])[:4])
    return "criterion" in kinds and "judge" not in kinds
