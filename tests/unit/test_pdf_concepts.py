"""Concept variants and the explained-versus-dropped classification."""

from __future__ import annotations

import pytest

from automaton_auditor.forensics.pdf.concepts import classify, concept_pattern, slug
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.reader import concept_finding


@pytest.mark.parametrize(("term", "text"), [
    ("Fan-In / Fan-Out", "the fan-out happens first"),
    ("Fan-In / Fan-Out", "a Fan Out to three nodes"),
    ("Fan-In / Fan-Out", "the fan-in/fan-out pattern"),
    ("Fan-In / Fan-Out", "FANIN at the aggregator"),
    ("State Synchronization", "state synchronisation through reducers"),
    ("State Synchronization", "State-Synchronizing the branches"),
    ("Dialectical Synthesis", "dialectical synthesis of opinions"),
    ("Metacognition", "a metacognitive loop"),
])
def test_variants_match(term: str, text: str) -> None:
    assert concept_pattern(term).search(text)


@pytest.mark.parametrize(("term", "text"), [
    ("Fan-In / Fan-Out", "a fan into the room"),
    ("Fan-In / Fan-Out", "the fancy output"),
    ("State Synchronization", "the state is synchronous"),
    ("Metacognition", "cognition alone"),
])
def test_non_variants_do_not_match(term: str, text: str) -> None:
    assert not concept_pattern(term).search(text)


def test_slug() -> None:
    assert slug("Fan-In / Fan-Out") == "fan_in_fan_out"
    assert slug("State Synchronization") == "state_synchronization"


EXPLAINED = ("Metacognition is implemented by the chief_justice node: when the variance of "
             "the three judge scores exceeds two, it re-evaluates the evidence cited in "
             "src/nodes/justice.py and records a dissent_summary, so the graph reasons about "
             "its own reasoning before the report_writer node runs.")


def _blocks(*items: tuple[str, str, tuple[str, ...], int]) -> list[Block]:
    return [Block(kind, text, page, level=1 if kind == "heading" else 0,  # type: ignore[arg-type]
                  section=section) for kind, text, section, page in items]


def test_summary_mention_is_dropped_and_design_section_is_explained() -> None:
    summary = ("paragraph", "We built a courtroom with Metacognition, Fan-Out and more.",
               ("Executive Summary",), 1)
    bullet = ("list", "\u2022 Metacognition", ("Features",), 2)
    dropped = classify("Metacognition", _blocks(summary, bullet))
    assert dropped.verdict == "dropped"
    assert [o.page for o in dropped.occurrences] == [1, 2]
    assert "summary" in dropped.occurrences[0].reason
    design = ("paragraph", EXPLAINED, ("Architecture",), 5)
    explained = classify("Metacognition", _blocks(summary, bullet, design))
    assert explained.verdict == "explained"
    assert explained.deciding()[0].page == 5
    assert explained.deciding()[0].sentence.startswith("Metacognition is implemented")


def test_section_titled_with_the_concept() -> None:
    blocks = _blocks(("heading", "4.2 Metacognition", (), 4),
                     ("paragraph", EXPLAINED.replace("Metacognition is", "It is"),
                      ("4.2 Metacognition",), 4))
    verdict = classify("Metacognition", blocks)
    assert verdict.verdict == "explained"
    assert "titled with the concept" in verdict.occurrences[0].reason
    thin = _blocks(("heading", "4.2 Metacognition", (), 4),
                   ("paragraph", "Coming soon.", ("4.2 Metacognition",), 4))
    assert classify("Metacognition", thin).verdict == "dropped"


def test_absent_and_loose() -> None:
    blocks = _blocks(("heading", "8. The Dialectical Judicial Engine", (), 8),
                     ("paragraph", "The Chief Justice performs the synthesis in "
                      "src/nodes/justice.py with deterministic rules over the judges' "
                      "opinions merged by the operator.add reducer of the state graph, "
                      "after the prosecutor and defense nodes argue in parallel branches. Each "
                      "argument cites evidence ids, so the ruling can be traced.",
                      ("8. The Dialectical Judicial Engine",), 8))
    loose = classify("Dialectical Synthesis", blocks)
    assert loose.loose and loose.verdict == "explained"
    assert classify("State Synchronization", blocks).verdict == "absent"


def test_buzzword_beside_a_good_paragraph_is_still_dropped() -> None:
    blocks = _blocks(("paragraph", EXPLAINED.replace("Metacognition is", "It is"),
                      ("Architecture",), 5),
                     ("paragraph", "We are also proud of our Dialectical Synthesis.",
                      ("Architecture",), 5))
    verdict = classify("Dialectical Synthesis", blocks)
    assert verdict.verdict == "dropped"
    assert "without mechanism" in verdict.occurrences[0].reason


CONCEPTS = ["Dialectical Synthesis", "Fan-In / Fan-Out", "Metacognition", "State Synchronization"]
# Enough mechanism-rich discussion around it that only the sentence itself can decide.
AROUND = ("The graph in src/graph.py starts repo_investigator and doc_analyst from START, "
          "which run in parallel; evidence_aggregator is the node that joins them after both "
          "branches finish, and the judges read the merged evidence from the state.")


@pytest.mark.parametrize("term", CONCEPTS)
def test_a_roll_call_of_concept_names_is_no_mechanism(term: str) -> None:
    """Concept names carry graph words ("Fan-In", "State"): a sentence whose only graph
    vocabulary is concept names is name-dropping, however rich its neighbours are."""
    roll_call = ("Our design embodies Dialectical Synthesis, Fan-In / Fan-Out, Metacognition "
                 "and State Synchronization throughout, as required by the rubric.")
    blocks = _blocks(("paragraph", f"{AROUND} {roll_call}", ("Architecture",), 2))
    assert classify(term, blocks, CONCEPTS).verdict == "dropped"


def test_a_concept_tied_to_a_mechanism_stays_explained_among_concept_names() -> None:
    tied = ("State Synchronization comes from the operator.add reducer on evidences, so "
            "parallel detectives append instead of overwriting; Fan-In waits for both.")
    blocks = _blocks(("paragraph", f"{AROUND} {tied}", ("Architecture",), 2))
    assert classify("State Synchronization", blocks, CONCEPTS).verdict == "explained"


# --- substance over labels: the rubric's mechanism described without the concept's name ----
PERSONAS = ("The Prosecutor looks for gaps and charges every unsupported claim; the Defense "
            "rewards effort and intent in the commit history; the Tech Lead checks whether "
            "the code actually runs and breaks ties between the two.")
SYNTHESIS = ("The ChiefJustice node resolves their conflict with deterministic rules: a "
             "security override caps the score at three, the Tech Lead's opinion carries the "
             "highest weight, and when the variance exceeds two a dissent summary is written "
             "from the evidence each judge cited in src/nodes/justice.py before the report.")


def _judicial_section(under: str, *texts: str) -> list[tuple[str, str, tuple[str, ...], int]]:
    return [("heading", under, (), 11),
            *(("paragraph", text, (under,), 11) for text in texts)]


def test_dialectics_described_without_the_term_is_explained_by_substance() -> None:
    named = ("paragraph", "Our design embodies Dialectical Synthesis.", ("Executive Summary",), 1)
    other = ("paragraph", "The detectives clone the repository and read the report.",
             ("Detectives",), 4)
    blocks = _blocks(named, other, *_judicial_section("5. Judicial Layer", PERSONAS, SYNTHESIS))
    verdict = classify("Dialectical Synthesis", blocks)
    assert verdict.verdict == "explained" and verdict.by_substance
    first = verdict.deciding()[0]
    assert first.heading == "5. Judicial Layer" and first.page == 11
    # the term does appear, in the summary: the reason says where, never "without the term"
    assert first.reason.endswith("; the term itself appears only where nothing explains it "
                                 "(p.1)")
    unnamed = ("paragraph", "Our design is built for fairness.", ("Executive Summary",), 1)
    assert classify("Dialectical Synthesis", _blocks(unnamed, other, *_judicial_section(
        "5. Judicial Layer", PERSONAS, SYNTHESIS))).deciding()[0].reason.endswith(
        "without the term")
    # named only in a forward plan (GrimVad3r@interim p.3): planned work, said so
    plan = ("paragraph", "Phase 1 (Judicial Maturity): Implement multi-speaker dialogue "
            "between judges (Dialectical Synthesis) where the Prosecutor can directly "
            "challenge the Defense.", ("3. Gap Analysis and Forward Plan",), 3)
    planned = classify("Dialectical Synthesis", _blocks(
        unnamed, other, plan, *_judicial_section("5. Judicial Layer", PERSONAS, SYNTHESIS)))
    assert planned.verdict == "explained" and planned.by_substance
    assert planned.deciding()[0].reason.endswith("; the term itself appears only as planned "
                                                 "work (p.3)")
    assert [o.reason for o in planned.occurrences if not o.explained] == [
        "named only as planned work in '3. Gap Analysis and Forward Plan'"]
    # Without the conflict-resolution rules the personas alone explain no synthesis.
    personas_only = _blocks(named, other, *_judicial_section("5. Judges", PERSONAS, PERSONAS))
    assert classify("Dialectical Synthesis", personas_only).verdict == "dropped"


def test_substance_in_a_summary_or_a_thin_section_does_not_count() -> None:
    other = ("paragraph", "The detectives clone the repository and read the report.",
             ("Detectives",), 4)
    for title in ("Executive Summary", "6. Known Gaps & Forward Plan"):
        elsewhere = _blocks(other, other, other, *_judicial_section(title, PERSONAS, SYNTHESIS))
        assert classify("Dialectical Synthesis", elsewhere).verdict == "absent", title
    thin = _blocks(other, other, *_judicial_section(
        "Judges", "Prosecutor, Defense and Tech Lead; the Chief Justice applies a weighted rule."))
    assert classify("Dialectical Synthesis", thin).verdict == "absent"
    # A concept the rubric gives no mechanism for is never explained by substance.
    judicial = _blocks(other, other, other,
                       *_judicial_section("5. Judicial Layer", PERSONAS, SYNTHESIS))
    assert classify("Metacognition", judicial).verdict == "absent"


def test_substance_spread_over_a_chapters_subsections_does_not_count() -> None:
    # The personas in one subsection, the Chief Justice's rules in another: the chapter
    # names the pieces, no one section explains how they are synthesised.
    other = ("paragraph", "The detectives clone the repository and read the report.",
             ("Detectives",), 4)
    chapter = "System Architecture"
    blocks = _blocks(other, other, other, ("heading", chapter, (), 2),
                     ("heading", "4. Judges", (chapter,), 2),
                     ("paragraph", PERSONAS, (chapter, "4. Judges"), 2),
                     ("heading", "5. Chief Justice", (chapter,), 2),
                     ("paragraph", SYNTHESIS.replace("the Tech Lead's", "one"),
                      (chapter, "5. Chief Justice"), 2))
    assert classify("Dialectical Synthesis", blocks).verdict == "absent"


def test_a_term_quoted_among_search_terms_is_mentioned_not_explained() -> None:
    search = ("Our RAG-lite approach: keyword_search() finds anchor terms (\"Dialectical "
              "Synthesis\", \"Fan-In / Fan-Out\", \"StateGraph\") and returns the surrounding "
              "300-char context window from src/tools/doc_tools.py, so the DocAnalyst node "
              "reads the section of the PDF where each rubric term appears and the graph "
              "hands it to the judges.")
    blocks = _blocks(("paragraph", search, ("PDF Ingestion",), 4))
    verdict = classify("Dialectical Synthesis", blocks)
    assert verdict.verdict == "dropped"
    assert "quoted in a list of terms" in verdict.occurrences[0].reason
    # the fact names every deciding occurrence: a later plan is said beside the list mention
    plan = ("paragraph", "This implements Dialectical Synthesis - not via an LLM averaging "
            "scores, but through explicit rules that weigh evidence over opinion.",
            ("Phase 2: Chief Justice Synthesis (Days 2-3)",), 8)
    both = concept_finding(classify("Dialectical Synthesis", _blocks(
        ("paragraph", search, ("PDF Ingestion",), 4), plan)))
    assert "p.4: quoted in a list of terms" in both.rationale
    assert "p.8: named in 'Phase 2" in both.rationale
    # One quoted term used in an explanation is still read as an explanation.
    used = search.replace('("Dialectical Synthesis", "Fan-In / Fan-Out", "StateGraph")',
                          '"Dialectical Synthesis" evidence')
    assert classify("Dialectical Synthesis", _blocks(
        ("paragraph", used, ("PDF Ingestion",), 4))).verdict == "explained"


def test_a_term_in_a_list_of_concepts_searched_for_is_mentioned_not_explained() -> None:
    search = ("In parallel, the DocAnalyst node ingests the PDF report using Docling, chunks "
              "the document into manageable sections, searches for key rubric concepts such "
              "as Dialectical Synthesis and Fan-In/Fan-Out, and cross-references file paths "
              "mentioned in the report against those found in the repository.")
    verdict = classify("Dialectical Synthesis", _blocks(("paragraph", search, ("Design",), 1)))
    assert verdict.verdict == "dropped"
    assert "quoted in a list of terms" in verdict.occurrences[0].reason
    # the same concept explained in the next clause is still an explanation
    explained = search.replace(
        ", and cross-references", "; Dialectical Synthesis is implemented by three judge "
        "personas that run in parallel on the same evidence, and the graph cross-references")
    assert classify("Dialectical Synthesis", _blocks(
        ("paragraph", explained, ("Design",), 1))).verdict == "explained"


def test_a_title_that_names_a_summary_word_is_no_summary_section() -> None:
    # The document's title ("... & Self-Audit Final Report") sits above every section: the
    # design section under it explains; a real self-audit section under it still does not.
    title = "Architecture & Self-Audit Final Report"
    blocks = _blocks(("heading", title, (), 1),
                     ("heading", "2.1 Conceptual Grounding", (title,), 2),
                     ("paragraph", EXPLAINED, (title, "2.1 Conceptual Grounding"), 2),
                     ("heading", "3. Self-Audit Criterion Breakdown", (title,), 6),
                     ("paragraph", EXPLAINED, (title, "3. Self-Audit Criterion Breakdown"), 6))
    verdict = classify("Metacognition", blocks)
    assert verdict.verdict == "explained"
    assert [o.explained for o in verdict.occurrences] == [True, False]
    assert "summary" in verdict.occurrences[1].reason


def test_a_section_titled_with_the_concept_is_its_own_section_not_a_self_audit() -> None:
    """Addisu-Taye: "3. METACOGNITION AND SELF-AUDIT" is the concept's own section, read on
    its body; a self-audit section that does not name the concept still restates criteria."""
    own = "3. METACOGNITION AND SELF-AUDIT"
    blocks = _blocks(("heading", own, (), 4), ("paragraph", EXPLAINED, (own,), 4))
    verdict = classify("Metacognition", blocks)
    assert verdict.verdict == "explained"
    assert [o.explained for o in verdict.occurrences] == [True, True]
    other = "4. Self-Audit Criterion Breakdown"
    verdict = classify("Metacognition", _blocks(("heading", other, (), 6),
                                                ("paragraph", EXPLAINED, (other,), 6)))
    assert verdict.verdict != "explained"
    assert "summary" in verdict.occurrences[0].reason


def test_a_table_of_contents_before_the_title_does_not_hide_the_title() -> None:
    # a contents page set at the title's level sits beside it: the title still names the
    # document ("... - Self-Audit Report"), and the design section under it explains
    title, toc = "Automaton Auditor - Self-Audit Report", "Table of Contents"
    blocks = _blocks(("heading", toc, (), 1),
                     ("list", "2.4 Metacognition", (toc,), 1),
                     ("heading", title, (), 2),
                     ("heading", "2.4 Metacognition", (title,), 3),
                     ("paragraph", EXPLAINED, (title, "2.4 Metacognition"), 3))
    verdict = classify("Metacognition", blocks)
    assert verdict.verdict == "explained"
    assert [o.explained for o in verdict.occurrences] == [False, True, True]


def test_a_run_in_title_leads_the_code_and_lists_after_it() -> None:
    """'Metacognition (...): ...' opens a subsection the layout did not mark: the code lines
    and the list after it (each its own block) are its discussion, up to the next run-in
    title naming another concept."""
    section = ("2.1 Core Conceptual Framework",)
    lead = ("Metacognition (Evaluating Evaluation Quality): The ChiefJustice judges the "
            "quality of the judges' evaluations:")
    body = ["# From chief.py - variance detection logic",
            "def calculate_variance(opinions: list[JudicialOpinion]) -> float:",
            "return max(scores) - min(scores)", "Features:",
            "1. Variance detection: identifies when judges fundamentally disagree (spread > 2)",
            "2. Dissent summary: explains why Prosecutor and Defense reached different scores",
            "Evidence Location: variance detection at src/pkg/agents/chief.py:45-67."]
    blocks = _blocks(("paragraph", lead, section, 3),
                     *(("list" if b[0].isdigit() else "paragraph", b, section, 3) for b in body))
    assert classify("Metacognition", blocks, CONCEPTS).verdict == "explained"
    # the next concept's run-in title closes it: a lead with nothing under it stays a name
    other = ("paragraph", "Fan-In/Fan-Out (Parallel Execution): detectives run in parallel.",
             section, 3)
    thin = _blocks(("paragraph", lead, section, 3), other,
                   *(("paragraph", b, section, 3) for b in body))
    assert classify("Metacognition", thin, CONCEPTS).verdict == "dropped"


def test_a_sentence_ending_with_a_colon_is_read_with_the_list_it_opens() -> None:
    """'Metacognition: the Chief Justice re-evaluates at several levels:' then '1. Fact
    supremacy: detective evidence overrides judge opinions.' is one explanation; the same
    sentence closed by a full stop stands alone (a name, no mechanism)."""
    opener = (f"{AROUND} Metacognition: The Chief Justice performs metacognitive "
              "re-evaluation at two levels:")
    items = ("list", "1. Fact supremacy: Detective evidence overrides judge opinions.",
             ("Theory",), 2)
    opened = classify("Metacognition", _blocks(("paragraph", opener, ("Theory",), 2), items),
                      CONCEPTS)
    assert opened.verdict == "explained"
    closed = classify("Metacognition", _blocks(
        ("paragraph", opener[:-1] + ".", ("Theory",), 2), items), CONCEPTS)
    assert closed.verdict == "dropped"


def test_a_titled_subsection_under_an_executive_summary_is_the_reports_body() -> None:
    # The summary's own paragraph only names the concept; the subsection the outline nests
    # under it ("Executive Summary" > "Metacognition ...") explains it; a "Key Takeaways"
    # subsection is a summary of its own.
    top, summary, meta = ("Final Report",), ("Final Report", "Executive Summary"), \
        "Metacognition (Integrity Checks)"
    blocks = [Block("heading", top[0], 1, level=1),
              Block("heading", summary[1], 1, level=2, section=top),
              Block("paragraph", EXPLAINED, 1, section=summary),
              Block("heading", "Key Takeaways", 1, level=3, section=summary),
              Block("paragraph", EXPLAINED, 1, section=(*summary, "Key Takeaways")),
              Block("heading", meta, 2, level=3, section=summary),
              Block("paragraph", EXPLAINED, 2, section=(*summary, meta))]
    verdict = classify("Metacognition", blocks)
    assert verdict.verdict == "explained"
    assert [o.page for o in verdict.occurrences if o.explained] == [2, 2]
    assert all("summary" in o.reason for o in verdict.occurrences if o.page == 1)


FAN_IN = ("The diagram below depicts the StateGraph with parallel branches for both "
          "Detectives and Judges, fan-in synchronization points (EvidenceAggregator, "
          "JudgeCollector), and the synthesis endpoint. Each branch returns partial "
          "evidences that the merge_evidences reducer folds together, and the "
          "conditional edge routes to the degraded path when the evidence is missing.")


def test_synchronization_about_fan_in_is_state_synchronization() -> None:
    """'State Synchronization' explained under other words: 'synchronization' used about
    fan-in and parallel branches, beside the reducer that merges them."""
    blocks = _blocks(("heading", "2.3 Diagram: StateGraph with Parallel Branches and "
                      "Synchronization", (), 4),
                     ("paragraph", FAN_IN, ("2.3 Diagram: StateGraph with Parallel Branches "
                                            "and Synchronization",), 4))
    verdict = classify("State Synchronization", blocks)
    assert verdict.verdict == "explained"
    assert verdict.loose and "used about state, reducers, fan-in" in verdict.note
    assert any("fan-in synchronization points" in o.sentence for o in verdict.occurrences)
    assert "The exact phrase never appears; 'synchroniz" in concept_finding(verdict).rationale


def test_a_bare_synchronization_is_not_state_synchronization() -> None:
    """'Synchronization' with nothing about state, reducers, fan-in or merging in its
    sentence is another synchronization: the concept never appears."""
    bare = ("The nightly job keeps the mirror in synchronization with the upstream "
            "repository. The chief_justice node in src/nodes/justice.py applies the "
            "variance rule to the judges' scores and writes the report with dissent notes "
            "for each criterion, so the graph records why it chose each final score.")
    blocks = _blocks(("heading", "3. Operations", (), 2), ("paragraph", bare,
                                                            ("3. Operations",), 2))
    assert classify("State Synchronization", blocks).verdict == "absent"


def test_a_fan_in_synchronization_does_not_hide_a_section_that_explains_the_state() -> None:
    """'Synchronization' said of fan-in points, without mechanism in its sentence, in a
    paragraph whose later sentence explains how the state is merged: the better of the two
    readings stands (the concept is explained, not "named without mechanism")."""
    section = ("4. Architectural Design Process",)
    blocks = _blocks(("paragraph", "I drew the Fan-In (Synchronization) points on paper first. "
                      "I then walked the team through the drawing. This needed custom "
                      "state reducers (operator.ior for the evidence dict, operator.add for "
                      "the opinions list) to merge what each parallel branch found back into "
                      "one global state before the aggregator node and the chief_justice "
                      "node read it.", section, 5))
    verdict = classify("State Synchronization", blocks)
    assert verdict.verdict == "explained"
    assert verdict.deciding()[0].page == 5


def test_a_titled_list_item_stops_at_its_sibling_items() -> None:
    """'2. Dialectical Synthesis: Configure the Chief Justice ...' in a numbered plan: items
    '1. Judicial Logic: ...' and '3. Final Formatting: ...' discuss their own subjects, so
    the item is read alone (one sentence, a name). A sub-bullet under it is still its body."""
    section = ("5. Concrete Plan for Phase 2",)
    first = ("list", "1. Judicial Logic: Implement a JudgeNode that takes the evidences "
             "dictionary and generates a JudicialOpinion based on the extracted "
             "rubric_dimensions.", section, 2)
    item = ("list", "2. Dialectical Synthesis: Configure the Chief Justice node to resolve "
            "conflicts when the Prosecutor and Defense scores vary by more than 2 points.",
            section, 2)
    last = ("list", "3. Final Formatting: Automate the export of the AuditReport into a "
            "professional Markdown file in the /reports directory.", section, 2)
    verdict = classify("Dialectical Synthesis", _blocks(first, item, last), CONCEPTS)
    assert verdict.verdict == "dropped"
    # in a design section, the items describe one architecture: they stay its discussion
    design = [(kind, text, ("4. Architecture",), page) for kind, text, _, page in
              (first, item, last)]
    assert classify("Dialectical Synthesis", _blocks(*design), CONCEPTS).verdict == "explained"
    child = ("list", "\u2022 The chief_justice node in src/nodes/justice.py applies "
             "security_override, fact_supremacy and a variance rule to the judges' scores "
             "merged by the operator.add reducer of the state, and writes a dissent.",
             section, 2)
    nested = classify("Dialectical Synthesis", _blocks(first, item, child, last), CONCEPTS)
    assert nested.verdict == "explained"


def test_a_sentence_the_layout_cut_into_lines_is_read_whole_with_its_neighbours() -> None:
    """Each line its own block ('o Annotated reducers (operator.add ...)' then 'safely merge
    data across concurrent agents, ...'): the discussion around a line is the sentences
    around it, not the two adjacent lines."""
    section = ("Section 1: Architecture Decisions", "State Management")
    lines = ["\u2022 Pydantic vs dict:",
             "o Typed fields prevent accidental overwrites during parallel",
             "execution by providing structured data models.",
             "o Annotated reducers (operator.add for lists, operator.ior for dicts)",
             "safely merge data across concurrent agents, ensuring that fan-out",
             "and fan-in operations do not lose information.",
             "o Evidence and JudicialOpinion are BaseModel classes, guaranteeing",
             "structured output for Judges and facilitating validation of results."]
    blocks = _blocks(*(("paragraph", line, section, 1) for line in lines))
    verdict = classify("Fan-In / Fan-Out", blocks, CONCEPTS)
    assert verdict.verdict == "explained"
    # whole sentences each in a block are not lines of one: the neighbours stay one block each
    whole = _blocks(*(("paragraph", text, section, 1) for text in (
        "Typed fields prevent accidental overwrites.",
        "Reducers keep fan-out and fan-in safe.",
        "Pydantic validates the judges' output.")))
    assert classify("Fan-In / Fan-Out", whole, CONCEPTS).verdict == "dropped"


def test_a_concept_among_the_patterns_a_check_verifies_is_mentioned_not_explained() -> None:
    """'AST-based inspection verifies structural patterns in the graph (fan-out, conditional
    routing, structured outputs)': the word names what a detective checks for."""
    text = (f"{AROUND} The AST-based inspection verifies structural patterns in the graph "
            "(fan-out, conditional routing, structured outputs).")
    blocks = _blocks(("paragraph", text, ("2. Repository Tooling",), 2))
    verdict = classify("Fan-In / Fan-Out", blocks, CONCEPTS)
    assert verdict.verdict == "dropped"
    assert "list of terms" in verdict.occurrences[0].reason


def test_a_sentence_ending_with_a_colon_is_explained_by_the_list_it_opens() -> None:
    # Meseretbolled: "follows a strict fan-out / fan-in pattern:" and five bullets, the
    # last two on the next page, say which nodes run in parallel and where they meet
    section = ("2.1 The Digital Courtroom Model",)
    items = ["The Detectives (RepoInvestigator, DocAnalyst, VisionInspector) execute in "
             "parallel.", "Their outputs are synchronized in the EvidenceAggregator node.",
             "The Judges (Prosecutor, Defense, Tech Lead) execute in parallel on the same "
             "evidence.", "Their opinions are synchronized in the OpinionAggregator node.",
             "The ChiefJustice node synthesizes the final verdict."]
    blocks = _blocks(
        ("paragraph", "This separation prevents hallucination propagation.", section, 2),
        ("paragraph", "The execution flow implemented in src/graph.py follows a strict "
         "fan-out / fan-in pattern:", section, 2),
        *(("list", f"\u25cf {item}", section, 2 if n < 3 else 3)
          for n, item in enumerate(items)),
        ("paragraph", "This is not a sequential script.", section, 3))
    verdict = classify("Fan-In / Fan-Out", blocks)
    assert verdict.verdict == "explained", verdict.occurrences
    # without the list it opens, the same sentence names the pattern only
    assert classify("Fan-In / Fan-Out", blocks[:2] + blocks[-1:]).verdict == "dropped"


def test_a_loose_keyword_drop_does_not_say_the_phrase_appears() -> None:
    """chacha1921: only 'synchroniz…' in a planned-work list, said of documentation and
    state: the fact says words of the term appear, not that 'State Synchronization' does."""
    blocks = _blocks(("heading", "Remediation Plan", (), 5),
                     ("list", "Documentation Synchronization: keep the reducer notes on the "
                      "state merge in step with the code.", ("Remediation Plan",), 5))
    verdict = classify("State Synchronization", blocks)
    said = concept_finding(verdict).rationale
    assert verdict.verdict != "explained" and verdict.loose, said
    assert "words of 'State Synchronization' appear" in said, said
    assert "'State Synchronization' appears" not in said, said
