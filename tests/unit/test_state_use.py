"""Whether the typed state is what the code runs on: a state no StateGraph is built over
(`state.no_graph`), and modules importing models the state's module does not define
(`state.missing_models`); both cap the state criterion."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence

from .test_code_ast_graph import by_facet, write_repo

STATE = """
    import operator
    from typing import Annotated
    from pydantic import BaseModel
    from typing_extensions import TypedDict

    class Evidence(BaseModel):
        goal: str

    class JudicialOpinion(BaseModel):
        score: int

    class AgentState(TypedDict):
        evidences: Annotated[list[Evidence], operator.add]
        opinions: Annotated[list[JudicialOpinion], operator.add]
"""
# the detectives run by asyncio.gather: no StateGraph anywhere
RUNNER = """
    import asyncio
    from src.state import AgentState

    async def run(state: AgentState) -> AgentState:
        await asyncio.gather()
        return state
"""
JUDGES_PY = """
    from src.state import Evidence, Opinion, AgentState

    def judge(evidence: Evidence) -> Opinion:
        return Opinion()
"""
GRAPH = """
    from langgraph.graph import StateGraph, START, END
    from src.state import AgentState

    def node(state):
        return {}

    def build():
        g = StateGraph(AgentState)
        g.add_node("node", node)
        g.add_edge(START, "node")
        g.add_edge("node", END)
        return g.compile()
"""


def _findings(tmp_path: Path, files: dict[str, str]) -> dict[str, Evidence]:
    """The state facts (the state criterion's dossier), by facet."""
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, files))
    by_facet(findings, "state.no_graph")  # one of each
    by_facet(findings, "state.missing_models")
    return {f.facet: Evidence(source="repo", dimension="state_management_rigor",
                              **f.model_dump(include={"facet", "goal", "found", "pattern",
                                                      "location", "content", "rationale",
                                                      "confidence", "data"}))
            for f in findings if f.facet.startswith("state.")}


def test_a_state_no_graph_runs_and_models_that_do_not_exist_cap_the_state(
        tmp_path: Path) -> None:
    facts = _findings(tmp_path, {"src/__init__.py": "", "src/state.py": STATE,
                                 "src/graph.py": RUNNER, "src/nodes/judges.py": JUDGES_PY})
    unused = facts["state.no_graph"]
    assert unused.found and unused.location == "src/state.py:13"
    assert "no StateGraph is built in any Python file" in unused.rationale
    assert unused.content == "src/state.py:13: class AgentState(TypedDict):"
    missing = facts["state.missing_models"]
    assert missing.found and missing.location == "src/nodes/judges.py:2"
    assert missing.data["names"] == ["Opinion"]
    assert "src/nodes/judges.py:2 imports Opinion from src/state.py" in missing.rationale
    rubric = load_rubric()
    dim = rubric.dimension("state_management_rigor")
    dossier = list(facts.values())
    result = decide(dim, [offline_opinion(j, dim, dossier) for j in JUDGES], dossier, rubric)
    assert result.final_score == 3 and result.deciding_rule == "failure_pattern_cap"
    # the typed state alone, as the facts before these two saw it, scores full marks
    alone = [e for e in dossier if e.facet not in ("state.no_graph", "state.missing_models")]
    result = decide(dim, [offline_opinion(j, dim, alone) for j in JUDGES], alone, rubric)
    assert result.final_score == 5


def test_a_state_a_graph_is_built_over_is_used(tmp_path: Path) -> None:
    facts = _findings(tmp_path, {"src/__init__.py": "", "src/state.py": STATE,
                                 "src/graph.py": GRAPH,
                                 "src/nodes/judges.py": JUDGES_PY.replace("Opinion",
                                                                          "JudicialOpinion")})
    assert not facts["state.no_graph"].found
    assert not facts["state.missing_models"].found
    # a builder given no node builds no graph
    empty = GRAPH.replace('        g.add_node("node", node)\n', "")
    facts = _findings(tmp_path / "empty", {"src/__init__.py": "", "src/state.py": STATE,
                                           "src/graph.py": empty})
    assert facts["state.no_graph"].found
    assert "is given no node" in facts["state.no_graph"].rationale


def test_a_missing_name_not_used_as_a_type_is_no_missing_model(tmp_path: Path) -> None:
    # ``from src.state import StateGraph`` used as a call breaks the graph module (its
    # undefined names charge it), not the state: only noted here. The state alone, no
    # graph over it, loses full marks only.
    graph = "from src.state import StateGraph\n\nbuilder = StateGraph(name='audit')\n"
    facts = _findings(tmp_path, {"src/__init__.py": "", "src/state.py": STATE,
                                 "src/graph.py": graph})
    missing = facts["state.missing_models"]
    assert not missing.found and missing.data["untyped"] == ["StateGraph (src/graph.py:1)"]
    assert facts["state.no_graph"].found
    rubric = load_rubric()
    dim = rubric.dimension("state_management_rigor")
    dossier = list(facts.values())
    result = decide(dim, [offline_opinion(j, dim, dossier) for j in JUDGES], dossier, rubric)
    assert result.final_score == 4


def test_a_missing_model_in_a_module_the_graph_never_loads_is_noted_only(
        tmp_path: Path) -> None:
    """hydropython: a leftover node module imports a model the state's module does not
    define, but nothing the graph runs imports it: it breaks no run."""
    files = {"src/__init__.py": "", "src/state.py": STATE, "src/graph.py": GRAPH,
             "src/nodes/old_report.py": JUDGES_PY}
    missing = _findings(tmp_path, files)["state.missing_models"]
    assert not missing.found, missing.rationale
    assert "Not charged: src/nodes/old_report.py, which nothing the graph runs imports." \
        in missing.rationale
    # imported by the graph's module, the same import breaks the run
    loaded = {**files, "src/graph.py": GRAPH.replace(
        "from src.state import AgentState", "from src.state import AgentState\n"
        "    from src.nodes.old_report import judge")}
    assert _findings(tmp_path / "loaded", loaded)["state.missing_models"].found
