"""Which passage explains a concept: its own item, a title line the layout set as body text,
and a sentence summing up the passage before it (in a plan too)."""

from __future__ import annotations

import pytest

from automaton_auditor.forensics.pdf.concepts import classify
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.reader import concept_finding

CONCEPTS = ["Dialectical Synthesis", "Fan-In / Fan-Out", "Metacognition", "State Synchronization"]


def _blocks(*items: tuple[str, str, tuple[str, ...], int]) -> list[Block]:
    return [Block(kind, text, page, level=1 if kind == "heading" else 0,  # type: ignore[arg-type]
                  section=section) for kind, text, section, page in items]


DEEP_DIVE = ("2. Architecture Deep Dive",)
FAN = ("\u25cf Fan-In/Fan-Out: The system utilizes a Diamond Architecture. Concurrent Detectives "
       "(Fan-Out) harvest evidence into a central EvidenceAggregator (Fan-In), which then "
       "triggers a second Fan-Out to the Judicial Swarm.")
DIALECTICS = ("\u25cf Dialectical Synthesis: We reject \"average\" scoring. Instead, the "
              "Prosecutor (Antithesis) and Defense (Thesis) debate the evidence. The Chief Justice "
              "(Synthesis) resolves variance by weighing technical indicators over agent "
              "\"vibes.\"")


def test_an_item_is_credited_only_with_its_own_mechanism() -> None:
    """Bullets one per concept: the Fan-In/Fan-Out bullet's cues (EvidenceAggregator,
    concurrent detectives) are not the next bullet's; the bullet that names the concept with
    its mechanism is an explanation on its own."""
    blocks = _blocks(("heading", DEEP_DIVE[0], (), 1),
                     ("paragraph", "Explaining Dialectical Synthesis, Fan-In/Fan-Out, and "
                      "Metacognition:", DEEP_DIVE, 1),
                     ("list", FAN, DEEP_DIVE, 1), ("list", DIALECTICS, DEEP_DIVE, 1))
    fan = classify("Fan-In / Fan-Out", blocks, CONCEPTS)
    assert fan.verdict == "explained"
    assert "evidenceaggregator" in fan.deciding()[0].reason
    dialectics = classify("Dialectical Synthesis", blocks, CONCEPTS)
    assert dialectics.verdict == "dropped"
    assert not any("evidenceaggregator" in o.reason for o in dialectics.occurrences)


def test_a_title_line_naming_a_variant_leads_its_passage() -> None:
    """'The Dialectical Bench Design' set in the body font over the personas reading the same
    evidence: a section explaining the concept, beside the summary that only names it."""
    judicial = ("Judicial Layer: In Progress (60%)",)
    blocks = _blocks(
        ("paragraph", "The architecture has parallel detectives, a dialectical judicial bench "
         "that renders conflicting opinions, and a synthesis engine.", ("Executive Summary",), 1),
        ("heading", judicial[0], (), 5),
        ("paragraph", "The Dialectical Bench Design", judicial, 5),
        ("paragraph", "For each rubric criterion, three distinct personas analyze the SAME "
         "evidence:", judicial, 5),
        ("paragraph", "Persona | Philosophy | Focus Areas", judicial, 5),
        ("paragraph", "Prosecutor | \"Trust No One. Assume Vibe Coding.\" | Security flaws, "
         "missing structure, hallucination, violations", judicial, 5),
        ("paragraph", "Defense | \"Reward Effort and Intent.\" | Deep understanding, creative "
         "workarounds, engineering process", judicial, 5),
        ("paragraph", "Tech Lead | \"Does it actually work?\" | Technical debt, "
         "maintainability; the persona prompts differ per judge.", judicial, 5))
    verdict = classify("Dialectical Synthesis", blocks, CONCEPTS)
    assert verdict.verdict == "explained"
    assert verdict.deciding()[0].page == 5
    assert verdict.deciding()[0].sentence.startswith(
        "The Dialectical Bench Design: For each rubric criterion, three distinct personas")
    # a plain sentence of the body is no title line: read with its neighbours only
    plain = [b if b.text != "The Dialectical Bench Design" else
             Block("paragraph", "The dialectical bench is described below.", 5, section=judicial)
             for b in blocks]
    assert classify("Dialectical Synthesis", plain, CONCEPTS).verdict == "dropped"


PLAN = ("3. Known Gaps & Plan for Judicial Layer", "3.2 Concrete Plan - Judicial Layer",
        "Phase 2: Chief Justice Synthesis (Days 2-3)")
RULES = ["The ChiefJustice node will use deterministic Python logic - not an LLM prompt:",
         "# Rule of Security: confirmed security flaws cap score",
         "if prosecutor_found_security_flaw and evidence_confirms_flaw:",
         "final_score = min(final_score, 3)",
         "# Rule of Evidence: facts overrule opinions",
         "if defense_claims_metacognition and not evidence_supports_claim:",
         "defense_opinion_overruled = True",
         "# Variance Re-evaluation: score spread > 2",
         "if max_score - min_score > 2:",
         "trigger_re_evaluation(dimension_id)"]
SUMS_UP = ("This implements Dialectical Synthesis - not via an LLM averaging scores, but "
           "through explicit rules that weigh evidence over opinion, penalise confirmed "
           "security violations, and require dissent summaries when judges disagree.")


def test_a_sentence_summing_up_a_planned_mechanism_is_an_explanation_as_planned_work() -> None:
    """'This implements Dialectical Synthesis - ...' after the rules' pseudo-code: the
    passage it sums up is its discussion; written as a plan, it is explained as planned work,
    unlike a bare name in a plan."""
    blocks = _blocks(*(("paragraph", text, PLAN, 8) for text in [*RULES, SUMS_UP]))
    verdict = classify("Dialectical Synthesis", blocks, CONCEPTS)
    assert verdict.verdict == "explained"
    assert "planned work" in verdict.deciding()[0].reason
    # a mechanism still to be built is a weaker tie to the architecture than one that runs
    finding = concept_finding(verdict)
    assert finding.found and finding.confidence == pytest.approx(0.6)
    bare = _blocks(*(("paragraph", text, PLAN, 8) for text in [
        *RULES[:2], "Then configure Dialectical Synthesis in the Chief Justice."]))
    named = classify("Dialectical Synthesis", bare, CONCEPTS)
    assert named.verdict == "dropped"
    assert named.occurrences[0].reason.startswith("named only as planned work")


def test_a_plan_item_titled_with_another_subject_is_read_alone() -> None:
    """'\u2022 Tie-Breaker Mechanism: While Dialectical Synthesis ... exists, the node lacks a
    dissent tracker' among a plan's gap items: the other items are other work, so their
    mechanisms do not explain it; in a design section the items stay one discussion."""
    gaps = ("3. Known Gaps & Concrete Plan for Judicial Layer", "Known Gaps")
    items = [
        "\u2022 Vision Inspector: the VisionInspector node renders pages with pypdfium2 and "
        "sends them to a vision model; its evidence is merged by the operator.ior reducer.",
        "\u2022 Tie-Breaker Mechanism: While Dialectical Synthesis between the defense and the "
        "prosecutor exists, the ChiefJustice node lacks a dissent tracker when scores vary.",
        "\u2022 Retries: every judge call in src/nodes/judges.py is retried three times before "
        "the graph routes the criterion to a fallback node with the state unchanged."]
    planned = _blocks(*(("list", text, gaps, 2) for text in items))
    verdict = classify("Dialectical Synthesis", planned, CONCEPTS)
    assert verdict.verdict == "dropped"
    design = _blocks(*(("list", text, ("2. Architecture",), 2) for text in items))
    assert classify("Dialectical Synthesis", design, CONCEPTS).verdict == "explained"
