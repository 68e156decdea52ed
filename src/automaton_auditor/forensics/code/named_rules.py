"""Which named Chief Justice rule a decision is, from what it reads and does (`synthesis`).

One decision is one rule: a fixed cap on the detectives' evidence is the security override;
fact supremacy needs a decision on the evidence that overrules the judges otherwise (sets the
score from something other than a fixed cap, or caps it on a judge's score or opinion).
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

from automaton_auditor.forensics.code.exprs import JUDGE_ATTR, PERSONA, call_name
from automaton_auditor.forensics.code.logic import CHANGES
from automaton_auditor.forensics.code.paths import in_body, unclamped
from automaton_auditor.forensics.code.source import code_at, parse_file
from automaton_auditor.forensics.code.spread_routes import Route, Rule
from automaton_auditor.forensics.code.tie_breaks import STATISTICS, WRAPPERS

Lines = list[tuple[str, int]]
# the rules the rubric's synthesis criterion names: two of them make a rule-bound synthesis.
# Fact supremacy first: a decision credited as both it and the override is an evidence cap
# that also overrules the judges (`supremacy`), the narrower reading, so it keeps that name.
CORE_RULES = ("fact_supremacy", "security_override", "functionality_weight")


def credited(rules: list[Rule], weights: Lines, routes: list[Route],
             picks: Collection[Rule] = (), repo: Path | None = None) -> dict[str, Lines]:
    """The named rules the decisions are credited as, each with the lines it rests on: a cap
    on detected evidence or on a judge's score (never one on words in an argument), fact
    supremacy, judge `weights`, a decision on the spread (not one of `picks`, a tie-break that
    only picks among the scores) or a router picking on it a node whose output the synthesis
    reads, and a dissent written on the spread."""
    caps = [(r.path, r.line) for r in rules if r.kind in ("evidence", "score_cap")
            and "cap" in r.does]
    tied = {(r.path, r.line) for r in picks}
    spread = [(r.path, r.line) for r in rules
              if r.kind == "spread" and (r.path, r.line) not in tied]
    spread += [line for r in routes if r.feeds for line in r.lines]
    return {"security_override": caps, "fact_supremacy": supremacy(rules),
            "functionality_weight": judge_weights(rules, weights, repo),
            "variance_re_evaluation": spread,
            "dissent_requirement": [(r.path, r.line) for r in rules
                                    if {"spread", "gap"} & set(r.reads) and "text" in r.does]}


def distinct(named: dict[str, Lines], names: tuple[str, ...]) -> list[str]:
    """The `names` whose rules rest on decisions of their own: one decision credited as two
    rules (an evidence cap that also reads a judge's score is both a cap and a decision that
    weighs the judge against the facts) counts once. A largest matching of names to lines."""
    owner: dict[tuple[str, int], str] = {}

    def place(name: str, seen: set[tuple[str, int]]) -> bool:
        for line in named[name]:
            if line not in seen:
                seen.add(line)
                if line not in owner or place(owner[line], seen):
                    owner[line] = name
                    return True
        return False

    return [name for name in names if named[name] and place(name, set())]


def shared_reason(named: dict[str, Lines], names: tuple[str, ...], kept: list[str]) -> str:
    """Why a named rule the code is credited with does not count (`kept`: those that do):
    the decision it rests on is already counted as another rule."""
    lost = [n for n in names if named[n] and n not in kept]
    if not lost:
        return ""
    other = next((n for n in kept if set(named[n]) & set(named[lost[0]])), kept[0])
    path, line = sorted(set(named[other]) & set(named[lost[0]]))[0]
    return (f"; {lost[0]} rests only on decisions already counted as {other} ({path}:{line} is "
            "one decision), so it counts once")


def judge_weights(rules: list[Rule], weights: Lines, repo: Path | None = None) -> Lines:
    """Where one judge's score weighs differently when a criterion's scores are combined:
    judge `weights`, or a branch on a judge or a criterion that sets the score (one that
    only caps it is a cap, one that only sets a flag or answers a helper's test, as
    ``if defense_score <= 2: return False``, weighs no score, and one that sets it to a
    statistic weighing every score alike, ``if tl.score >= 4: final = max(scores)``, weighs
    no judge more: `pooled_sets`)."""
    branches = [(r.path, r.line) for r in rules
                if r.kind in ("judge", "criterion") and "score" in r.does and "cap" not in r.does
                and not pooled_sets(r, repo)]
    return sorted({*weights, *branches})


def _leaves_judge_out(node: ast.AST) -> bool:
    """A comprehension whose filter tests a judge (``if o.judge != "Defense"``): the scores
    it keeps are not every judge's."""
    return any(isinstance(g, ast.comprehension) and any(
        (isinstance(n, ast.Attribute) and JUDGE_ATTR.match(n.attr))
        or (isinstance(n, ast.Constant) and isinstance(n.value, str) and PERSONA.search(n.value))
        for t in g.ifs for n in ast.walk(t)) for g in ast.walk(node))


def _pooled(value: ast.expr | None, binds: dict[str, list[ast.expr]]) -> bool:
    """``max(scores)``, ``statistics.median(scores)``, ``sum(s) // len(s)`` (a clamp to the
    scale or ``round`` around it aside): a statistic of one collection of scores, which
    weighs each score in it alike; not one that leaves a judge out where it is built."""
    value = unclamped(value) if value is not None else None
    if isinstance(value, ast.Call) and call_name(value) in WRAPPERS and value.args:
        return _pooled(value.args[0], binds) and all(
            isinstance(a, ast.Constant) for a in value.args[1:])
    mean = isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div | ast.FloorDiv) and \
        call_name(value.left) == "sum" and call_name(value.right) == "len"
    if mean and isinstance(value, ast.BinOp):
        value = value.left  # the plain mean of what ``sum`` is given
    if not isinstance(value, ast.Call) or len(value.args) != 1 or value.keywords or not (
            mean or call_name(value).rsplit(".", 1)[-1] in STATISTICS - {"sorted"}):
        return False
    pool = value.args[0]
    bound = binds.get(pool.id, []) if isinstance(pool, ast.Name) else []
    return not any(_leaves_judge_out(v) for v in [pool, *bound])


def pooled_sets(rule: Rule, repo: Path | None) -> bool:
    """Whether every score `rule` sets is a statistic of a collection of the scores that
    weighs each alike (``final = max(scores)``), or a name it set so handed on (``return
    final, dissent``): a judge's confirming score that then takes the highest of all weighs
    no judge's score more than another's; it decides when, not what the verdict is."""
    tree = parse_file(str(repo / rule.path)) if repo is not None and rule.sets else None
    if tree is None:
        return False
    values: dict[int, ast.expr] = {}
    named: dict[int, set[str]] = {}
    binds: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.Return) and node.value is not None:
            values.setdefault(node.lineno, node.value)
        if isinstance(node, ast.Assign):
            for target in (t for t in node.targets if isinstance(t, ast.Name)):
                binds.setdefault(target.id, []).append(node.value)
                named.setdefault(node.lineno, set()).add(target.id)
    own = set().union(*(named.get(n, set()) for n in rule.sets))
    pooled = [n for n in rule.sets if _pooled(values.get(n), binds)]
    handed = [n for n in rule.sets if n not in pooled and (value := values.get(n)) is not None
              and {e.id for e in (value.elts if isinstance(value, ast.Tuple) else [value])
                   if isinstance(e, ast.Name)} & own]
    return bool(pooled) and len(pooled) + len(handed) == len(rule.sets)


def supremacy(rules: list[Rule]) -> Lines:
    """The decisions on the evidence, when one of them overrules the judges otherwise than
    by a fixed cap on the evidence alone (that one is the security override): a cap that
    reads a judge's opinion too (``if defense_hallucinated:``) weighs it against the facts."""
    evidence = [r for r in rules if r.kind == "evidence"]
    overrules = any({"score", "cap"} & set(r.does) and (
        not r.ceiling or {"score", "judge"} & set(r.reads)) for r in evidence)
    return [(r.path, r.line) for r in evidence] if overrules else []


def evidence_reads(rules: list[Rule]) -> list[str]:
    """``path:line`` of the decisions that read the detectives' evidence, whatever they do
    (one that only writes text or never fires reads it too): a report's "fact supremacy" is
    then told against what they do, not as evidence the code never reads."""
    return [f"{p}:{n}" for p, n in sorted({(r.path, r.line) for r in rules
                                            if "evidence" in r.reads})][:10]


STEADY = frozenset({"judge", "criterion"})  # what holds for every verdict on a criterion


SPREAD_KINDS = ("spread", "consensus", "dissent")  # both sides of their test are the spread's


def _around(rules: list[Rule], path: str, line: int, repo: Path | None) -> list[Rule]:
    """The decisions whose test is at `line` or whose body, not its ``else``, holds it (the
    ``else`` runs when the decision does not fire); a decision on the score spread holds the
    side taken when the scores lie far apart (``if variance <= 1: mean else: weighted``)."""
    near = [r for r in rules if r.path == path and r.line <= line <= max(r.end, r.line)]
    tree = parse_file(str(repo / path)) if repo is not None and near else None
    return [r for r in near if r.line == line or tree is None or (
        in_body(tree, line, {r.line}) != _narrow_first(tree, r.line)
        if r.kind in SPREAD_KINDS else in_body(tree, line, {r.line}))]


def _narrow_first(tree: ast.AST, line: int) -> bool:
    """Whether the ``if`` at `line` tests for a narrow spread (``if variance <= 1:``), so its
    ``else`` is the wide one; ``if variance > 2:`` has the wide spread first."""
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.If) and n.lineno == line), None)
    test = next((n for n in ast.walk(node.test) if isinstance(n, ast.Compare)), None) \
        if node is not None else None
    return test is not None and isinstance(test.ops[0], ast.Lt | ast.LtE)


def ordinary_weights(rules: list[Rule], weights: Lines, repo: Path | None) -> Lines:
    """The `weights` that apply where no rule fires: neither they nor any decision around
    them test more than a judge's identity or the criterion. One nested in a decision on the
    score spread (``if variance >= 3: if criterion in (...): final = techlead``) weighs a
    judge only when the scores are far apart, which is the variance re-evaluation; one under
    a word test or a judge's score (``if "modular" in tl.argument: if tl.score >= 4: final =
    max(scores)``) only when that holds, a rule of its own. Where no such rule fires, the
    judges' mean is still plain. A test on a judge's opinion with no threshold (``if
    tech_lead_op:``, the judge present) holds for every verdict as well."""
    return [(path, line) for path, line in weights
            if all(_steady(r, repo) for r in _around(rules, path, line, repo)
                   if r.kind != "none" or "score" in r.does)]  # a test only writing text


def _steady(rule: Rule, repo: Path | None) -> bool:
    """Whether a decision holds for every verdict on a criterion: its tests read only a
    judge's identity or the criterion, or a judge's opinion compared with no number."""
    if set(rule.reads) <= STEADY:
        return True
    # the rubric's functionality weight: on the criteria it names, a judge's score that
    # confirms (``if criterion in (...) and tl.score >= 4: final = tl.score``) decides
    if "criterion" in rule.reads and set(rule.reads) <= STEADY | {"score"}:
        return True
    tree = parse_file(str(repo / rule.path)) if repo is not None else None
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.If) and n.lineno == rule.line),
                None) if tree is not None else None
    # its own test and those nested in its body (``if tl: if tl.score >= 4:``)
    tests = [n.test for b in (node.body if node else []) for n in ast.walk(b)
             if isinstance(n, ast.If)] + ([node.test] if node else [])
    return bool(tests) and set(rule.reads) <= STEADY | {"score"} and not any(
        isinstance(c, ast.Constant) and isinstance(c.value, int | float)
        and not isinstance(c.value, bool) for t in tests for n in ast.walk(t)
        if isinstance(n, ast.Compare) for c in [n.left, *n.comparators])


def plain_means(rules: list[Rule], means: Lines, repo: Path | None) -> Lines:
    """The `means` on the path that runs when no rule fires: none in the body of a decision
    that does more than a shape test (a floor mean inside a word rule is that rule's score;
    one in the ``else`` of a rule is what the code does when it does not fire)."""
    out: Lines = []
    for path, line in means:
        # a spread's own sides are the old special case (`ordinary_weights`), not a rule here
        tests = {r.line for r in rules if r.path == path and r.kind not in ("none", *SPREAD_KINDS)}
        tree = parse_file(str(repo / path)) if repo is not None and tests else None
        if tree is None or not in_body(tree, line, tests):
            out.append((path, line))
    return out


def unweighted_reason(averaging: bool, models: bool, means: Lines, weights: Lines,
                      ordinary: Lines, rules: list[Rule], repo: Path | None) -> str:
    """The rationale of ``justice.unweighted_mean``: why the rule-bound plain mean holds, or
    which of its parts is missing (`means`: those where no rule fires, `plain_means`)."""
    if averaging:
        return "Every verdict is the mean: no rule on a fact changes it (see the plain average)."
    if models:
        return "The score is taken from a model's answer."
    if not means:
        return "No mean of the scores where no rule fires."
    if ordinary:
        # a weight on some criteria only leaves the others' mean plain; one anywhere else
        # weighs every verdict
        around = [[r for r in _around(rules, *w, repo) if "criterion" in r.reads]
                  for w in ordinary]
        first = next((w for w, keys in zip(ordinary, around, strict=True) if not keys),
                     ordinary[0])
        keyed = [] if any(not keys for keys in around) else around[0]
        where = f" ({first[0]}:{first[1]})" if not keyed or keyed[0].line != first[1] else ""
        return f"One judge's score weighs differently{where}" + (
            f" on the criteria the test at {keyed[0].path}:{keyed[0].line} picks; on every "
            f"other criterion, where no rule fires, the verdict is the judges' plain mean "
            f"({means[0][0]}:{means[0][1]})" if keyed else "") + "."
    inside = [w for w in weights if w not in ordinary]
    spread = inside and any(r.kind == "spread" for r in _around(rules, *inside[0], repo))
    return ("Where no rule fires, the verdict is a mean of the three scores; rules change it "
            "only where their tests hold" + (
                f", and no judge weighs differently except when the scores are far apart "
                f"({inside[0][0]}:{inside[0][1]}, part of the variance re-evaluation)"
                if spread else f", and a different weighing applies only "
                f"inside one ({inside[0][0]}:{inside[0][1]}, a rule of its own)"
                if inside else "") + ".")


def averaging_reason(means: Lines, models: bool, weights: Lines, deciding: int,
                     keyword: int) -> str:
    """The rationale of ``justice.averaging``: why the verdict is, or is not, a plain mean
    of the opinions (`deciding`: decisions that change it; `keyword`: ones on words only)."""
    if not means:
        return "No mean of the scores."
    if deciding or models:
        return f"{deciding} decision(s) change the mean."
    weighted = (f", weighted per judge with the same weights whatever the evidence "
                f"({weights[0][0]}:{weights[0][1]})" if weights else "")
    words = f"; {keyword} decision(s) only match words in an argument" if keyword else ""
    return (f"The score is a mean of the opinions{weighted}; no rule on evidence, score "
            f"spread or a judge's score changes it{words}.")


def rule_kind(reads: set[str], does: set[str], dead: bool) -> str:
    """What kind of rule a decision is (`Rule.kind`), by what its test reads and what its
    body does; `dead`: its test never holds."""
    changes = does & CHANGES
    if dead and (changes or "text" in does):
        return "dead"  # a dissent written only when a rule that never fires holds is none
    if "spread" in reads or "gap" in reads:
        # two judges' scores apart (a gap) re-evaluate only when they change the score
        # itself; a flag set on a gap (``dissent_found = True``) marks a dissent
        counted = changes if "spread" in reads else changes - {"flag"}
        return "spread" if counted else "dissent" if "text" in does else "none"
    if not changes:
        return "none"
    if "words" in reads:  # a rule that needs a word in an argument fires on words, whatever
        return "words"  # else it also tests (``if "security" in p.argument and not found:``)
    if "evidence" in reads:
        return "evidence"
    if "score" in reads and "cap" in does:
        return "score_cap"
    if "criterion" in reads:
        return "criterion"
    if "judge" in reads:
        return "judge"
    return "none"


def judge_triggered(rules: list[Rule], named: dict[str, Lines], repo: Path | None) -> str:
    """A note for the security override's caps whose test reads scores and nothing else
    (``if p_score <= 2:``, ``if dim == "safe_tool" and p.score <= 2:``, `score_only`): no
    detected fact, so no confirmed vulnerability, decides them; said of all of it when it
    rests on nothing else (two quoted at most)."""
    override = named.get("security_override", [])
    trees = {p: parse_file(str(repo / p)) for p in {p for p, _n in override}} \
        if repo is not None else {}
    alone = sorted((r.path, r.line) for r in {r._replace(kind="") for r in rules
                                              if r.kind == "score_cap"}
                   if (r.path, r.line) in override and score_only(trees.get(r.path), r.line))
    if not alone:
        return ""
    quoted = " and ".join(f"{p}:{n} ({code_at(repo, p, n)})" for p, n in alone[:2])
    caps, reads = ("caps", "read") if len(alone) > 1 else ("cap", "reads")
    return (f"; the security override's {caps} at {quoted} {reads} the judges' scores and no "
            "detected fact: no confirmed vulnerability is needed for it to fire" + (
                ", and nothing else it rests on reads the evidence"
                if len(alone) == len(set(override)) else ""))


def score_only(tree: ast.Module | None, line: int) -> bool:
    """Whether the ``if`` at `line` runs on scores and nothing else: its test compares
    scores with numbers (`plain_test`), and every ``if`` around it, or before it in its
    function that returns, tests no more than scores, the criterion or a judge's name (no
    flag a caller passes, no helper's answer on the evidence gates it)."""
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.If) and n.lineno == line),
                None) if tree is not None else None
    fn = min((f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
              and f.lineno <= line <= (f.end_lineno or f.lineno)),
             key=lambda f: (f.end_lineno or f.lineno) - f.lineno, default=None) \
        if tree is not None else None
    if tree is None or node is None or fn is None or not plain_test(node.test, True):
        return False
    # an ``if`` before it that returns gates it, unless it caps too (the later cap runs
    # where it did not fire, which needs no fact either)
    gates = [n for n in ast.walk(fn) if isinstance(n, ast.If) and n is not node and (
        n.lineno < line <= (n.end_lineno or n.lineno) or (
            (n.end_lineno or n.lineno) < line and any(
                isinstance(r, ast.Return | ast.Raise | ast.Continue) for r in ast.walk(n))
            and not any(isinstance(c, ast.Call) and call_name(c) == "min"
                        for r in ast.walk(n) if isinstance(r, ast.Return) and r.value
                        for c in ast.walk(r.value))))]
    strings = {t.id for a in [*tree.body, *ast.walk(fn)] if isinstance(a, ast.Assign)
               and isinstance(a.value, ast.List | ast.Tuple | ast.Set) and all(
                   isinstance(e, ast.Constant) and isinstance(e.value, str) for e in a.value.elts)
               for t in a.targets if isinstance(t, ast.Name)}
    return all(plain_test(g.test, False, strings) for g in gates)


def plain_test(test: ast.expr, numbered: bool, strings: Collection[str] = ()) -> bool:
    """A test with no call whose every side of an ``and`` compares a name or field with a
    number or strings (`strings`: names of literal collections of strings), or is the
    presence of an opinion whose score it compares (with `numbered`, at least one side
    compares with a number)."""
    if any(isinstance(n, ast.Call) for n in ast.walk(test)):
        return False
    sides = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
        else [test]
    compared, rest = [], []
    for side in sides:
        if isinstance(side, ast.Compare) and len(side.ops) == 1:
            pair = [side.left, side.comparators[0]]
            values = [v for v in pair if not isinstance(v, ast.Constant | ast.List | ast.Tuple
                                                        | ast.Set) and not (
                isinstance(v, ast.Name) and v.id in strings)]
            if len(values) != 1:
                return False
            if any(isinstance(v, ast.Constant) and isinstance(v.value, int | float)
                   and not isinstance(v.value, bool) for v in pair):
                compared.append(values[0])
            continue
        rest.append(side)
    bases = {ast.dump(v.value) for v in compared if isinstance(v, ast.Attribute)}
    return (bool(compared) or not numbered) and all(
        isinstance(s, ast.Name | ast.Attribute) and ast.dump(s) in bases for s in rest)
