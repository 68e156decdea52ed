"""A judge whose model call fails and that still hands out a score its code writes
(``except Exception: return JudicialOpinion(score=3, ...)``, or the same after a retry loop
runs out) is the leak the rubric's Tech Lead asks about: ``llm.fallback_score``. Read only in
the code the judge nodes run; a constant score on another path is a rule, not a failure."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import by_facet, write_repo

GRAPH = '''
from typing import TypedDict

from langchain_openai import ChatOpenAI
from langgraph.graph import StateGraph, START, END
from state import JudicialOpinion


class State(TypedDict):
    opinions: list


def fallback(judge, error):
    return JudicialOpinion(judge=judge, score=3, argument=f"failed: {{error}}")


{judge}


def doc_analyst(state):
    try:
        return {{"opinions": [ChatOpenAI(model="x").invoke("read")]}}
    except Exception:
        return {{"opinions": [{{"score": 2}}]}}


builder = StateGraph(State)
builder.add_node("doc_analyst", doc_analyst)
builder.add_node("prosecutor", prosecutor)
builder.add_edge(START, "doc_analyst")
builder.add_edge("doc_analyst", "prosecutor")
builder.add_edge("prosecutor", END)
graph = builder.compile()
'''

RAISES = '''def prosecutor(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    try:
        return {"opinions": [llm.invoke("judge")]}
    except Exception as error:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=3,
                                             argument=str(error))]}'''

RETRIES = '''def prosecutor(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    for attempt in range(3):
        try:
            return {"opinions": [llm.invoke("judge")]}
        except Exception as error:
            last = error
    return {"opinions": [fallback("Prosecutor", last)]}'''

RULE = '''def prosecutor(state):
    if not state["opinions"]:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1, argument="none")]}
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    return {"opinions": [llm.invoke("judge")]}'''


def _fallback(tmp_path: Path, judge: str) -> Finding:
    files = write_repo(tmp_path, {"graph.py": GRAPH.format(judge=judge)})
    return by_facet(code_findings(tmp_path, files)[0], "llm.fallback_score")


def test_a_fixed_score_when_the_judge_call_raises_is_a_fallback_score(tmp_path: Path) -> None:
    fact = _fallback(tmp_path, RAISES)
    assert fact.found and fact.pattern == "failure"
    assert fact.data["places"] == ["graph.py:22"], fact.rationale
    assert "graph.py:22 score 3 when the call raises" in fact.rationale


def test_a_helper_s_fixed_score_after_the_retries_run_out_is_one_too(tmp_path: Path) -> None:
    fact = _fallback(tmp_path, RETRIES)
    assert fact.data["places"] == ["graph.py:24"], fact.rationale
    assert "score 3 when every attempt fails" in fact.rationale


def test_a_fixed_score_on_another_path_or_outside_the_judges_is_not_one(
        tmp_path: Path) -> None:
    # no evidence at all: a rule; the detective's own fallback is no judge's score
    fact = _fallback(tmp_path, RULE)
    assert not fact.found, fact.rationale


HEURISTIC = '''def prosecutor(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    try:
        return {"opinions": [llm.invoke("judge")]}
    except Exception:
        return {"opinions": [heuristic(state)]}


def heuristic(state):
    found = sum(1 for e in state["opinions"] if e)
    return JudicialOpinion(judge="Prosecutor", score=min(5, 1 + found), argument="rules")'''

KEPT_ERROR = '''def prosecutor(state, fallback_score=1):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    last_exc = None
    opinion = None
    for attempt in range(2):
        try:
            opinion = llm.invoke("judge")
            last_exc = None
            break
        except Exception as exc:
            last_exc = exc
    if last_exc is not None:
        opinion = JudicialOpinion(judge="Prosecutor", score=fallback_score, argument="failed")
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=opinion.score,
                                         argument=opinion.argument)]}'''


def test_a_score_the_code_computes_or_is_passed_when_the_call_fails_is_one_too(
        tmp_path: Path) -> None:
    """Gersum: ``except Exception: return _heuristic_score(...)``, a helper that scores the
    evidence without the model; Zerubabel-J: ``score=fallback_score`` under ``if last_exc is
    not None:`` after the attempts. The success path's ``score=opinion.score`` after the
    loop is the model's answer, not a fallback."""
    heuristic = _fallback(tmp_path / "heuristic", HEURISTIC)
    assert heuristic.data["places"] == ["graph.py:22"], heuristic.rationale
    assert "score from heuristic() when the call raises" in heuristic.rationale
    kept = _fallback(tmp_path / "kept", KEPT_ERROR)
    assert kept.data["places"] == ["graph.py:29"], kept.rationale
    assert "score `fallback_score` when every attempt fails" in kept.rationale


def test_judges_in_a_wrapped_node_are_read_by_their_schema(tmp_path: Path) -> None:
    """tedoaba: ``timed = timeout_wrapper(900)(evaluate_criterion)`` is the node the judges
    run in; it does not resolve to a function, so the code that binds a model to the
    opinion schema is taken as the judges' code."""
    wrapper = "\n\ndef timeout_wrapper(seconds):\n    def wrap(fn):\n        return fn\n" \
        "    return wrap\n\n\ntimed = timeout_wrapper(900)(prosecutor)\n"
    graph = GRAPH.format(judge=RAISES + wrapper).replace(
        'builder.add_node("prosecutor", prosecutor)', 'builder.add_node("prosecutor", timed)')
    files = write_repo(tmp_path, {"graph.py": graph})
    fact = by_facet(code_findings(tmp_path, files)[0], "llm.fallback_score")
    assert fact.data["places"] == ["graph.py:22"], fact.rationale


GIVES_UP = '''def prosecutor(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    opinion = invoke_with_retries(llm)
    if opinion:
        return {"opinions": [opinion]}
    else:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1, argument="failed")]}


def invoke_with_retries(llm):
    for attempt in range(3):
        try:
            return llm.invoke("judge")
        except Exception:
            continue
    return None'''

KEEPS_NONE = GIVES_UP.replace('''    if opinion:
        return {"opinions": [opinion]}
    else:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1, argument="failed")]}''',
                              '''    if opinion is None:
        return {"opinions": []}
    return {"opinions": [opinion]}''')

IS_NONE = GIVES_UP.replace('''    if opinion:
        return {"opinions": [opinion]}
    else:
        return {"opinions": [JudicialOpinion(judge="Prosecutor", score=1, argument="failed")]}''',
                           '''    if opinion is None:
        opinion = JudicialOpinion(judge="Prosecutor", score=3, argument="failed")
    return {"opinions": [opinion]}''')

RAISES_AFTER = GIVES_UP.replace("    return None", '    raise RuntimeError("no answer")')


def test_a_fixed_score_after_a_helper_gives_up_with_none_is_one_too(tmp_path: Path) -> None:
    """MamaMoh: ``_invoke_judicial_chain`` tries three times and returns None; the judge's
    ``else:`` then appends ``JudicialOpinion(score=1, ...)``. A judge that leaves the
    criterion without an opinion when the helper gives up hands out nothing, and a helper
    that raises once its attempts run out gives no None to branch on."""
    gives_up = _fallback(tmp_path / "gives_up", GIVES_UP)
    assert gives_up.data["places"] == ["graph.py:23"], gives_up.rationale
    assert "score 1 when every attempt fails" in gives_up.rationale
    is_none = _fallback(tmp_path / "is_none", IS_NONE)  # yakobd: ``if opinion is None:``
    assert is_none.data["places"] == ["graph.py:21"], is_none.rationale
    for name, judge in (("keeps_none", KEEPS_NONE), ("raises", RAISES_AFTER)):
        fact = _fallback(tmp_path / name, judge)
        assert not fact.found, (name, fact.rationale)


HELPER_FALLBACK = '''def prosecutor(state):
    raw = evaluate(state)
    opinion = parse(raw)
    if opinion is None:
        opinion = partial("Prosecutor")
    return {"opinions": [opinion]}


def evaluate(state):
    try:
        from langchain_openai import ChatOpenAI as Client
    except ImportError:
        return {"score": 3, "argument": "no model client"}
    fallback = {"score": 3, "argument": "every attempt failed"}
    answer = {"score": 5}
    for attempt in range(3):
        try:
            answer = Client(model="x").invoke("judge")
            break
        except Exception:
            continue
    if attempt == 2:
        return answer
    return fallback


def parse(raw):
    import json
    try:
        return JudicialOpinion(**json.loads(raw))
    except (json.JSONDecodeError, ValueError):
        return None


def partial(judge):
    return JudicialOpinion(judge=judge, score=3, argument="parse failure")'''


def test_a_helper_s_fallback_bound_to_a_name_or_for_an_unread_reply_is_one_too(
        tmp_path: Path) -> None:
    """ephrata: ``fallback = {"score": 3, ...}`` before the attempts, ``return fallback``
    after them; ``{"score": 3}`` when the model's client fails to import; the judge's
    ``_partial_opinion`` (score 3) when ``_parse_opinion`` answers None for a reply it cannot
    parse. A name bound twice (``answer``: the model's reply by then) is no fallback."""
    fact = _fallback(tmp_path, HELPER_FALLBACK)
    assert fact.data["places"] == ["graph.py:21", "graph.py:29", "graph.py:30"], fact.rationale
    assert "graph.py:21 score 3 when the reply cannot be parsed" in fact.rationale
    assert "graph.py:29 score 3 when the model's client fails to import" in fact.rationale
    assert "graph.py:30 score 3 when every attempt fails" in fact.rationale


def test_with_the_judges_code_unknown_the_fact_is_not_established(tmp_path: Path) -> None:
    # Miked before its instance nodes resolved: "not found" read as no fallback at all
    fact = _fallback(tmp_path, "from judging_lib import prosecutor")
    assert not fact.found and fact.pattern == "neutral", fact.rationale
    assert fact.rationale.startswith("Not established") and not fact.data["established"]
