"""What a concept's explanation must be about (Metacognition: the system evaluating its own
evaluation; State Synchronization: the merging of the shared state), and how close a
multi-word concept's words must be to count as the concept."""

from __future__ import annotations

from automaton_auditor.forensics.pdf.concepts import classify
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.ties import windows

CONCEPTS = ["Dialectical Synthesis", "Fan-In / Fan-Out", "Metacognition", "State Synchronization"]


def _blocks(*items: tuple[str, str, tuple[str, ...], int]) -> list[Block]:
    return [Block(kind, text, page, level=1 if kind == "heading" else 0,  # type: ignore[arg-type]
                  section=section) for kind, text, section, page in items]


def _section(title: str, *bodies: tuple[str, str], page: int = 2) -> list[Block]:
    return _blocks(("heading", title, (), page),
                   *((kind, text, (title,), page) for kind, text in bodies))


# The Chief Justice's rules, named "Metacognition": a variance threshold and a security cap.
RULES = (
    ("paragraph", "The system exhibits Metacognition through its \"Chief Justice\" layer. "
                  "Instead of asking an LLM to \"summarize the scores,\" we use hardcoded "
                  "Python logic:"),
    ("list", "\u25cf Variance Triggers: If scores between judges differ by more than 2 points, "
             "the system identifies a \"Contested Verdict\" and forces a dissent summary."),
    ("list", "\u25cf Security Overrides: A deterministic \"Rule of Security\" caps any criterion "
             "at a score of 3 if specific forensic markers (e.g., os.system) are detected, "
             "regardless of LLM \"hallucinated\" optimism."),
)


def test_rules_named_metacognition_are_not_its_explanation() -> None:
    """YohannesDereje: a section titled Metacognition that lists the Chief Justice's variance
    trigger and security cap never says the system evaluates its own evaluation: named, not
    explained. The same section whose variance rule re-evaluates the verdict is explained."""
    verdict = classify("Metacognition", _section("C. Metacognition & Governance", *RULES),
                       CONCEPTS)
    assert verdict.verdict == "dropped"
    assert "its own evaluation" in verdict.occurrences[0].reason
    reflexive = (RULES[0], ("list", "\u25cf Variance Triggers: If scores between judges differ "
                                    "by more than 2 points, the chief_justice node "
                                    "re-evaluates its own verdict against the cited "
                                    "evidence before the report is written."), RULES[2])
    assert classify("Metacognition", _section("C. Metacognition & Governance", *reflexive),
                    CONCEPTS).verdict == "explained"


def test_a_self_evaluation_claim_without_mechanism_is_not_an_explanation() -> None:
    """Azazh: 'The system can audit its own audit logic' says what metacognition is but with
    no mechanism; the runtime rubric loading beside it is a mechanism of something else.
    yosef-zewdu: the textbook definition ('agents monitor ... their own cognitive processes')
    closing its paragraph is not tied to the rules listed after it."""
    azazh = (("list", "\u25cf Dynamic Constitution: The system loads rubric/week2_rubric.json "
                      "at runtime and injects its dimensions and synthesis rules into every "
                      "node's context. This ensures all judgments are grounded in the current "
                      "rubric, not LLM pre-training or prompt leakage."),
             ("list", "\u25cf Self-Evaluation: The system can audit its own audit logic, "
                      "enabling continuous improvement and compliance with evolving "
                      "governance standards."))
    assert classify("Metacognition", _section("Metacognition (Rubric-Driven Reasoning)",
                                              *azazh), CONCEPTS).verdict == "dropped"
    yosef = (("paragraph", "\"Metacognition\" in this architecture refers to the system's "
                           "ability to cross-reference claims against forensic proof. "
                           "Metacognition in multi-agent systems (MAS) enables agents to "
                           "monitor, evaluate, and regulate their own cognitive processes "
                           "and collaborative interactions, enhancing adaptability."),
             ("list", "\u25cf Fact Supremacy: If a human-authored report (DocAnalyst) claims "
                      "a feature exists, but the code-level evidence (RepoInvestigator) "
                      "contradicts it, the system identifies the hallucination."),
             ("list", "\u25cf Dissent Tracking: The system calculates the Variance between "
                      "judges. If the Prosecutor and Defense diverge significantly (>2 "
                      "points), the system documents this as a \"Judicial Dissent\"."))
    assert classify("Metacognition", _section("Metacognition (Integrity Checks)", *yosef),
                    CONCEPTS).verdict == "dropped"


def test_a_reflexive_lead_is_read_with_the_list_it_opens_and_lines_are_rejoined() -> None:
    """'... awareness of its own reasoning in three ways:' then the mechanisms; a sentence
    cut into lines ('... before any evidence is evaluated' / '- the agent reasoning about
    whether its own reasoning ...') is one sentence."""
    assert windows("The system reasons about its own reasoning in three ways:\n"
                   "1. dissent_summary records why the judges diverged.")[0] == (
        "The system reasons about its own reasoning in three ways: "
        "1. dissent_summary records why the judges diverged.")
    assert windows("DocAnalyst flags Persona Collusion before any evidence is evaluated\n"
                   "- the agent reasoning about whether its own reasoning is sound.") == [
        "DocAnalyst flags Persona Collusion before any evidence is evaluated - the agent "
        "reasoning about whether its own reasoning is sound."]


# A fan-in node called a synchronization point, and nothing about the state's merging.
BARRIER = ("\u2022 The EvidenceAggregator is a synchronization/fan-in node: it receives "
           "evidence from parallel detectives, validates/filters it, and then fans it out to "
           "judicial nodes. Labels show whether the evidence is repo or doc scoped.")
NOTES = ("\u2022 Conditional/error edges explicitly capture failure modes such as clone "
         "failures, PDF ingest errors, or validation problems encountered during evidence "
         "aggregation. These routes terminate in an Error Handler node.")
REDUCERS = ("\u25cf Parallel Reducers: I used operator.ior for the evidences dictionary and "
            "operator.add for the opinions list. This ensures that when parallel detectives "
            "write to the state, they merge findings rather than overwriting each other.")


def test_a_fan_in_barrier_is_state_synchronization_only_with_the_states_merging() -> None:
    """chacha1921 (interim): 'a synchronization/fan-in node' that receives evidence, in a
    report that never explains how the state is merged, is the fan-in's barrier: named, not
    explained. Where the report explains its reducers merging the parallel writes, the
    synchronization point and the merging together explain the concept."""
    notes = _section("Diagram notes", ("list", NOTES), ("list", BARRIER), ("list", NOTES))
    verdict = classify("State Synchronization", notes, CONCEPTS)
    assert verdict.verdict == "dropped"
    assert "merging of the shared state" in verdict.occurrences[0].reason
    decisions = _section("1. Architecture Decision Rationale", ("list", REDUCERS), page=1)
    assert classify("State Synchronization", decisions + notes,
                    CONCEPTS).verdict == "explained"


def test_a_synchronization_node_using_a_reducer_is_state_synchronization() -> None:
    """YohannesDereje: 'Fan-In (EvidenceAggregator): A synchronization node that uses a Typed
    List Reducer to collect all raw strings into a single AgentState' ties the word to the
    state's reducer in its own sentence."""
    fan = _section("B. Fan-In / Fan-Out (Structural Parallelism)",
                   ("paragraph", "To meet the requirement, the graph is orchestrated using a "
                                 "Fan-Out/Fan-In pattern:"),
                   ("list", "1. Fan-Out (Detectives): Multiple specialized detectives "
                            "(RepoInvestigator, DocSearch) launch simultaneously to gather "
                            "raw data without cross-contaminating their findings."),
                   ("list", "2. Fan-In (EvidenceAggregator): A synchronization node that "
                            "uses a Typed List Reducer"),
                   ("paragraph", "to collect all raw strings into a single AgentState. This "
                                 "ensures the Judges have a \"Global Truth\" to look at."))
    assert classify("State Synchronization", fan, CONCEPTS).verdict == "explained"


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
