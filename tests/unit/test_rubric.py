"""Rubric loading, validation and routing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from automaton_auditor.rubric import (
    RubricError,
    concept_terms,
    facets_for,
    load_rubric,
    parse_rubric,
    route,
)


@pytest.mark.parametrize("name,count", [("week2_rubric_v3.json", 10),
                                        ("week2_rubric_v3_with_judicial_logic.json", 10),
                                        ("week2_rubric_interim_4dim.json", 4)])
def test_reference_rubrics_load(reference_rubrics: Path, name: str, count: int) -> None:
    rubric = load_rubric(reference_rubrics / name)
    assert len(rubric.dimensions) == count
    assert "fact_supremacy" in rubric.synthesis_rules


def test_default_rubric_has_the_ten_challenge_ids(reference_rubrics: Path) -> None:
    ours = load_rubric()
    public = load_rubric(reference_rubrics / "week2_rubric_v3.json")
    assert [d.id for d in ours.dimensions] == [d.id for d in public.dimensions]
    assert [d.target_artifact for d in ours.dimensions] == [
        d.target_artifact for d in public.dimensions]
    # Own words: no instruction is copied verbatim.
    for mine, theirs in zip(ours.dimensions, public.dimensions, strict=True):
        assert mine.forensic_instruction != theirs.forensic_instruction


def test_judicial_logic_is_available_per_judge(reference_rubrics: Path) -> None:
    rubric = load_rubric(reference_rubrics / "week2_rubric_v3_with_judicial_logic.json")
    logic = rubric.dimension("graph_orchestration").judicial_logic
    assert logic is not None and "Orchestration Fraud" in (logic.for_judge("Prosecutor") or "")


def _valid() -> dict:
    return json.loads(load_rubric().model_dump_json())


@pytest.mark.parametrize("mutate,path", [
    (lambda d: d.pop("dimensions"), "$.dimensions"),
    (lambda d: d["dimensions"][2].__setitem__("target_artifact", "slides"),
     "$.dimensions[2].target_artifact"),
    (lambda d: d["dimensions"][1].pop("forensic_instruction"),
     "$.dimensions[1].forensic_instruction"),
    (lambda d: d["dimensions"][0].__setitem__("surprise", 1), "$.dimensions[0].surprise"),
    (lambda d: d["dimensions"][3].__setitem__("id", d["dimensions"][0]["id"]),
     "$.dimensions[3].id"),
    (lambda d: d.__setitem__("synthesis_rules", {"x": 3}), "$.synthesis_rules.x"),
])
def test_broken_rubric_names_the_json_path(mutate, path: str) -> None:
    data = _valid()
    mutate(data)
    with pytest.raises(RubricError, match=path.replace("$", r"\$").replace("[", r"\[")
                       .replace("]", r"\]")):
        parse_rubric(data)


def test_not_json_is_reported_with_position(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    bad.write_text('{"dimensions": [', encoding="utf-8")
    with pytest.raises(RubricError, match="not valid JSON"):
        load_rubric(bad)


def test_routing_follows_the_rubric_text(reference_rubrics: Path) -> None:
    rubric = load_rubric(reference_rubrics / "week2_rubric_v3.json")
    assert route("git.history", rubric) == ["git_forensic_analysis"]
    assert route("safety.os_system", rubric) == ["safe_tool_engineering"]
    assert "judicial_nuance" in route("graph.parallel_judges", rubric)
    assert route("claims.paths", rubric) == ["report_accuracy"]
    # a report dimension is never fed repository facts
    assert "theoretical_depth" not in route("graph.fan_out", rubric)
    interim = load_rubric(reference_rubrics / "week2_rubric_interim_4dim.json")
    assert set(facets_for(interim.dimension("forensic_accuracy_code"))) >= {"state", "safety"}


def test_concepts_come_from_the_rubric(reference_rubrics: Path) -> None:
    rubric = load_rubric(reference_rubrics / "week2_rubric_v3.json")
    assert concept_terms(rubric) == ["Dialectical Synthesis", "Fan-In / Fan-Out",
                                     "Metacognition", "State Synchronization"]
    interim = load_rubric(reference_rubrics / "week2_rubric_interim_4dim.json")
    assert concept_terms(interim) == ["Dialectical Synthesis", "Metacognition"]


def test_the_error_quotes_a_hostile_key_printably(tmp_path: Path) -> None:
    # the message is what the terminal, a batch summary and the queue's records show
    bad = tmp_path / "r.json"
    text = json.dumps(_valid())
    bad.write_text(text.replace('"rubric_metadata"', '"rub\\u0000\\u001b[2Jr\\nic": 1, '
                                                      '"rubric_metadata"', 1))
    with pytest.raises(RubricError) as raised:
        load_rubric(bad)
    assert str(raised.value) == f"{bad}: $.rub[2Jr ic: Extra inputs are not permitted"


@pytest.mark.parametrize("spliced,rule", [
    ('"id": "first", "id": "', 'key "id" given twice in one object'),
    ('"weight": NaN, "id": "', "NaN is not a JSON number"),
    ('"weight": Infinity, "id": "', "Infinity is not a JSON number"),
    ('"weight": 1e400, "id": "', "1e400 is past a float's range"),
])
def test_what_json_loads_takes_but_json_is_not_is_refused(tmp_path: Path, spliced: str,
                                                         rule: str) -> None:
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps(_valid()).replace('"id": "', spliced, 1))
    with pytest.raises(RubricError, match=f"not usable JSON \\({rule}\\)"):
        load_rubric(bad)
