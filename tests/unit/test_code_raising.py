"""A graph node that raises on every run (formatting a literal that cannot be formatted, such
as a JSON example with single braces in an f-string) never returns: the facts crediting the
code only it runs are told so, and the criterion is charged (`<family>.always_raises`)."""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.bad_format import format_error
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import Evidence, Finding

from .test_code_ast_graph import write_repo
from .test_code_synthesis import GRAPH

JUSTICE = '''
import json


def weigh(opinions):
    return {o["criterion"]: o["score"] * (2 if o["judge"] == "TechLead" else 1)
            for o in opinions}


def chief_justice_node(state):
    opinions = state["opinions"]
    if not opinions:
        return {"final_report": "no opinions"}
    scores = weigh(opinions)
    for op in opinions:
        if op["judge"] == "Prosecutor" and op["score"] <= 1:
            scores[op["criterion"]] = min(scores[op["criterion"]], 3)
    PROMPT
    return {"final_report": prompt, "scores": scores}
'''

SINGLE = '''prompt = f"""Write the report for {json.dumps(scores)}.
    OUTPUT FORMAT (JSON): { "summary": "text" }
    """'''


def _facts(tmp_path: Path, prompt: str) -> dict[str, Finding]:
    files = write_repo(tmp_path, {"graph.py": GRAPH,
                                  "nodes/justice.py": JUSTICE.replace("PROMPT", prompt)})
    findings, _ = code_findings(tmp_path, files)
    return {f.facet: f for f in findings if f.facet.startswith("justice.")}


def test_a_justice_node_whose_prompt_cannot_be_formatted_always_raises(tmp_path: Path) -> None:
    facts = _facts(tmp_path, SINGLE)
    fact = facts["justice.always_raises"]
    assert fact.found and fact.pattern == "failure"
    assert fact.location == "nodes/justice.py:18"
    assert (fact.content or "").splitlines()[0] == \
        'nodes/justice.py:18: prompt = f"""Write the report for {json.dumps(scores)}.'
    assert "ValueError: Invalid format specifier" in fact.rationale
    assert "justice.node" in fact.data["voided"]
    assert "chief_justice_node) always raises" in facts["justice.node"].rationale
    evidence = Evidence(**fact.model_dump(), source="repo", dimension="chief_justice_synthesis")
    caps = confirmed_caps("chief_justice_synthesis", [evidence])
    assert [(row.facet, row.cap) for row, _ in caps] == [("justice.always_raises", 2)]


def _raises(tmp_path: Path, name: str, prompt: str) -> bool:
    """Whether the justice node with `prompt` is charged; the credited node fact is kept
    either way, and says the node raises only when it is charged."""
    facts = _facts(tmp_path / name, prompt)
    said = "always raises" in facts["justice.node"].rationale
    assert facts["justice.node"].found and said == ("justice.always_raises" in facts)
    return said


def _guarded(head: str, tail: str) -> str:
    return f"{head}:\n        " + SINGLE.replace("\n", "\n    ") + f"\n    {tail}:\n" \
        "        prompt = 'fallback'"


def test_doubled_braces_format(tmp_path: Path) -> None:
    assert _raises(tmp_path, "single", SINGLE)
    doubled = SINGLE.replace('{ "summary": "text" }', '{{ "summary": "text" }}')
    assert not _raises(tmp_path, "doubled", doubled)


def test_a_handler_that_catches_the_error_keeps_the_node_running(tmp_path: Path) -> None:
    assert _raises(tmp_path, "other", _guarded("try", "except KeyError"))
    assert not _raises(tmp_path, "caught", _guarded("try", "except Exception"))
    assert not _raises(tmp_path, "value", _guarded("try", "except (KeyError, ValueError)"))


def test_a_line_behind_a_branch_is_not_charged(tmp_path: Path) -> None:
    assert _raises(tmp_path, "always", SINGLE)
    assert not _raises(tmp_path, "branch", _guarded("if scores", "else"))


def test_a_helper_the_node_calls_on_every_run_is_followed(tmp_path: Path) -> None:
    code = JUSTICE.replace("PROMPT", "prompt = build(scores)") + \
        "\n\ndef build(scores):\n    " + SINGLE + "\n    return prompt\n"
    files = write_repo(tmp_path, {"graph.py": GRAPH, "nodes/justice.py": code})
    findings, _ = code_findings(tmp_path, files)
    fact = next(f for f in findings if f.facet == "justice.always_raises")
    assert fact.location == "nodes/justice.py:23"
    assert (fact.content or "").splitlines()[:2] == [
        "nodes/justice.py:18: prompt = build(scores)",
        'nodes/justice.py:23: prompt = f"""Write the report for {json.dumps(scores)}.']


def _error(code: str) -> str | None:
    tree = ast.parse(code)
    return next((why for node in ast.walk(tree) if (why := format_error(node))), None)


def test_literal_formats_checked_without_running_the_code() -> None:
    assert _error("f'{ \"score\": 5 }'") == "ValueError: Unknown format code"
    assert _error("f'{{ \"score\": 5 }}'") is None
    assert _error("f'{\"x\":{width}}'") is None  # the spec holds a value: not a literal
    # a field nested in another's spec is formatted too (chacha's JSON example)
    assert _error("f'{x:{ \"score\": 5 }}'") == "ValueError: Unknown format code"
    assert _error("f'{3.5:.2f} {1:>10} {x!r:>4}'") is None
    assert _error("f'{\"a\"!r:d}'") == "ValueError: Unknown format code"
    assert _error("'{ \"score\": 5 }'.format(s=1)") == "KeyError: ' \"score\"'"
    assert _error("'{ \"score\": 5 }'.format(**fields)") is None
    assert _error("'{name} {0}'.format(1, name=2)") is None
    assert _error("'{ oops'.format()") == "ValueError: expected '}' before end of string"
    assert _error("f'{1:99999999999}'") is None  # never allocated to be checked
