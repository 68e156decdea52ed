"""The vision detective on the real corpus reports (../shared/corpus/pdfs, beside the
checkout in CI); skipped when the corpus is not there. Expectations were checked by
rendering the pages and looking at them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from automaton_auditor.forensics.vision.inspector import find_diagrams, vision_findings

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "pdfs"


def _report(name: str) -> Path:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"corpus report {name} not available")
    return path


def _facets(diagrams: list) -> dict:  # type: ignore[type-arg]
    return {f.facet: f for f in vision_findings(diagrams)}


def test_birkity_vector_only_report_diagram_is_read() -> None:
    diagrams, images = find_diagrams(_report(
        "Birkity__automaton-auditor-fde-week2__final_report.pdf"))
    vector = [d for d in diagrams if d.kind == "vector"]
    assert [d.page for d in vector] == [5]
    figure = vector[0]
    assert {"START", "context_builder", "RepoInvestigator", "DocAnalyst", "VisionInspector",
            "evidence_aggregator", "judge_dispatcher", "ChiefJustice", "END"} <= set(
        figure.labels)
    assert len(figure.edges) == 21
    assert ("judge_dispatcher", "TechLead") in figure.edges
    assert ["evidence?", "no_evidence_handler"] in figure.data["conditional_edges"]
    assert images[diagrams.index(figure)].startswith(b"\x89PNG")
    found = _facets(diagrams)
    assert found["vision.flow.full_split"].found
    assert found["vision.flow.full_split"].location == "report p.5"


def test_abnet_scanned_report_pages_and_the_graphic_one() -> None:
    diagrams, _ = find_diagrams(_report("Abnet-Melaku1__automation-auditor__final_report.pdf"))
    assert len(diagrams) == 22 and {d.kind for d in diagrams} == {"scan"}
    assert [d.page for d in diagrams if d.data["likely_diagram"]] == [3]
    found = _facets(diagrams)
    assert found["vision.extract"].found and found["vision.extract"].location == "report p.3"
    assert not found["vision.flow.full_split"].found  # unreadable without a vision model


def test_tedoaba_icc_rasters_decode_in_colour_on_white() -> None:
    diagrams, images = find_diagrams(_report("tedoaba__Digital-Courtroom__final_report.pdf"))
    assert [(d.page, d.kind) for d in diagrams] == [(p, "raster") for p in
                                                     (7, 8, 9, 18, 20, 25, 26)]
    for png in images:
        stat = ImageStat.Stat(Image.open(io.BytesIO(png)).convert("L"))
        assert stat.mean[0] > 200  # mostly white page, not a black undecoded box


def test_nebiyou_caption_flow_and_rasters() -> None:
    diagrams, images = find_diagrams(_report(
        "NebiyouBelaineh__LangGraph-Automation-Auditor__final_report.pdf"))
    rasters = [d.page for d in diagrams if d.kind == "raster"]
    assert rasters == [8, 9, 10, 13, 17, 21, 22, 23, 29, 43]
    # The p.21 picture has a transparent background: it must come out on white.
    transparent = next(png for d, png in zip(diagrams, images, strict=True)
                       if d.kind == "raster" and d.page == 21)
    assert ImageStat.Stat(Image.open(io.BytesIO(transparent)).convert("L")).mean[0] > 200
    caption = next(d for d in diagrams if d.kind == "arrow" and d.page == 21)
    assert ("entry_node", "VisionInspector") in caption.edges
    assert _facets(diagrams)["vision.flow.full_split"].found
