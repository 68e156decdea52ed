"""What a return surely gives a key (`sure_values`) and what a router's test says about a key
(`guards`): read on small functions."""

from __future__ import annotations

import ast

from automaton_auditor.forensics.code.guards import NO_ITEM
from automaton_auditor.forensics.code.outs import outs_of
from automaton_auditor.forensics.code.sure_values import FILLED, NEW, NONEMPTY


def _outs(source: str) -> list[dict]:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return outs_of(node, {})


def _written(source: str) -> list[object]:
    """What each return of a node gives ``evidences`` and ``flat``."""
    return [(o["keys"]["evidences"], o["keys"]["flat"]) for o in _outs(source)]


FILLING = '''
def detective(state):
    found = []
    try:
        found.append(clone(state["repo_url"]))
    except CloneError as err:
        found.append(str(err))
    if state.get("pdf"):
        found.append("pdf")
    return {"evidences": {"repo": found}, "flat": found}
'''


def test_a_list_added_to_on_every_returning_path_is_non_empty() -> None:
    """amin3ltd: the try body and the handler both append; a path that raises never
    returns. The dict holding that list under a key holds a non-empty item."""
    (out,) = _outs(FILLING)
    assert out["keys"] == {"evidences": FILLED, "flat": NONEMPTY}


def test_a_path_that_may_add_nothing_leaves_the_list_unknown() -> None:
    assert _written(FILLING) == [(FILLED, NONEMPTY)]
    cases = [
        FILLING.replace("        found.append(str(err))\n", "        pass\n"),
        FILLING.replace("    try:\n        found.append(clone(state[\"repo_url\"]))\n",
                        "    for url in state[\"urls\"]:\n        found.append(url)\n    try:\n"
                        "        clone(url)\n"),
        FILLING.replace("    return {", "    found.clear()\n    return {"),
        FILLING.replace("    return {", "    dedupe(found)\n    return {"),
        FILLING.replace("    return {", "    alias = found\n    alias.pop()\n    return {"),
        FILLING.replace("    if state.get(\"pdf\"):\n        found.append(\"pdf\")\n",
                        "    if state.get(\"pdf\"):\n        found = []\n"),
    ]
    for case in cases:  # a dict with a key is non-empty, whatever it holds
        assert _written(case) == [(NONEMPTY, "?")], case


def test_a_constructed_object_is_kept_until_the_name_is_rebound() -> None:
    source = ('def chief(state):\n    report = Report.model_validate(make(state))\n'
              '    report.score = 3\n    if not report.criteria:\n        raise ValueError()\n'
              '    return {"final_report": report}\n')
    assert _outs(source)[0]["keys"] == {"final_report": NEW + "Report"}
    rebound = source.replace("        raise ValueError()\n", "        report = None\n")
    assert _outs(rebound)[0]["keys"] == {"final_report": "?"}


def test_a_test_of_the_items_of_a_key_guards_both_ways() -> None:
    """amin3ltd's ``check_evidence``: ``any`` over the values, through locals."""
    outs = _outs("def route(state):\n    evidences = state.get('evidences', {})\n"
                 "    has = any(len(v) > 0 for v in evidences.values() if v)\n"
                 "    print(len(evidences))\n"
                 "    if has:\n        return 'continue'\n    return 'error'\n")
    assert [o["guards"] for o in outs] == [[["evidences", True]], [["evidences", NO_ITEM]]]
    # a field of each item is no test of the item: when it fails nothing is known
    outs = _outs("def route(state):\n    items = state.get('evidences', {}).get('general', [])\n"
                 "    if any(not e.found for e in items):\n        return 'error'\n"
                 "    return 'judges'\n")
    assert [o["guards"] for o in outs] == [[["evidences", True]], []]


def test_a_count_and_an_or_of_tests_guard_the_key() -> None:
    outs = _outs("def route(state):\n"
                 "    if not state.get('evidences') or len(state['evidences']) == 0:\n"
                 "        return 'error'\n    return 'judges'\n")
    assert [o["guards"] for o in outs] == [[["evidences", False]], [["evidences", True]]]
