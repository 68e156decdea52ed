"""Chief Justice findings, read from what the synthesis code computes.

The synthesis code is the Chief Justice node's function (found through the rebuilt graph,
else functions named like synthesis) and every function it calls (the call graph, a few calls
deep). What counts is behaviour, recorded per function by `logic`: a mean of the scores; a
branch that caps or changes the score on the detectives' evidence, on the score spread, on a
judge's score or identity; judges weighed differently; a model whose answer becomes the
score. A branch that only searches words in a judge's argument is a keyword rule; one that
compares a judge's name with a value no judge ever carries, or needs a value read from a state
key the schema does not declare (`gates`), never fires. A functionality weight weighs one
judge's score differently when a criterion's three scores are combined: weights keyed by
criterion (an overall over the criteria) or a cap conditioned on a judge are none, and a mean
of the judges that no judge weighs into differently, changed by rules only in special cases,
is an unweighted mean. A decision whose result nothing reads (`unused_rules`) is no rule.
Names and strings that name rules earn nothing; each fact quotes its ``path:line: code``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.execution import Model, build_model
from automaton_auditor.forensics.code.flow import local_calls
from automaton_auditor.forensics.code.idle_caps import rule_notes
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.model_overwrite import scores_replaced
from automaton_auditor.forensics.code.named_rules import (
    CORE_RULES,
    averaging_reason,
    credited,
    distinct,
    evidence_reads,
    judge_triggered,
    ordinary_weights,
    plain_means,
    rule_kind,
    shared_reason,
    unweighted_reason,
)
from automaton_auditor.forensics.code.override_evidence import inverted_override
from automaton_auditor.forensics.code.overwrites import overwrite_notes, overwrites
from automaton_auditor.forensics.code.rubric_ids import NO_RUBRIC, Rubric
from automaton_auditor.forensics.code.score_bands import Band
from automaton_auditor.forensics.code.source import function_source, line_at
from automaton_auditor.forensics.code.spread_flags import spread_does
from automaton_auditor.forensics.code.spread_routes import (
    Route,
    Rule,
    alternatives,
    criterion_dead,
    dead_reason,
    decisions,
    passed_spread,
    read_helpers,
    read_only,
    resolved_reads,
    route_reason,
    spread_reason,
    spread_routes,
    unchanged_reason,
    words_alone,
)
from automaton_auditor.forensics.code.state_schema import typed_classes
from automaton_auditor.forensics.code.state_writers import gate_reader
from automaton_auditor.forensics.code.stubs import does_nothing
from automaton_auditor.forensics.code.tie_breaks import tie_breaks, tie_facts
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.forensics.code.unused_rules import Unused, effective, unused_finding
from automaton_auditor.state import Finding

SYNTH_NAME = re.compile(r"justice|chief|synthes", re.I)
AUX_PATH = re.compile(r"(^|/)(scripts?|examples?|demos?|docs?|notebooks?|bench\w*)/", re.I)
SCOPE_DEPTH = 4
MAX_QUOTED = 12


def synthesis_roots(graph: CallGraph, main: Topology | None,
                    wired: Scope | None = None) -> list[Key]:
    """The synthesis node's function(s), else functions named like synthesis; when what the
    graph runs is known (`wired`), only those it runs (a getter named
    ``get_synthesis_rules`` that nothing calls is no synthesis)."""
    roots = node_roots(graph, main)
    if roots:
        return roots
    named = [k for k in graph.functions if SYNTH_NAME.search(k[1].rsplit(".", 1)[-1])
             or SYNTH_NAME.search(k[0].rsplit("/", 1)[-1])]
    if wired is not None:
        named = [k for k in named if wired.runs(*k)]
    product = [k for k in named if not AUX_PATH.search(k[0])]
    return product or named


def node_roots(graph: CallGraph, main: Topology | None) -> list[Key]:
    """The functions the graph's synthesis nodes run. A bound method of an instance the walk
    cannot type (``self.chief.synthesize_verdict``) is the one function of the repository
    with that method name, when there is exactly one."""
    roots: list[Key] = []
    for name, node in sorted((main.nodes if main else {}).items()):
        if not SYNTH_NAME.search(name) or not (node.get("fn") or node["op"].get("wraps")):
            continue
        key = graph.node_function(node)
        method = str(node.get("fn") or "").rsplit(".", 1)
        if key is None and len(method) == 2:
            same = [k for k in graph.functions if k[1].rsplit(".", 1)[-1] == method[1]
                    and "." in k[1] and not AUX_PATH.search(k[0])]
            key = same[0] if len(same) == 1 else None
        if key is not None:
            roots.append(key)
    return roots


def synthesis_scope(graph: CallGraph, main: Topology | None,
                    wired: Scope | None = None) -> list[Key]:
    """The synthesis functions: the roots and what they call."""
    return graph.reachable(synthesis_roots(graph, main, wired), SCOPE_DEPTH)


def _model(facts: dict[str, JSON], graph: CallGraph, main: Topology | None) -> Model | None:
    return build_model(facts, graph, main) if main is not None and main.nodes else None


def rules_of(graph: CallGraph, facts: dict[str, JSON], scope: list[Key],
             main: Topology | None = None, model: Model | None = None,
             repo: Path | None = None, rubric: Rubric = NO_RUBRIC) -> list[Rule]:
    """Every decision in the synthesis scope, classified by what it reads and does. One that
    compares a judge's name with a value no judge carries, needs a state key the schema does
    not declare or nothing writes (`state_writers`), whose flags keep it false, or tests for
    a criterion no rubric file of the repository has (`rubric_ids`) never fires (``dead``)."""
    known = {v for p in facts for v in facts[p].get("judge_values") or []}
    gates = gate_reader(graph, facts, model if model is not None else _model(
        facts, graph, main), scope, node_roots(graph, main), repo)
    rules: list[Rule] = []
    for key in scope:
        logic = graph.functions[key].get("logic") or {}
        dead = {t["line"] for t in logic.get("judge_tests", [])
                if known and t["value"] not in known}
        keyed = criterion_dead(graph, key, rubric)
        for branch in logic.get("branches", []):
            # a test of the scores' shape reads no score, nor does a helper's answer it tests
            reads = resolved_reads(graph, key, branch["reads"]) - set(branch.get("shape", [])) \
                | passed_spread(graph, key, branch.get("params", []), scope)
            does = spread_does(graph, key, branch, reads, scope)
            never = branch["line"] in dead | set(keyed) or "never" in branch or any(
                gates.never_holds(key, name) for name in branch.get("gates", []))
            # each side of an ``or`` fires alone (on words, the evidence, a judge's score), and
            # words gated on a detected fact are both a keyword rule and one on the evidence
            both = {rule_kind(reads, does, never), rule_kind(reads - {"words"}, does, never)}
            kinds = both & {"words", "evidence"} or both
            kinds |= {"words", "score_cap", "evidence"} & {
                rule_kind(alt, does, never) for alt in alternatives(graph, key, branch)}
            if branch.get("agree"):  # a rule for agreeing judges re-evaluates no disagreement
                kinds = {"consensus" if k == "spread" else k for k in kinds}
            helpers = tuple(sorted(f"{p}:{q}" for p, q in read_helpers(
                graph, key, branch["reads"])))
            rules += [Rule(kind, key[0], branch["line"], tuple(sorted(reads)),
                           tuple(sorted(does)), tuple(branch.get("sets", [])),
                           f"{key[0]}:{key[1]}", helpers, tuple(branch.get("never", [])),
                           bool(branch.get("ceiling")), int(branch.get("end", 0)),
                           keyed.get(branch["line"], ""))
                      for kind in kinds]
    return sorted(set(rules), key=lambda r: (r.path, r.line, r.kind))


class Reading(NamedTuple):
    """What the synthesis scope computes, with the lines it rests on."""

    scope: list[Key]
    rules: list[Rule]
    means: list[tuple[str, int]]
    weights: list[tuple[str, int]]
    models: list[tuple[str, int]]  # model calls whose answer becomes the score
    routes: list[Route]  # nodes a router picks on the score spread
    unused: list[Unused]  # decisions whose result nothing reads (not in `rules`)


def read_synthesis(graph: CallGraph, facts: dict[str, JSON], main: Topology | None,
                   wired: Scope | None = None, repo: Path | None = None,
                   rubric: Rubric = NO_RUBRIC) -> Reading:
    """Everything the synthesis findings rest on (`wired`: what the graph runs, if known)."""
    scope = synthesis_scope(graph, main, wired)
    roots, model = synthesis_roots(graph, main, wired), _model(facts, graph, main)
    means, weights = [], []
    # a mean whose value never leaves its function is no verdict: one inside a variance
    # never, one that only fills text where another function hands a score out (a report
    # statistic); where none does, the text is the verdict
    scored = any((graph.functions[k].get("logic") or {}).get("scored") for k in scope)
    for key in scope:
        logic = graph.functions[key].get("logic") or {}
        # a mean weighted by criterion is an overall over the criteria, not of the judges
        means += [(key[0], m["line"]) for m in logic.get("means", []) if not m.get("criteria")
                  and m.get("local") not in ("spread", "text" if scored else "")]
        weights += [(key[0], w["line"]) for w in logic.get("weights", [])]
    rules, unused = effective(graph, rules_of(graph, facts, scope, main, model, repo, rubric))
    return Reading(scope, rules, sorted(set(means)), sorted(set(weights)),
                   _model_scores(graph, facts, scope, set(roots)),
                   spread_routes(graph, model, roots) if model is not None else [], unused)


def _model_scores(graph: CallGraph, facts: dict[str, JSON], scope: list[Key],
                  roots: set[Key]) -> list[tuple[str, int]]:
    """Model calls in scope whose answer is bound to a name holding scores, or is what a
    synthesis function itself returns, unless the code assigns its scores again."""
    lines = {(p, c["func"], c["line"]) for p in facts for c in facts[p].get("calls") or []
             if c["kind"] == "llm_invoke"}
    found, classes = [], typed_classes(facts)
    for key in scope:
        binds = {**graph.flow(key).get("binds", {})}
        if key in roots:
            binds["<return>"] = graph.flow(key).get("rets", [])
        sites = graph.sites(key)
        for name in sorted(binds):
            if "score" not in name.lower() and name != "<return>":
                continue
            for index in local_calls(binds, name):
                if index < len(sites) and (key[0], key[1], sites[index]["line"]) in lines \
                        and not scores_replaced(graph, classes, key, index):
                    found.append((key[0], sites[index]["line"]))
    return sorted(set(found))


def _quote(repo: Path | None, items: list[tuple[str, int]]) -> str | None:
    return "\n".join(line_at(repo, p, n) for p, n in items[:MAX_QUOTED]) or None


def _of(rules: list[Rule], *kinds: str) -> list[tuple[str, int]]:
    return [(r.path, r.line) for r in rules if r.kind in kinds]


def _f(facet: str, goal: str, found: bool, pattern: Any, items: list[tuple[str, int]],
       repo: Path | None, rationale: str, confidence: float, **data: Any) -> Finding:
    loc = f"{items[0][0]}:{items[0][1]}" if items else "."
    return Finding(facet=facet, goal=goal, found=found, pattern=pattern, location=loc,
                   content=_quote(repo, items), rationale=rationale, confidence=confidence,
                   data={"lines": [f"{p}:{n}" for p, n in items[:50]], **data})


def justice_findings(facts: dict[str, JSON], repo: Path | None = None,
                     main: Topology | None = None, graph: CallGraph | None = None,
                     wired: Scope | None = None, rubric: Rubric = NO_RUBRIC,
                     bands: dict[str, Band] | None = None) -> list[Finding]:
    """``justice.*``: node, deterministic, rules, variance, averaging, unweighted_mean,
    keyword_rules, model_verdict, unused_rules, inverted_override (`rubric`: the repo's;
    `bands`: the scores each persona's prompt leaves its judge, `score_bands`)."""
    graph = graph or CallGraph(facts)
    reading = read_synthesis(graph, facts, main, wired, repo, rubric)
    stub = repo is not None and bool(reading.scope) and all(
        does_nothing(function_source(repo, k[0], graph.functions[k]["line"],
                                     graph.functions[k]["end"])) for k in reading.scope)
    # named, not denied: synthesis code nothing the graph runs calls whose rules change scores
    idle = [] if wired is None or reading.scope else sorted({r.path for r in rules_of(
        graph, facts, synthesis_scope(graph, main), main, None, repo, rubric)
        if r.kind != "none"})
    return [_node(graph, reading, repo, stub, idle),
            *_model_findings(facts, reading, repo, stub),
            *_rule_findings(reading, repo, graph, rule_notes(repo, reading.rules, facts,
                                                             bands or {})),
            unused_finding(reading.unused, credited([*reading.rules, *(
                u.rule for u in reading.unused)], reading.weights, reading.routes, (), repo), repo),
            *([inverted_override(repo, facts, reading.scope, reading.rules)] if repo else [])]


def _node(graph: CallGraph, reading: Reading, repo: Path | None, stub: bool,
          idle: list[str]) -> Finding:
    scope = reading.scope
    root = scope[0] if scope else None
    info = graph.functions[root] if root else {}
    source = function_source(repo, root[0], info["line"], info["end"]) \
        if root and repo is not None else None
    return Finding(facet="justice.node", goal="Chief Justice synthesis is implemented in code",
                   found=bool(scope) and not stub, pattern="success",
                   location=f"{root[0]}:{info['line']}" if root else ".", content=source,
                   rationale=(f"Synthesis starts at {root[1]} but does nothing: it only "
                              "returns its input, a constant or nothing." if root and stub else
                              f"Synthesis starts at {root[1]} and calls {len(scope) - 1} "
                              "function(s) of the repository." if root else
                              "No synthesis function found" + (
                                  " in code the graph runs; code it never runs applies rules "
                                  "to scores: " + ", ".join(idle[:4]) if idle else "") + "."),
                   confidence=0.8, data={"functions": [f"{p}:{q}" for p, q in scope[:50]],
                                         "stub": stub})


def _model_findings(facts: dict[str, JSON], reading: Reading,
                    repo: Path | None, stub: bool = False) -> list[Finding]:
    keys = set(reading.scope)
    llm = sorted({(p, c["line"]) for p in facts for c in facts[p].get("calls") or []
                  if c["kind"] in ("llm_invoke", "llm_ctor") and (p, c["func"]) in keys})
    return [
        _f("justice.deterministic", "Synthesis is deterministic Python (no model decides "
           "the scores)", bool(reading.scope) and not reading.models and not stub, "success",
           reading.models or llm, repo,
           ("No synthesis code found." if not reading.scope else
            "The synthesis code does nothing (a stub)." if stub else
            "A model's answer becomes the scores." if reading.models else
            f"{len(llm)} model call(s) reachable from the synthesis code only write text."
            if llm else "No model call reachable from the synthesis code."), 0.75,
           llm_calls=[f"{p}:{n}" for p, n in llm]),
        _f("justice.model_verdict", "A model decides the final scores", bool(reading.models),
           "failure", reading.models, repo,
           (f"The scores are read from a model's answer at {len(reading.models)} place(s)."
            if reading.models else "No score is taken from a model's answer."), 0.85),
    ]


def _rule_findings(reading: Reading, repo: Path | None, graph: CallGraph,
                   notes: str = "") -> list[Finding]:
    rules = reading.rules
    inert = {u.rule: u.over for u in reading.unused if u.same and u.rule.kind == "spread"}
    ties = tie_breaks(rules, graph, repo, inert)  # a pick re-evaluates nothing
    named = credited(rules, reading.weights, reading.routes, ties, repo)
    # the verdict is the score's last assignment: a cap a later line replaces is undone there
    over = overwrites(repo, rules)
    notes += overwrite_notes(repo, over, named)  # still credited: the cap holds elsewhere
    notes += judge_triggered(rules, named, repo)  # no confirmed vulnerability needed
    kept_over = sorted({(o.rule.path, n) for o in over for n in (o.at, o.by)})[:MAX_QUOTED // 3]
    weights, present = named["functionality_weight"], [n for n, items in named.items() if items]
    # each of the rules the rubric names must rest on a decision of its own
    core = distinct(named, CORE_RULES)
    deciding = _of(rules, "evidence", "spread", "consensus", "score_cap", "criterion", "judge")
    keyword, dead = _of(rules, "words"), _of(rules, "dead")
    kept = [*kept_over, *((r.path, n) for r in rules if r.kind == "dead" for n in r.why)][
        :MAX_QUOTED // 2]
    # a helper's word test and its callers' tests on its answer are one decision
    words = decisions([r for r in rules if r.kind == "words"])
    facts_too = set(_of(rules, "evidence"))  # words gated on a detected fact as well
    loose = decisions([r for r in rules if r.kind == "words"
                       and (r.path, r.line) not in facts_too])
    # of those, an ``or`` whose side of words fires alone fires on the word alone too
    either = decisions([r for r in rules if r.kind == "words" and (r.path, r.line) in
                        facts_too and words_alone(graph, r)])
    gated = words - loose - either
    averaging = bool(reading.means) and not deciding and not reading.models
    ordinary = ordinary_weights(rules, weights, repo)  # a plain mean where no rule fires
    plain = plain_means(rules, reading.means, repo)
    unweighted = bool(plain) and not ordinary and not averaging and not reading.models
    return [
        _f("justice.rules", "Conflict-resolution rules in code (security override, fact "
           "supremacy, functionality weight)", len(core) >= 2, "success",
           list(dict.fromkeys([*sorted({i for n in present for i in named[n]})[
               :MAX_QUOTED - len(kept)], *kept])),
           repo,
           f"Rules the code applies: {', '.join(present) or 'none'}" + (
               f"; {loose} more fire on words in a judge's argument (not counted: no "
               "detected fact decides them)" if loose else "") + shared_reason(
                   named, CORE_RULES, core) + dead_reason(rules, repo) + notes + ".",
           0.75,
           rules={n: [f"{p}:{line}" for p, line in named[n][:10]] for n in present},
           dead=[f"{p}:{line}" for p, line in dead[:10]],
           evidence=evidence_reads([*rules, *(u.rule for u in reading.unused)])),
        *tie_facts(rules, reading.routes, ties, repo,  # a tie-break is no re-evaluation
                   lambda kept: _variance(reading._replace(rules=kept), repo), inert),
        _f("justice.averaging", "The verdict is a plain average of the judges' scores",
           averaging, "failure", [*reading.means, *keyword, *dead] if averaging else
           reading.means, repo, averaging_reason(reading.means, bool(reading.models),
                                                  reading.weights, len(deciding), words),
           0.85, keyword_rules=words, dead_rules=len(dead)),
        _f("justice.unweighted_mean", "Where no rule fires, the verdict is the judges' plain "
           "mean (no judge's score weighs more)", unweighted, "failure",
           plain if unweighted else [], repo, unweighted_reason(
               averaging, bool(reading.models), plain, weights, ordinary, rules, repo), 0.75),
        _f("justice.keyword_rules", "Rules fire on words in a judge's argument",
           bool(keyword), "failure", keyword, repo,
           (f"{words} decision(s) change the score because a judge's argument "
            "contains a word" + (f" ({gated} of them only where a detected fact also holds)"
                                 if gated else "") + (
                f" ({either} of them on the word alone: one side of an 'or' tests the word, "
                "another a detected fact)" if either else "") + (
                "" if gated or either else ", not because of a detected fact") + (
                f" (tested on {len(keyword)} lines: a helper's tests and the tests that read "
                "its answer are one decision)" if len(keyword) > words else "") + "."
            if keyword else "No decision reads words in a judge's argument."), 0.7),
    ]


def _variance(reading: Reading, repo: Path | None) -> Finding:
    """A score spread that re-evaluates: a rule that changes the score on it, or a router
    that picks, on it, a node whose output the synthesis reads."""
    rules, routes = reading.rules, reading.routes
    spread, dissent = _of(rules, "spread"), _of(rules, "dissent")
    # the decision's test and where it sets the score, quoted together
    spread = sorted({*spread, *((r.path, n) for r in rules if r.kind == "spread"
                                for n in r.sets[:2])})
    fed, agree = [r for r in routes if r.feeds], _of(rules, "consensus")
    reason = spread_reason(rules, repo) if spread else route_reason(fed[0]) if fed else \
        unchanged_reason(rules, routes)
    return _f("justice.variance", "Score variance triggers a re-evaluation",
              bool(spread or fed), "success", spread or [
                  line for r in fed or routes for line in r.lines] + agree + dissent
              + read_only(rules), repo, reason,
              0.75, routes=[{"source": r.source, "target": r.target, "writes": list(r.writes),
                             "feeds": list(r.feeds), "lines": [f"{p}:{n}" for p, n in r.lines]}
                            for r in routes])
