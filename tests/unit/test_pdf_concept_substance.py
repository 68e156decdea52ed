"""State Synchronization explained through its mechanism without its name: what the state's
reducers prevent when parallel branches write to it ("Without these reducers, the last node
to complete would silently overwrite the results of the other two")."""

from __future__ import annotations

from automaton_auditor.forensics.pdf.concepts import classify
from automaton_auditor.forensics.pdf.model import Block

CONCEPTS = ["Dialectical Synthesis", "Fan-In / Fan-Out", "Metacognition", "State Synchronization"]

# Birkity (interim), p.2: the reducers, the parallel detectives, what is lost without them.
REDUCERS = (
    "State reducers for parallel safety. The AgentState uses Annotated type hints with "
    "operator.ior (dict merge) and operator.add (list append) as LangGraph reducers. When "
    "three Detective nodes run in parallel and each returns {\"evidences\": {dim_id: "
    "[Evidence]}}, LangGraph merges the dicts without any node overwriting another's results.",
    "Without these reducers, the last node to complete would silently overwrite the results "
    "of the other two, discarding two-thirds of the collected evidence.",
)


def _report(heading: str, *paragraphs: str) -> list[Block]:
    title = "Interim Report"
    return [Block("heading", title, 1, level=1, section=()),
            Block("heading", heading, 2, level=2, section=(title,)),
            *(Block("paragraph", text, 2, section=(title, heading)) for text in paragraphs)]


def test_what_reducers_prevent_explains_state_synchronization() -> None:
    """Birkity (interim) never writes 'synchroniz...', but says what its reducers prevent
    when three parallel detectives write the state: explained through its mechanism."""
    verdict = classify("State Synchronization",
                       _report("2.1 Why Pydantic Over Plain Dicts", *REDUCERS), CONCEPTS)
    assert verdict.verdict == "explained" and verdict.by_substance
    assert verdict.occurrences[0].sentence.startswith("Without these reducers")
    assert verdict.occurrences[0].page == 2


def test_nebiyou27_failure_modes_list_explains_state_synchronization() -> None:
    """nebiyou27 (interim): 'Without reducers:' then 'One branch could overwrite another.'
    under a failure mode named parallel state corruption: the colon goes on in the item."""
    blocks = _report("Failure Modes Prevented",
                     "2. Parallel state corruption o LangGraph merges branches during fan-in.",
                     "o Without reducers:", "One branch could overwrite another. o With "
                     "reducers:", "opinions are appended safely.")
    blocks[3] = Block("paragraph", blocks[3].text, 3, section=blocks[3].section)
    verdict = classify("State Synchronization", blocks, CONCEPTS)
    assert verdict.verdict == "explained" and verdict.by_substance
    assert verdict.occurrences[0].page == 3  # the page 'Without reducers:' is on


def test_naming_the_merge_is_not_its_explanation() -> None:
    """zumi123: 'reducers ensure that parallel agents append or merge state safely rather
    than overwriting' names what the reducers do, not what is lost without them."""
    blocks = _report("State Management Rigor",
                     "Additionally, reducers are implemented using operator.add and "
                     "operator.ior within Annotated type hints. These reducers ensure that "
                     "parallel agents append or merge state safely rather than overwriting "
                     "one another's outputs.")
    assert classify("State Synchronization", blocks, CONCEPTS).verdict == "absent"


def test_another_concepts_section_or_a_plan_is_not_its_explanation() -> None:
    """amin3ltd: the same counterfactual in the section titled Fan-Out/Fan-In explains that
    concept, not this one; in a plan it is work to be done."""
    for heading in ("2. Fan-Out/Fan-In Pattern", "Plan for the Final Submission"):
        verdict = classify("State Synchronization", _report(heading, *REDUCERS), CONCEPTS)
        assert verdict.verdict == "absent", heading


def test_an_absent_concept_says_where_its_words_appear_apart() -> None:
    """eyorata (interim): 'Dialectical Synthesis' never appears, but p.7 writes 'full
    dialectical governance': the fact says where the word is, not that it never appears."""
    from automaton_auditor.forensics.pdf.reader import concept_finding

    blocks = _report("Next Phase", "This moves the system from forensic collection to full "
                     "dialectical governance.")
    verdict = classify("Dialectical Synthesis", blocks, CONCEPTS)
    assert verdict.verdict == "absent"
    assert "'dialectical' on p.2 (\"...This moves the system" in concept_finding(verdict).rationale
    # the word used about the judges is the concept named, without its mechanism here
    blocks = _report("Next Phase", "This moves the system from forensic collection to full "
                     "dialectical governance: interpretations are generated in parallel by "
                     "opposing judicial personas.")
    verdict = classify("Dialectical Synthesis", blocks, CONCEPTS)
    assert verdict.verdict == "dropped" and "'dialectic\u2026' is used about" in verdict.note
    # the rubric's criterion named is no use of the word
    blocks = _report("Next Phase", "Priority 4: src/nodes/judges.py, rubric dimension Judicial "
                     "Nuance and Dialectics.")
    assert classify("Dialectical Synthesis", blocks, CONCEPTS).verdict == "absent"
    blocks = _report("Next Phase", "A fan cools the room.")  # everyday words: no note
    verdict = classify("Fan-In / Fan-Out", blocks, CONCEPTS)
    assert verdict.verdict == "absent" and not verdict.note
