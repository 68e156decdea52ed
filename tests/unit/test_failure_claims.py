"""Report descriptions of a mechanism (a sandboxed clone, nodes' output merged by a reducer)
read against the code's own facts that show the mechanism failing."""

from __future__ import annotations

from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.pdf.behaviours import BEHAVIOURS, STATED_BEHAVIOURS
from automaton_auditor.forensics.pdf.claims import extract_statements
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.reader import report_facts
from automaton_auditor.state import Finding, RebuiltGraph
from tests.unit.report_helpers import ingested

GRAPH = RebuiltGraph(builder="g", location="app/graph.py:10",
                     nodes=["RepoInvestigator", "DocAnalyst", "EvidenceAggregator",
                            "Prosecutor", "Defense", "ChiefJustice"],
                     edges=[("RepoInvestigator", "EvidenceAggregator"),
                            ("DocAnalyst", "EvidenceAggregator"),
                            ("EvidenceAggregator", "Prosecutor"),
                            ("EvidenceAggregator", "Defense"),
                            ("Prosecutor", "ChiefJustice"), ("Defense", "ChiefJustice")],
                     linear=False)


def _found(code: list[Finding], *texts: str) -> list[Finding]:
    claims = extract_statements([(page, text) for page, text in enumerate(texts, start=1)],
                                kinds={**BEHAVIOURS, **STATED_BEHAVIOURS})
    return contradiction_findings(claims, code, GRAPH, None)


def _fact(facet: str, found: bool, content: str | None = None, **data: object) -> Finding:
    return Finding(facet=facet, goal=facet, found=found, pattern="neutral", confidence=0.8,
                   location=(content or ".").split(": ", 1)[0], content=content,
                   rationale="...", data=dict(data))


EARLY = _fact("safety.clone_deleted_early", True,
              "app/git.py:12: temp_dir = tempfile.TemporaryDirectory()\n"
              "app/git.py:15: return temp_dir.name",
              early=["app/git.py:12", "app/git.py:15"])
KEPT = EARLY.model_copy(update={"found": False, "content": None, "data": {"early": []}})
CLONE = "app/git.py:14:     Repo.clone_from(url, dest)"


def _unsandboxed(tempdirs: list[str], rooted: bool = False,
                 located: bool = True) -> list[Finding]:
    """A clone the facts do not prove sandboxed, with the temp dirs the code makes."""
    return [KEPT,
            _fact("safety.clone_sandbox", False, CLONE if located else None,
                  locations=["app/git.py:14"] if located else [], tempdir_calls=tempdirs,
                  unproved=["app/git.py:14"] if located else []),
            _fact("safety.clone_temp_root", rooted)]


def test_a_sandboxed_clone_said_to_work_whose_directory_is_removed_before_use() -> None:
    """Addisu-Taye (interim): "Git sandboxing works" over a TemporaryDirectory removed as the
    function returns its path; deep in a code listing run together into one long sentence."""
    listing = ("$ python -c \"from src.tools.doc_tools import ingest_pdf; r = ingest_pdf("
               "'reports/interim_report.pdf'); print(r['success'])\" True " * 4)
    for said in ("# Git sandboxing works (tested with public repo)",
                 f"{listing}# Git sandboxing works (tested with public repo) $ python -c",
                 "Sandboxed git clone verified on a public repository.",
                 "All git clone operations run inside tempfile.TemporaryDirectory(), tested "
                 "end to end."):
        found = _found([EARLY], said)
        assert [f.data["kind"] for f in found] == ["sandbox_claim"], said
        assert "app/git.py:15: return temp_dir.name" in (found[0].content or "")
        assert "no longer exists" in found[0].rationale
    # the claim keeps what it says, however deep in the listing
    deep = _found([EARLY], f"{listing}# Git sandboxing works (tested with public repo) $ ls")
    assert "# Git sandboxing works (tested with public repo)" in (deep[0].content or "")
    # quoted from a word's start
    assert (deep[0].content or "").split(": ", 1)[1].split(" ", 1)[0] in listing.split()
    # told again and again, it is one misstatement of one failure
    assert len(_found([EARLY], "Sandboxed git clone works.", "Git sandboxing works.")) == 1
    # the directory outlives the function: the sandbox holds
    assert _found([KEPT], "Git sandboxing works (tested with public repo).") == []


def test_the_sandbox_design_the_code_follows_is_no_contradiction_of_its_early_removal() -> None:
    """amare1990, bethel4 (interim): the clone is made in a TemporaryDirectory, as the report
    says; that the directory goes as the function returns is the tools' flaw."""
    for said in ("Tool Engineering Complete Sandboxed git clone, AST-based graph parsing.",
                 "Clone and analyze repos in temporary directories using tempfile.",
                 "Clone wrapped in tempfile.TemporaryDirectory()"):
        assert _found([EARLY], said) == [], said


def test_a_sandbox_said_of_a_plan_a_peer_or_a_search_claims_nothing() -> None:
    for said in ("The clone should run inside a temporary directory.",
                 "Missing tempfile isolation: the peer's git clone tool did not use "
                 "tempfile.TemporaryDirectory() for sandboxing.",
                 "Their git clone runs inside a temporary directory.",
                 "RepoInvestigator searched for tempfile.TemporaryDirectory() and "
                 "subprocess.run() usage.",
                 "Remediation: add sandboxed tool tests for tools under src/tools."):
        assert _found([EARLY], said) == [], said


def test_a_clone_said_sandboxed_where_the_code_makes_no_temporary_directory() -> None:
    said = "The system clones the repository into a temporary directory."
    found = _found(_unsandboxed([]), said)
    assert [f.data["kind"] for f in found] == ["sandbox_claim"]
    assert CLONE in (found[0].content or "")
    # a temp dir the facts could not carry to the clone, a folder under the system temp
    # folder, or no clone located: not settled
    assert _found(_unsandboxed(["app/git.py:9"]), said) == []
    assert _found(_unsandboxed([], rooted=True), said) == []
    assert _found(_unsandboxed([], located=False), said) == []


def _dropped(whole: dict[str, list[str]]) -> Finding:
    """Detectives and an aggregator returning keys the state does not declare; `whole`: the
    nodes none of whose keys is kept."""
    return _fact("graph.state.dropped_keys", True,
                 'app/nodes.py:34: return {"general": [ev]}\n'
                 "app/nodes.py:191: return evidences\n"
                 'app/graph.py:33: return {"summary": text}',
                 nodes={"RepoInvestigator": ["general", "graph_orchestration"],
                        "DocAnalyst": ["general"], "EvidenceAggregator": ["summary"]},
                 channels=["evidences", "opinions", "repo_url"], whole=whole)


WHOLE = {"RepoInvestigator": ["app/nodes.py:191"], "DocAnalyst": ["app/nodes.py:34"],
         "EvidenceAggregator": ["app/graph.py:33"]}


def test_detectives_said_merged_by_a_reducer_whose_return_is_dropped() -> None:
    """ruthasoll: "Detectives produce Dict[str, List[Evidence]] merged via operator.ior"
    while every key the detectives return is one the state does not declare."""
    said = ("repo_url + pdf_path \u2192 AgentState (TypedDict) \u2192 Detectives produce "
            "Dict[str, List[Evidence]] merged via operator.ior \u2192 EvidenceAggregator "
            "validates \u2192 Judges produce List[JudicialOpinion] appended via operator.add")
    found = _found([_dropped(WHOLE)], said)
    assert [f.data["kind"] for f in found] == ["merge_claim"]
    # the text layer may read each arrow as "fi": the same steps
    as_read = _found([_dropped(WHOLE)], said.replace("\u2192", "fi"))
    assert as_read[0].content == (found[0].content or "").replace("\u2192", "fi")
    content = found[0].content or ""
    # the detectives the sentence speaks of, with their returns; the aggregator is no
    # detective and "Evidence" alone names no node
    assert "app/nodes.py:191: return evidences" in content
    assert "app/graph.py:33" not in content
    assert "the state declares: evidences, opinions, repo_url" in content
    assert "DocAnalyst, RepoInvestigator" in found[0].rationale
    # a node named by its name
    named = _found([_dropped(WHOLE)], "The EvidenceAggregator's summary is merged via a "
                   "custom reducer.")
    assert "app/graph.py:33" in (named[0].content or "")


def test_a_merge_holds_when_the_state_keeps_part_of_the_return_or_other_nodes_drop() -> None:
    said = "Evidence from the parallel detectives is merged using operator.ior."
    # each detective also returns a key the state declares: their evidence arrives
    assert _found([_dropped({})], said) == []
    # only the aggregator's return is dropped, and the sentence does not name it
    assert _found([_dropped({"EvidenceAggregator": ["app/graph.py:33"]})], said) == []
    assert _found([_dropped(WHOLE)], "Judges' opinions are appended via operator.add.") == []
    for hedged in ("Detective evidence should be merged via operator.ior.",
                   "The detectives' evidence is not merged via operator.ior yet."):
        assert _found([_dropped(WHOLE)], hedged) == [], hedged


def test_a_merge_is_read_from_a_flow_the_layout_took_for_a_heading() -> None:
    """ruthasoll p.2: the flow line under "2. Architecture" is laid out as a heading; a retry
    or a sandbox in a heading is still no claim."""
    section = ("2. Architecture",)
    flow = ("Detectives produce Dict[str, List[Evidence]] merged via operator.ior \u2192 "
            "EvidenceAggregator validates")
    blocks = [Block("heading", section[0], 2, level=1),
              Block("heading", flow, 2, level=2, section=section),
              Block("heading", "Sandboxed git clone", 2, level=2, section=section),
              Block("paragraph", "The judges run in parallel.", 2, section=section)]
    claims = report_facts(ingested(blocks, 2)).claims
    assert [(c.feature, c.page) for c in claims
            if c.feature in ("merge_claim", "sandbox_claim")] == [("merge_claim", 2)]
