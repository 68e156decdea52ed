"""From per-file facts to findings: the graph, and the orchestration of the other families."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.blocked import Undefined
from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.constant_scores import constant_score_findings
from automaton_auditor.forensics.code.facts import calls_of
from automaton_auditor.forensics.code.fallback_scores import fallback_finding
from automaton_auditor.forensics.code.helper_parse import helper_parses
from automaton_auditor.forensics.code.judge_prompts import Prompt, judge_prompts, with_text
from automaton_auditor.forensics.code.liveness import Scope, code_runs
from automaton_auditor.forensics.code.own_graph import own_builder_findings
from automaton_auditor.forensics.code.parallel_groups import (
    copy_roles,
    find_group,
    guarded_text,
    matched_by_role,
    meeting_node,
    unknown_copies,
)
from automaton_auditor.forensics.code.prompt_lines import persona_named
from automaton_auditor.forensics.code.routing import (
    conditional_text,
    routing_sources,
    static_sources,
)
from automaton_auditor.forensics.code.rubric_ids import repository_rubric
from automaton_auditor.forensics.code.score_bands import Band, band_finding, score_bands
from automaton_auditor.forensics.code.score_shifts import shift_findings
from automaton_auditor.forensics.code.topology import (
    DETECTIVE,
    END,
    JUDGE,
    START,
    Topology,
    builds_nothing,
    loop_note,
    reach,
    rebuild,
    running,
    to_rebuilt,
)
from automaton_auditor.forensics.code.wiring_gaps import no_graph_text, op_loc, qualify_denials
from automaton_auditor.state import Finding, RebuiltGraph


def _judge_findings(repo: Path, files: list[str], facts: dict[str, JSON], scope: Scope | None,
                    main: Topology | None, undefined: Undefined,
                    prompts: dict[str, Prompt], bands: dict[str, Band]) -> list[Finding]:
    """The facts read off the judges' prompts: personas, coverage, reach, evidence and the
    score bands they fix."""
    from automaton_auditor.forensics.code.judge_coverage import coverage_finding
    from automaton_auditor.forensics.code.judge_evidence import no_evidence_finding
    from automaton_auditor.forensics.code.judge_guards import unreached_finding
    from automaton_auditor.forensics.code.judge_skips import skip_finding
    from automaton_auditor.forensics.code.personas import persona_findings

    texts = with_text(prompts)  # what the model calls of `prompts` are handed, where known
    return [*persona_findings(repo, files, facts, scope, undefined, texts),
            coverage_finding(repo, facts, CallGraph(facts), main, prompts),
            unreached_finding(repo, facts, CallGraph(facts), main, texts),
            no_evidence_finding(repo, facts, CallGraph(facts), main, texts),
            skip_finding(repo, prompts),
            *band_finding(repo, texts, bands)]


def _rebuild_graphs(facts: dict[str, JSON], repo: Path
                    ) -> tuple[Topology | None, list[Topology], RebuiltGraph | None]:
    """The main graph, the others, and the main one as the report is read against (with
    what each node runs); no LangGraph graph is rebuilt from the repository's own graph
    class (`own_graph`)."""
    from automaton_auditor.forensics.code.dead_routes import never_taken
    from automaton_auditor.forensics.code.node_stubs import stub_nodes

    main, others = rebuild(facts)
    if main is not None:  # routes never taken run nothing, fan out to nothing
        main.dead = never_taken(facts, CallGraph(facts), main, repo)
    rebuilt = to_rebuilt(main) if main is not None and main.custom is None else None
    if rebuilt is not None and main is not None:
        rebuilt.routing_sources = routing_sources(main)
        rebuilt.stub_nodes = stub_nodes(facts, repo, main)
    return main, others, rebuilt


def build_findings(repo: Path, files: list[str], facts: dict[str, JSON],
                   stats: dict[str, int]) -> tuple[list[Finding], RebuiltGraph | None]:
    """All code findings, sorted, and the rebuilt main graph."""
    from automaton_auditor.forensics.code.analysers import run_ruff
    from automaton_auditor.forensics.code.answers import answer_findings
    from automaton_auditor.forensics.code.blocked import undefined_reads
    from automaton_auditor.forensics.code.call_errors import unhandled_finding
    from automaton_auditor.forensics.code.health import health_findings
    from automaton_auditor.forensics.code.imports import ImportChecks
    from automaton_auditor.forensics.code.loading import load_findings
    from automaton_auditor.forensics.code.model_calls import model_call_finding
    from automaton_auditor.forensics.code.node_retry import node_policies
    from automaton_auditor.forensics.code.raising import raise_findings
    from automaton_auditor.forensics.code.report_file import markdown_report_finding
    from automaton_auditor.forensics.code.runtime import runtime_findings
    from automaton_auditor.forensics.code.safety import safety_findings
    from automaton_auditor.forensics.code.state_schema import state_findings
    from automaton_auditor.forensics.code.state_use import state_use_findings
    from automaton_auditor.forensics.code.structured_output import (
        judge_scope,
        llm_findings,
        wired_scope,
    )
    from automaton_auditor.forensics.code.synthesis import justice_findings, synthesis_scope
    from automaton_auditor.forensics.code.synthesis_reach import no_graph_finding
    from automaton_auditor.forensics.code.timeout_escape import run_nodes
    from automaton_auditor.forensics.code.unwired_nodes import unwired_findings

    main, others, rebuilt = _rebuild_graphs(facts, repo)
    calls = CallGraph(facts)
    # what the graph runs, when known; on a call graph of its own, because the walk fills
    # the call graph's memos in an order that changes what the safety trace later resolves
    wired = CallGraph(facts)
    scope = wired_scope(facts, wired, main, others)
    judges = judge_scope(facts, wired, main, scope)
    analysis = run_ruff(repo, sorted(facts))
    parsed = [p for p, f in facts.items() if "skipped" not in f and "error" not in f]
    checks = ImportChecks(repo, sorted(facts))  # each module's imports checked once
    undefined = undefined_reads(analysis)
    prompts = judge_prompts(repo, sorted(facts), parsed, scope, undefined, frozenset(
        f"{p}:{c['line']}" for p, c in calls_of(facts, "llm_invoke")))
    bands = score_bands(with_text(prompts))  # scores a persona's prompt forbids outright
    # loop copies named by run-time items: matched by what builds and runs them
    roles = copy_roles(CallGraph(facts), [main, *others]) if main is not None else {}
    findings = [*graph_findings(main, rebuilt, others, roles),
                *state_findings(facts, main),
                *state_use_findings(facts, repo, main, others, checks, scope),
                # its own call graph too: resolving every call site first would change the
                # order the safety trace fills `calls`' memos in
                model_call_finding(facts, CallGraph(facts), repo),
                *safety_findings(facts, repo, calls, run_nodes(CallGraph(facts), main),
                                 undefined,
                                 code_runs(CallGraph(facts), scope, _builders(main, others)),
                                 main),
                *llm_findings(facts, repo, scope, judges, main,
                              helper_parses(facts, CallGraph(facts), repo)),
                *_judge_findings(repo, files, facts, scope, main, undefined, prompts, bands),
                *answer_findings(facts, repo, scope),
                unhandled_finding(facts, repo, CallGraph(facts), scope,
                                  node_policies(facts, repo, main)),
                fallback_finding(repo, sorted(facts), judges),
                *constant_score_findings(facts, repo, judges),
                *shift_findings(facts, repo, judges, prompts),
                *justice_findings(facts, repo, main, calls, scope, repository_rubric(repo, files),
                                  bands),
                markdown_report_finding(repo, files, facts, CallGraph(facts),
                                        synthesis_scope(CallGraph(facts), main, scope)),
                no_graph_finding(repo, facts, calls, main, others, scope),
                *unwired_findings(repo, facts, CallGraph(facts), main, others, scope),
                *health_findings(facts, repo, analysis, calls, main, checks),
                *runtime_findings(facts, calls, main, repo),
                parse_finding(facts, stats)]
    # credited code in modules that cannot be imported never runs (read off the facts above)
    findings += load_findings(repo, facts, analysis, findings, checks)
    # credited code that only a node which always raises runs never decides anything
    findings = raise_findings(repo, CallGraph(facts), main, findings)
    findings.sort(key=lambda f: (f.facet, f.location, f.goal))
    return findings, rebuilt


def _builders(main: Topology | None, others: list[Topology]) -> set[str]:
    """The files that build the audited graphs (none without a main graph)."""
    return {str(op["path"]) for topo in ([main, *others] if main else []) for op in topo.ops}


def parse_finding(facts: dict[str, JSON], stats: dict[str, int]) -> Finding:
    """Which Python files could not be parsed (recorded, never fatal). Cache hits are left
    out: the same commit must give the same findings, warm or cold."""
    errors = {p: f["error"] for p, f in facts.items() if "error" in f}
    first = sorted(errors)[:1]
    total = stats.get("python_total", stats["python_files"])
    left_out = f" {total - stats['python_files']} more were not analysed (the code pass's " \
        "caps)." if total > stats["python_files"] else ""
    return Finding(
        facet="repo.acquire", goal="Every Python file parses", found=not errors,
        pattern="neutral", location=f"{first[0]}:1" if first else ".",
        content="\n".join(f"{p}: {e}" for p, e in sorted(errors.items())[:30]) or None,
        rationale=(f"{stats['python_files']} Python files audited "
                   f"({stats['skipped_prefilter']} hold none of the facts' keywords); "
                   f"{len(errors)} could not be parsed." + left_out),
        confidence=1.0,
        data={"python_files": stats["python_files"],
              "python_total": stats.get("python_total", stats["python_files"]),
              "skipped_prefilter": stats["skipped_prefilter"],
              "errors": dict(sorted(errors.items())[:100])})


def _ops_for(topo: Topology, pairs: list[tuple[str, str]]) -> list[JSON]:
    seen: dict[str, JSON] = {}
    for pair in pairs:
        info = topo.edges.get(pair)
        if info:
            seen.setdefault(op_loc(info["op"]), info["op"])
    return [seen[k] for k in sorted(seen)]


def _quote_ops(ops: list[JSON], limit: int = 25) -> str:
    return "\n".join(f"{op_loc(op)}: {op['snippet']}" for op in ops[:limit])


def _g(facet: str, goal: str, found: bool, pattern: Any, location: str, content: str | None,
       rationale: str, confidence: float = 0.9, **data: Any) -> Finding:
    return Finding(facet=facet, goal=goal, found=found, pattern=pattern, location=location,
                   content=content or None, rationale=rationale, confidence=confidence,
                   data=data)


def graph_findings(main: Topology | None, rebuilt: RebuiltGraph | None,
                   others: list[Topology], roles: dict[str, str] | None = None
                   ) -> list[Finding]:
    """Builder, topology, fan-out/fan-in, parallel detectives and judges, conditional
    edges, and whether the flow is purely linear."""
    if main is not None and main.custom is not None:
        return own_builder_findings(main.builder, main.custom, main.ops,
                                    [t.builder["key"] for t in others][:20])
    if main is None or rebuilt is None:
        return [_g("graph.builder", "A LangGraph StateGraph is built in code", False,
                   "success", ".", None, "No StateGraph instantiation or builder call was "
                   "found in any Python file (mentions in strings or comments do not count).")]
    loc = main.builder.get("key") or (op_loc(main.ops[0]) if main.ops else ".")
    all_ops = sorted(main.ops, key=lambda o: (o["path"], o["line"]))
    empty = builds_nothing(main)
    out = [
        _g("graph.builder", "A LangGraph StateGraph is built in code", not empty, "success",
           loc, main.builder.get("snippet"), no_graph_text(main) if empty else
           f"StateGraph builder with {len(rebuilt.nodes)} nodes and {len(rebuilt.edges)} "
           "edges.", 1.0, state=main.builder.get("state"),
           other_builders=[t.builder["key"] for t in others][:20]),
        _g("graph.topology", "Rebuilt graph topology", True, "neutral", loc,
           _quote_ops(all_ops, 40), _topology_text(rebuilt) + loop_note(main), 0.9,
           nodes=rebuilt.nodes, edges=[list(e) for e in rebuilt.edges],
           conditional={s: main.conditional[s]["targets"] for s in sorted(main.conditional)}),
    ]
    out += _fan_findings(main, rebuilt)
    out += _parallel_findings(main, rebuilt, others, roles or {})
    return qualify_denials(main, out)


def _topology_text(g: RebuiltGraph) -> str:
    edges = ", ".join(f"{a}->{b}" for a, b in g.edges[:40])
    return f"Nodes: {', '.join(g.nodes) or '(none)'}. Edges: {edges or '(none)'}."


def _fan_findings(main: Topology, g: RebuiltGraph) -> list[Finding]:
    out_pairs = [(s, t) for s, ts in g.fan_out.items() for t in ts]
    in_pairs = [(s, d) for d, ss in g.fan_in.items() for s in ss]
    out_ops, in_ops = _ops_for(main, out_pairs), _ops_for(main, in_pairs)
    cond_ops = sorted((c["op"] for c in main.conditional.values()), key=op_loc)
    fan_out_text = "; ".join(f"{s} -> [{', '.join(t)}]" for s, t in g.fan_out.items())
    live = running(main)
    # edges into a join from nodes that never run: named, not counted as branches
    dead = {d: sorted({s for (s, t), e in main.edges.items() if t == d and e["kind"] ==
                       "static" and live is not None and s not in live}) for d in g.fan_in}
    # wired from START, but only through routes never taken (`dead_routes`)
    wired = reach(list(main.edges), START) if main.dead else set()
    fan_in_text = "; ".join(f"[{', '.join(s)}] -> {d}" + (
        f" ({', '.join(dead[d])} also {'has' if len(dead[d]) == 1 else 'have'} an edge to "
        f"it but never run{'s' if len(dead[d]) == 1 else ''}: no path from START"
        + (" that is ever taken" if set(dead[d]) & wired else "") + ")"
        if dead[d] else "") for d, s in g.fan_in.items())
    cond_text = "; ".join(f"{s} -> {main.conditional[s]['targets']}" for s in
                          sorted(main.conditional))
    # A router beside static edges from the same node adds branches; it stops nothing;
    # one whose every outcome (``{"success": "x", "failed": "x"}``), or every route it ever
    # takes, leads to one node chooses nothing (`routing`)
    beside = sorted(set(main.conditional) & static_sources(main))
    routing = routing_sources(main)
    if beside and not routing:
        cond_ops += _ops_for(main, [(s, d) for (s, d), i in main.edges.items()
                                    if s in beside and i["kind"] == "static"])
    return [
        _g("graph.fan_out", "Fan-out: one node branches to parallel nodes", bool(g.fan_out),
           "success", op_loc(out_ops[0]) if out_ops else main.builder.get("key", "."),
           _quote_ops(out_ops), f"Fan-out points: {fan_out_text}." if g.fan_out else
           "No node has two or more parallel successors (static edges or Send).",
           fan_out=g.fan_out),
        _g("graph.fan_in", "Fan-in: a node joins parallel branches", bool(g.fan_in),
           "success", op_loc(in_ops[0]) if in_ops else main.builder.get("key", "."),
           _quote_ops(in_ops), f"Fan-in points: {fan_in_text}." if g.fan_in else
           "No node waits on two or more parallel predecessors.", fan_in=g.fan_in),
        _g("graph.conditional_edges", "Conditional edges route the flow",
           bool(routing), "success",
           op_loc(cond_ops[0]) if cond_ops else main.builder.get("key", "."),
           _quote_ops(cond_ops), conditional_text(main, cond_text, beside, bool(routing)),
           error_routes=sorted({t for c in main.conditional.values() for t in c["targets"]
                                if any(w in t.lower() for w in ("error", "fail", "abort"))}),
           # sources whose router chooses a branch (not only a list run all at once)
           routing_sources=sorted(s for s, c in main.conditional.items() if c.get("chooses"))),
        _g("graph.linear", "Graph is purely linear", g.linear, "failure",
           main.builder.get("key", "."), _quote_ops(sorted(main.ops, key=op_loc), 15),
           "No fan-out and no conditional edge: every node runs one after another."
           if g.linear else no_graph_text(main) if builds_nothing(main) else
           "The graph branches (fan-out or conditional edges).", 0.85),
    ]


def _parallel_findings(main: Topology, g: RebuiltGraph, others: list[Topology],
                       roles: dict[str, str]) -> list[Finding]:
    out = []
    for facet, who, pattern in (("graph.parallel_detectives", "Detectives", DETECTIVE),
                                ("graph.parallel_judges", "Judges", JUDGE)):
        hit = find_group(main, g, others, pattern, roles)
        if hit is None:
            out.append(_no_group(main, facet, who, unknown_copies(g, pattern, roles)))
            continue
        topo, graph, (source, members) = hit
        ops = _ops_for(topo, [(source, t) for t in members])
        joins = sorted(d for d, s in graph.fan_in.items() if set(members) & set(s))
        # members that are gates (each routes to a detective or a skip node): their join is
        # the node every route out of them passes through
        meet = None if joins else meeting_node(topo, members)
        joins = [meet] if meet else joins
        where = "" if topo is main else f" (in the subgraph built at {topo.builder['key']})"
        where = (" (every route out of them passes through it)" if meet else "") + where
        # a persona judge that fans out to the others has judged before they start
        first = pattern is JUDGE and persona_named(source) is not None
        # branches of the main graph that each run straight to END are never gathered (a
        # subgraph's END hands back to its parent, which waits for all of them)
        ended = topo is main and not joins and not any(
            m in topo.conditional for m in members) and all(
            d == END for (s, d) in topo.edges if s in members)
        # judges that do nothing (`node_stubs`) judge nothing in parallel: their wiring
        # is no evidence of parallel judging, the stubs are named instead
        stubs = [m for m in members if m in g.stub_nodes] if pattern is JUDGE else []
        idle = bool(stubs) and len(members) - len(stubs) < 2
        out.append(_g(
            facet, f"{who} run in parallel and are joined", not first and not ended,
            "neutral" if idle else "success",
            op_loc(ops[0]) if ops else topo.builder.get("key", "."),
            "\n".join([_quote_ops(ops), *(q for m in stubs for q in g.stub_nodes[m])]),
            f"{source} fans out to {', '.join(members)}; joined at "
            f"{', '.join(joins) or '(no static join)'}{where}."
            + (f" {source} is itself a judge and runs before the others: the judges do not "
               "all run in parallel." if first else "")
            + (" Each branch runs straight to END: nothing gathers their results."
               if ended else "") + guarded_text(topo, members)
            + matched_by_role(members, pattern, roles)
            + (f" Stubs: {', '.join(stubs)} only return their input, nothing or a "
               "placeholder, so no judging runs in parallel." if idle else ""),
            0.8, source=source, members=members, joins=joins, stubs=stubs,
            subgraph=None if topo is main else topo.builder["key"]))
    return out


def _no_group(main: Topology, facet: str, who: str,
              unsure: tuple[str, list[str]] | None) -> Finding:
    """No fan-out point reaches two members: a plain no, unless it fans out to loop copies
    nothing tells the role of (they may be the members)."""
    goal, loc = f"{who} run in parallel and are joined", main.builder.get("key", ".")
    if unsure is None:
        return _g(facet, goal, False, "success", loc, None, f"No fan-out point reaches two "
                  f"or more {who.lower()} (matched by node name).", 0.8, source=None,
                  members=[], joins=[])
    source, copies = unsure
    ops = _ops_for(main, [(source, c) for c in copies])
    why = (f"{source} fans out to copies of a loop over run-time data ({', '.join(copies)}) "
           f"named only by the run-time item; neither that nor what builds and runs them "
           f"says whether they are {who.lower()}")
    return _g(facet, goal, False, "success", op_loc(ops[0]) if ops else loc, _quote_ops(ops),
              f"Not established: {why}.", 0.5, source=source, members=[], joins=[],
              limitation=why)


__all__ = ["END", "START", "build_findings"]
