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
