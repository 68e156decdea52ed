"""Graphs wired inside loops over run-time data (redecon: ``for dim in rubric["dimensions"]``
adds the detectives, their join, the judges and theirs): the loop is read as two symbolic
copies, so the fan-out and fan-in it wires are seen; wiring whose names stay unknown makes
the topology facts not established, never "linear"."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.feature_claims import check_feature
from automaton_auditor.state import Finding
from tests.unit.test_code_ast_graph import write_repo

LOOPS = """
    import json
    from langgraph.graph import StateGraph, START, END

    def make_detective(dim):
        def run(state):
            return {"evidences": {dim["id"]: []}}
        return run

    def judge(state):
        return {"opinions": []}

    def build_graph(rubric):
        graph = StateGraph(dict)
        graph.add_node("entry", judge)
        graph.add_edge(START, "entry")
        for dim in rubric["dimensions"]:
            graph.add_node(dim["id"], make_detective(dim))
            graph.add_edge("entry", dim["id"])
        graph.add_node("aggregate", judge)
        for d in rubric["dimensions"]:
            graph.add_edge(d["id"], "aggregate")
        for dim in rubric["dimensions"]:
            pid = dim["id"]
            graph.add_node(f"prosecutor_{pid}", judge)
            graph.add_node("defense_" + pid, judge)
            graph.add_edge("aggregate", f"prosecutor_{pid}")
            graph.add_edge("aggregate", "defense_" + pid)
        graph.add_node("chief", judge)
        for dim in rubric["dimensions"]:
            graph.add_edge(f"prosecutor_{dim.get('id')}", "chief")
            graph.add_edge("defense_" + dim["id"], "chief")
        graph.add_edge("chief", END)
        return graph.compile()

    app = build_graph(json.load(open("rubric.json")))
"""


def _facts(tmp_path: Path, source: str) -> dict[str, Finding]:
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, {"src/graph.py": source}))
    return {f.facet: f for f in findings if f.facet.startswith("graph.")}


def test_a_loop_over_run_time_data_fans_out_and_joins(tmp_path: Path) -> None:
    facts = _facts(tmp_path, LOOPS)
    one, two = "{rubric['dimensions'][#1]['id']}", "{rubric['dimensions'][#2]['id']}"
    # two loops over the same list name the same copies (``dim`` and ``d`` alike)
    assert facts["graph.fan_out"].found
    assert facts["graph.fan_out"].data["fan_out"]["entry"] == [one, two]
    assert facts["graph.fan_in"].data["fan_in"]["aggregate"] == [one, two]
    assert facts["graph.fan_in"].data["fan_in"]["chief"] == [
        f"defense_{one}", f"defense_{two}", f"prosecutor_{one}", f"prosecutor_{two}"]
    assert not facts["graph.linear"].found
    judges = facts["graph.parallel_judges"]
    assert judges.found and judges.data["source"] == "aggregate"
    assert judges.data["joins"] == ["chief"]
    assert "two copies" in facts["graph.topology"].rationale
    # what each copy runs is not simulated: the run's facts stay not determined
    assert any("computed at run time" in u for u in facts["graph.execution"].data["undetermined"])


def test_wiring_whose_names_stay_unknown_is_never_called_linear(tmp_path: Path) -> None:
    # node names made by a call: the loop's nodes and edges are left out, so no fact may
    # say the graph is linear, or that nothing fans out or joins
    source = LOOPS.replace('graph.add_node(dim["id"], make_detective(dim))',
                           "graph.add_node(name_of(dim), make_detective(dim))").replace(
        'graph.add_edge("entry", dim["id"])', 'graph.add_edge("entry", name_of(dim))')
    source = source.split("        graph.add_node(\"aggregate\"")[0] + \
        '        graph.add_edge("entry", END)\n        return graph.compile()\n'
    facts = _facts(tmp_path, source)
    for facet in ("graph.linear", "graph.fan_out", "graph.fan_in", "graph.parallel_judges"):
        assert not facts[facet].found
        assert "computed at run time" in str(facts[facet].data.get("limitation")), facet
        assert facts[facet].rationale.startswith("Not established")


def test_a_partial_graph_does_not_contradict_a_parallel_claim(tmp_path: Path) -> None:
    from automaton_auditor.forensics.code.analyze import code_findings as run

    source = LOOPS.replace('graph.add_node(f"prosecutor_{pid}", judge)',
                           "graph.add_node(name_of(pid), judge)")
    _findings, rebuilt = run(tmp_path, write_repo(tmp_path, {"src/graph.py": source}))
    assert rebuilt is not None and not rebuilt.linear
    assert check_feature("fan_in", rebuilt)[0] != "contradicted"


def test_a_literal_list_is_still_unrolled_with_f_string_names(tmp_path: Path) -> None:
    source = """
        from langgraph.graph import StateGraph, START, END

        def node(state):
            return {}

        g = StateGraph(dict)
        g.add_node("start", node)
        g.add_edge(START, "start")
        for name in ["repo", "doc", "vision"]:
            g.add_node(f"{name}_detective", node)
            g.add_edge("start", f"{name}_detective")
            g.add_edge(f"{name}_detective", END)
        app = g.compile()
    """
    facts = _facts(tmp_path, source)
    assert facts["graph.fan_out"].data["fan_out"]["start"] == [
        "doc_detective", "repo_detective", "vision_detective"]
    assert "two copies" not in facts["graph.topology"].rationale


def test_loop_copies_made_by_a_detective_factory_are_parallel_detectives(
        tmp_path: Path) -> None:
    # the copies are named by the run-time item only; make_detective says what they are
    detectives = _facts(tmp_path, LOOPS)["graph.parallel_detectives"]
    one, two = "{rubric['dimensions'][#1]['id']}", "{rubric['dimensions'][#2]['id']}"
    assert detectives.found and detectives.data["source"] == "entry"
    assert detectives.data["members"] == [one, two]
    assert detectives.data["joins"] == ["aggregate"]
    assert "make_detective" in detectives.rationale


def test_loop_copies_of_unknown_role_are_not_denied_to_be_detectives(tmp_path: Path) -> None:
    # neither the name nor the factory (make_node) nor its closure (run) says what they are
    source = LOOPS.replace("make_detective", "make_node")
    facts = _facts(tmp_path, source)
    detectives = facts["graph.parallel_detectives"]
    assert not detectives.found and detectives.rationale.startswith("Not established")
    assert detectives.data["limitation"] and detectives.data["source"] == "entry"
    assert "No fan-out point" not in detectives.rationale
    # the judges are named: still found as before
    assert facts["graph.parallel_judges"].found
