"""Report descriptions of how the system behaves (a retry of malformed replies, a node that
gates later nodes on a condition, weighed judges) read against the code's facts."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.names import code_names
from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.pdf.behaviours import BEHAVIOURS
from automaton_auditor.forensics.pdf.claims import extract_statements
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.reader import report_facts
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import CodeNames, Evidence, Finding, RebuiltGraph
from tests.unit.report_helpers import ingested

GRAPH = RebuiltGraph(builder="g", location="app/graph.py:10",
                     nodes=["scan", "read", "aggregator", "prosecutor", "defense", "justice"],
                     edges=[("scan", "aggregator"), ("read", "aggregator"),
                            ("aggregator", "prosecutor"), ("aggregator", "defense"),
                            ("prosecutor", "justice"), ("defense", "justice")],
                     fan_out={"aggregator": ["defense", "prosecutor"]},
                     fan_in={"justice": ["defense", "prosecutor"]}, linear=False)
TOPOLOGY = Finding(facet="graph.topology", goal="Rebuilt graph topology", found=True,
                   pattern="neutral", location="app/graph.py:10", confidence=0.9,
                   rationale="Nodes: ...",
                   content='app/graph.py:14:     g.add_edge("scan", "aggregator")\n'
                           'app/graph.py:16:     g.add_edge("aggregator", "prosecutor")\n'
                           'app/graph.py:17:     g.add_edge("aggregator", "defense")')
NO_RETRY = Finding(facet="llm.retry", goal="Retry logic around model calls", found=False,
                   pattern="success", location=".", confidence=0.75,
                   rationale="No with_retry, max_retries, retry decorator or retry loop "
                             "around a model call.")
MEAN = Finding(facet="justice.averaging", goal="The verdict is a plain average", found=True,
               pattern="failure", location="app/justice.py:20", confidence=0.85,
               rationale="The score is a mean of the opinions.",
               content="app/justice.py:22: final = sum(scores) / len(scores)")
WEIGHTS = Finding(facet="justice.rules", goal="Rules", found=True, pattern="success",
                  location="app/justice.py:30", confidence=0.75, rationale="Rules: ...",
                  data={"rules": {"functionality_weight": ["app/justice.py:34"]}})
CODE = [TOPOLOGY, NO_RETRY, MEAN]


def _names(tmp_path: Path, source: str) -> CodeNames:
    (tmp_path / "app").mkdir(exist_ok=True)
    (tmp_path / "app" / "judges.py").write_text(source)
    return code_names(tmp_path, ["app/judges.py"])


PLAIN = "import json\n\ndef judge(llm, brief):\n    return json.loads(llm.invoke(brief).content)\n"


def _found(names: CodeNames, *texts: str, code: list[Finding] | None = None,
           graph: RebuiltGraph = GRAPH) -> list[Finding]:
    claims = extract_statements([(page, text) for page, text in enumerate(texts, start=1)],
                                kinds=BEHAVIOURS)
    return contradiction_findings(claims, CODE if code is None else code, graph, names)


def test_a_retry_of_malformed_replies_the_code_lacks_is_a_contradiction(tmp_path: Path) -> None:
    said = ("If a peer's system returns a malformed response, my agent now triggers a "
            "\u201cValidation Retry\u201d loop rather than failing silently.")
    found = _found(_names(tmp_path, PLAIN), said)
    assert [(f.facet, f.data["kind"]) for f in found] == [
        ("claims.contradictions", "retry_claim")]
    assert said in (found[0].content or "")
    assert "code: No with_retry" in (found[0].content or "")
    # the report's total counts it with the others
    assert found[0].data["statements"] == 1


def test_a_retry_word_in_a_comment_or_a_string_names_no_retry(tmp_path: Path) -> None:
    # amare1990: '# 1. Attempt Structured Output' kept its report's "automatic retries"
    # from being read against code that retries nothing
    said = "Judges use free-tier LLMs with automatic retries on malformed output."
    commented = PLAIN.replace("def judge", "# 1. Attempt structured output, retry later\n"
                              "def judge").replace("brief)\n", "brief)  # 'retry'\n")
    found = _found(_names(tmp_path, commented), said)
    assert [f.data["kind"] for f in found] == ["retry_claim"]
    # a name the code writes still may be a retry the facts do not follow
    assert _found(_names(tmp_path, PLAIN.replace("(llm, brief)", "(llm, brief, attempts=3)")),
                  said) == []


def test_a_retry_holds_when_the_code_may_retry_or_the_sentence_is_hedged(
        tmp_path: Path) -> None:
    said = "A retry loop (up to 2 retries) handles transient parsing failures."
    assert _found(_names(tmp_path, PLAIN + "MAX_ATTEMPTS = 3\n"), said) == []
    looped = GRAPH.model_copy(update={"edges": [*GRAPH.edges, ("justice", "aggregator")]})
    assert _found(_names(tmp_path, PLAIN), said, graph=looped) == []
    retried = NO_RETRY.model_copy(update={"found": True})
    assert _found(_names(tmp_path, PLAIN), said, code=[TOPOLOGY, retried]) == []
    assert _found(_names(tmp_path, PLAIN),
                  "The judges lack a retry loop for malformed output.",
                  "Judge nodes should retry when the JSON fails to parse.",
                  "Their judges retry malformed replies three times.") == []


def test_a_gate_the_graph_has_no_conditional_edge_for_is_a_contradiction(
        tmp_path: Path) -> None:
    said = ("The Min: we added a \u201cStrict Gatekeeper\u201d (Aggregator) that prevents the "
            "Judges from firing if the Evidence object is malformed.")
    found = _found(_names(tmp_path, PLAIN), said)
    assert [f.data["kind"] for f in found] == ["gate_claim"]
    content = found[0].content or ""
    # the edges leaving the node the sentence names, as the code writes them
    assert 'app/graph.py:16:     g.add_edge("aggregator", "prosecutor")' in content
    assert 'g.add_edge("scan", "aggregator")' not in content


def test_a_gate_holds_with_conditional_routing_and_a_fan_in_is_no_gate(tmp_path: Path) -> None:
    said = "The aggregator prevents the judges from running if evidence is missing."
    routed = GRAPH.model_copy(update={"conditional_sources": ["aggregator"]})
    assert _found(_names(tmp_path, PLAIN), said, graph=routed) == []
    # a router somewhere the rebuilt graph does not show (a subgraph)
    assert _found(_names(tmp_path, PLAIN + "g.add_conditional_edges('a', route)\n"), said) == []
    assert _found(_names(tmp_path, PLAIN),
                  "The aggregator ensures the judges do not start until all evidence is "
                  "collected.", "A gate that stops the judges from running if evidence is "
                  "missing would be a useful addition.") == []


def test_command_in_a_docstring_is_no_route_but_langgraphs_command_is(tmp_path: Path) -> None:
    """The words of a file are not its routes: "Command" in a docstring or a log message
    leaves the gate unbuilt; LangGraph's Command, imported and used, may route."""
    said = "The aggregator prevents the judges from firing if the evidence is malformed."
    prose = PLAIN + 'def run(argv):\n    """Command and arguments as a list."""\n    return argv\n'
    assert [f.data["kind"] for f in _found(_names(tmp_path, prose), said)] == ["gate_claim"]
    routed = PLAIN + ("from langgraph.types import Command\n\ndef gate(state):\n"
                      "    return Command(goto='judges')\n")
    assert _found(_names(tmp_path, routed), said) == []


def test_weighed_judges_over_a_plain_mean_are_a_contradiction(tmp_path: Path) -> None:
    names = _names(tmp_path, PLAIN)
    texts = ("The Chief Justice (Synthesis): resolves the conflict by applying a weighted "
             "rubric.", "It doesn't just display the scores; it performs Weighted "
             "Reconciliation:")
    found = _found(names, *texts)
    assert [(f.location, f.data["kind"]) for f in found] == [
        ("report p.1", "weight_claim"), ("report p.2", "weight_claim")]
    assert "app/justice.py:22: final = sum(scores) / len(scores)" in (found[0].content or "")
    # weights the synthesis reads, or weights of criteria, are no contradiction
    assert _found(names, *texts, code=[*CODE, WEIGHTS]) == []
    assert _found(names, "The overall score is a weighted average of criterion weights "
                         "over the judges' scores.",
                  "The Chief Justice does not use a weighted average of the judges.") == []


def test_many_behaviours_the_code_lacks_cap_report_accuracy_at_two(tmp_path: Path) -> None:
    found = _found(_names(tmp_path, PLAIN),
                   "The Chief Justice performs a weighted reconciliation of the judges.",
                   "The synthesis computes a weighted average of the three judges.",
                   "The Aggregator prevents the Judges from firing if the evidence is "
                   "malformed.",
                   "My agent triggers a retry loop when the JSON reply is malformed.")
    assert len(found) == 4
    dossier = [Evidence(source="aggregator", dimension="report_accuracy", **f.model_dump())
               for f in found]
    assert min(row.cap for row, _ in confirmed_caps("report_accuracy", dossier)) == 2


def test_behaviours_are_read_from_prose_outside_future_work() -> None:
    plan = ("7 Remediation Plan",)
    blocks = [Block("heading", "3 Architecture", 1, level=1),
              Block("paragraph", "A retry loop re-asks the model when its reply is "
                    "malformed.", 1, section=("3 Architecture",)),
              Block("heading", "7 Remediation Plan", 2, level=1),
              Block("list", "A weighted average of the judges' scores, and a retry loop "
                    "when the reply is malformed.", 2, section=plan)]
    report = ingested(blocks, 2)
    assert [(c.feature, c.page) for c in report_facts(report).claims] == [("retry_claim", 1)]


def test_behaviours_of_a_part_the_section_says_is_not_built_yet_are_its_design() -> None:
    # an interim report's gap section: the judicial layer is designed, not yet wired
    gaps = ("4. Known Gaps", "The Judicial Layer")
    blocks = [Block("heading", "2 Architecture", 1, level=1),
              Block("paragraph", "A retry loop re-asks the model when its reply is "
                    "malformed.", 1, section=("2 Architecture",)),
              Block("heading", "4. Known Gaps", 8, level=1),
              Block("heading", "The Judicial Layer", 8, level=2, section=("4. Known Gaps",)),
              Block("paragraph", "The judicial layer is fully designed but not yet wired.",
                    8, section=gaps),
              Block("paragraph", "The retry logic is a critical detail: if a Judge returns "
                    "freeform text, the node retries up to two times.", 8, section=gaps)]
    report = ingested(blocks, 8)
    claims = report_facts(report).claims
    # p.8 sits in the section; p.1 describes the judges' retries, a layer the gaps section
    # discloses as not built: both describe the design
    assert [(c.feature, c.page) for c in claims if c.feature == "retry_claim"] == []
    # what the section says is not built is still read (a stale gap stays visible)
    assert any("not yet wired" in c.sentence for c in claims)


def test_a_behaviour_of_a_layer_a_gaps_section_says_is_missing_is_a_disclosed_plan() -> None:
    # bethel4@interim: "2 Known Gaps" has "2.1 Missing Full Judicial Reasoning
    # Implementation" (a paragraph the layout did not make a heading); p.16 describes the
    # judges' validation retries under a failure-modes section
    failures = ("4 Failure Mode & Conditional Routing Strategy",)
    design = [Block("heading", failures[0], 16, level=1),
              Block("list", "\u25cf If validation fails \u2192 automatic retry (max 2 "
                    "attempts)", 16, section=failures)]

    def retries(*gaps: Block) -> list[int | None]:
        report = ingested([*design, *gaps], 16)
        return [c.page for c in report_facts(report).claims if c.feature == "retry_claim"]

    heading = Block("heading", "2 Known Gaps and Forward Plan", 10, level=1)
    gap = ("2 Known Gaps and Forward Plan",)
    assert retries(heading, Block("paragraph", "2.1 Missing Full Judicial Reasoning "
                                  "Implementation", 11, section=gap)) == []
    assert retries(heading, Block("list", "The Judges are not implemented yet;", 11,
                                  section=gap)) == []
    # a gap of another layer, a judge layer said built, or a "missing" outside a gaps
    # section discloses nothing: the retry is still a claim
    assert retries(heading, Block("list", "Vision analysis of diagrams is missing.", 11,
                                  section=gap)) == [16]
    assert retries(heading, Block("list", "Judicial models are defined.", 11,
                                  section=gap)) == [16]
    assert retries(heading, Block("list", "Conditional edges for failure handling (judge "
                                  "parse failure, retry exhaustion) are not fully wired.", 11,
                                  section=gap)) == [16]
    overview = ("1 Overview",)
    assert retries(Block("heading", overview[0], 2, level=1),
                   Block("paragraph", "Judges flag missing evidence.", 2,
                         section=overview)) == [16]


def test_a_behaviour_the_report_lists_as_not_built_yet_is_claimed_nowhere_in_it() -> None:
    # p.1 explains the design ("or the call retries"); p.8 says the retry logic is what
    # remains to build: the report disclosed it, so p.1 is no claim the code contradicts
    blocks = [Block("heading", "1 Why Pydantic", 1, level=1),
              Block("paragraph", "Binding the model with structured output forces the reply "
                    "to conform to the schema, or the call retries.", 1,
                    section=("1 Why Pydantic",)),
              Block("heading", "4. Known Gaps", 8, level=1),
              Block("paragraph", "What remains is building the three judge nodes with "
                    "structured output enforcement and retry logic.", 8,
                    section=("4. Known Gaps",))]

    def retry_pages(blocks: list[Block]) -> list[int | None]:
        report = ingested(blocks, 8)
        return [c.page for c in report_facts(report).claims if c.feature == "retry_claim"]

    assert retry_pages(blocks) == []
    # a gap that does not name the retries leaves the design sentence a claim
    assert retry_pages([*blocks[:3], Block("paragraph", "What remains is wiring the judges.",
                                           8, section=("4. Known Gaps",))]) == [1]


def test_a_behaviour_the_sentence_plans_is_no_claim_even_across_a_broken_line() -> None:
    # "When added, Judges must use" and ".with_structured_output(...) and retry ..." come as
    # two blocks (the text layer broke the line before the dot): one sentence, a plan
    section = ("1 Design",)
    blocks = [Block("heading", "1 Design", 1, level=1),
              Block("paragraph", "Structured output for Judges: When added, Judges must use",
                    1, section=section),
              Block("paragraph", ".with_structured_output(JudicialOpinion) and retry on "
                    "parse failure.", 1, section=section),
              Block("paragraph", "Opinions will be enforced via a schema, with a retry when "
                    "the reply is malformed.", 1, section=section),
              Block("paragraph", "A retry loop re-asks the model when its reply is "
                    "malformed.", 2, section=section)]
    report = ingested(blocks, 2)
    retries = [c for c in report_facts(report).claims if c.feature == "retry_claim"]
    assert [(c.page, c.sentence[:20]) for c in retries] == [(2, "A retry loop re-asks")]


def _cleanup(kept: bool) -> Finding:
    where = "app/git.py:12: root = tempfile.mkdtemp(prefix='audit_')"
    return Finding(facet="safety.clone_cleanup", goal="The clone's temporary directory is "
                   "removed after use", found=not kept, pattern="neutral", confidence=0.7,
                   location="app/git.py:12", content=where, rationale="...",
                   data={"kept": ["app/git.py:12"] if kept else [],
                         "removed": [] if kept else ["app/git.py:40"]})


def test_a_clone_said_to_be_purged_that_nothing_removes_is_a_contradiction(
        tmp_path: Path) -> None:
    names = _names(tmp_path, PLAIN)
    said = ("Ephemeral File Systems: Each repository clone exists in a temporary path, "
            "purged after auditing.")
    found = _found(names, said, code=[*CODE, _cleanup(kept=True)])
    assert [f.data["kind"] for f in found] == ["cleanup_claim"]
    assert "app/git.py:12: root = tempfile.mkdtemp" in (found[0].content or "")
    # removed by the code, not checkable, or hedged: nothing is contradicted
    assert _found(names, said, code=[*CODE, _cleanup(kept=False)]) == []
    assert _found(names, said) == []
    some = _cleanup(kept=True).model_copy(update={"data": {"kept": ["app/git.py:12"],
                                                          "removed": ["app/nodes.py:30"]}})
    assert _found(names, said, code=[*CODE, some]) == []  # removed on another path
    # only a folder inside it, or only on failure: contradicted, and said so
    data = {"kept": ["app/git.py:12"], "removed": [], "partial": ["app/git.py:20"]}
    part = _cleanup(kept=True).model_copy(update={"data": data})
    wrong = _found(names, said, code=[*CODE, part])
    assert "removes only a path inside it" in wrong[0].rationale
    # a TemporaryDirectory parked in a module-level container: said so, not "mkdtemp"
    alive = part.model_copy(update={"data": {**data, "alive": ["app/git.py:13"]}})
    wrong = _found(names, said, code=[*CODE, alive])
    assert "keeps in a module-level container" in wrong[0].rationale
    assert "mkdtemp" not in wrong[0].rationale
    # a removal of a path read back from the state is not traced to it: no verdict
    state = part.model_copy(update={"data": {**data, "through_state": True}})
    assert _found(names, said, code=[*CODE, state]) == []
    assert _found(names, "Cleanup Utils | cleanup.py | Resource cleanup for temporary "
                         "directories", code=[*CODE, _cleanup(kept=True)]) == []
    assert _found(names, "The temporary clone should be deleted after the audit.",
                  code=[*CODE, _cleanup(kept=True)]) == []


def test_a_clone_cleaned_up_in_other_words_is_still_a_cleanup_claim(tmp_path: Path) -> None:
    """Gerunds and nouns ("automatically cleaning up the disk", "Automatic deletion on
    exit"); the peer code the system clones is no other team's system."""
    names, kept = _names(tmp_path, PLAIN), [*CODE, _cleanup(kept=True)]
    for said in ("This isolates untrusted peer code from the live auditor environment, "
                 "automatically cleaning up the disk when the python context exits.",
                 "Decision: Use tempfile.mkdtemp() for repository cloning\nRationale:\n"
                 "Security: Isolated from main filesystem\nCleanup: Automatic deletion on exit"):
        assert [f.data["kind"] for f in _found(names, said, code=kept)] == ["cleanup_claim"]
    assert _found(names, "Their sandbox is cleaned up when a peer's run ends.",
                  code=kept) == []


def test_a_graph_said_to_route_back_needs_a_conditional_edge(tmp_path: Path) -> None:
    """An example in brackets ("(e.g., Git clone timeout)") hedges nothing."""
    said = ("It uses a Validation Gate to ensure that if a critical forensic tool fails "
            "(e.g., Git clone timeout), the graph routes back for a retry or exits gracefully.")
    assert "gate_claim" in [f.data["kind"] for f in _found(_names(tmp_path, PLAIN), said)]
    assert _found(_names(tmp_path, PLAIN),
                  "If a tool fails, the graph should route back for a retry.") == []


def test_code_a_future_work_section_proposes_is_no_claim_about_the_code() -> None:
    """"Proposed fix: llm = ChatAnthropic(model=...)" under a future-work heading is code to
    write; the same quote in the architecture section is a claim. What a plan says is not
    built is still read."""
    quote = 'llm = ChatAnthropic(model="claude-3-opus", temperature=0)'
    plan = ("Priority 4: Implement Multi-LLM Jury (Future Work)",)
    blocks = [Block("heading", "2 Architecture", 1, level=1),
              Block("paragraph", "The judges are built once.", 1, section=("2 Architecture",)),
              Block("heading", plan[0], 40, level=1),
              Block("paragraph", f"Proposed Fix: add provider diversity. {quote}", 40,
                    section=plan),
              Block("paragraph", "The multi-model jury is not yet implemented.", 40,
                    section=plan)]

    def kinds(blocks: list[Block]) -> list[tuple[str, int | None]]:
        report = ingested(blocks, 40)
        return sorted((c.feature, c.page) for c in report_facts(report).claims)

    assert kinds(blocks) == [("implementation_status", 40)]
    moved = [*blocks[:1], Block("paragraph", quote, 1, section=("2 Architecture",))]
    assert kinds(moved) == [("quoted_call", 1)]


def test_a_cleanup_said_under_a_heading_naming_the_clone_is_a_cleanup_claim(
        tmp_path: Path) -> None:
    """A rationale list whose item names nothing ("Cleanup: Automatic deletion on exit") is
    said of the clone its heading names ("3. Sandboxed Git Operations"); under another
    heading, or another removal ("shell=True was removed"), it claims nothing."""
    git, other = ("Decisions", "3. Sandboxed Git Operations"), ("Decisions", "4. Caching")
    blocks = [Block("heading", "3. Sandboxed Git Operations", 3, level=2, section=git[:1]),
              Block("paragraph", "Decision: Use tempfile.mkdtemp() for cloning", 3,
                    section=git),
              Block("paragraph", "Security: Isolated from main filesystem Cleanup: Automatic "
                    "deletion on exit Concurrency: Many audits at once", 3, section=git),
              Block("paragraph", "The shell=True flag was removed for safety.", 3, section=git),
              Block("heading", "4. Caching", 4, level=2, section=other[:1]),
              Block("paragraph", "Entries: Automatic deletion on exit.", 4, section=other)]
    report = ingested(blocks, 4)
    claims = [c for c in report_facts(report).claims if c.feature == "cleanup_claim"]
    assert [(c.page, c.sentence[:20]) for c in claims] == [(3, "Security: Isolated f")]
    found = contradiction_findings(claims, [*CODE, _cleanup(kept=True)], GRAPH,
                                   _names(tmp_path, PLAIN))
    assert [f.data["kind"] for f in found] == ["cleanup_claim"]
    assert contradiction_findings(claims, [*CODE, _cleanup(kept=False)], GRAPH,
                                  _names(tmp_path, PLAIN)) == []


def _bindings(bound: bool, personas: int = 3, unwired: bool = False) -> list[Finding]:
    where = {p: f"app/judges.py:{40 + i}" for i, p in
             enumerate(("Prosecutor", "Defense", "TechLead")[:personas])}
    return [*CODE,
            Finding(facet="llm.structured_output", goal="LLM calls are bound to a schema",
                    found=bound, pattern="success", location="app/judges.py:40" if bound
                    else ".", confidence=0.8, rationale="0 binding(s) to: nothing.",
                    data={"unwired": ["app/old.py:9"] if unwired else []}),
            Finding(facet="judges.personas", goal="Distinct persona prompts exist",
                    found=personas == 3, pattern="success", location="app/judges.py:40",
                    confidence=0.8, rationale="...", data={"locations": where})]


def test_judges_said_bound_with_with_structured_output_that_no_call_is(
        tmp_path: Path) -> None:
    """Addisu-Taye, bethel4 and ermiyas111 (final): "All judge nodes use
    with_structured_output() bound to the JudicialOpinion Pydantic schema" while no model
    call of the code is bound to a schema (a PydanticOutputParser, or json.loads). Not
    when a call is bound (even in code the graph never runs), when the judges send no
    persona prompts (an interim report describing judges still to build), or hedged."""
    # bethel4: the name is in the code (a mock's method, an analyser's string), no call binds
    names = _names(tmp_path, PLAIN + "\n\nclass MockLLM:\n    def with_structured_output("
                             "self, schema):\n        return self\n")
    said = ("Structured Output Enforcement (5/5): All judge nodes use with_structured_output() "
            "bound to the JudicialOpinion Pydantic schema.")
    found = _found(names, said, code=_bindings(bound=False))
    assert [f.data["kind"] for f in found] == ["structured_claim"]
    # a name no file holds at all is the method-use check's to say, once
    unnamed = _found(_names(tmp_path, PLAIN), said, code=_bindings(bound=False))
    assert "structured_claim" not in [f.data.get("kind") for f in unnamed]
    assert "app/judges.py:41" in (found[0].content or "")
    for code in (_bindings(bound=True), _bindings(bound=False, personas=0),
                 _bindings(bound=False, unwired=True)):
        assert _found(names, said, code=code) == []
    for other in ("Each judge should use with_structured_output(JudicialOpinion).",
                  # mussewold: a file named, not the judges; amin3ltd: the call alone
                  "Recommendation: Modify src/nodes/judges.py to bind the LLM to the "
                  "JudicialOpinion schema using .with_structured_output().",
                  "Finding: Original with_structured_output() failed with LM Studio."):
        assert _found(names, other, code=_bindings(bound=False)) == [], other
