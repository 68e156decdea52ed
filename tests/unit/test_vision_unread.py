"""An image the auditor could not read (no vision model) may be the diagram a fact is about:
"no diagram shows the whole split" is then not established, and no judge charges it."""

from __future__ import annotations

from automaton_auditor.forensics.vision.inspector import vision_findings
from automaton_auditor.judging.caps import unchecked, weighed
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import DiagramFacts, Evidence

# an arrow chain in the text that shows only the detectives' fan-out and fan-in
PARTIAL = DiagramFacts(page=4, kind="arrow", edges=[
    ("START", "RepoInvestigator"), ("START", "DocAnalyst"), ("START", "VisionInspector"),
    ("RepoInvestigator", "EvidenceAggregator"), ("DocAnalyst", "EvidenceAggregator"),
    ("VisionInspector", "EvidenceAggregator"), ("EvidenceAggregator", "Judges")])
LINEAR = DiagramFacts(page=4, kind="arrow", edges=[("START", "A"), ("A", "B"), ("B", "END")])
PICTURE = DiagramFacts(page=11, kind="raster", width=900, height=700)


def _by_facet(diagrams: list[DiagramFacts]) -> dict[str, Evidence]:
    dim = load_rubric().dimension("swarm_visual")
    return {f.facet: Evidence.from_finding(f, "vision", dim.id)
            for f in vision_findings(diagrams)}


def test_an_unread_picture_leaves_the_whole_split_not_established() -> None:
    facts = _by_facet([PARTIAL, PICTURE])
    split = facts["vision.flow.full_split"]
    assert not split.found and split.limitation is not None and "p.11" in split.limitation
    assert "readable diagram" in split.rationale
    assert facts["vision.flow.parallel_judges"].limitation is not None
    assert split not in weighed(list(facts.values()))
    assert split in unchecked(list(facts.values()))


def test_an_unread_picture_leaves_a_linear_pipeline_not_established() -> None:
    linear = _by_facet([LINEAR, PICTURE])["vision.flow.linear"]
    assert linear.found and linear.limitation is not None


def test_with_every_diagram_read_the_split_is_a_plain_fact() -> None:
    facts = _by_facet([PARTIAL])
    assert facts["vision.flow.full_split"].limitation is None
    assert "No diagram shows the whole split" in facts["vision.flow.full_split"].rationale
    assert facts["vision.flow.parallel_judges"].limitation is None
    assert _by_facet([LINEAR])["vision.flow.linear"].limitation is None
