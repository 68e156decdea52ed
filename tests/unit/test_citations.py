"""Cited paths as real PDF text layers give them: broken identifiers repaired and checked
against the repository, dotted API names never taken for files, planned files apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.forensics.pdf.citations import (
    Passage,
    extract_cited_paths,
    future_flags,
)
from automaton_auditor.forensics.pdf.textlayer import flowed, mend
from automaton_auditor.state import ReportFacts

FILES = ["README.md", "pyproject.toml", "src/graph.py", "src/state.py",
         "src/nodes/judges.py", "src/nodes/justice.py", "src/nodes/chief_justice.py",
         "src/tools/ast_tools.py", "rubric/week2_rubric.json"]


def _check(passages: list[Passage | tuple[int | None, str]], files: list[str] = FILES,
           second: dict[int, str] | None = None) -> tuple[list[str], list[str], list[str]]:
    facts = ReportFacts(readable=True, page_count=3,
                        cited_paths=extract_cited_paths(passages, second))
    _, verified, hallucinated, planned = cross_check(facts, files, None)
    return verified, hallucinated, planned


def test_a_path_whose_underscores_the_text_layer_lost_names_its_one_file() -> None:
    # LaTeX typesets `chief_justice.py` with a subscript: the text layer reads `chiefjustice.py`
    files = [*FILES, "src/a_b.py", "src/ab_.py"]
    verified, hallucinated, _ = _check([
        (4, "Listing 2: Sandboxed Git Clone (src/nodes/chiefjustice.py)"),
        (5, "Two files squash alike: src/ab.py; a cited underscore stays: src/nodes/chief_jus"
            "tice_v2.py; a name no file has: src/tools/cachetools.py.")], files)
    assert verified == ["src/nodes/chief_justice.py"]
    assert hallucinated == ["src/ab.py", "src/nodes/chief_justice_v2.py",
                            "src/tools/cachetools.py"]


def test_a_word_glued_to_a_path_by_ocr_is_set_aside_only_when_a_file_matches() -> None:
    # OCR of "In src/tools/ast_tools.py" reads `Insrc/tools/ast_tools.py`
    verified, hallucinated, _ = _check([
        (20, "Insrc/tools/ast_tools.py the parser walks the tree. Seesrc/graph.py too."),
        (21, "Made-up files stay made up: Insrc/tools/git_tools.py and Models/x.py.")])
    assert verified == ["src/graph.py", "src/tools/ast_tools.py"]
    assert hallucinated == ["Insrc/tools/git_tools.py", "Models/x.py"]


def test_a_space_before_an_underscore_or_after_a_slash_is_closed() -> None:
    verified, hallucinated, _ = _check([
        (1, "The Chief Justice lives in src/nodes/chief _justice.py and the AST pass in "
            "src/tools/ ast_tools.py."),
        (2, "A missing helper: src/nodes/dissent _writer.py.")])
    assert verified == ["src/nodes/chief_justice.py", "src/tools/ast_tools.py"]
    # a repaired path whose folder exists is checked like any other: here it is missing
    assert hallucinated == ["src/nodes/dissent_writer.py"]


def test_a_repair_in_an_unknown_folder_is_never_called_hallucinated() -> None:
    # "see lib/ x _y.py" may not be a path at all: it counts only if it matches a file
    assert _check([(1, "Notes in notes/ draft _two.py and vendor/ x.py.")]) == ([], [], [])


@pytest.mark.parametrize("text", [
    "Reducers operator.add/operator.ior merge the state.",
    "EvidenceAggregator\\noperator.ior merge",
    "from langgraph.graph import StateGraph; langgraph.graph.StateGraph/compile.run",
])
def test_dotted_api_names_are_never_files(text: str) -> None:
    assert _check([(1, text)]) == ([], [], [])


def test_an_api_name_that_does_name_a_file_is_still_verified() -> None:
    assert _check([(1, "Models in pkg/models.ior")], ["pkg/models.ior"])[0] == ["pkg/models.ior"]


def test_dropped_underscores_are_learnt_from_the_paths_that_match() -> None:
    passages: list[Passage | tuple[int | None, str]] = [
        (1, "The target artifact field in rubric/week2 rubric.json is read."),
        (2, "src/tools/git tools.py uses tempfile.TemporaryDirectory()."),
        Passage(3, "Refactor src/nodes/context builder.py to iterate over dimensions.",
                future=True)]
    verified, hallucinated, planned = _check(passages)
    assert verified == ["rubric/week2_rubric.json"]
    assert hallucinated == ["src/tools/git_tools.py"]
    assert planned == ["src/nodes/context_builder.py"]
    # without a confirmed repair a spaced name is only a guess: never a hallucination
    assert _check(passages[1:]) == ([], [], [])


def test_a_spaced_name_matches_whichever_join_names_a_file() -> None:
    files = [*FILES, "src/nodes/evidenceaggregator.py"]
    assert _check([(1, "See src/nodes/evidence aggregator.py.")], files)[0] == [
        "src/nodes/evidenceaggregator.py"]


def test_a_file_name_with_a_space_counts_only_when_the_repository_has_it() -> None:
    # a line end cut the name where its space is; the text layer flows it back with a space
    text = flowed("Full Markdown output: audit/report_self/audit_report_Jane\r\nDoe.md\r\n"
                  "1. Git Forensic Analysis")
    files = [*FILES, "audit/report_self/audit_report_Jane Doe.md"]
    assert _check([(5, text)], files) == (["audit/report_self/audit_report_Jane Doe.md"],
                                          [], [])
    # no such file: the words are no claim, neither missing nor planned
    assert _check([(5, text)]) == ([], [], [])
    # prose with a folder in it invents no spaced path, and the words after it are still read
    prose = "The notes under docs/design_notes and README.md explain it."
    assert _check([(1, prose)], [*FILES, "docs/design_notes/a.md"]) == (["README.md"], [], [])


def test_a_path_a_table_cell_cut_inside_a_word_is_joined_when_the_join_names_a_file() -> None:
    files = [*FILES, "src/pkg/agents/judges.py", "src/pkg/doc_tools.py", "tests/test_a.py"]
    rows: list[Passage | tuple[int | None, str]] = [
        (9, "E-004 | Three judge personas | src/pkg/agent s/judges.py:1-80"),
        (9, "E-001 | Fan-out | src/pkg/graph .py:10-20 | tests cover src/pkg tests/test_a.py"),
        Passage(12, "P0 | RAG | src/pkg/doc_t ools.py:80-120 | P0 | Citation check | "
                    ".github/workflows/citati on-check.yml", future=True)]
    verified, hallucinated, planned = _check(rows, [*files, "src/pkg/graph.py"])
    assert verified == ["src/pkg/agents/judges.py", "src/pkg/doc_tools.py", "src/pkg/graph.py",
                        "tests/test_a.py"]
    # the cut repair matched files here, so the planned file in a new folder is read joined
    assert (hallucinated, planned) == ([], [".github/workflows/citation-check.yml"])
    # a join no file confirms is only a guess: neither missing nor planned
    assert _check([rows[2], (3, "Judges in src/pkg/agent s/ghost.py.")], FILES) == ([], [], [])


def test_top_level_files_cited_bare_are_verified_other_bare_names_are_not() -> None:
    verified, hallucinated, _ = _check([(1, "See README.md, pyproject.toml, justice.py and "
                                            "ghost.py.")])
    assert verified == ["README.md", "pyproject.toml"]
    assert hallucinated == []


def test_dotfiles_and_build_files_count_only_when_the_repository_has_them() -> None:
    files = [*FILES, ".env.example", "Dockerfile"]
    verified, hallucinated, planned = _check([
        (14, "Deliverables: .env.example, Dockerfile, README.md and .gitignore."),
        (15, "Unlike .NET, a Makefile-style target or a Procfile, operator.ior is no file."),
        Passage(16, "We will add a Makefile and .pre-commit-config.yaml.", future=True),
    ], files)
    assert verified == [".env.example", "Dockerfile", "README.md"]
    # absent names of this shape are neither missing nor planned: they may be no file at all
    assert hallucinated == [] and planned == []


def test_future_work_is_planned_and_existing_targets_stay_verified() -> None:
    verified, hallucinated, planned = _check([
        Passage(4, "Target File: src/nodes/judges.py and config/personas.yaml", future=True),
        Passage(4, "Move week2_rubric.json to the root folder as rubric.json.", future=True),
        (5, "We will add src/tools/cache.py (new file) for memoisation."),
        (5, "Files to Modify: src/utils/loader.py"),
    ])
    assert verified == ["src/nodes/judges.py"]
    assert hallucinated == []
    assert planned == ["config/personas.yaml", "rubric.json", "src/tools/cache.py",
                       "src/utils/loader.py"]


def test_work_a_sentence_says_is_not_built_yet_is_planned() -> None:
    verified, hallucinated, planned = _check([
        (8, "What remains is building the three node functions in src/nodes/prosecutor.py "
            "with structured output."),
        (8, "The synthesis in src/nodes/chief.py is designed but not yet implemented."),
        (8, "The clone tool lives in src/tools/sandbox.py.")])
    assert planned == ["src/nodes/chief.py", "src/nodes/prosecutor.py"]
    assert hallucinated == ["src/tools/sandbox.py"] and verified == []


def test_a_missing_path_also_asserted_as_present_is_hallucinated() -> None:
    _, hallucinated, planned = _check([
        (2, "The personas are loaded from config/personas.yaml at start-up."),
        Passage(9, "Extract prompts into config/personas.yaml.", future=True)])
    assert (hallucinated, planned) == (["config/personas.yaml"], [])


def test_paths_the_report_says_do_not_exist_are_not_its_claims() -> None:
    assert _check([
        (1, "Early runs had judges cite non-existent paths (e.g. src/main.py)."),
        (2, "The PDF referenced tools/git.py but the actual file was renamed."),
        (3, "The peer's report claimed src/advanced_judges.py existed: hallucinated."),
    ]) == ([], [], [])


def test_a_command_line_option_argument_is_no_claim_the_file_is_committed() -> None:
    """`--pdf-path audit/cache/report.pdf` names what a run downloads or writes: verified when
    the repository has it, never hallucinated; the same path in prose still is."""
    run = ("To populate: uv run run-audit --repo-url . --pdf-path \n"
           "audit/cache/report.pdf --output-dir=audit/out/self.md "
           "--rubric rubric/week2_rubric.json")
    assert _check([(13, run)]) == (["rubric/week2_rubric.json"], [], [])
    assert _check([(2, "The report is kept at audit/cache/report.pdf.")])[1] == [
        "audit/cache/report.pdf"]


def test_a_path_cited_with_and_without_a_leading_folder_is_one_missing_file() -> None:
    _, hallucinated, _ = _check([
        (9, "The peer report (audit/report_bypeer/peer_abc.md) is generic."),
        (10, "The peer's agent (report_bypeer/peer_abc.md) scored us 85/85.")])
    assert hallucinated == ["audit/report_bypeer/peer_abc.md"]


def test_the_second_extractor_supplies_the_spelling_that_matches() -> None:
    # docling lost the underscore entirely; pdfium read it: the matching spelling wins
    verified, hallucinated, _ = _check([(1, "Rules in src/nodes/chiefjustice.py.")],
                                       second={1: "Rules in src/nodes/chief_justice.py."})
    assert (verified, hallucinated) == (["src/nodes/chief_justice.py"], [])
    # docling broke a path pdfium read whole: pdfium's reading is a claim, checked as such
    _, hallucinated, _ = _check([(1, "Writer in lib/io/report _writer.py.")],
                                second={1: "Writer in lib/io/report_writer.py."})
    assert hallucinated == ["lib/io/report_writer.py"]
    # a path only the second extractor reads is cited too
    verified, _, _ = _check([(1, "The graph.")], second={1: "The graph src/graph.py."})
    assert verified == ["src/graph.py"]


def test_future_sections_close_at_the_next_heading_of_their_depth() -> None:
    blocks = [(True, 1, "6. Results", ()), (False, 0, "body", ("6. Results",)),
              (True, 1, "7. Prioritized Remediation & Completion Plan", ()),
              (True, 1, "Priority 1 - Judges", ()), (False, 0, "File: a/b.py", ()),
              (True, 1, "8. Self-Audit", ()), (False, 0, "body", ()),
              (True, 2, "Next Steps", ()), (True, 3, "Week 1", ()), (False, 0, "x", ()),
              (True, 2, "Appendix", ()), (False, 0, "y", ())]
    assert future_flags(blocks) == [False, False, True, True, True, False, False, True, True,
                                    True, False, False]


def test_mend_closes_only_the_gaps_the_other_extractor_reads_whole() -> None:
    other = "wired by build_graph() and the _call_judge helper in src/nodes/judges.py"
    assert mend("wired by build _graph() and the _call_judge helper in src/nodes/ judges.py",
                other) == other
    assert mend("the _call_judge helper", "the _call_judge helper") == "the _call_judge helper"
    assert flowed("see audit/\r\nreport_x/a.md and\r\nmore") == "see audit/report_x/a.md and more"


def _broken_pdf(path: Path) -> Path:
    """A page whose text runs leave a gap before `_` and after `/`, as Skia and LaTeX do."""
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path))
    y = 700.0
    for parts in (["The judge lives in src/nodes/chief", "_justice.py today."],
                  ["Tools: src/tools/", "ast_tools.py holds the AST pass."],
                  ["A missing one: src/nodes/dissent", "_writer.py is cited."]):
        x = 72.0
        for part in parts:
            pdf.drawString(x, y, part)
            x += stringWidth(part, "Helvetica", 12) + 3
        y -= 20
    pdf.drawString(72, y, "Filler text so that the page counts as having a text layer.")
    pdf.save()
    return path


def test_a_real_pdf_with_broken_identifiers_is_read_whole(tmp_path: Path) -> None:
    from automaton_auditor.forensics.pdf.reader import ingest_report, report_facts

    report = ingest_report(_broken_pdf(tmp_path / "broken.pdf"))
    assert "chief _justice.py" in report.blocks[0].text  # what the native pipeline gives
    _, verified, hallucinated, _ = cross_check(report_facts(report), FILES, None)
    assert verified == ["src/nodes/chief_justice.py", "src/tools/ast_tools.py"]
    assert hallucinated == ["src/nodes/dissent_writer.py"]


def test_a_bare_name_given_as_a_location_is_checked_as_a_repository_path() -> None:
    passages: list[Passage | tuple[int | None, str]] = [
        (10, "\u25cf Location: Architecture_Report.md"),
        (11, "File: `judges.py` holds the three personas."),
        (12, "Unlike ghost.py, these are cited as places."),
        Passage(13, "File: graph_builder.py", future=True)]
    verified, hallucinated, planned = _check(passages)
    # any file of that name verifies it; none makes it missing, unless it is future work
    assert verified == ["judges.py"]
    assert hallucinated == ["Architecture_Report.md"] and planned == ["graph_builder.py"]
    assert _check(passages[:1], [*FILES, "docs/Architecture_Report.md"])[:2] == (
        ["Architecture_Report.md"], [])


def test_a_file_the_report_says_to_make_or_that_is_missing_is_planned() -> None:
    """Interim reports plan their missing files in imperatives and "What is missing:" lines;
    a file presented as existing and absent stays hallucinated."""
    _, hallucinated, planned = _check([
        (1, "- Judges: Add `src/nodes/prosecutor.py` with three nodes (Prosecutor, Defense)."),
        (2, "**What is missing:** `src/nodes/synthesis.py` - the ChiefJusticeNode."),
        (3, "| judicial_nuance | RepoInvestigator | Requires `src/nodes/personas.py` to exist |"),
        (4, "We added src/nodes/defense.py with the Defense persona.")])
    assert planned == ["src/nodes/prosecutor.py", "src/nodes/synthesis.py"]
    assert hallucinated == ["src/nodes/defense.py"]


def test_a_file_the_challenge_asks_for_is_planned_and_the_claim_beside_it_is_not() -> None:
    """"The spec calls for X; the logic lives in Y": X is the challenge's requirement, Y a
    claim about the code (hallucinated when absent). A file the code requires stays a claim."""
    _, hallucinated, planned = _check([
        (1, "3. Final submission spec calls for `src/nodes/verdict.py`; current synthesis "
            "logic lives in `src/nodes/supreme_court.py`."),
        (2, "The rubric requires a `src/nodes/bench.py` module."),
        (3, "The graph requires `src/nodes/wiring.py` to be imported first.")])
    assert planned == ["src/nodes/bench.py", "src/nodes/verdict.py"]
    assert hallucinated == ["src/nodes/supreme_court.py", "src/nodes/wiring.py"]


def test_a_path_in_an_example_is_verified_when_present_and_never_hallucinated() -> None:
    verified, hallucinated, planned = _check([
        (7, 'It reports AST parse errors (e.g., "Invalid Python syntax in src/broken_module.py")'
            " and, for example, src/graph.py when the graph file fails."),
        (8, "The judges live in src/nodes/missing.py."),
        Passage(9, "Update the git detector (for example, src/detectors/git.py) to collect "
                   "per-commit metadata.", future=True)])
    assert verified == ["src/graph.py"]
    assert hallucinated == ["src/nodes/missing.py"]
    assert planned == ["src/detectors/git.py"]


def test_a_file_the_run_writes_is_no_claim_that_it_is_committed() -> None:
    verified, hallucinated, planned = _check([
        (1, "Export traces after each run; save URLs to\naudit/langsmith_logs/trace_urls.txt"),
        (2, '" > audit/langsmith_logs/runs.txt'),
        (3, "The graph is written to src/graph.py and README.md lists audit/missing.md.")])
    assert verified == ["README.md", "src/graph.py"]
    assert hallucinated == ["audit/missing.md"]
    assert planned == ["audit/langsmith_logs/runs.txt", "audit/langsmith_logs/trace_urls.txt"]


def test_plan_headings_open_future_sections() -> None:
    blocks = [(True, 1, "Integration Test Plan (Phase 2)", ()), (False, 0, "# tests/x.py", ()),
              (True, 1, "Dimensions deferred to final submission", ()), (False, 0, "b", ()),
              (True, 1, "5. Known Gaps and Plan for Final Submission", ()), (False, 0, "c", ()),
              (True, 1, "6. Execution", ()), (False, 0, "d", ())]
    assert future_flags(blocks) == [True, True, True, True, True, True, False, False]
