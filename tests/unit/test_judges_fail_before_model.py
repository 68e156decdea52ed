"""Judges that fail before their model call (`forensics.code.blocked`): a name read on the
way to every model call of a judge is never bound, so the persona's prompt is never sent;
judicial_nuance must not credit personas that never run. Names ruff knows are bound
(``global``, imports, builtins, comprehension variables) or may be (a star import) give no
fact, nor do reads the call does not always pass (after it, in a branch, under ``try``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.blocked import fails_before
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Finding
from tests.conftest import make_evidence

from .test_code_ast_graph import by_facet, write_repo

# three distinct persona prompts, shared with the other judge fixtures
PERSONA_PROMPTS = '''\
PROSECUTOR = """You are the Prosecutor. Trust no one and assume vibe coding: hunt for gaps,
security flaws, missing schemas and lazy shortcuts in every artifact, charge each confirmed
violation, and never give the benefit of the doubt to intent or effort you cannot see."""
DEFENSE = """You are the Defense. Reward effort and intent: look for the spirit of the law,
creative workarounds and iterative commits, credit partial implementations generously, and
argue for the highest score the evidence can honestly support before criticizing."""
TECH_LEAD = """You are the Tech Lead. Ask whether it actually works and is maintainable:
weigh the architecture, technical debt and practical viability, ignore vibe and struggle,
break ties between the other judges, and give concrete remediation for each finding."""'''
JUDGES_PY = '''
from langchain_core.messages import HumanMessage, SystemMessage
{head}

{personas}


def _invoke(llm, messages):
    return llm.invoke(messages)


def _setup():
{setup}
    return GUIDANCE


def _judge(llm, system, evidence, strict=False):
{body}


def prosecutor_node(state, llm):
{prosecutor}


def defense_node(state, llm):
    return _judge(llm, DEFENSE, state["evidence"])


def tech_lead_node(state, llm):
    return _judge(llm, TECH_LEAD, state["evidence"])
'''
SETUP = '    GUIDANCE = "Score 1 fails the criterion, 5 meets the success pattern."'
CALL = "    return _invoke(llm, [SystemMessage(content=system), HumanMessage(content=user)])"
# the name is bound only inside _setup, and read on the way to every model call
READ = f'    user = f"Evidence:\\n{{evidence}}\\n\\nGuidance:\\n{{GUIDANCE}}"\n{CALL}'
PROSECUTOR = '    return _judge(llm, PROSECUTOR, state["evidence"])'


def _facts(tmp_path: Path, body: str = READ, head: str = "", setup: str = SETUP,
           prosecutor: str = PROSECUTOR) -> tuple[Finding, Finding]:
    source = JUDGES_PY.format(head=head, setup=setup, body=body, prosecutor=prosecutor,
                              personas=PERSONA_PROMPTS)
    files = write_repo(tmp_path, {"src/nodes/judges.py": source})
    findings, _ = code_findings(tmp_path, files)
    return (by_facet(findings, "judges.fail_before_model"),
            by_facet(findings, "llm.fail_before_model"))


def _where(root: Path, needle: str) -> str:
    """``path:line`` of the first line of the written judges file that holds `needle`."""
    lines = (root / "src/nodes/judges.py").read_text().splitlines()
    return f"src/nodes/judges.py:{next(i for i, t in enumerate(lines, 1) if needle in t)}"


def test_judges_that_read_a_name_bound_only_in_another_function_never_reach_the_model(
        tmp_path: Path) -> None:
    judges, llm = _facts(tmp_path)
    assert judges.found and llm.found, judges.rationale
    line = _where(tmp_path, "{GUIDANCE}")
    assert judges.data["blocked"] == {"Prosecutor": [line], "Defense": [line],
                                      "TechLead": [line]}
    assert judges.data["cap"] == 2 and judges.location == line
    assert f"{line}: user = f" in (judges.content or "")  # the failing line, quoted
    call = _where(tmp_path, "return llm.invoke(messages)")
    assert f"model call {call}: return llm.invoke(messages)" in (judges.content or "")
    assert "no persona prompt is ever sent" in judges.rationale


@pytest.mark.parametrize(("body", "head", "setup"), [
    (READ, "", "    global GUIDANCE\n" + SETUP),  # bound at module level by `global`
    (READ, "from rubric import GUIDANCE", SETUP),  # imported
    (READ, "from rubric import *", SETUP),  # may come from the star import: unknown
    (READ.replace("{GUIDANCE}", "{len(evidence)}"), "", SETUP),  # a builtin
    (READ.replace("{GUIDANCE}", "{[g for g in evidence]}"), "", SETUP),  # comprehension
    # read after the model call, in a branch, in a conditional's branch, under try
    ("    user = evidence\n    answer = _invoke(llm, [SystemMessage(content=system), "
     "HumanMessage(content=user)])\n    print(GUIDANCE)\n    return answer", "", SETUP),
    (f'    user = evidence\n    if strict:\n        user += GUIDANCE\n{CALL}', "", SETUP),
    (f'    user = GUIDANCE if strict else evidence\n{CALL}', "", SETUP),
    (f'    user = strict and GUIDANCE or evidence\n{CALL}', "", SETUP),
    (f'    try:\n        user = GUIDANCE\n    except NameError:\n        user = evidence\n'
     f'{CALL}', "", SETUP),
])
def test_names_that_are_bound_or_reads_the_call_can_skip_give_no_fact(
        tmp_path: Path, body: str, head: str, setup: str) -> None:
    judges, llm = _facts(tmp_path, body, head, setup)
    assert not judges.found and not llm.found, judges.rationale
    assert judges.data["blocked"] == {}


def test_a_name_in_the_model_calls_own_arguments_or_a_class_body_fails_before_it(
        tmp_path: Path) -> None:
    in_call = ("    return llm.invoke([SystemMessage(content=system),\n"
               "                       HumanMessage(content=evidence + GUIDANCE)])")
    judges, _ = _facts(tmp_path / "call", in_call)
    assert judges.found and judges.location == _where(tmp_path / "call", "+ GUIDANCE")
    # a name bound in a class body is no name outside it
    head = 'class Rubric:\n    LEVELS = "1..5"\n'
    body = f'    user = evidence\n    levels = LEVELS\n{CALL}'
    judges, _ = _facts(tmp_path / "read", body, head)
    assert judges.found and judges.location == _where(tmp_path / "read", "levels = LEVELS")


def test_one_judge_failing_caps_less_and_leaves_the_schema_fact(tmp_path: Path) -> None:
    body = f"    user = evidence\n{CALL}"
    broken = '    note = f"{GUIDANCE}"\n' + PROSECUTOR
    judges, llm = _facts(tmp_path, body, prosecutor=broken)
    assert judges.found and judges.data["blocked"] == {
        "Prosecutor": [_where(tmp_path, "note = ")]}
    assert judges.data["cap"] == 3 and not llm.found


def test_fails_before_reads_only_what_runs_on_every_path_to_the_call() -> None:
    source = ("def f(items, llm):\n"          # 1
              "    fn = lambda: A\n"           # 2  a lambda's body may never run
              "    with open(B):\n"            # 3  a with item runs before its body
              "        pass\n"                 # 4
              "    for x in items:\n"          # 5
              "        if x:\n"                # 6
              "            C\n"                # 7  a branch the call does not pass
              "        llm.invoke(x)\n"        # 8
              "    D\n")                       # 9  after the call
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    call = next(n for n in ast.walk(fn) if isinstance(n, ast.Call) and n.lineno == 8)
    assert fails_before(fn, call, {(2, "A"), (7, "C"), (9, "D")}) is None
    assert fails_before(fn, call, {(3, "B"), (7, "C")}) == 3
    assert fails_before(fn, call, {(5, "items")}) == 5  # the loop's iterable
    assert fails_before(fn, call, {(8, "x")}) == 8  # its own argument


def test_judges_that_never_reach_the_model_cap_nuance_at_two_and_schemas_at_three() -> None:
    rubric = load_rubric()
    for criterion, facet, data, expected in (
            ("judicial_nuance", "judges.fail_before_model", {"cap": 2}, 2),
            ("structured_output_enforcement", "llm.fail_before_model", {"cap": 2}, 3)):
        dim = rubric.dimension(criterion)
        good = [make_evidence(f"ok {i}", dimension=dim.id, facet=f"{facet}.s{i}",
                              confidence=1.0) for i in range(4)]
        failed = make_evidence("judges fail", dimension=dim.id, facet=facet, found=True,
                               pattern="failure", confidence=0.85, data=data)
        for dossier, score in ((good, 5), ([*good, failed], expected)):
            opinions = [offline_opinion(j, dim, dossier) for j in JUDGES]
            assert decide(dim, opinions, dossier, rubric).final_score == score
