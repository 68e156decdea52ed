"""Which of a report's flows is a drawing of the audited graph, and what shape it draws: a
boxed list of two rows, a chain of phases in the prose, are no architecture diagram; three
boxes joined into one are branches, not a linear pipeline."""

from __future__ import annotations

from automaton_auditor.forensics.diagrams.flow import flow_graph
from automaton_auditor.forensics.vision.inspector import compare_with_code, vision_findings
from automaton_auditor.state import DiagramFacts, Finding, RebuiltGraph
from tests.unit.test_vision_compare import CODE_EDGES

PICTURE = DiagramFacts(page=9, kind="raster", width=900, height=700)


def _code() -> RebuiltGraph:
    return flow_graph(CODE_EDGES).model_copy(update={"builder": "builder"})


def _facets(findings: list[Finding]) -> dict[str, Finding]:
    return {f.facet: f for f in findings}


def test_a_boxed_list_of_two_rows_is_no_linear_diagram() -> None:
    # "SYNTHESIS RULES" over "RULE 1: SECURITY OVERRIDE": two boxes, one arrow, next to
    # pictures no model read
    rules = DiagramFacts(page=7, kind="text_art",
                         edges=[("SYNTHESIS RULES", "RULE 1: SECURITY OVERRIDE")])
    compared = _facets(compare_with_code([rules, PICTURE], _code()))
    assert "vision.compare.misleading" not in compared
    assert not compared["vision.compare.parallelism"].found
    assert compared["vision.compare.parallelism"].pattern == "neutral"
    assert not _facets(vision_findings([rules, PICTURE]))["vision.flow.linear"].found
    assert not _facets(vision_findings([rules]))["vision.flow.linear"].found


def test_a_chain_of_phases_naming_no_graph_part_is_not_compared() -> None:
    phases = DiagramFacts(page=16, kind="arrow", edges=[
        ("Observation", "Interpretation"), ("Interpretation", "Recommendation"),
        ("Recommendation", "Action")])
    compared = _facets(compare_with_code([phases, PICTURE], _code()))
    assert "vision.compare.misleading" not in compared
    # the same chain naming the graph's nodes is compared (and contradicts the code)
    named = DiagramFacts(page=16, kind="vector", edges=[
        ("RepoInvestigator", "DocAnalyst"), ("DocAnalyst", "Prosecutor"),
        ("Prosecutor", "ChiefJustice")])
    assert _facets(compare_with_code([named], _code()))["vision.compare.misleading"].found


def test_three_boxes_joined_into_one_are_no_linear_pipeline() -> None:
    # "Detective 1 | Detective 2 | Detective 3" -> "Synchronization (Wait for all 3)"
    join = DiagramFacts(page=18, kind="text_art", edges=[
        ("Detective 1", "Synchronization"), ("Detective 2", "Synchronization"),
        ("Detective 3", "Synchronization")])
    compared = _facets(compare_with_code([join], _code()))
    assert not compared["vision.compare.misleading"].found
    assert compared["vision.compare.parallelism"].found
    assert "linear" not in (compared["vision.compare.misleading"].content or "")
    assert not _facets(vision_findings([join]))["vision.flow.linear"].found


# A character drawing whose rows a page footer cut apart: no flow is read from it, but its
# boxes say what is drawn in parallel.
LABELLED_PAGE = """\
┌──────────────────────────────┐
│ EvidenceAggregator (FAN-IN)  │
└──────────────┬───────────────┘
 ┌─────────────┴──────────────┐
 │ PARALLEL FAN-OUT (Judges)  │
 ▼            ▼              ▼
┌──────────┐ ┌──────────┐ ┌──────────┐
│Prosecutor│ │ Defense  │ │ TechLead │
"""


def test_fan_out_labels_of_a_character_drawing_are_read() -> None:
    from automaton_auditor.forensics.vision.labels import split_labels

    labels = split_labels(["Some prose about judges running in parallel.", LABELLED_PAGE])
    assert labels == [{"page": 2, "label": "PARALLEL FAN-OUT (Judges)", "role": "judge"}]
    # prose, a denied or planned split, and a label naming no group are no drawn split
    for line in ("│ Judges do not run in parallel │", "│ Future: parallel judges │",
                 "│ PARALLEL FAN-OUT │"):
        assert split_labels([LABELLED_PAGE.replace("│ PARALLEL FAN-OUT (Judges)  │", line)]) == []


def test_judges_labelled_parallel_that_the_code_chains_are_misleading() -> None:
    labels = [{"page": 44, "label": "PARALLEL FAN-OUT (Judges)", "role": "judge"}]
    # a flow read from the drawing that names one graph part: not compared by itself
    rows = DiagramFacts(page=43, kind="text_art", data={"split_labels": labels}, edges=[
        ("• State detection", "evidences: {"), ("• Cross-reference", "evidences: {"),
        ("evidences: {", "EvidenceAggregator (FAN-IN Node)")])
    chained = [e for e in CODE_EDGES if e[0] != "evidence_aggregator"
               and e[1] != "chief_justice"]
    chained += [("evidence_aggregator", "prosecutor"), ("prosecutor", "defense"),
                ("defense", "tech_lead"), ("tech_lead", "chief_justice")]
    code = flow_graph(chained).model_copy(update={"builder": "builder"})
    found = _facets(compare_with_code([rows], code))
    misleading = found["vision.compare.misleading"]
    assert misleading.found and misleading.location == "report p.44"
    assert ("'PARALLEL FAN-OUT (Judges)' (p.44) drawn in parallel; the code runs "
            "defense -> tech_lead, prosecutor -> defense") in (misleading.content or "")
    assert not _facets(compare_with_code([rows], _code()))["vision.compare.misleading"].found
    flows = _facets(vision_findings([rows]))
    assert flows["vision.flow.parallel_judges"].found
    assert not flows["vision.flow.parallel_detectives"].found
    assert not flows["vision.flow.linear"].found
