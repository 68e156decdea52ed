"""Report statements checked against the code's facts: reducer bindings, what is said to be
unimplemented, template placeholders; and the cap they put on report accuracy."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.names import code_names
from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.forensics.pdf.citations import extract_cited_paths
from automaton_auditor.forensics.pdf.claims import extract_statements
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.judging.extras import missing_extra
from automaton_auditor.state import Evidence, FeatureClaim, Finding, RebuiltGraph, ReportFacts

REDUCERS = Finding(
    facet="state.reducers", goal="State declares reducers", found=True, pattern="success",
    location="app/state.py:10", confidence=0.9, rationale="Reducers: ...",
    content="app/state.py:14: findings: Annotated[dict[str, list[Clue]], operator.ior]\n"
            "app/state.py:15: verdicts: Annotated[list[JuryVerdict], operator.add]",
    data={"reducers": {"findings": "operator.ior", "verdicts": "operator.add"}})
PERSONAS = Finding(facet="judges.personas", goal="Persona prompts", found=True,
                   pattern="success", location="app/judges.py:30", confidence=0.9,
                   rationale="Persona prompts found for: Prosecutor, Defense, TechLead.")
JUSTICE = Finding(facet="justice.node", goal="Synthesis node", found=True, pattern="success",
                  location="app/justice.py:5", confidence=0.9,
                  rationale="Synthesis starts at rule_node.")
GRAPH = RebuiltGraph(builder="g", location="app/graph.py:40",
                     nodes=["scan", "aggregate", "prosecutor", "defense", "chief_justice"],
                     edges=[("scan", "aggregate"), ("aggregate", "prosecutor"),
                            ("aggregate", "defense"), ("prosecutor", "chief_justice"),
                            ("defense", "chief_justice")],
                     fan_out={"aggregate": ["defense", "prosecutor"]},
                     fan_in={"chief_justice": ["defense", "prosecutor"]}, linear=False)


def _claims(*texts: str) -> list[FeatureClaim]:
    return extract_statements([(page, text) for page, text in enumerate(texts, start=1)])


def _facts(*texts: str, code: list[Finding] | None = None) -> list[Finding]:
    return contradiction_findings(_claims(*texts), code or [REDUCERS, PERSONAS, JUSTICE], GRAPH)


def test_a_reducer_bound_to_the_wrong_field_quotes_the_sentence_and_the_lines() -> None:
    found = _facts("Annotated reducers (operator.add for Clue lists, operator.ior for verdict "
                   "dicts) make merges explicit.")
    assert [f.facet for f in found] == ["claims.contradictions"]
    fact = found[0]
    assert fact.location == "report p.1" and fact.found and fact.pattern == "failure"
    assert "operator.add for Clue lists" in (fact.content or "")
    assert "app/state.py:14: findings" in (fact.content or "")
    assert "app/state.py:15: verdicts" in (fact.content or "")


def test_reducer_bindings_that_agree_or_name_no_field_contradict_nothing() -> None:
    assert _facts(
        "The solution uses operator.ior (dict merge via |=) for the findings dictionary.",
        "Judges write to state[\"verdicts\"] merged via operator.add.",
        "findings: Annotated[dict[str, list[Clue]], operator.ior] keeps every detective.",
        "findings: Annotated[dict[str, list[Clue]], operator.ior] verdicts: "
        "Annotated[list[JuryVerdict], operator.add]",
        "Reducers are implemented using operator.add and operator.ior in Annotated hints.",
        "operator.add for appending to the log keeps the order.") == []
    # an equivalent reducer is no contradiction
    assert _facts("We use operator.or_ for the findings mapping.") == []
    # a custom reducer may wrap the operator the report names
    custom = REDUCERS.model_copy(update={
        "content": "app/state.py:14: findings: Annotated[dict[str, list[Clue]], merge_clues]",
        "data": {"reducers": {"findings": "merge_clues"}}})
    assert _facts("findings: merged via operator.add and deduplicated.", code=[custom]) == []


def test_a_component_called_unimplemented_that_the_code_builds_is_a_stale_gap() -> None:
    # the report understates the code (an interim report behind its commit): out of date,
    # a missing extra, never a false claim that counts toward the contradiction caps
    found = _facts("Only the detective layer is implemented in this interim stage.",
                   "The judges are not yet implemented.")
    assert [(f.facet, f.pattern, f.found, f.data["features"]) for f in found] == [
        ("claims.stale_gaps", "success", False, ["chief justice", "judges"]),
        ("claims.stale_gaps", "success", False, ["judges"])]
    assert "app/judges.py:30" in (found[0].content or "")
    assert "prosecutor" in (found[0].content or "")


def test_unimplemented_claims_hold_when_the_code_does_not_build_the_component() -> None:
    # judge nodes are wired but no persona prompt exists: the report's word stands
    assert _facts("The judges are not yet implemented.", code=[REDUCERS, JUSTICE]) == []
    assert _facts("If the judges are not implemented, the run stops.",
                  "Only deterministic rules are implemented in the synthesis.",
                  "Certain theoretical extensions remain unimplemented.") == []


def test_template_placeholders_are_facts_and_prose_about_them_is_not() -> None:
    found = _facts("(Insert your generated image here)", "Results: [TODO]",
                   "Lorem ipsum dolor sit amet.", "We add the reducer here to merge lists.")
    assert [(f.facet, f.location) for f in found] == [
        ("claims.placeholders", "report p.1"), ("claims.placeholders", "report p.2"),
        ("claims.placeholders", "report p.3")]
    assert all(f.data["statements"] == 3 for f in found)


def test_cross_check_reports_them_and_they_cap_report_accuracy() -> None:
    facts = ReportFacts(readable=True, page_count=2, claims=_claims(
        "operator.add for Clue lists keeps evidence.", "(Insert your diagram here)"))
    findings = cross_check(facts, ["app/state.py"], GRAPH, code=[REDUCERS]).findings
    mine = [f for f in findings if f.facet in ("claims.contradictions", "claims.placeholders")]
    assert len(mine) == 2
    dossier = [Evidence(**f.model_dump(), source="aggregator", dimension="report_accuracy")
               for f in mine]
    caps = confirmed_caps("report_accuracy", dossier)
    assert caps and caps[0][0].cap == 3
    many = [e.model_copy(update={"data": {**e.data, "statements": 5}}) for e in dossier]
    assert confirmed_caps("report_accuracy", many)[0][0].cap == 2


def test_statements_keep_negated_sentences() -> None:
    kinds = [c.feature for c in _claims("The judges are not implemented yet.",
                                        "operator.ior merges the findings.")]
    assert kinds == ["implementation_status", "reducer_binding"]


PARALLEL_JUDGES = Finding(
    facet="graph.parallel_judges", goal="Judges fan out", found=True, pattern="success",
    location="app/graph.py:52", confidence=0.9,
    rationale="aggregate fans out to defense, prosecutor; joined at chief_justice.")


def _routing(*sources: str) -> Finding:
    return Finding(facet="graph.conditional_edges", goal="Conditional edges route the flow",
                   found=True, pattern="success", location="app/graph.py:48", confidence=0.9,
                   rationale="Conditional edges: aggregate -> ['defense', 'halt'].",
                   data={"routing_sources": list(sources)})


def test_a_built_system_described_without_a_feature_it_has_is_a_contradiction() -> None:
    code = [PARALLEL_JUDGES, _routing("aggregate")]
    found = _facts("The three judges are currently invoked inside one node in sequence.",
                   "Remaining gaps (e.g. conditional edges for a failed clone) are listed.",
                   "No conditional edges for clone failure.", code=code)
    # the description is contradicted; the two admitted gaps the code has closed are stale
    # gaps (a missing extra: the report is out of date) and not contradicted statements
    assert [(f.facet, f.pattern, f.found, f.data["features"]) for f in found] == [
        ("claims.contradictions", "failure", True, ["parallel judges"]),
        ("claims.stale_gaps", "success", False, ["conditional routing"]),
        ("claims.stale_gaps", "success", False, ["conditional routing"])]
    assert found[0].data["statements"] == 1
    assert "app/graph.py:52" in (found[0].content or "")
    assert "app/graph.py:48" in (found[1].content or "")


def test_absence_holds_when_the_code_lacks_it_or_the_sentence_is_hedged() -> None:
    # a list run all at once is no routing; the judges' fan-out is not in the code
    assert _facts("The judges are run sequentially by one node.",
                  "There are no conditional edges yet.", code=[_routing()]) == []
    hedged = ("The detective flags graphs with no conditional edges.",
              "If the judges are run in sequence, nuance suffers.",
              "Unlike earlier versions, the judges are no longer run in sequence.",
              "The pipeline runs in sequence from the detectives to the judges.")
    assert _facts(*hedged, code=[PARALLEL_JUDGES, _routing("aggregate")]) == []


MEAN = Finding(facet="justice.averaging", goal="The verdict is a plain average", found=False,
               pattern="failure", location="app/justice.py:55", confidence=0.85,
               rationale="2 decision(s) change the mean.",
               content="app/justice.py:58: avg = sum(scores) / len(scores)")


def test_a_synthesis_said_not_to_average_that_computes_the_mean_is_a_contradiction() -> None:
    found = _facts("It does not average judge scores.",
                   "The Chief Justice resolves conflicts using hardcoded rules rather than "
                   "probabilistic averaging.", code=[MEAN])
    assert [(f.facet, f.data["features"]) for f in found] == [
        ("claims.contradictions", ["a mean of the judges' scores"])] * 2
    assert "app/justice.py:58: avg = sum(scores) / len(scores)" in (found[0].content or "")
    # no mean in the code: the same sentences contradict nothing
    assert _facts("It does not average judge scores.", code=[PARALLEL_JUDGES]) == []
    # redecon p.3: a contrast with averaging, the average qualified by any word
    opaque = _facts("The deterministic approach yields auditable, reproducible verdicts "
                    "rather than opaque averaged outputs.", code=[MEAN])
    assert [f.data["features"] for f in opaque] == [["a mean of the judges' scores"]]
    # "no weighted averaging" denies only the weights, not the mean
    assert _facts("The Chief Justice uses no weighted averaging of scores.", code=[MEAN]) == []


def test_a_negated_denial_affirms_the_feature() -> None:
    assert _facts("The judges are no longer run in sequence.",
                  "Judges are not invoked one after another.", code=[PARALLEL_JUDGES]) == []


def test_a_mean_weighted_per_judge_is_not_the_average_a_report_denies() -> None:
    rules = Finding(facet="justice.rules", goal="Rules", found=True, pattern="success",
                    location="app/justice.py:40", confidence=0.75, rationale="Rules: ...",
                    data={"rules": {"functionality_weight": ["app/justice.py:44"]}})
    assert _facts("It never averages scores.", code=[MEAN, rules]) == []


def test_work_said_to_be_done_in_a_file_that_holds_no_code_contradicts_the_report(
        tmp_path: Path) -> None:
    files = {"src/tools/ast_tools.py": "", "src/tools/doc_tools.py": '"""Reads PDFs."""\n',
             "src/tools/repo_tools.py": "import os\n", "src/tools/__init__.py": "",
             "src/tools/sandbox.py": "pass\n"}
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    names = code_names(tmp_path, sorted(files))
    assert names.empty == ["src/tools/ast_tools.py", "src/tools/doc_tools.py",
                           "src/tools/sandbox.py"]
    passages = [(3, "Refactored src/tools/ast_tools.py to traverse every AST node, and "
                    "src/tools/repo_tools.py clones safely."),
                (4, "src/tools/sandbox.py is still an empty stub."),
                (5, "The package src/tools/__init__.py exports the tools.")]
    facts = ReportFacts(readable=True, page_count=5, cited_paths=extract_cited_paths(passages))
    findings = cross_check(facts, sorted(files), None, names=names).findings
    found = [f for f in findings if f.facet == "claims.contradictions"]
    assert [f.data["path"] for f in found] == ["src/tools/ast_tools.py"]
    assert found[0].location == "report p.3" and "Refactored" in (found[0].content or "")
    dossier = [Evidence(source="aggregator", dimension="report_accuracy",
                        **found[0].model_dump())]
    # one such statement is enough for a cap of 2, as a file cited that does not exist
    assert [row.cap for row, _ in confirmed_caps("report_accuracy", dossier)] == [2, 3]


def test_a_gap_listed_that_the_code_has_closed_keeps_accuracy_from_full_marks() -> None:
    code = [PARALLEL_JUDGES, _routing("aggregate")]
    stale = [f for f in _facts("No conditional edges for clone failure.", code=code)
             if f.facet == "claims.stale_gaps"]
    assert len(stale) == 1
    dossier = [Evidence(source="aggregator", dimension="report_accuracy",
                        **stale[0].model_dump())]
    assert [row.cap for row, _ in confirmed_caps("report_accuracy", dossier)] == [4]
    assert missing_extra(dossier[0])  # weighed as a missing extra, never charged


def test_a_conditional_edge_that_routes_when_something_is_missing_denies_nothing() -> None:
    code = [PARALLEL_JUDGES, _routing("aggregate")]
    assert _facts("A conditional edge from EvidenceAggregator routes to error_handler if "
                  "critical evidence is missing.",
                  "Conditional edges that send the run to a retry node when the clone is "
                  "absent keep it alive.", code=code) == []


def test_a_gap_naming_the_judges_run_in_sequence_that_the_code_fans_out_is_stale() -> None:
    """"No true parallel execution of judges" and a node that "loops over ... judges
    sequentially" deny the judges' fan-out: under a listed gap, the code has closed it."""
    found = _facts("1. No true parallel execution of judges: Today run_judges is a single "
                   "node that loops over dimensions and judges sequentially.",
                   "The judge node loops over the criteria and judges sequentially.",
                   code=[PARALLEL_JUDGES])
    assert [(f.facet, f.data["features"]) for f in found] == [
        ("claims.stale_gaps", ["parallel judges"]),
        ("claims.contradictions", ["parallel judges"])]
    assert "app/graph.py:52" in (found[0].content or "")
    assert _facts("There is no parallel execution of judges yet.", code=[]) == []


def test_a_node_said_to_be_commented_out_that_the_graph_wires_is_a_stale_gap() -> None:
    found = _facts("2. Aggregate currently commented out in graph.py (lines 39, 56).",
                   "The scan node is not wired.")
    assert [(f.facet, f.data["features"]) for f in found] == [
        ("claims.stale_gaps", ["the aggregate node"])]
    assert "app/graph.py:40: aggregate wired: scan -> aggregate" in (found[0].content or "")
    # a node with no edge in (scan) or none of that name, a hedged sentence, or a node
    # "disabled" (a setting may switch off a wired node): nothing
    assert _facts("The Reporter node is commented out.", "The aggregate node is disabled.",
                  "If the aggregate node is not wired, the judges wait forever.") == []


def test_a_gap_list_naming_a_built_component_is_a_stale_gap() -> None:
    found = _facts("\u2022 No judicial layer (Prosecutor, Defense, TechLead personas)",
                   "No ChiefJusticeNode or deterministic conflict resolution",
                   "No judge sees another judge's opinion before it rules.",
                   "No detectives yet.")  # the detectives' fan-out is not in this code
    assert [(f.facet, f.found, f.data["features"]) for f in found] == [
        ("claims.stale_gaps", False, ["judges"]),
        ("claims.stale_gaps", False, ["chief justice"])]
    assert "app/justice.py:5" in (found[1].content or "")


def test_a_wired_node_a_status_line_calls_not_started_is_a_stale_gap() -> None:
    # a status table read row by row: "<phase> - <node> Status: Not started"; the status
    # understates the code, so the report is out of date, not false
    found = _facts("Phase 4 - Aggregate Status: Not started",
                   "Phase 5 - Defense: not yet started")
    assert [(f.facet, f.data["features"]) for f in found] == [
        ("claims.stale_gaps", ["aggregate node"]),
        ("claims.stale_gaps", ["defense node"])]
    assert "app/graph.py:40: aggregate wired: scan -> aggregate" in (found[0].content or "")
    # a node with no edge in (scan), none of that name, a hedged sentence, or a bare
    # "planned" that is no status label's value: nothing
    assert _facts("Phase 1 - Scan Status: Not started", "Reporter: not started",
                  "If the aggregate node has not started, the judges wait.",
                  "Aggregate planned for next week.") == []


def test_a_no_followed_by_a_verb_is_a_guarantee_not_a_gap() -> None:
    # Zerubabel-J: "No judge or aggregator can mutate ..." says what frozen evidence
    # guarantees; it does not list the judges as missing
    for sentence in ("No judge or aggregator can mutate the factual basis for another "
                     "node's reasoning.", "The pattern proved correct - no evidence was lost "
                     "or overwritten across any parallel run."):
        assert _claims(sentence) == [], sentence
    assert [c.feature for c in _claims("No judges or aggregator exist yet.")] == [
        "component_gap"]
