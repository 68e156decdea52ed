"""The audit report we write: pictures, links, shared facts, dissent, top risks, remediation
and warnings, on constructed reports."""

from __future__ import annotations

from automaton_auditor.output.locations import location_url, markdown_location, parse_location
from automaton_auditor.output.markdown import render_markdown
from automaton_auditor.output.mermaid import code_flow, legend, mermaid_flowchart, score_bar
from automaton_auditor.output.risks import limitations, open_facts, top_risks
from automaton_auditor.output.summary import NOTHING_TO_DO, executive_summary, remediation_plan
from automaton_auditor.state import DiagramFacts
from tests.conftest import make_evidence
from tests.unit.output_helpers import GITHUB, SHA, criterion, opinion, report, unsafe_evidence

TOPOLOGY = {
    "nodes": ["aggregator", "judge_a", "judge_b", "chief", "orphan"],
    "edges": [["__start__", "aggregator"], ["aggregator", "judge_a"], ["aggregator", "judge_b"],
              ["aggregator", "chief"], ["judge_a", "chief"], ["judge_b", "chief"],
              ["chief", "__end__"]],
    "conditional": {"aggregator": ["chief"]},
}


def _topology(**data: object) -> list:
    graph = make_evidence("Rebuilt graph topology", facet="graph.topology", pattern="neutral",
                          dimension="graph_orchestration", location="src/graph.py:40",
                          data=TOPOLOGY)
    marks = make_evidence("Graph defects", facet="graph.defects", pattern="failure",
                          dimension="graph_orchestration", location="src/graph.py:41", data=data)
    return [graph, marks]


# --- pictures ---------------------------------------------------------------------------


def test_code_graph_is_a_mermaid_flowchart_with_readable_ids() -> None:
    flow = code_flow(_topology())
    assert flow is not None
    text = "\n".join(mermaid_flowchart(flow))
    assert text.startswith("```mermaid\nflowchart TD\n    START([START])")
    assert "    aggregator --> judge_a" in text
    assert "    aggregator -.-> chief" in text  # conditional: dashed
    assert "    chief --> END" in text
    assert "classDef" not in text and "linkStyle" not in text  # nothing to mark


def test_marks_unreachable_nodes_dead_routes_and_joins_that_fire_twice() -> None:
    flow = code_flow(_topology(unreachable_nodes=["orphan"], dead_routes=[["aggregator", "chief"]],
                               double_joins={"chief": 2}))
    assert flow is not None
    lines = mermaid_flowchart(flow)
    text = "\n".join(lines)
    assert '    orphan["orphan (never runs)"]' in lines
    assert "    class orphan unreachable" in lines and "classDef unreachable" in text
    assert '    chief["chief ×2"]' in lines and "    class chief twice" in lines
    dead = lines.index("    aggregator -. never taken .-> chief")
    edge_index = [line for line in lines if "--" in line or "-." in line].index(lines[dead])
    assert f"    linkStyle {edge_index} stroke:#b00020,stroke-dasharray:5 3" in lines
    assert "never taken: aggregator → chief" in legend(flow)
    assert "never runs: orphan" in legend(flow) and "chief ×2" in legend(flow)


def test_a_mark_from_a_fact_that_was_not_found_is_not_drawn() -> None:
    items = _topology(unreachable_nodes=["orphan"])
    items[1] = items[1].model_copy(update={"found": False})
    flow = code_flow(items)
    assert flow is not None and not flow.unreachable


def test_node_names_that_are_mermaid_keywords_or_need_quoting_are_safe() -> None:
    flow = code_flow([make_evidence("t", facet="graph.topology", pattern="neutral", data={
        "nodes": ["graph", "class", 'say "hi"', "has evidence?"],
        "edges": [["graph", "class"], ["class", 'say "hi"'], ['say "hi"', "has evidence?"]],
        "conditional": {}})])
    assert flow is not None
    text = "\n".join(mermaid_flowchart(flow))
    assert "    n_graph --> n_class" in text
    assert 'say_hi["say #quot;hi#quot;"]' in text
    assert 'has_evidence{"has evidence?"}' in text


def test_score_bar_reads_as_plain_text() -> None:
    assert score_bar(4) == "████░" and score_bar(1) == "█░░░░" and score_bar(7) == "█████"


def test_markdown_draws_the_code_graph_beside_the_report_diagram() -> None:
    evidence = _topology()
    diagram = DiagramFacts(page=5, kind="vector", edges=[("START", "aggregator"),
                                                         ("aggregator", "chief")])
    text = render_markdown(report([criterion("graph_orchestration", 4, evidence)], evidence,
                                  report_diagram=diagram))
    graph_at = text.index("### Code graph (rebuilt from [`src/graph.py:40`]("
                          f"{GITHUB}/blob/{SHA}/src/graph.py#L40))")
    diagram_at = text.index("### Report diagram (p.5, vector)")
    assert graph_at < diagram_at < text.index("## Criterion Breakdown")
    assert text.count("```mermaid") == 2


# --- links and anchors -----------------------------------------------------------------


def test_locations_parse_and_link_to_github_blobs() -> None:
    loc = parse_location("src/graph.py:56")
    assert (loc.kind, loc.path, loc.line) == ("file", "src/graph.py", 56)
    assert parse_location("report p.7").page == 7
    assert parse_location("commit d0f7ed64388e").commit == "d0f7ed64388e"
    assert parse_location(".").kind == parse_location("git log").kind == "repository"
    assert location_url(loc, GITHUB + ".git", SHA) == f"{GITHUB}/blob/{SHA}/src/graph.py#L56"
    assert location_url(parse_location("commit abcdef1"), GITHUB, SHA) == (
        f"{GITHUB}/commit/abcdef1")
    # Local targets and other hosts keep the relative path as text.
    assert markdown_location("src/graph.py:56", "/tmp/repo", SHA) == "`src/graph.py:56`"
    assert markdown_location("src/a.py:1", "https://gitlab.com/a/b", SHA) == "`src/a.py:1`"


def test_evidence_ids_are_anchors_that_opinions_link_to() -> None:
    fact = make_evidence("A typed state", facet="state.agent_state", dimension="state")
    crit = criterion("state", 4, [fact])
    text = render_markdown(report([crit], [fact]))
    assert f'<a id="{fact.evidence_id}"></a>' in text
    assert f"[{fact.evidence_id}](#{fact.evidence_id})" in text


def test_shared_facts_are_stated_once() -> None:
    dims = ["a", "b", "c"]
    shared = [make_evidence("Repository can be acquired", facet="repo.acquire",
                            pattern="neutral", dimension=d, location="commit abcdef123456")
              for d in dims]
    own = [make_evidence(f"fact {d}", facet="graph.x", dimension=d) for d in dims]
    text = render_markdown(report([criterion(d, 4, shared + own) for d in dims], shared + own))
    assert text.count("**Repository can be acquired**") == 1
    assert "**Shared facts**" in text
    for item in own:
        assert f'<a id="{item.evidence_id}"></a>' in text


def test_dissent_is_summarised_not_repeated() -> None:
    fact = make_evidence("fact", dimension="graph")
    opinions = [opinion("Prosecutor", 1, "graph", argument="PROSECUTOR-ARGUMENT"),
                opinion("Defense", 5, "graph", argument="DEFENSE-ARGUMENT"),
                opinion("TechLead", 3, "graph", argument="TECHLEAD-ARGUMENT")]
    crit = criterion("graph", 3, [fact], opinions,
                     dissent_summary="Prosecutor (1/5): PROSECUTOR-ARGUMENT | Defense (5/5): "
                                     "DEFENSE-ARGUMENT")
    text = render_markdown(report([crit], [fact]))
    assert text.count("PROSECUTOR-ARGUMENT") == 1  # in the opinions table only
    assert ("**Dissent.** The Defense (5/5) and the Prosecutor (1/5) are 4 points apart; "
            "the Chief Justice ruled 3/5 by `weighted_mean`.") in text


# --- top risks, remediation, warnings --------------------------------------------------


def test_shell_injection_is_the_top_risk_not_the_missing_sandbox() -> None:
    evidence = unsafe_evidence()
    rep = report([criterion("safe_tool_engineering", 3, evidence)], evidence)
    risks = top_risks(rep)
    # the missing sandbox is on the os.system line: one place, one risk, the flaw first
    assert [r.facet for r in risks] == ["safety.os_system", "safety.eval_exec"]
    summary = executive_summary(rep, "Overall.")
    # the risk names what is as serious as the shell injection; the rest is remediation
    assert summary.splitlines()[4].startswith(
        "1. **Security** — Found: os.system / os.popen call at "
        f"[`src/tools/clone.py:12`]({GITHUB}/blob/{SHA}/src/tools/clone.py#L12)")
    assert summary.splitlines()[5].startswith("2. **Security** — Found: eval / exec call at")
    assert "**Found: os.system / os.popen call (also Missing: Clone runs inside a temporary " \
           "directory)**" in remediation_plan(rep)


def test_facts_at_one_place_are_one_risk_and_one_remediation_item() -> None:
    bandit = make_evidence("A shell runs a command built from data (bandit B602/B605)",
                           facet="health.bandit.shell", pattern="failure", security=True,
                           dimension="safe_tool_engineering", location="src/tools/clone.py:12",
                           confidence=0.85)
    unseen = [make_evidence(f"A diagram shows part {n}", facet=f"vision.flow.p{n}",
                            found=False, dimension="diagrams", location="report",
                            confidence=0.3).model_copy(
                                update={"rationale": "Not shown: no diagram at all."})
              for n in range(4)]
    evidence = [*unsafe_evidence(), bandit, *unseen]
    rep = report([criterion("safe_tool_engineering", 2, evidence),
                  criterion("diagrams", 1, evidence)], evidence)
    assert [r.facet for r in top_risks(rep, limit=5)] == [
        "safety.os_system", "safety.eval_exec", "vision.flow.p0"]
    plan = remediation_plan(rep)
    assert plan.count("\n- ") == 3  # os.system line, eval line, the report's diagrams
    assert plan.count("Not shown: no diagram at all.") == 1
    assert ("**Missing: A diagram shows part 0 (also Missing: A diagram shows part 1; "
            "Missing: A diagram shows part 2; Missing: A diagram shows part 3)**") in plan
    assert "(also Found: A shell runs a command built from data" in plan
    assert "call (also Found: A shell runs a command built from data (bandit B602/B605)) at" \
           in executive_summary(rep, "Overall.")


def test_linear_graph_is_the_top_risk_of_a_linear_repository() -> None:
    evidence = [
        make_evidence("Graph is purely linear", facet="graph.linear", pattern="failure",
                      dimension="graph", confidence=0.85, location="src/graph.py:10"),
        make_evidence("Conditional edges route the flow", facet="graph.conditional_edges",
                      found=False, dimension="graph", confidence=0.9, location="src/graph.py:10"),
        make_evidence("The report explains Metacognition", facet="doc.concepts.metacognition",
                      found=False, dimension="docs", confidence=0.9, location="report p.2"),
    ]
    rep = report([criterion("graph", 2, evidence), criterion("docs", 3, evidence)], evidence)
    assert top_risks(rep)[0].goal == "Graph is purely linear"


def test_vacuous_checks_and_tool_limitations_are_not_failures() -> None:
    limited = [make_evidence(f"A diagram shows part {n}", facet=f"vision.flow.p{n}", found=False,
                             dimension="diagrams", location="report", confidence=0.3,
                             data={"limitation": "2 diagram image(s) could not be read"})
               for n in range(4)]
    evidence = unsafe_evidence() + limited
    rep = report([criterion("safe_tool_engineering", 2, evidence),
                  criterion("diagrams", 3, evidence)], evidence)
    facets = {f.facet for f in open_facts(rep)}
    assert "safety.timeouts" not in facets  # "0 of 0 calls": nothing to check
    assert not any(f.startswith("vision.") for f in facets)
    assert limitations(rep) == ["2 diagram image(s) could not be read (4 fact(s) not "
                                "established; bears on Diagrams)"]
    text = render_markdown(rep.model_copy(update={"remediation_plan": remediation_plan(rep)}))
    assert text.count("could not be read") == 1
    warnings = text[text.index("## Errors and Warnings"):]
    assert "auditor limitation: 2 diagram image(s) could not be read" in warnings


def test_a_fact_the_auditor_could_not_check_is_not_established_not_not_found() -> None:
    # Miked: "A failed judge call still hands out a score its code writes (not found ...)"
    # while the judges' code was never followed read as the absence of a fallback score
    unknown = make_evidence("A failed judge call still hands out a score its code writes",
                            facet="llm.fallback_score", found=False, pattern="neutral",
                            dimension="graph", location=".", data={"established": False})
    absent = make_evidence("Graph is purely linear", facet="graph.linear", found=False,
                           pattern="failure", dimension="graph", location="src/graph.py:10")
    rep = report([criterion("graph", 3, [unknown, absent])], [unknown, absent])
    text = render_markdown(rep)
    assert "score its code writes** (not established," in text
    assert "purely linear** (not found," in text


def test_no_remediation_under_a_perfect_criterion_and_each_fact_once() -> None:
    minor = make_evidence("Clone handles authentication failures", facet="safety.auth_errors",
                          found=False, dimension="safe_tool_engineering", confidence=0.5,
                          location="src/tools/clone.py:20")
    shared_flaw = [make_evidence("Graph is purely linear", facet="graph.linear",
                                 pattern="failure", dimension=d, location="src/graph.py:10")
                   for d in ("graph", "state")]
    evidence = [minor, *shared_flaw]
    rep = report([criterion("safe_tool_engineering", 5, evidence),
                  criterion("graph", 2, evidence), criterion("state", 3, evidence)], evidence)
    plan = remediation_plan(rep, {"graph": "Fan out.", "safe_tool_engineering": "Sandbox."})
    assert "authentication" not in plan and "Sandbox." not in plan
    assert plan.count("**Found: Graph is purely linear**") == 1
    assert "*Graph 2/5; State 3/5*" in plan
    assert plan.startswith("### `src/graph.py`\n\n- [`L10`](")
    assert "- **Graph (2/5)**: Fan out." in plan
    perfect = report([criterion("safe_tool_engineering", 5, [minor])], [minor])
    assert remediation_plan(perfect) == NOTHING_TO_DO


def test_input_warnings_are_pointed_at_from_the_summary_and_stated_once() -> None:
    shallow = ("repo: warning: the history is shallow (1 commit(s) visible), so git forensics "
               "treat it as a lower bound")
    dirty = "input: warning: the local target has uncommitted changes (1 path(s))"
    evidence = unsafe_evidence()
    rep = report([criterion("safe_tool_engineering", 2, evidence)], evidence,
                 errors=[shallow, dirty])
    text = render_markdown(rep)
    summary = text[text.index("## Executive Summary"):text.index("## Criterion Breakdown")]
    assert "⚠ 2 warning(s) bear on this run" in summary
    assert "[Errors and Warnings](#errors-and-warnings)" in summary
    assert text.count("the history is shallow") == 1 and text.count("uncommitted") == 1
    tail = text[text.index("## Errors and Warnings"):]
    assert f"- {shallow}" in tail and f"- {dirty}" in tail
    assert "⚠" not in render_markdown(report([criterion("safe_tool_engineering", 2, evidence)],
                                             evidence))
