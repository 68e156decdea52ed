"""A Chief Justice rule whose result nothing reads changes no score (`unused_decisions`,
`dead_stores`): its branch is marked with what it writes and the lines that bind it again."""

from __future__ import annotations

import ast
import textwrap

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.dead_stores import Flow
from automaton_auditor.forensics.code.unused_decisions import names_in_tests, unused


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
