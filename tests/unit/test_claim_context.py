"""A gap or a denial in the report is read with the section it sits in: a gap a review
caught and the report says was since fixed is history, and a lead sentence that says the
system works without something is qualified by the text that follows it."""

from __future__ import annotations

from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.qualifiers import retrospective
from automaton_auditor.forensics.pdf.reader import report_facts
from automaton_auditor.state import Finding
from tests.unit.report_helpers import ingested

ROUTING = Finding(facet="graph.conditional_edges", goal="Conditional edges route the flow",
                  found=True, pattern="success", location="app/graph.py:48", confidence=0.9,
                  rationale="Conditional edges: check -> ['judges', 'missing_evidence'].",
                  data={"routing_sources": ["check"]})
PARALLEL_JUDGES = Finding(
    facet="graph.parallel_judges", goal="Judges fan out", found=True, pattern="success",
    location="app/graph.py:52", confidence=0.9,
    rationale="aggregate fans out to defense, prosecutor; joined at chief_justice.")
MEAN = Finding(facet="justice.averaging", goal="The verdict is a plain average", found=False,
               pattern="failure", location="app/justice.py:55", confidence=0.85,
               rationale="2 decision(s) change the mean.",
               content="app/justice.py:58: final = round((p + d + t) / 3)")


def _section(heading: str, page: int, *texts: str) -> list[Block]:
    return [Block("heading", heading, page, level=2),
            *(Block("paragraph", text, page, section=(heading,)) for text in texts)]


def _findings(blocks: list[Block], code: list[Finding]) -> list[tuple[str, int | None]]:
    """(facet, page) of each gap or contradiction the report's statements give."""
    report = ingested(blocks, 9)
    claims = report_facts(report).claims
    return [(f.facet, int(f.location.split(".")[-1]))
            for f in contradiction_findings(claims, code, None)]


def test_a_gap_a_review_caught_and_the_report_says_was_fixed_is_no_current_gap() -> None:
    caught = _section("5.1 What Peer Feedback Caught", 8,
                      "Peer feedback correctly highlighted:",
                      "Missing explicit conditional edge coverage in graph orchestration.",
                      "Need to clearly show judicial fan-out/fan-in in one compiled flow.")
    updated = _section("5.2 How the Agent Was Updated", 8,
                       "In response, the system was upgraded to:",
                       "Add explicit post-detective branches: clone_failure, missing_evidence.")
    assert _findings([*caught, *updated], [ROUTING]) == []
    # the same gap listed under the report's current gaps is a gap the code has closed
    gaps = _section("6. Known Limitations", 9, "Gaps to be addressed:",
                    "Missing explicit conditional edge coverage in graph orchestration.")
    assert _findings([*caught, *updated, *gaps], [ROUTING]) == [("claims.stale_gaps", 9)]
    # a gap the item itself marks closed is history too; one it says is open stays a gap
    assert _findings(_section("Gaps", 3, "No conditional edges for errors: DONE."),
                     [ROUTING]) == []
    assert _findings(_section("What Peer Feedback Caught", 3,
                              "No conditional edges | Identified as known gap."),
                     [ROUTING]) == [("claims.stale_gaps", 3)]


def test_a_gap_in_a_table_of_earlier_runs_is_history() -> None:
    # Zerubabel-J: "5.2 Score Progression", row "Initial (single judge, Phase 1) 2.6/5
    # Baseline - no parallel judges": how the first run scored, not a gap claimed today
    row = "Initial (single judge, Phase 1) 2.6/5 Baseline - no parallel judges"
    assert retrospective("5.2 Score Progression", row)
    assert retrospective("Version history: what each release changed", row)
    assert not retrospective("5.2 Known Limitations", row)


def test_a_current_gap_stays_a_gap_though_a_plan_item_after_it_says_done() -> None:
    blocks = _section("2.1 Judicial Layer", 5, "Gaps:",
                      "1. No true parallel execution of judges: Today run_judges is a single "
                      "node that loops over dimensions and judges sequentially.",
                      "Concrete plan:", "Parallelize judge invocations: DONE. Three separate "
                      "nodes wired via Send() fan-out.")
    assert _findings(blocks, [PARALLEL_JUDGES]) == [("claims.stale_gaps", 5)]


def test_a_lead_saying_not_averaging_over_a_rule_table_that_averages_denies_no_mean() -> None:
    lead = _section("Synthesis Engine", 6, "Rule-Based Conflict Resolution",
                    "The synthesis engine applies deterministic rules, not averaging:")
    table = [Block("paragraph", line, 7, section=("Synthesis Engine",))
             for line in ("\u2502 RULE 1: SECURITY OVERRIDE \u2502",
                          "\u2502 THEN Cap final score at 3 \u2502",
                          "\u2502 RULE 3: CONSENSUS \u2502",
                          "\u2502 IF score variance \u2264 1 \u2502",
                          "\u2502 THEN Use average \u2502")]
    assert _findings([*lead, *table], [MEAN]) == []
    # without the table, or with one that never uses the average, the lead denies the mean
    assert _findings(lead, [MEAN]) == [("claims.contradictions", 6)]
    never = [Block("paragraph", "\u2502 THEN never use the average \u2502", 7,
                   section=("Synthesis Engine",))]
    assert _findings([*lead, *never], [MEAN]) == [("claims.contradictions", 6)]
    # a table in a section of its own still follows the lead that opens it
    apart = [Block("heading", "SYNTHESIS RULES", 7, level=3,
                   section=("Synthesis Engine",)),
             *(b.__class__(b.kind, b.text, b.page, section=("Synthesis Engine",
                                                             "SYNTHESIS RULES"))
               for b in table)]
    assert _findings([*lead, *apart], [MEAN]) == []


def test_a_description_in_sequence_is_qualified_by_judges_said_to_run_in_parallel() -> None:
    said = _section("Judicial Layer", 4, "The judges are invoked inside one node in sequence.",
                    "Since the last release the three judges run concurrently via Send().")
    assert _findings(said, [PARALLEL_JUDGES]) == []
    # an imperative ("make judges parallel") states nothing
    asked = _section("Judicial Layer", 4, "The judges are invoked inside one node in sequence.",
                     "Either make judges parallel or update the diagram.")
    assert _findings(asked, [PARALLEL_JUDGES]) == [("claims.contradictions", 4)]
