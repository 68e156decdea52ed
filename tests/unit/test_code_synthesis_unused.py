"""A Chief Justice rule whose result nothing reads changes no score (`unused_decisions`,
`dead_stores`, `unused_rules`): it is credited as no rule and ``justice.unused_rules`` says
so, quoting the decision and the line that binds its result again."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.dead_stores import Flow
from automaton_auditor.forensics.code.unused_decisions import names_in_tests, unused

from .test_code_synthesis import _justice

CAPPED = '''
def chief_justice_node(state):
    ops = state["opinions"]
    final = round(sum(o.score for o in ops) / len(ops))
    if any(not ev.found for ev in state["evidences"]):
        final = min(final, 3)
    tech = [o.score for o in ops if o.judge == "TechLead"]
    WEIGHT
    return {"final_score": final}
'''
WEIGHT = "final = round((2 * tech[0] + sum(o.score for o in ops)) / (len(ops) + 2))"


def test_a_cap_a_later_weight_always_replaces_is_no_security_override(tmp_path: Path) -> None:
    """The weight assigns the score afresh on every path: the cap is lifted, whatever it
    found."""
    facts = _justice(tmp_path, CAPPED.replace("WEIGHT", WEIGHT))
    fact = facts["justice.unused_rules"]
    assert fact.found and fact.pattern == "failure"
    assert fact.goal.endswith("changes nothing (its result is never read)"), fact.goal
    assert fact.location == "nodes/justice.py:5"
    assert "The decision at nodes/justice.py:5 (credited as security override) writes final " \
        "(:6), which nothing reads before :8 binds it again" in fact.rationale
    assert "nodes/justice.py:8: final = round((2 * tech[0]" in (fact.content or "")
    rules = facts["justice.rules"].data["rules"]
    assert "security_override" not in rules and "fact_supremacy" not in rules


def test_a_cap_applied_after_the_weight_is_a_security_override(tmp_path: Path) -> None:
    facts = _justice(tmp_path, CAPPED.replace(WEIGHT, "").replace(
        "    WEIGHT\n", "").replace(
        "    final = round(sum(o.score for o in ops) / len(ops))\n",
        f"    {WEIGHT}\n".replace("tech[0]", "[o.score for o in ops][0]")))
    assert facts["justice.unused_rules"].found is False
    assert "security_override" in facts["justice.rules"].data["rules"]


def test_a_cap_replaced_only_on_some_paths_still_counts(tmp_path: Path) -> None:
    """The weight replaces the cap only on the architecture criterion: elsewhere the cap is
    the verdict, so the rule has an effect."""
    facts = _justice(tmp_path, CAPPED.replace(
        "WEIGHT", f'if state["criterion_id"] == "graph_orchestration":\n        {WEIGHT}'))
    assert facts["justice.unused_rules"].found is False
    assert "security_override" in facts["justice.rules"].data["rules"]


PRUNED = '''
def _weights(ops):
    return {o.judge: 2.0 if o.judge == "TechLead" else 1.0 for o in ops}


def chief_justice_node(state):
    ops = state["opinions"]
    unsupported = not any(e.found for e in state["evidences"])
    weights = {o.judge: 1.0 for o in ops}
    for o in ops:
        if unsupported and o.judge == "Defense":
            weights[o.judge] = 0.0
    RESET
    final = sum(weights[o.judge] * o.score for o in ops) / sum(weights.values())
    return {"final_score": round(final)}
'''


def test_a_pruning_undone_by_a_table_a_helper_builds_afresh_changes_nothing(
        tmp_path: Path) -> None:
    """The helper builds a new table without being handed the pruned one."""
    facts = _justice(tmp_path, PRUNED.replace("RESET", "weights = _weights(ops)"))
    fact = facts["justice.unused_rules"]
    assert fact.found
    assert "The decision at nodes/justice.py:11 (" in fact.rationale
    assert ") writes weights (:12), which nothing reads before :13 binds it again" \
        in fact.rationale
    assert fact.data["rules"][0]["over"] == [13]


def test_a_pruned_table_the_mean_reads_counts(tmp_path: Path) -> None:
    for reset in ("pass", "weights = _weights(ops) if not weights else weights"):
        facts = _justice(tmp_path, PRUNED.replace("RESET", reset))
        assert facts["justice.unused_rules"].found is False, reset


def _mark(code: str) -> JSON | None:
    """The mark of the decision tagged ``# decision`` in the first function of `code`."""
    code = textwrap.dedent(code)
    fn = ast.parse(code).body[0]
    assert isinstance(fn, ast.FunctionDef)
    line = next(n for n, text in enumerate(code.splitlines(), 1) if "# decision" in text)
    stmt = next(s for s in ast.walk(fn) if isinstance(s, ast.If | ast.Assign)
                and s.lineno == line)
    flow = Flow.build(fn)
    assert flow is not None
    return unused(flow, stmt, names_in_tests(fn))


def test_a_pruned_list_reset_each_criterion_and_replaced_is_unused() -> None:
    """A judge pruned on a bad citation (a loop of that decision alone, left with
    ``break``); each path then either never reads the list or replaces it."""
    mark = _mark('''
    def synth(self, state, groups):
        out = []
        for cid, ops in groups.items():
            kept = ["Prosecutor", "Defense", "TechLead"]
            trace = []
            for judge in list(kept):
                for cit in ops[judge].cited:
                    if not state.registry.exists(cit):  # decision
                        kept.remove(judge)
                        trace.append(f"pruned {judge}")
                        break
            if cid == "safe":
                final = 3
            else:
                kept, trace = self.arbitrate(ops, trace)
                final = self.weigh(ops, kept)
            out.append((cid, final, trace))
        return out
    ''')
    assert mark == {"names": ["kept"], "at": [10], "over": [5, 16]}


def test_a_list_shared_before_the_decision_or_read_after_is_live() -> None:
    base = '''
    def synth(self, ops, bad):
        kept = [o.judge for o in ops]
        SHARE
        if bad:  # decision
            kept.remove("Defense")
        READ
        kept = self.arbitrate(ops)
        return self.weigh(ops, kept), LAST
    '''
    cases = {"plain": ("pass", "pass", "0"), "kept on self": ("self.kept = kept", "pass", "0"),
             "an alias read": ("alias = kept", "pass", "alias"),
             "returned by max": ("alias = max(kept, [])", "pass", "alias"),
             "in a generator": ("alias = (j for j in kept)", "pass", "list(alias)"),
             "read before the reset": ("pass", "if len(kept) < 2:\n            return 1", "0")}
    for name, (share, read, last) in cases.items():
        code = base.replace("SHARE", share).replace("READ", read).replace("LAST", last)
        assert (_mark(code) is None) == (name != "plain"), name


def test_a_store_into_an_item_may_change_what_another_name_holds() -> None:
    code = '''
    def synth(ops, bad):
        kept = list(ops)
        if bad:  # decision
            STORE
        kept = []
        return sum(o.score for o in ops)
    '''
    assert _mark(code.replace("STORE", "kept[0] = None")) is not None  # the copy itself
    assert _mark(code.replace("STORE", "kept[0].score = 1")) is None  # an opinion of ops


def test_a_break_leaving_a_loop_that_does_more_keeps_the_decision_live() -> None:
    mark = _mark('''
    def synth(ops, bad):
        total = 0
        for o in ops:
            seen = 0
            if o.judge in bad:  # decision
                seen = 1
                break
            total += o.score
        return total
    ''')
    assert mark is None


def test_a_handler_reading_the_value_keeps_it_live() -> None:
    code = '''
    def synth(ops):
        final = 3
        try:
            if ops[0].score < 2:  # decision
                final = 1
            final = ops[1].score
        except IndexError:
            HANDLER
        return final
    '''
    assert _mark(code.replace("HANDLER", "pass")) is None  # the handler returns final
    assert _mark(code.replace("HANDLER", "final = 2")) == {
        "names": ["final"], "at": [6], "over": [7, 9]}


def test_a_chain_deeper_than_the_builder_recurses_is_given_up_on() -> None:
    """Each ``elif`` nests the next: past the recursion limit the flow is not built (every
    decision stays live) rather than the file's facts being lost."""
    chain = "".join(f"    elif x == {i}:\n        final = {i}\n" for i in range(1, 1500))
    code = f"def judge_score(x):\n    final = 0\n    if x == 0:\n        final = 1\n{chain}" \
        "    return final\n"
    fn = ast.parse(code).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert Flow.build(fn) is None
