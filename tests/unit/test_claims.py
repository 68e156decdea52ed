"""Cited-path extraction, the verified/hallucinated split and feature-claim checks."""

from __future__ import annotations

from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.forensics.feature_claims import check_feature
from automaton_auditor.forensics.pdf.citations import extract_cited_paths, normalise_path
from automaton_auditor.forensics.pdf.claims import extract_feature_claims
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.reader import report_facts
from automaton_auditor.state import FeatureClaim, Finding, RebuiltGraph, ReportFacts
from tests.unit.report_helpers import ingested

REPO_FILES = ["src/graph.py", "src/state.py", "src/nodes/judges.py", "src/nodes/justice.py",
              "rubric/week2_rubric.json", "README.md", "pkg/src/tools/pdf_tools.py"]


def test_normalise_path_strips_decoration() -> None:
    assert normalise_path("./src/graph.py:45-67") == "src/graph.py"
    assert normalise_path("`src/state.py`,") == "src/state.py"
    assert normalise_path("src\\nodes\\judges.py#L10-L20") == "src/nodes/judges.py"
    assert normalise_path("(src/graph.py).") == "src/graph.py"


def test_extraction_from_code_spans_prose_tables_and_urls() -> None:
    passages = [
        (1, "The graph lives in `./src/graph.py:12-40`, see also src/state.py."),
        (2, "| node | file |\n| judges | src/nodes/judges.py |"),
        (3, "Rules: https://github.com/acme/courtroom/blob/main/src/nodes/justice.py#L5 and "
            "https://github.com/other/repo/blob/main/src/ghost.py (a peer's file)."),
        (4, "Scores are 3.9/5.0 and I/O is async; the judges.py module and Node.js."),
        (5, "Again src/graph.py, and config/personas.yaml holds the personas."),
    ]
    cited = extract_cited_paths(passages)
    full = {c.path: c for c in cited if not c.bare_name}
    assert sorted(full) == ["config/personas.yaml", "src/ghost.py", "src/graph.py",
                            "src/nodes/judges.py", "src/nodes/justice.py", "src/state.py"]
    assert full["src/graph.py"].page == 1  # first citation kept
    assert full["src/nodes/justice.py"].source_repo == "acme/courtroom"
    assert full["src/ghost.py"].source_repo == "other/repo"
    assert "personas" in full["config/personas.yaml"].context
    bare = sorted(c.path for c in cited if c.bare_name)
    assert bare == ["Node.js", "judges.py"]


def _facts(*passages: tuple[int, str]) -> ReportFacts:
    return ReportFacts(readable=True, page_count=5, cited_paths=extract_cited_paths(passages),
                       claims=extract_feature_claims(passages))


def test_cross_check_splits_verified_and_hallucinated_exactly() -> None:
    facts = _facts((1, "See src/graph.py, src/nodes/judges.py and src/tools/pdf_tools.py; "
                       "courtroom/src/state.py and other/config/roles.yaml."),
                   (2, "Personas in config/personas.yaml; rubric in rubric/week2_rubric.json."),
                   (3, "https://github.com/acme/courtroom/blob/main/src/state.py and "
                       "https://github.com/other/repo/blob/main/src/ghost.py"),
                   (4, "The bare names graph.py and missing.py."))
    findings, verified, hallucinated, planned = cross_check(
        facts, REPO_FILES, None, repo_url="https://github.com/acme/courtroom")
    assert planned == []
    assert verified == ["courtroom/src/state.py", "rubric/week2_rubric.json", "src/graph.py",
                        "src/nodes/judges.py", "src/state.py", "src/tools/pdf_tools.py"]
    assert hallucinated == ["config/personas.yaml", "other/config/roles.yaml"]
    summary = findings[0]
    assert summary.facet == "claims.paths" and summary.found and summary.pattern == "success"
    assert summary.data["suffix_matches"] == ["src/tools/pdf_tools.py"]
    assert summary.data["trimmed_matches"] == ["courtroom/src/state.py"]
    bad = [f for f in findings if f.pattern == "failure"]
    assert [f.location for f in bad] == ["report p.2", "report p.1"]
    bare = next(f for f in findings if "Bare file names" in f.goal)
    assert bare.data == {"bare_matched": ["graph.py"], "bare_unmatched": ["missing.py"]}
    assert bare.confidence < summary.confidence


def test_other_repository_urls_are_checked_only_without_a_repo_url() -> None:
    facts = _facts((1, "https://github.com/other/repo/blob/main/src/ghost.py"))
    assert cross_check(facts, REPO_FILES, None, repo_url="https://github.com/acme/courtroom"
                       )[2] == []
    assert cross_check(facts, REPO_FILES, None)[2] == ["src/ghost.py"]


def test_no_citations_and_unreadable_report() -> None:
    claims = (1, "The judges run in parallel. The detectives run in parallel. A fan-in node "
                 "gathers the branches.")
    findings, verified, hallucinated, _planned = cross_check(_facts(claims), REPO_FILES,
                                                             PARALLEL)
    assert (verified, hallucinated) == ([], [])
    # nothing to cross-check (short of the success pattern) ...
    assert not findings[0].found and findings[0].pattern == "success"
    # ... but with claims enough to be refuted and none refuted, nothing invented either:
    # the rubric's "zero hallucinated paths", weakly
    nothing = [f for f in findings if f.data.get("cited") == 0]
    assert len(nothing) == 1 and nothing[0].found and nothing[0].pattern == "success"
    assert nothing[0].confidence < findings[0].confidence
    # a claim the code contradicts is invention: no such credit then
    refuted = cross_check(_facts((1, "The judges run in parallel.")), REPO_FILES, LINEAR)[0]
    assert any(f.pattern == "failure" for f in refuted)
    assert not any(f.found and f.facet == "claims.paths" for f in refuted)
    assert cross_check(ReportFacts(readable=False), REPO_FILES, None) == ([], [], [], [])


def test_feature_claims_are_extracted_affirmative_only() -> None:
    claims = extract_feature_claims([
        (2, "The three judges run in parallel on the same evidence. Judges do not run in "
            "parallel in the interim version."),
        (3, "The aggregator waits for all detectives (fan-in)."),
    ])
    assert [(c.feature, c.page) for c in claims] == [("parallel_judges", 2), ("fan_in", 3)]
    # a sentence that says conditional edges are absent claims no routing, however many
    # words lie between the subject and "absent"
    assert extract_feature_claims([(8, "However, conditional edges for error states "
                                       "(fallback or retry branches) are absent.")]) == []
    assert [c.feature for c in extract_feature_claims([(8, "Conditional edges route failed "
                                                          "clones to an error handler.")])] \
        == ["conditional_routing"]


def test_a_plan_item_or_remaining_work_claims_no_feature() -> None:
    assert extract_feature_claims([
        (3, "- High: Add conditional edges for evidence-missing/node-failure in src/graph.py."),
        (8, "The remaining work for the final submission includes VisionInspector "
            "integration, conditional error edges and LangSmith tracing."),
        (9, "Fix: wire conditional edges that route failed clones to an error handler.")]) == []
    # an affirmative sentence that starts with a verb of its own still claims
    assert [c.feature for c in extract_feature_claims([
        (4, "Adding conditional edges, the graph routes failed clones to an error handler.")])] \
        == ["conditional_routing"]


LINEAR = RebuiltGraph(nodes=["start", "prosecutor", "defense", "tech_lead", "chief_justice"],
                      edges=[("start", "prosecutor"), ("prosecutor", "defense"),
                             ("defense", "tech_lead"), ("tech_lead", "chief_justice")],
                      linear=True)
PARALLEL = RebuiltGraph(nodes=["aggregator", "prosecutor", "defense", "tech_lead", "chief"],
                        edges=[("aggregator", "prosecutor"), ("aggregator", "defense"),
                               ("aggregator", "tech_lead")],
                        fan_out={"aggregator": ["defense", "prosecutor", "tech_lead"]},
                        fan_in={"chief": ["defense", "prosecutor", "tech_lead"]},
                        conditional_sources=["chief"], linear=False)


def test_parallel_judges_claim_against_a_linear_graph_is_a_contradiction() -> None:
    facts = ReportFacts(readable=True, claims=[FeatureClaim(
        feature="parallel_judges", sentence="The judges run in parallel.", page=7)])
    findings = cross_check(facts, REPO_FILES, LINEAR).findings
    feature = [f for f in findings if f.facet == "claims.features"]
    assert len(feature) == 1
    assert feature[0].pattern == "failure" and feature[0].found
    assert feature[0].location == "report p.7"
    assert "prosecutor -> defense" in feature[0].rationale
    confirmed = cross_check(facts, REPO_FILES, PARALLEL).findings
    assert [f.pattern for f in confirmed if f.facet == "claims.features"] == ["success"]


def test_a_fan_in_said_of_the_evidence_is_read_on_the_detectives_side() -> None:
    """amare1990: "Fan-In Barrier: ... complete evidence collection before judicial
    reasoning" was confirmed by the Chief Justice gathering the three judges; the detectives
    run inside one node. A join the sentence's side has, or a sentence of both sides,
    confirms as before."""
    evidence = "Fan-In Barrier: the aggregator ensures complete evidence collection first."
    verdict, why = check_feature("fan_in", PARALLEL, evidence)
    assert verdict == "unverified" and "detectives' fan-in" in why, why
    assert check_feature("fan_in", PARALLEL, "The opinions are gathered by the chief.")[0] \
        == "confirmed"
    both = "The evidence is gathered before the judges' opinions are."
    assert check_feature("fan_in", PARALLEL, both)[0] == "confirmed"
    detectives = PARALLEL.model_copy(update={"fan_in": {
        **PARALLEL.fan_in, "aggregator": ["doc_analyst", "repo_investigator"]}})
    assert check_feature("fan_in", detectives, evidence)[0] == "confirmed"


def test_check_feature_verdicts() -> None:
    assert check_feature("fan_in", PARALLEL)[0] == "confirmed"
    assert check_feature("fan_in", LINEAR)[0] == "contradicted"
    assert check_feature("conditional_routing", LINEAR)[0] == "contradicted"
    assert check_feature("conditional_routing", PARALLEL)[0] == "confirmed"
    assert check_feature("parallel_detectives", PARALLEL)[0] == "unverified"
    assert check_feature("parallel_judges", None)[0] == "unverified"


def test_conditional_routing_is_confirmed_only_by_a_router_that_routes() -> None:
    """nahdes: each detective's router maps "ok" and "error" to the aggregator, so the
    conditional edges change nothing: the report's routing claim earns no confirmation
    (nor a contradiction: the edges are there). A router that can send the flow elsewhere
    confirms it."""
    graph = PARALLEL.model_copy(update={"conditional_sources": ["repo"],
                                        "routing_sources": []})
    verdict, why = check_feature("conditional_routing", graph)
    assert verdict == "unverified" and "none changes where the flow goes" in why
    graph.routing_sources = ["repo"]
    assert check_feature("conditional_routing", graph)[0] == "confirmed"


def test_parallel_judges_without_judge_names_uses_the_second_parallel_layer() -> None:
    graph = RebuiltGraph(
        nodes=["context_builder", "repo", "docs", "aggregator", "evaluate_criterion",
               "evaluate_batch", "chief"],
        fan_out={"context_builder": ["docs", "repo"],
                 "aggregator": ["evaluate_batch", "evaluate_criterion"]},
        fan_in={"aggregator": ["docs", "repo"], "chief": ["evaluate_batch",
                                                          "evaluate_criterion"]},
        linear=False)
    verdict, why = check_feature("parallel_judges", graph)
    assert verdict == "confirmed" and "'aggregator' fans out again" in why
    graph.fan_out.pop("aggregator")
    assert check_feature("parallel_judges", graph)[0] == "unverified"


def test_a_feature_described_in_a_future_work_section_claims_nothing() -> None:
    plan = ("7 Remediation Plan",)
    blocks = [Block("heading", "3 Architecture", 1, level=1),
              Block("paragraph", "The judges run in parallel on the same evidence.", 1,
                    section=("3 Architecture",)),
              Block("heading", "7 Remediation Plan", 2, level=1),
              Block("list", "Fix: add a should_retry conditional edge to back off and retry.",
                    2, section=plan)]
    report = ingested(blocks, 2)
    assert [c.feature for c in report_facts(report).claims] == ["parallel_judges"]


def test_a_table_of_content_entry_claims_no_feature() -> None:
    """A contents page headed in the singular ("Table of content") lists sections, it says
    nothing of the code: "4 Failure Mode & Conditional Routing Strategy | 14" is no claim."""
    toc, body = ("Table of content",), ("4 Failure Mode & Conditional Routing Strategy",)
    blocks = [Block("heading", "Table of content", 2, level=1),
              Block("paragraph", "4 Failure Mode & Conditional Routing Strategy | 14", 2,
                    section=toc),
              Block("heading", body[0], 14, level=1),
              Block("paragraph", "The system defines conditional routing logic within the "
                    "StateGraph.", 14, section=body)]
    report = ingested(blocks, 14)
    routed = [c for c in report_facts(report).claims if c.feature == "conditional_routing"]
    assert [c.page for c in routed] == [14]


def test_what_holds_of_a_kind_of_system_claims_no_feature() -> None:
    """ "In a fan-out/fan-in graph architecture, multiple nodes execute concurrently" says why
    reducers matter in such graphs, not that this one has a fan-in; the report's own system
    named in the sentence, or a sentence about its nodes, is a claim."""
    claims = extract_feature_claims([
        (9, "In a fan-out/fan-in graph architecture, multiple nodes execute concurrently and "
            "write to shared state."),
        (9, "In a fan-out/fan-in architecture, our detectives run in parallel."),
        (14, "Their outputs converge at the EvidenceAggregator node, ensuring state "
             "synchronization before judicial reasoning begins.")])
    assert [(c.feature, c.page) for c in claims] == [
        ("parallel_detectives", 9), ("fan_in", 9), ("fan_in", 14)]


def test_detectives_reached_only_through_routes_never_taken_do_not_run_in_parallel() -> None:
    """A router sends to three detectives, but the code facts prove two of its routes are
    never taken (the key they need is never set) and those nodes never run: the parallel
    claim is contradicted with the router's lines, and the join the three are wired into is
    no join of parallel branches (not "no join gathers the detectives")."""
    graph = RebuiltGraph(
        nodes=["check", "RepoInvestigator", "DocAnalyst", "VisionInspector", "Aggregator",
               "Prosecutor", "Defense", "Judge"],
        edges=[("__start__", "check"), ("check", "RepoInvestigator"), ("check", "DocAnalyst"),
               ("check", "VisionInspector"), ("RepoInvestigator", "Aggregator"),
               ("DocAnalyst", "Aggregator"), ("VisionInspector", "Aggregator"),
               ("Aggregator", "Prosecutor"), ("Aggregator", "Defense"),
               ("Prosecutor", "Judge"), ("Defense", "Judge")],
        conditional_sources=["check"], fan_out={"Aggregator": ["Defense", "Prosecutor"]},
        fan_in={"Judge": ["Defense", "Prosecutor"]}, linear=False)
    dead = Finding(facet="graph.dead_routes", goal="g", found=True, pattern="failure",
                   confidence=0.8, location="src/graph.py:77",
                   content="src/graph.py:77: if state.get(\"pdf_paths\"):",
                   rationale="check -> DocAnalyst, VisionInspector are never taken.",
                   data={"edges": [["check", "DocAnalyst"], ["check", "VisionInspector"]]})
    never = Finding(facet="graph.unreachable_nodes", goal="g", found=True, pattern="failure",
                    confidence=0.85, location="src/graph.py:96", rationale="never run",
                    data={"unreachable": ["DocAnalyst", "VisionInspector"]})
    verdict, why = check_feature("parallel_detectives", graph, "", [dead, never])
    assert verdict == "contradicted" and "only RepoInvestigator" in why
    assert "src/graph.py:77" in why
    assert check_feature("parallel_detectives", graph)[0] == "unverified"
    assert check_feature("parallel_detectives", graph, "", [dead])[0] == "unverified"
    verdict, why = check_feature("fan_in", graph, "fan-in merging of evidence", [dead, never])
    assert verdict == "unverified" and "wires Aggregator" in why
    assert "no join of the graph gathers" not in why
    # one detective still beside the live one: they do run in parallel, no contradiction
    two = never.model_copy(update={"data": {"unreachable": ["VisionInspector"]}})
    assert check_feature("parallel_detectives", graph, "", [dead, two])[0] != "contradicted"
