"""The state's models as the code uses them: a single opinion is no list of opinions, and
evidence built without a field its model requires raises ValidationError (state.model_calls)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.state_schema import holds_many

from .test_code_ast_facts import STATE
from .test_code_ast_graph import by_facet, write_repo

MODELS = '''
from typing import Optional
from pydantic import BaseModel, Field


class Evidence(BaseModel):
    goal: str
    found: bool
    source_file: str = Field(description="where")
    confidence: float = Field(0.5, ge=0, le=1)
    note: Optional[str] = None
    tags: list = Field(default_factory=list)


class JudicialOpinion(BaseModel):
    judge: str
    score: int = Field(..., ge=1, le=5)
'''

DETECTIVE = '''
from models import Evidence, JudicialOpinion


def repo_investigator(state):
    ok = Evidence(goal="graph", found=True, source_file="src/graph.py")
    return {"evidences": {"repo": [ok]}}


def doc_analyst(state):
    bad = Evidence(goal="report", found=True, confidence=0.9)
    return {"evidences": {"doc": [bad]}}


def judge(state, raw):
    spread = Evidence(**raw)
    opinion = JudicialOpinion(judge="Prosecutor")
    return {"opinions": [opinion, spread]}
'''


def test_a_collection_holds_many_and_an_optional_holds_one() -> None:
    assert holds_many("Annotated[List[JudicialOpinion], operator.add]", "Opinion")
    assert holds_many("Annotated[Dict[str, List[Evidence]], operator.ior]", "Evidence")
    assert holds_many("Annotated[dict[str, Evidence], operator.ior]", "Evidence")
    assert holds_many("Annotated[ForensicEvidenceCollection, merge_evidence]", "Evidence")
    assert not holds_many("Optional[JudicialOpinion]", "Opinion")
    assert not holds_many("JudicialOpinion | None", "Opinion")
    assert not holds_many("JudicialOpinion", "Opinion")


def test_a_state_holding_one_optional_opinion_holds_no_list_of_opinions(tmp_path: Path) -> None:
    single = STATE.replace("opinions: Annotated[list[JudicialOpinion], operator.add]",
                           "opinion: JudicialOpinion | None")
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, {"core/state.py": single}))
    collections = by_facet(findings, "state.collections")
    assert not collections.found
    assert collections.data["evidence_fields"] == ["evidences"]
    assert collections.data["opinion_fields"] == []
    assert "opinion fields: none." in collections.rationale
    # a list of plain dicts named for opinions exists: said, not "none"
    loose = STATE.replace("opinions: Annotated[list[JudicialOpinion], operator.add]",
                          "opinions: Annotated[List[dict], operator.add]")
    found, _ = code_findings(tmp_path / "loose", write_repo(tmp_path / "loose",
                                                            {"core/state.py": loose}))
    untyped = by_facet(found, "state.collections")
    assert not untyped.found and untyped.data["opinion_fields"] == []
    assert "opinion fields: none typed (opinions: Annotated[List[dict], operator.add]: items " \
        "of no opinion model)" in untyped.rationale, untyped.rationale


def test_models_built_without_their_required_fields(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"models.py": MODELS, "nodes.py": DETECTIVE})
    fact = by_facet(code_findings(tmp_path, files)[0], "state.model_calls")
    assert fact.found and fact.pattern == "failure" and fact.confidence >= 0.8
    # source_file is required (Field without a default); confidence, note and tags are not;
    # Evidence(**raw) is not judged; the opinion lacks its score (Field(...))
    assert fact.data["calls"] == [
        {"path": "nodes.py", "line": 11, "model": "Evidence", "missing": ["source_file"]},
        {"path": "nodes.py", "line": 17, "model": "JudicialOpinion", "missing": ["score"]}]
    assert fact.location == "nodes.py:11"
    assert 'bad = Evidence(goal="report", found=True, confidence=0.9)' in (fact.content or "")
    assert "ValidationError" in fact.rationale


def test_models_that_rename_or_fill_their_fields_are_not_judged(tmp_path: Path) -> None:
    aliased = MODELS.replace('source_file: str = Field(description="where")',
                             'source_file: str = Field(alias="path")')
    own_init = MODELS.replace("    judge: str\n", "    judge: str\n\n"
                              "    def __init__(self, **data):\n"
                              "        super().__init__(score=3, **data)\n")
    for name, models in (("aliased", aliased), ("init", own_init)):
        root = tmp_path / name
        files = write_repo(root, {"models.py": models, "nodes.py": DETECTIVE})
        calls = by_facet(code_findings(root, files)[0], "state.model_calls").data["calls"]
        assert [c["model"] for c in calls] == (["JudicialOpinion"] if name == "aliased"
                                               else ["Evidence"])
