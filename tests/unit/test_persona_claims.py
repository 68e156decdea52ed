"""Report statements about what a persona's prompt says, read against the code: words quoted
as a prompt that no string of the code holds, and a persona said to be prompted to look for
security flaws whose prompt never names security."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.names import FIELD, code_names, normalised
from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.pdf.chunks import SENTENCE_SPLIT
from automaton_auditor.forensics.pdf.claims import extract_statements
from automaton_auditor.forensics.persona_claims import held
from automaton_auditor.state import CodeNames, Finding

from .test_code_ast_graph import write_repo
from .test_judge_prompts import CONFIG_DICT, ONE_SENTENCE

TEMPLATE = '''
ROLE = "Prosecutor"
RULES = """Walk through each criterion. If evidence says 'No unsafe constructs found',
you MUST clear the defendant."""


def prompt(role):
    return f"You are the {role}. Your role is: Trust No One. Assume Vibe Coding."
'''


def _audit(tmp_path: Path, source: str) -> tuple[list[Finding], CodeNames]:
    files = write_repo(tmp_path, {"src/nodes/judges.py": source})
    findings, _ = code_findings(tmp_path, files)
    return findings, code_names(tmp_path, files)


def _said(code: list[Finding], names: CodeNames | None, *texts: str) -> list[Finding]:
    claims = extract_statements([(page, text) for page, text in enumerate(texts, start=1)],
                                SENTENCE_SPLIT)
    return [f for f in contradiction_findings(claims, code, None, names)
            if f.facet == "claims.contradictions"]


def test_the_code_strings_are_kept_normalised_with_template_fields(tmp_path: Path) -> None:
    _, names = _audit(tmp_path, TEMPLATE)
    assert names.strings is not None
    assert "you are the \u00a7 your role is trust no one assume vibe coding" in names.strings
    assert normalised("Don't  {name}, %s!") == "don t \u00a7 \u00a7"


def test_a_quote_of_a_prompt_no_string_of_the_code_holds(tmp_path: Path) -> None:
    code, names = _audit(tmp_path, ONE_SENTENCE)
    facts = _said(code, names, "1. The Prosecutor: Configured with a \u201cZero Tolerance\u201d "
                               "prompt, aggressively seeking compliance failures.")
    assert len(facts) == 1 and facts[0].location == "report p.1"
    assert "\u201cZero Tolerance\u201d" in facts[0].rationale
    assert facts[0].data["kind"] == "prompt_quote"
    # the Prosecutor's prompt lines are quoted beside the report's sentence
    assert "src/nodes/judges.py:18:" in (facts[0].content or "")


def test_quotes_the_code_holds_hedged_or_unread_contradict_nothing(tmp_path: Path) -> None:
    code, names = _audit(tmp_path, TEMPLATE)
    assert _said(
        code, names,
        # a template's field filled with the persona's name, two parts around an ellipsis
        "The Prosecutor prompt: \u201cYou are the Prosecutor. Your role is: Trust No One...\u201d",
        'The judges share one instruction: "If evidence says ... you MUST clear the defendant".',
        "The Prosecutor should get a \u201cZero Tolerance\u201d prompt.",  # a plan
        "The Prosecutor said \u201cthe code is unsafe\u201d.") == []  # its output, not a prompt
    assert _said(code, CodeNames(), "The Prosecutor has a \u201cZero Tolerance\u201d prompt.") == []


def test_a_persona_said_to_be_prompted_for_security_flaws_it_never_is(tmp_path: Path) -> None:
    code, names = _audit(tmp_path, ONE_SENTENCE)
    personas = next(f for f in code if f.facet == "judges.personas")
    assert personas.data["security"] == {"Prosecutor": False, "Defense": False,
                                         "TechLead": False}
    # "Its prompt" is the persona the sentence before names
    facts = _said(code, names, "Thesis (Prosecutor): The prosecutor node is cynical. Its prompt "
                               "instructs it to look for missing pieces, security flaws and "
                               "violations of the rubric's letter.")
    assert len(facts) == 1 and "Prosecutor's prompt" in facts[0].rationale
    assert facts[0].data["kind"] == "prompt_security"
    assert _said(code, names,
                 "The rubric requires the Prosecutor prompt to hunt for security flaws.",
                 "The Prosecutor's prompt does not mention security.",
                 "Its prompt instructs it to look for security flaws.") == []  # no persona


def test_a_prosecutor_whose_prompt_names_security_is_described_truly(tmp_path: Path) -> None:
    code, names = _audit(tmp_path, CONFIG_DICT)
    personas = next(f for f in code if f.facet == "judges.personas")
    assert personas.data["security"]["Prosecutor"] is True
    assert _said(code, names, "The Prosecutor's prompt instructs it to hunt for security "
                              "flaws and gaps.") == []


def test_words_inside_the_quote_do_not_hedge_it(tmp_path: Path) -> None:
    code, names = _audit(tmp_path, TEMPLATE)
    facts = _said(code, names, "Each judge's instruction reads: \u201cIf the evidence is thin, "
                               "you MUST score 1\u201d.")
    assert len(facts) == 1 and "you must score 1" in facts[0].rationale


def test_a_quoted_persona_of_the_whole_system_is_no_judges_prompt(tmp_path: Path) -> None:
    code, names = _audit(tmp_path, TEMPLATE)
    assert _said(code, names, "Pydantic is central to the system's \u201cForensic Expert\u201d "
                              "persona: every fact is typed.") == []


def test_quotes_near_the_word_prompt_that_are_no_prompt(tmp_path: Path) -> None:
    code, names = _audit(tmp_path, TEMPLATE)
    assert _said(
        code, names,
        # a judge's output, then a next sentence that begins with "Persona"
        '\u25cf Prosecutor: 1 "No evidence of judge differentiation." Persona prompts were not '
        "surfaced.",
        # a rubric term several words after "prompts"
        'Current: Judge prompts 70% similar \u2192 Risk of "Persona Collusion" (Score 2).') == []


def test_a_template_of_many_fields_is_matched_in_bounded_work() -> None:
    # Thirty fields (up to six words each) then a word: a quote of 200 words the fields
    # cannot all absorb does not fit, and without memoised matching the fillings tried
    # multiply field by field before that is known.
    template = " ".join([FIELD] * 30 + ["alpha"])
    quote = " ".join(["alph"] * 200)
    assert held(quote, [template], f" {template} ") is False
    assert held("alph alpha", [template], f" {template} ") is True
