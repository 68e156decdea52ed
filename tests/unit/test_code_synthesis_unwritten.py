"""Chief Justice rules gated on a state value nothing ever writes never fire, and a spread
that only picks a note is a dissent."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice

STATE = '''
from typing import List, Optional, TypedDict
from langgraph.graph import StateGraph, START, END
from nodes.justice import chief_justice_node


class AgentState(TypedDict):
    opinions: List[dict]
    synthesis_rules: Optional[dict]
    final_score: int


g = StateGraph(AgentState)
g.add_node("chief_justice", chief_justice_node)
g.add_edge(START, "chief_justice")
g.add_edge("chief_justice", END)
app = g.compile()


def run(opinions):
    initial_state = {{"opinions": opinions, "final_score": 0{extra}}}
    return app.invoke(initial_state)
'''

GATED = '''
def resolve(ops, rules):
    scores = [o.score for o in ops]
    avg = sum(scores) / len(scores)
    override = False
    if rules and rules.get("security_override"):
        if min(scores) == 1:
            override = True
    if override:
        return 3
    return avg


def chief_justice_node(state):
    return {"final_score": round(resolve(state["opinions"], state.get("synthesis_rules")))}
'''


def test_a_rule_gated_on_a_state_key_nothing_writes_never_fires(tmp_path: Path) -> None:
    facts = _justice(tmp_path / "a", GATED, {"graph.py": STATE.format(extra="")})
    averaging = facts["justice.averaging"]
    # the gate's rule and the test of the flag it sets are both dead
    assert averaging.found and averaging.data["dead_rules"] == 3
    assert "nodes/justice.py:9: if override:" in (averaging.content or "")
    assert "never fire" in facts["justice.rules"].rationale
    # the graph's input carries the key: the rule can fire
    given = STATE.format(extra=', "synthesis_rules": {"security_override": True}')
    live = _justice(tmp_path / "b", GATED, {"graph.py": given})
    assert live["justice.averaging"].found is False
    assert live["justice.rules"].data["rules"]["security_override"] == ["nodes/justice.py:9"]


def test_a_rule_gated_on_a_key_a_node_writes_or_a_data_file_names_can_fire(
        tmp_path: Path) -> None:
    writer = GATED + '''

def load_rules(state):
    return {"synthesis_rules": {"security_override": True}}
'''
    facts = _justice(tmp_path / "a", writer, {"graph.py": STATE.format(extra="")})
    assert facts["justice.averaging"].found is False
    data = _justice(tmp_path / "b", GATED, {"graph.py": STATE.format(extra=""),
                                            "rubric.json": '{"synthesis_rules": {}}'})
    assert data["justice.averaging"].found is False



def test_a_spread_that_only_picks_a_note_is_a_dissent(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    scores = [o.score for o in state["opinions"]]
    final = sum(scores) // len(scores)
    if state["criterion"] == "architecture":
        final = max(scores)
    variance = max(scores) - min(scores)
    dissent = ("Significant disagreement." if variance > 2 else None)
    return {"final_score": final, "dissent": dissent}
''')
    variance = facts["justice.variance"]
    assert variance.found is False
    assert variance.rationale == "The score spread only adds dissent text."
    assert "dissent_requirement" in facts["justice.rules"].data["rules"]


def test_a_fallback_for_no_scores_is_no_cap_on_a_judge_s_score(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def resolve(ops):
    scores = [o.score for o in ops]
    if not scores:
        return 3
    low = min(scores) <= 1
    if low:
        return 2
    return round(sum(scores) / len(scores))


def chief_justice_node(state):
    return {"final_score": resolve(state["opinions"])}
''')
    # the cap on a judge's score (through the flag) is a rule; the empty-list fallback is not
    assert facts["justice.rules"].data["rules"]["security_override"] == ["nodes/justice.py:7"]


def test_a_data_file_linked_out_of_the_repository_is_never_read(tmp_path: Path) -> None:
    """A `.json` symlink to a device would hang a plain read: it is refused unread, and the
    keys count as possibly written (nothing concluded); a regular file is read."""
    from automaton_auditor.forensics.code.state_writers import _in_data_files

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "rules.json").write_text('{"synthesis_rules": {}}')
    assert _in_data_files(repo, {"synthesis_rules", "other"}) == {"synthesis_rules"}
    (repo / "zero.json").symlink_to("/dev/zero")
    assert _in_data_files(repo, {"synthesis_rules", "other"}) == {"synthesis_rules", "other"}
