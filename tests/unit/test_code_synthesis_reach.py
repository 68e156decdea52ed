"""A Chief Justice nothing runs (`forensics.code.synthesis_reach`): every StateGraph is given
no node and no code of the product calls the synthesis, so its rules never decide a verdict.
A graph with nodes, a caller outside the tests, or no StateGraph at all gives no fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import Evidence, Finding

from .test_code_ast_graph import by_facet, write_repo

GRAPH = '''
from langgraph.graph import StateGraph
from nodes.justice import ChiefJustice


def build(State):
    graph = StateGraph(State)
    chief = ChiefJustice()
{wiring}
    return graph
'''
JUSTICE = '''
class ChiefJustice:
    def run(self, opinions):
        low = min(op.score for op in opinions)
        if low <= 2:
            return 2
        return round(sum(op.score for op in opinions) / len(opinions))
'''
UNBUILT = '    graph.add_fan_in(["prosecutor", "defense"], chief)'
CALLER = '''
from nodes.justice import ChiefJustice


def main(opinions):
    return ChiefJustice().run(opinions)
'''


def _fact(tmp_path: Path, wiring: str = UNBUILT, extra: dict[str, str] | None = None,
          graph: bool = True) -> Finding:
    files = write_repo(tmp_path, {**({"graph.py": GRAPH.format(wiring=wiring)} if graph
                                     else {}), "nodes/justice.py": JUSTICE, **(extra or {})})
    findings, _ = code_findings(tmp_path, files)
    return by_facet(findings, "justice.no_graph")


def test_a_synthesis_no_graph_can_run_and_no_code_calls_is_run_by_nothing(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path, extra={"tests/test_justice.py": CALLER})  # a test is no caller
    assert fact.found, fact.rationale
    assert fact.location == "nodes/justice.py:3"
    assert fact.data["roots"] == ["nodes/justice.py:ChiefJustice.run"]
    assert "graph.py" in fact.rationale and "is given no node" in fact.rationale
    evidence = Evidence(dimension="chief_justice_synthesis", source="repo", **{
        k: getattr(fact, k) for k in ("facet", "goal", "found", "pattern", "location",
                                      "content", "rationale", "confidence", "data")})
    assert [row.cap for row, _ in confirmed_caps("chief_justice_synthesis", [evidence])] == [2]


@pytest.mark.parametrize(("wiring", "extra", "graph"), [
    ('    graph.add_node("chief_justice", chief.run)', None, True),  # a graph with a node
    (UNBUILT, {"main.py": CALLER}, True),  # the product calls it
    (UNBUILT, None, False),  # no StateGraph at all: it may run without one
])
def test_a_synthesis_that_may_run_gives_no_fact(tmp_path: Path, wiring: str,
                                                extra: dict[str, str] | None,
                                                graph: bool) -> None:
    fact = _fact(tmp_path, wiring, extra, graph)
    assert not fact.found, fact.rationale
