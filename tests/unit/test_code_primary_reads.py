"""A read of a key nothing writes, made only as a fallback behind a key that is given a
value, is no read that never sees a value (`primary_reads`, `graph.state.unwritten_reads`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import write_repo

GRAPH = '''
from typing import TypedDict
from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    repo_url: str
    rules: dict
    final: str


def _rules(state):
    rules = state.get("rules")
    if isinstance(rules, dict):
        return rules
    full = state.get("rubric_full")
    return full.get("rules") if isinstance(full, dict) else {}


def judge(state):
    rules = _rules(state)
    return {"final": str(rules)}


builder = StateGraph(State)
builder.add_node("judge", judge)
builder.add_edge(START, "judge")
builder.add_edge("judge", END)
app = builder.compile()


def main(url, rules):
    initial = {"repo_url": url, "rules": rules, "rubric_full": {"rules": rules}}
    return app.invoke(initial)
'''


def _unwritten(tmp_path: Path, source: str) -> Finding:
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, {"graph.py": source}))
    return next(f for f in findings if f.facet == "graph.state.unwritten_reads")


def test_a_fallback_read_behind_a_given_key_changes_nothing(tmp_path: Path) -> None:
    # rubric_full is not declared (LangGraph drops it from the input), but it is read only
    # when rules, which the input always gives, holds no dict
    fact = _unwritten(tmp_path, GRAPH)
    assert not fact.found and fact.data["reads"] == []
    assert fact.data["behind"] == [["judge", "rubric_full", ["rules"]]]
    assert "judge reads rubric_full only when rules gives nothing" in fact.rationale


def test_the_other_fallback_shapes_are_read_as_well(tmp_path: Path) -> None:
    replaced = GRAPH.replace(
        '''    rules = state.get("rules")
    if isinstance(rules, dict):
        return rules
    full = state.get("rubric_full")
    return full.get("rules") if isinstance(full, dict) else {}''',
        '''    rules = state.get("rules")
    if not isinstance(rules, dict):
        rules = state.get("rubric_full")
    return rules''')
    assert _unwritten(tmp_path / "replaced", replaced).data["behind"]
    either = GRAPH.replace('    rules = _rules(state)\n',
                           '    rules = state.get("rules") or state.get("rubric_full")\n')
    assert not _unwritten(tmp_path / "or", either).found


def test_a_fallback_behind_a_key_nothing_gives_still_never_sees_a_value(
        tmp_path: Path) -> None:
    # the input no longer gives rules: the fallback is what runs, and it reads nothing
    ungiven = GRAPH.replace('"rules": rules, "rubric_full"', '"rubric_full"')
    fact = _unwritten(tmp_path / "ungiven", ungiven)
    assert fact.found and fact.data["reads"] == [["judge", "rubric_full"]]
    # given None, rules holds nothing usable: the fallback runs
    empty = GRAPH.replace('"rules": rules, "rubric_full"', '"rules": None, "rubric_full"')
    assert _unwritten(tmp_path / "none", empty).found
    # a read after a test that does not hand the primary back is no fallback
    branch = GRAPH.replace("        return rules\n", "        print(rules)\n")
    fact = _unwritten(tmp_path / "branch", branch)
    assert fact.found and fact.data["reads"] == [["judge", "rubric_full"]]
