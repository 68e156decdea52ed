"""State models and reducers."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langgraph.graph import END, START, StateGraph
from pydantic import ValidationError
from typing_extensions import TypedDict

from automaton_auditor.state import AgentState, Evidence, JudicialOpinion
from tests.conftest import make_evidence


def test_evidence_id_is_deterministic_and_depends_on_location() -> None:
    first = make_evidence("graph fans out", location="src/graph.py:10")
    again = make_evidence("graph fans out", location="src/graph.py:10")
    moved = make_evidence("graph fans out", location="src/graph.py:11")
    assert first.evidence_id == again.evidence_id
    assert first.evidence_id != moved.evidence_id
    assert first.evidence_id.startswith("rep-")


def test_evidence_content_is_cut_at_2000_characters() -> None:
    evidence = make_evidence(content="x" * 5000)
    assert evidence.content is not None and len(evidence.content) == 2000


def test_opinion_forbids_unknown_fields_and_bounds_score() -> None:
    with pytest.raises(ValidationError):
        JudicialOpinion(judge="Defense", criterion_id="c", score=3, argument="a", verdict="x")
    with pytest.raises(ValidationError):
        JudicialOpinion(judge="Defense", criterion_id="c", score=6, argument="a")


def test_failure_semantics() -> None:
    missing_success = make_evidence(found=False, pattern="success")
    present_flaw = make_evidence(found=True, pattern="failure", security=True)
    absent_flaw = make_evidence(found=False, pattern="failure")
    assert missing_success.supports_failure and not missing_success.supports_success
    assert present_flaw.supports_failure and present_flaw.confirmed_security_flaw
    assert not absent_flaw.supports_failure and not absent_flaw.supports_success


def test_agent_state_reducers_merge_parallel_writes() -> None:
    """Two branches writing evidences and opinions in the same step must both survive."""

    def branch(name: str) -> Any:
        def node(state: AgentState) -> dict[str, Any]:
            return {"evidences": {name: [make_evidence(name)]},
                    "opinions": [JudicialOpinion(judge="Defense", criterion_id=name, score=3,
                                                 argument=name)],
                    "errors": [name]}
        return node

    builder = StateGraph(AgentState)
    builder.add_node("a", branch("a"))
    builder.add_node("b", branch("b"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge(["a", "b"], END)
    final = builder.compile().invoke({"evidences": {}, "opinions": [], "errors": []})
    assert set(final["evidences"]) == {"a", "b"}
    assert sorted(o.criterion_id for o in final["opinions"]) == ["a", "b"]
    assert sorted(final["errors"]) == ["a", "b"]


def test_without_reducer_parallel_writes_conflict() -> None:
    """The control: the same graph without reducers is refused by LangGraph."""

    class Plain(TypedDict):
        errors: list[str]
        merged: Annotated[list[str], operator.add]

    builder = StateGraph(Plain)
    builder.add_node("a", lambda s: {"errors": ["a"]})
    builder.add_node("b", lambda s: {"errors": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    with pytest.raises(Exception, match=r"(?i)concurrent|multiple"):
        builder.compile().invoke({"errors": [], "merged": []})


def test_evidence_round_trips_through_json() -> None:
    evidence = make_evidence(content="snippet", data={"k": [1, 2]})
    assert Evidence.model_validate_json(evidence.model_dump_json()) == evidence


def _models_in(annotation: Any) -> set[type]:
    """The pydantic models an annotation mentions, nested ones included."""
    from typing import get_args

    from pydantic import BaseModel

    found: set[type] = set()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.add(annotation)
        for field in annotation.model_fields.values():
            found |= _models_in(field.annotation)
    for arg in get_args(annotation):
        found |= _models_in(arg)
    return found


def test_every_model_the_state_can_hold_may_be_revived_from_a_checkpoint() -> None:
    from typing import get_type_hints

    from automaton_auditor.state import STATE_MODELS

    reachable: set[type] = set()
    for hint in get_type_hints(AgentState, include_extras=True).values():
        reachable |= _models_in(hint)
    assert reachable and reachable <= set(STATE_MODELS), reachable - set(STATE_MODELS)


def test_typed_statuses_and_failures_survive_the_checkpointer(tmp_path: Any) -> None:
    from automaton_auditor.state import CallFailure, DetectiveStatus
    from automaton_auditor.storage.runs import checkpointer, thread_config

    failure = CallFailure(judge="Defense", criterion_id="c", kind="rejected",
                          reason="HTTP 401", stops_bench=True)
    statuses = {"repo": DetectiveStatus(state="failed", reason="network"),
                "doc": DetectiveStatus(state="ok")}

    def node(state: AgentState) -> dict[str, Any]:
        return {"detective_status": statuses, "call_failures": [failure]}

    builder = StateGraph(AgentState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    with checkpointer(tmp_path) as saver:
        builder.compile(checkpointer=saver).invoke({"errors": []}, thread_config("t"))
    with checkpointer(tmp_path) as saver:
        values = builder.compile(checkpointer=saver).get_state(thread_config("t")).values
    assert values["detective_status"] == statuses
    assert values["call_failures"] == [failure]


def test_detective_status_is_read_by_field_and_prints_as_before() -> None:
    from automaton_auditor.state import DetectiveStatus, failed_detectives

    ok = DetectiveStatus(state="ok", reason="vision model")
    degraded = DetectiveStatus(state="degraded", reason="encrypted")
    # a reason that reads like another state must not make it one (no prefix matching)
    failed = DetectiveStatus(state="failed", reason="ok, but the clone timed out")
    assert [str(s) for s in (ok, degraded, failed)] == [
        "ok (vision model)", "degraded: encrypted", "failed: ok, but the clone timed out"]
    assert failed_detectives({"vision": ok, "doc": degraded, "repo": failed}) == {
        "repo": failed}
    assert not failed.ok and ok.ok and not degraded.ok


def test_dossiers_are_views_on_the_one_store() -> None:
    from automaton_auditor.nodes.aggregator import evidence_aggregator
    from automaton_auditor.rubric import load_rubric
    from automaton_auditor.state import resolved_dossiers

    rubric = load_rubric()
    fact = make_evidence("fan-out", dimension="graph_orchestration")
    state: AgentState = {"rubric": rubric.model_dump(), "evidences": {"repo": [fact]}}
    update = evidence_aggregator(state)
    dossiers = update["dossiers"]
    assert all(isinstance(i, str) for ids in dossiers.values() for i in ids)
    store = [e for items in {**state["evidences"], **update["evidences"]}.values()
             for e in items]
    ids = [e.evidence_id for e in store]
    assert len(ids) == len(set(ids))
    # every id a dossier lists is in the store (the empty-dossier facts included)
    assert {i for v in dossiers.values() for i in v} <= set(ids)
    resolved = resolved_dossiers({**state, "evidences": {**state["evidences"],
                                                         **update["evidences"]},
                                  "dossiers": dossiers})
    assert resolved["graph_orchestration"][0] is fact
    empty = resolved["git_forensic_analysis"]
    assert [e.facet for e in empty] == ["dossier.empty"]


def test_the_graph_shows_callers_only_its_input_and_output() -> None:
    from automaton_auditor.graph import compile_graph

    graph = compile_graph()
    schema_in = graph.get_input_jsonschema()
    assert set(schema_in["properties"]) == {"target", "report_path", "report_base64", "rubric",
                                            "settings", "run_id"}
    assert set(schema_in["required"]) == {"target", "report_path"}
    assert set(graph.get_output_jsonschema()["properties"]) == {
        "run_id", "final_report", "report_files", "errors"}


def test_the_report_carries_the_evidence_but_the_state_keeps_one_copy(tmp_path: Any) -> None:
    import json

    from automaton_auditor.nodes.report import report_writer
    from automaton_auditor.settings import Settings
    from automaton_auditor.state import final_report_of

    fact = make_evidence("fan-out", dimension="graph_orchestration")
    state: AgentState = {"target": "t", "report_path": "r.pdf", "input_ok": True,
                         "evidences": {"repo": [fact]},
                         "settings": Settings(output_dir=str(tmp_path)).to_state()}
    update = report_writer(state)
    assert update["final_report"].evidence == {}
    with open(update["report_files"]["json"], encoding="utf-8") as handle:
        written = json.load(handle)
    assert [e["evidence_id"] for e in written["evidence"]["repo"]] == [fact.evidence_id]
    full = final_report_of({**state, **update})
    # report.json 1.1 adds structured locations beside each item's fields
    added = {"path", "line", "url"}
    evidence = {source: [{k: v for k, v in item.items() if k not in added} for item in items]
                for source, items in written["evidence"].items()}
    assert full is not None and full.model_dump(mode="json")["evidence"] == evidence
