"""How close a multi-word concept's words must be to count as the concept."""

from __future__ import annotations

from automaton_auditor.forensics.pdf.concepts import classify
from automaton_auditor.forensics.pdf.model import Block

CONCEPTS = ["Dialectical Synthesis", "Fan-In / Fan-Out", "Metacognition", "State Synchronization"]


def _blocks(*items: tuple[str, str, tuple[str, ...], int]) -> list[Block]:
    return [Block(kind, text, page, level=1 if kind == "heading" else 0,  # type: ignore[arg-type]
                  section=section) for kind, text, section, page in items]


def _section(title: str, *bodies: tuple[str, str], page: int = 2) -> list[Block]:
    return _blocks(("heading", title, (), page),
                   *((kind, text, (title,), page) for kind, text in bodies))


def test_a_plans_words_in_different_sentences_are_not_the_concept() -> None:
    """chacha1921 (interim): in a plan, 'followed by synthesis logic. Testing will ... once
    the core dialectical flow is validated' are two pieces of work, not Dialectical
    Synthesis; in one sentence of a design paragraph the two words still find it."""
    item = ("\u2022 Sequencing/Prioritization: Priority will be given to integrating the "
            "judicial layer first, followed by synthesis logic. Testing will focus on edge "
            "cases (conflicting opinions, missing evidence, evidence edges in the graph). The "
            "rubric-driven aggregation will be implemented last, once the core dialectical "
            "flow is validated.")
    plan = _section("Known Gaps & Plan for Judicial Layer", ("list", item), ("list", item))
    assert classify("Dialectical Synthesis", plan, CONCEPTS).verdict == "absent"
    design = ("The three judge nodes run in parallel over the same evidence and a dialectical "
              "synthesis step in the chief_justice node resolves their scores with rules: "
              "the security cap overrides the Defense, and variance above two records a "
              "dissent_summary in the graph's state before the report node runs.")
    found = classify("Dialectical Synthesis", _section("Judicial Layer Design",
                                                       ("paragraph", design)), CONCEPTS)
    assert found.verdict == "explained"
