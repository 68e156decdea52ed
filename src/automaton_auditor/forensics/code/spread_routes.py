"""Score spreads that route the graph: a re-evaluation wired with edges rather than an ``if``
in the Chief Justice's function.

A router registered with ``add_conditional_edges`` picks its node on how far the judges'
scores lie apart when it returns inside a test on the spread (``if max(s) - min(s) > 2:
return "debate"``), or when its guards test a state key that a node writes from the spread
(``return {"has_variance": flag}`` with ``flag = True`` under such a test). The nodes it
picks then and on no other path (neither the synthesis nodes nor END) re-evaluate only if
the synthesis reads something they, or the nodes after them up to the synthesis, write: a
mediator whose notes nobody reads changes no verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from automaton_auditor.forensics.code.argument_words import callee, param_words
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.execution import Model, Router, state_param, state_reads
from automaton_auditor.forensics.code.rubric_ids import Rubric, described, holds
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.topology import END, START

SPREAD = frozenset({"spread", "gap"})
MAX_HOPS = 4  # nodes followed from a picked node towards the synthesis


class Rule(NamedTuple):
    """One decision the synthesis code makes: its kind and where."""

    kind: str  # evidence | spread | dissent | score_cap | criterion | judge | words | dead
    path: str
    line: int
    reads: tuple[str, ...]
    does: tuple[str, ...]
    sets: tuple[int, ...] = ()  # the lines the score is set on
    fn: str = ""  # ``path:qualname`` of the function that makes it
    helpers: tuple[str, ...] = ()  # ``path:qualname`` of helpers whose answer its test reads
    why: tuple[int, ...] = ()  # a dead test: the lines of the flags that keep it false
    ceiling: bool = False  # it only lowers the score to a fixed cap
    end: int = 0  # the last line of its body (a decision nested in it lies within)
    absent: str = ""  # a dead test on the criterion: what no criterion of the rubric holds


class Route(NamedTuple):
    """A router's choice on the score spread: the node it picks and what that node feeds."""

    source: str  # the node the router is attached to
    target: str  # the node picked on the spread
    lines: tuple[tuple[str, int], ...]  # the spread, the router's return, the edge call
    writes: tuple[str, ...]  # state keys the picked node (and those after it) write
    feeds: tuple[str, ...]  # those the synthesis reads


def resolved_reads(graph: CallGraph, key: Key, reads: list[str], depth: int = 0) -> set[str]:
    """What a test reads, a helper called in it (``if self._is_violation(op):``) standing
    for what the helper's answer rests on."""
    out = param_words(graph, key, {r for r in reads if not r.startswith(("call:", "prop:"))})
    for read in reads:
        if read.startswith("call:") and depth <= 3:
            out |= _call_reads(graph, key, read[5:], depth)
        elif read.startswith("prop:") and depth <= 3:
            out |= _property_reads(graph, read[5:], depth) & SPREAD
    return out


def _property_reads(graph: CallGraph, attr: str, depth: int) -> set[str]:
    """What the answer of a property named `attr` rests on (``@property def
    score_variance(self): return max(s) - min(s)``), over every such property."""
    out: set[str] = set()
    for key, info in graph.functions.items():
        if key[1].endswith(f".{attr}") and any(
                str(d).endswith("property") for d in info.get("decorators") or []):
            for pred in (info.get("logic") or {}).get("pred", []):
                out |= resolved_reads(graph, key, pred["reads"], depth + 1)
    return out


def alternatives(graph: CallGraph, key: Key, branch: JSON) -> list[set[str]]:
    """What each way a decision fires alone reads: each side of its test's ``or``, and each
    side of an ``or`` a helper it tests answers with (with the test's other conditions)."""
    out = [resolved_reads(graph, key, alt) for alt in branch.get("alts", [])]
    for item in branch.get("helper_sides", []):
        helper = callee(graph, key, item["call"])
        if helper is None:
            continue
        rest = resolved_reads(graph, key, item["with"])
        out += [resolved_reads(graph, helper, alt) | rest for pred in (
            graph.functions[helper].get("logic") or {}).get("pred", [])
            for alt in pred.get("alts", [])]
    return out


def words_alone(graph: CallGraph, rule: Rule) -> bool:
    """Whether a decision that reads words in an argument fires on them with no detected
    fact: a side of an ``or`` in its test, or in the helper it tests, reads words and no
    evidence (``(p.score <= 2 and "security" in arg) or evidence_failed``)."""
    path, _, qual = rule.fn.rpartition(":")
    logic = (graph.functions.get((path, qual)) or {}).get("logic") or {}
    branch = next((b for b in logic.get("branches", []) if b["line"] == rule.line), None)
    return branch is not None and any("words" in alt and "evidence" not in alt
                                      for alt in alternatives(graph, (path, qual), branch))


def read_helpers(graph: CallGraph, key: Key, reads: list[str], depth: int = 0) -> set[Key]:
    """The helpers whose answer a test reads (``if _has_flaw(ops):``), and theirs in turn."""
    out: set[Key] = set()
    for read in reads:
        if not read.startswith("call:") or depth > 3:
            continue
        helper = callee(graph, key, read[5:])
        if helper is not None and helper not in out:
            out.add(helper)
            for pred in (graph.functions[helper].get("logic") or {}).get("pred", []):
                out |= read_helpers(graph, helper, pred["reads"], depth + 1)
    return out


def decisions(rules: list[Rule]) -> int:
    """How many decisions `rules` make: a helper's tests and the tests of its callers that
    read its answer are one decision, however many callers it has."""
    group = list(range(len(rules)))
    for helper in sorted({h for r in rules for h in r.helpers}):
        # the helper's own tests and every test that reads its answer: one group
        joined = {group[i] for i, r in enumerate(rules) if helper in (r.fn, *r.helpers)}
        group = [min(joined) if g in joined else g for g in group]
    return len(set(group))


def passed_spread(graph: CallGraph, key: Key, params: list[str], scope: list[Key]) -> set[str]:
    """The score spread a test of `key`'s `params` reads: a caller in `scope` passes a name
    resting on the spread (``dissent = max(s) - min(s) >= 2`` or a helper's answer that
    does), so ``if dissent:`` in `key` decides on the spread."""
    out: set[str] = set()
    for caller in scope if params else []:
        passed = {p["name"]: p["reads"] for p in
                  (graph.functions[caller].get("logic") or {}).get("passed", [])}
        for index, site in enumerate(graph.sites(caller)):
            target = graph.resolve(caller, site)
            if target is None or graph.function_key(target) != key:
                continue
            for param in params:
                for atom in graph.argument(caller, index, key, param) or []:
                    if atom.startswith("v:") and atom[2:] in passed:
                        out |= resolved_reads(graph, caller, passed[atom[2:]]) & SPREAD
    return out


def _call_reads(graph: CallGraph, key: Key, name: str, depth: int) -> set[str]:
    helper = callee(graph, key, name)
    if helper is None:
        return set()
    preds = (graph.functions[helper].get("logic") or {}).get("pred", [])
    return set().union(*(resolved_reads(graph, helper, p["reads"], depth + 1) for p in preds))


def spread_routes(graph: CallGraph, model: Model, synthesis: list[Key]) -> list[Route]:
    """Every node a router picks on the score spread (`synthesis`: the synthesis node
    functions, whose reads decide whether the pick reaches the verdict)."""
    synth = {n for n, node in model.nodes.items() if node.key in synthesis}
    reads = {k for n in synth for k in model.nodes[n].reads}
    for key in synthesis:  # helpers handed the state read it too
        if state_param(graph, key) == "state":
            reads |= set(state_reads(graph, key))
    keys = _spread_keys(graph, model)
    routes: list[Route] = []
    for source, routers in sorted(model.routers.items()):
        for router in routers:
            routes += _picks(graph, model, source, router, keys, synth, reads)
    return routes


def _picks(graph: CallGraph, model: Model, source: str, router: Router,
           keys: dict[str, list[tuple[str, int]]], synth: set[str],
           reads: set[str]) -> list[Route]:
    if router.key is None:
        return []
    inside, lines = _spread_outs(graph, router, keys)
    mapping = router.info.get("map") or {}

    def names(outs: list[JSON]) -> dict[str, int]:
        return {str(mapping.get(str(t)) or t): o["line"] for o in outs
                for t in o.get("targets") or []}

    picked, other = names(inside), names([o for o in router.outs if o not in inside])
    op = router.info["op"]
    out: list[Route] = []
    for target in sorted(set(picked) - set(other) - synth - {END, START}):
        if target not in model.nodes:
            continue
        writes = _writes_until(model, target, source, synth)
        out.append(Route(source, target, (*lines, (router.key[0], picked[target]),
                                          (op["path"], op["line"])),
                         tuple(sorted(writes)), tuple(sorted(writes & reads))))
    return out


def _spread_outs(graph: CallGraph, router: Router, keys: dict[str, list[tuple[str, int]]]
                 ) -> tuple[list[JSON], list[tuple[str, int]]]:
    """The router's returns decided by the spread, and the lines the spread is read on."""
    assert router.key is not None
    path = router.key[0]
    logic = graph.functions[router.key].get("logic") or {}
    tests = [b for b in logic.get("branches", [])
             if SPREAD & resolved_reads(graph, router.key, b["reads"])]
    inside: list[JSON] = []
    lines: list[tuple[str, int]] = []
    for out in router.outs:
        within = [b for b in tests if b["line"] <= out["line"] <= b.get("end", b["line"])]
        guarded = [k for k, _want in out.get("guards") or [] if k in keys]
        if within or guarded:
            inside.append(out)
            lines += [(path, b["line"]) for b in within] + [w for k in guarded for w in keys[k]]
    return inside, sorted(set(lines))


def _spread_keys(graph: CallGraph, model: Model) -> dict[str, list[tuple[str, int]]]:
    """State keys a node writes from the score spread, with the spread's test and the
    write."""
    keys: dict[str, list[tuple[str, int]]] = {}
    for node in model.nodes.values():
        if node.key is None:
            continue
        logic = graph.functions[node.key].get("logic") or {}
        tests = [(node.key[0], b["line"]) for b in logic.get("branches", [])
                 if SPREAD & set(b["reads"])]
        for item in logic.get("spread_keys", []):
            if item["key"] in node.writes:
                keys.setdefault(item["key"], []).extend(
                    [*tests, (node.key[0], item["line"])])
    return keys


def _writes_until(model: Model, target: str, source: str, synth: set[str]) -> set[str]:
    """State keys written by `target` and the nodes after it, up to the synthesis (not
    back through the router's own node)."""
    edges = model.topo.edges
    seen, frontier = {target}, [target]
    for _ in range(MAX_HOPS):
        frontier = [d for s, d in edges for f in frontier if s == f and
                    d not in seen | synth | {source, END}]
        seen |= set(frontier)
    return {k for n in seen if n in model.nodes for k in model.nodes[n].writes}


def route_reason(route: Route) -> str:
    """Where the spread routes the graph, and whether the verdict reads what is done there."""
    path, line = route.lines[-2]  # the router's return that picks the node
    where = f"A score spread routes the graph to {route.target} ({path}:{line})"
    if route.feeds:
        return f"{where}; the synthesis reads what it writes ({', '.join(route.feeds)})."
    wrote = f" ({', '.join(route.writes)})" if route.writes else ""
    return (f"{where}, but the synthesis reads nothing it writes{wrote}: the "
            "re-evaluation never reaches the verdict.")


def read_only(rules: list[Rule]) -> list[tuple[str, int]]:
    """Decisions that test the score spread but change nothing the verdict carries
    (``dissent = summarize(ops) if spread > 2 else None`` with a helper's text)."""
    return [(r.path, r.line) for r in rules if r.kind == "none" and SPREAD & set(r.reads)]


def unchanged_reason(rules: list[Rule], routes: list[Route]) -> str:
    """Why no spread re-evaluates: it changes the score only when the judges agree, only
    adds dissent text, is tested but changes no score, or is read nowhere."""
    agree = [r for r in rules if r.kind == "consensus"]
    tested = read_only(rules)
    return " ".join([
        *([f"The score spread changes the score only when the judges agree "
           f"({agree[0].path}:{agree[0].line}), which re-evaluates no disagreement."]
          if agree else []),
        "The score spread only adds dissent text." if any(r.kind == "dissent" for r in rules)
        else f"The score spread is tested ({tested[0][0]}:{tested[0][1]}) but changes no "
        "score." if tested else
        "No decision in the synthesis reads the score spread." if routes else
        "No other decision reads the score spread." if agree else
        "No decision reads the score spread.", *map(route_reason, routes[:3])])


def spread_reason(rules: list[Rule], repo: Path | None) -> str:
    """What a score spread does: changes the score itself (quoting where it sets it: taking
    one judge's score is not re-examining anything), or sets a flag the synthesis hands on
    (`spread_flags`: a flag only its own tests read is no decision by itself)."""
    spread = [r for r in rules if r.kind == "spread"]
    scored = [r for r in spread if {"score", "cap"} & set(r.does)]
    first = (scored or spread)[0]
    if not scored:
        return (f"A score spread sets a flag the synthesis hands on as itself (stored in the "
                f"state or a result, for a later step to act on) ({first.path}:{first.line}).")
    where = f"A score spread changes the score ({first.path}:{first.line})"
    if not first.sets:
        return where + "."
    code = line_at(repo, first.path, first.sets[0]).split(": ", 1)[-1]
    more = f" and {len(first.sets) - 1} more line(s)" if len(first.sets) > 1 else ""
    return f"{where}: it sets the score with `{code}` ({first.path}:{first.sets[0]}){more}."


def _answers(graph: CallGraph, key: Key, alts: list[Any], depth: int = 0
             ) -> dict[str, Any]:
    """The ways the helpers a test calls (and theirs, three deep) answer True
    (`rubric_ids.criterion_facts`' ``true_when``; None: any way), by the name called."""
    out: dict[str, Any] = {}
    for name in sorted({str(c[1]) for alt in alts for c in alt if c[0] == "call"}):
        helper = callee(graph, key, name)
        out[name] = graph.functions[helper].get("true_when") if helper is not None else None
        if helper is not None and out[name] and depth < 2:
            out = {**_answers(graph, helper, out[name], depth + 1), **out}
    return out


def criterion_dead(graph: CallGraph, key: Key, rubric: Rubric) -> dict[int, str]:
    """The lines of `key`'s decisions whose tests on the criterion (their own and those that
    enclose them, a helper's True answer included) hold for no criterion of the repository's
    rubric files, with what they look for."""
    out: dict[int, str] = {}
    for test in graph.functions[key].get("criterion_tests") or [] if rubric.criteria else []:
        helpers = _answers(graph, key, test["alts"])
        if not holds(test["alts"], rubric, helpers):
            out[int(test["line"])] = (f"{described(test['alts'], helpers)}, which no criterion of "
                                      f"{', '.join(rubric.files[:3])} has")
    return out


def dead_reason(rules: list[Rule], repo: Path | None) -> str:
    """The rules fact's words on decisions that never fire: how many, and for one whose test
    its function's own flags keep false, that test and the lines that keep it so."""
    dead = [r for r in rules if r.kind == "dead"]
    flagged = next((r for r in dead if r.why), None)
    text = (f"; {len(dead)} decision(s) never fire (they need a value nothing gives, a judge "
            "no opinion names, a criterion no rubric has, or flags their code keeps false)"
            ) if dead else ""
    if keyed := next((r for r in dead if r.absent), None):
        text += (f"; one tests for {keyed.absent} ({keyed.path}:{keyed.line})")
    if flagged is None:
        return text
    code = line_at(repo, flagged.path, flagged.line).split(": ", 1)[-1]
    return (f"{text}: `{code}` ({flagged.path}:{flagged.line}) is false on every path, "
            f"given its function's flags (lines {', '.join(map(str, flagged.why[:-1]))})")
