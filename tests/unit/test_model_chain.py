"""A loop over models that tries the judge's call on each and leaves once one answers
(``for model in llms: try: ... break except: continue``) retries a failed call on the next
model: a retry with fallback. A loop over criteria whose call fails and moves on is none."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

CHAIN = '''
from state import JudicialOpinion


def judge(llms, prompt):
    opinion = None
    for model in llms:
        structured = model.with_structured_output(JudicialOpinion)
        try:
            opinion = structured.invoke(prompt)
            break
        except Exception as exc:
            print(exc)
            continue
    return opinion
'''


def test_a_chain_of_models_tried_in_turn_is_a_retry(tmp_path: Path) -> None:
    files = write_repo(tmp_path / "a", {"judges.py": CHAIN})
    retry = by_facet(code_findings(tmp_path / "a", files)[0], "llm.retry")
    assert retry.found and retry.location == "judges.py:10", retry.rationale


def test_a_loop_over_items_calling_one_model_is_no_chain(tmp_path: Path) -> None:
    # the loop's item is the prompt, not the model that answers: a failure moves on
    items = CHAIN.replace("for model in llms:", "for item in llms:").replace(
        "structured = model.with_structured_output(JudicialOpinion)",
        "structured = prompt.with_structured_output(JudicialOpinion)")
    files = write_repo(tmp_path / "b", {"judges.py": items})
    assert not by_facet(code_findings(tmp_path / "b", files)[0], "llm.retry").found
