"""Chief Justice rules kept in a table of (condition, action) callables that a loop runs."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import write_repo
from .test_code_synthesis import GRAPH

TABLE = '''
def _flaw(p, d, t, c):
    return "shell injection" in p.argument.lower()


def _cap(p, d, t, c):
    return min(3, t.score)


def _re_evaluate(p, d, t, c):
    return t.score


def _resolve(p, d, t, criterion_id):
    rules = [
        (_flaw, lambda p, d, t, c: _cap(p, d, t, c)),
        (lambda p, d, t, c: max([p.score, d.score, t.score]) - min([p.score, d.score, t.score]) > 2,
         _re_evaluate),
        (lambda p, d, t, c: "architecture" in c.lower(), lambda p, d, t, c: t.score),
    ]
    for condition, apply_fn in rules:
        if condition(p, d, t, criterion_id):
            return apply_fn(p, d, t, criterion_id)
    scores = [o.score for o in (p, d, t) if o]
    return t.score if t else sum(scores) // len(scores)


def chief_justice_node(state):
    p, d, t = state["opinions"]
    return {"final_score": _resolve(p, d, t, state["criterion_id"])}
'''


def _justice(tmp_path: Path, files: dict[str, str]) -> dict:
    paths = write_repo(tmp_path, files)
    findings, _ = code_findings(tmp_path, paths)
    return {f.facet: f for f in findings if f.facet.startswith("justice.")}


def test_rules_in_a_table_run_by_a_loop_are_rules(tmp_path: Path) -> None:
    facts = _justice(tmp_path, {"graph.py": GRAPH, "nodes/justice.py": TABLE})
    variance = facts["justice.variance"]
    assert variance.found, variance.rationale
    assert "nodes/justice.py:17: (lambda p, d, t, c: max(" in (variance.content or "")
    rules = facts["justice.rules"]
    assert rules.data["rules"]["functionality_weight"] == ["nodes/justice.py:19"]
    assert rules.data["rules"]["variance_re_evaluation"] == ["nodes/justice.py:17"]
    keyword = facts["justice.keyword_rules"]  # the named condition reads words, quoted
    assert keyword.found and "nodes/justice.py:16" in keyword.data["lines"]


def test_a_mean_taken_only_when_a_judge_is_missing_is_no_plain_mean(tmp_path: Path) -> None:
    facts = _justice(tmp_path, {"graph.py": GRAPH, "nodes/justice.py": '''
def chief_justice_node(state):
    p, d, t = state["opinions"]
    scores = [o.score for o in (p, d, t) if o]
    final_score = t.score if t else sum(scores) // len(scores)
    return {"final_score": final_score}
'''})
    for facet in ("justice.averaging", "justice.unweighted_mean"):
        assert facts[facet].found is False, facets_text(facts[facet])
        assert "nodes/justice.py:5" not in facts[facet].data["lines"]


def facets_text(finding: object) -> str:
    """What a finding says, for a failed assertion."""
    return f"{getattr(finding, 'rationale', '')} {getattr(finding, 'data', '')}"


def test_synthesis_starts_at_the_node_a_wrapper_hands_back(tmp_path: Path) -> None:
    graph = GRAPH.replace('g.add_node("chief_justice", chief_justice_node)',
                          'g.add_node("chief_justice", traced("CJ", chief_justice_node))')
    graph = graph.replace("def build(State):", '''def traced(name, fn):
    if name is None:
        return fn
    return trace(name)(fn)


def build(State):''')
    facts = _justice(tmp_path, {"graph.py": graph, "nodes/justice.py": '''
def _clamp(score):
    return max(1, min(5, int(round(score))))


def chief_justice_node(state):
    scores = [o.score for o in state["opinions"]]
    return {"final_score": _clamp(sum(scores) / len(scores))}
'''})
    node = facts["justice.node"]
    assert node.location == "nodes/justice.py:6", node.rationale
    assert "starts at chief_justice_node" in node.rationale
