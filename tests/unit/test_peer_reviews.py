"""Report text that talks about someone else's repository is no claim about the audited code:
a section reviewing a peer's work (the author's audit of the peer, or the peer's audit of this
code) is no claim, and its paths are quoted, not cited as existing."""

from __future__ import annotations

import pytest

from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.reader import report_facts
from automaton_auditor.forensics.pdf.reviews import review_of, review_scopes
from automaton_auditor.state import Finding
from tests.unit.report_helpers import ingested

MEAN = Finding(facet="justice.averaging", goal="The verdict is a plain average", found=False,
               pattern="failure", location="app/justice.py:40", confidence=0.85,
               rationale="No decision changes the mean.",
               content="app/justice.py:41: final = round(sum(scores) / len(scores))")
FILES = ["README.md", "app/pkg/graph.py", "app/pkg/state.py", "audit/feedback_in.md"]
DENIAL = ("Their arbiter settled every verdict by fixed rules rather than probabilistic "
          "averaging, a clear strength.")


def _blocks(*items: tuple[str, str, int, tuple[str, ...]]) -> list[Block]:
    return [Block(kind, text, page, level=len(section) + 1 if kind == "heading" else 0,
                  section=section) for kind, text, page, section in items]


def _contradicted(blocks: list[Block]) -> list[int | None]:
    """Pages of the report's statements the code's facts (a plain mean) contradict."""
    claims = report_facts(ingested(blocks, 9)).claims
    return [int(f.location.split(".")[-1]) for f in contradiction_findings(claims, [MEAN], None)
            if f.facet == "claims.contradictions"]


def test_a_review_of_the_peers_repository_under_a_lead_in_line_claims_nothing() -> None:
    loop = ("Reflection on the Feedback Loop",)
    blocks = _blocks(("heading", loop[0], 4, ()),
                     ("paragraph", "Me to Peer B's Auditor:", 4, loop),
                     ("paragraph", f"When evaluating my peer's repository, my agent found "
                                   f"strengths. {DENIAL}", 4, loop))
    assert _contradicted(blocks) == []
    # the same sentence in the author's own section, or after a line that hands the
    # section back to the author, is theirs
    own = _blocks(("heading", "Reflection on the Feedback Loop", 4, ()),
                  ("paragraph", "Me to Peer B's Auditor:", 4, loop),
                  ("paragraph", "In response, I changed my own agent this way:", 4, loop),
                  ("paragraph", DENIAL.replace("Their", "Our"), 4, loop))
    assert _contradicted(own) == [4]
    # a review under a heading ends at the next section, and a self-audit is the author's
    audit = ("6.1 Our Audit of the Peer's Repository",)
    self_audit = ("6.2 Self-Audit of Our Own Repository",)
    blocks = _blocks(("heading", audit[0], 6, ()), ("paragraph", DENIAL, 6, audit),
                     ("heading", self_audit[0], 7, ()),
                     ("paragraph", DENIAL.replace("Their", "Our"), 7, self_audit))
    assert _contradicted(blocks) == [7]


def test_paths_a_peers_audit_flagged_as_missing_are_quoted_not_invented() -> None:
    received = ("4.2 Findings from the Peer's Audit of Our Repository",)
    blocks = _blocks(("heading", received[0], 10, ()),
                     ("paragraph", "The audit we received is in audit/feedback_in.md.", 10,
                      received),
                     ("list", "- Issue: their agent listed app/graph.py and app/state.py among "
                              "the files it could not open", 10, received),
                     ("list", "- Root cause: the files sit at app/pkg/graph.py and "
                              "app/pkg/state.py", 10, received))
    facts = report_facts(ingested(blocks, 12))
    findings, verified, hallucinated, _ = cross_check(facts, FILES, None)
    assert hallucinated == []
    assert verified == ["app/pkg/graph.py", "app/pkg/state.py", "audit/feedback_in.md"]
    assert not [f for f in findings if f.facet == "claims.paths" and f.pattern == "failure"]
    # outside any review, a sentence saying a file was flagged as missing disowns it too
    said = ingested(_blocks(("paragraph", "The interim run flagged app/graph.py as missing; "
                                          "it lives in app/pkg/graph.py.", 3, ())), 4)
    assert cross_check(report_facts(said), FILES, None).hallucinated == []
    cited = ingested(_blocks(("paragraph", "The graph is built in app/graph.py.", 3, ())), 4)
    assert cross_check(report_facts(cited), FILES, None).hallucinated == ["app/graph.py"]


def test_a_gap_the_author_concedes_in_a_review_received_stays_their_claim() -> None:
    routing = Finding(facet="graph.conditional_edges", goal="Conditional edges route the flow",
                      found=True, pattern="success", location="app/graph.py:30",
                      confidence=0.9, rationale="Conditional edges: gate -> ['judges'].",
                      data={"routing_sources": ["gate"]})
    caught = ("What the Peer's Agent Caught",)
    blocks = _blocks(("heading", caught[0], 5, ()),
                     ("list", "No conditional edges for failed clones.", 5, caught),
                     ("list", "No conditional edges for retries: a known gap today.", 5,
                      caught),
                     ("list", "ChartReader was a stub that returned fixed evidence.", 5,
                      caught))
    claims = report_facts(ingested(blocks, 9)).claims
    # a node the peer found to be a stub, repeated by the author, is admitted
    assert [c.sentence for c in claims if c.feature == "node_admitted"] == [
        "ChartReader was a stub that returned fixed evidence."]
    gaps = [f for f in contradiction_findings(claims, [routing], None)
            if f.facet == "claims.stale_gaps"]
    assert [f.content.split("\n")[0] for f in gaps] == [
        "report p.5: No conditional edges for retries: a known gap today."]


@pytest.mark.parametrize(("title", "said"), [
    ("Me to Peer B's Auditor:", "given"),
    ("4.3 Peer Audit Findings (What Our Agent Found in the Peer's Repo)", "given"),
    ("Outgoing Audit (Our Agent \u2192 Peer Repository)", "given"),
    ("Peer A's Auditor to me:", "received"),
    ("4.1 Peer Findings Received", "received"),
    ("What the Peer Agent Caught That the Self-Audit Missed", "received"),
    ("Findings from a Peer Audit of Our Repository", "received"),
    ("Changes Made in Response to Peer Feedback", "own"),
    ("Peer Scores vs. Self-Audit Scores", "own"),
    ("Reflection on the MinMax Feedback Loop", "own"),
    ("5.1 What a Peer's Agent Might Catch That We Missed", "own"),
    ("Our auditor on our repo", None),
    ("3. Architecture Deep Dive", None),
])
def test_what_a_heading_says_its_section_reviews(title: str, said: str | None) -> None:
    assert review_of(title) == said


def test_a_review_heading_covers_its_subsections_until_the_author_takes_over() -> None:
    top, sub = ("6. Peer Audit Results",), ("6. Peer Audit Results", "Scores")
    blocks = _blocks(("heading", top[0], 8, ()), ("paragraph", "a", 8, top),
                     ("heading", "Scores", 8, top), ("paragraph", "b", 8, sub),
                     ("heading", "7. Updates We Made", 9, ()),
                     ("paragraph", "c", 9, ("7. Updates We Made",)))
    assert review_scopes(blocks) == ["given"] * 4 + [None, None]


def test_a_title_naming_peer_repositories_covers_no_review() -> None:
    """The report's title says what the system does; its sections are the author's."""
    title = "A Swarm That Audits Peer Repositories"
    body = (title, "2. Synthesis")
    blocks = _blocks(("heading", title, 1, ()), ("heading", "2. Synthesis", 2, (title,)),
                     ("paragraph", DENIAL.replace("Their", "Our"), 2, body))
    assert review_scopes(blocks) == [None, None, None]
    assert _contradicted(blocks) == [2]


def test_a_judges_quoted_words_are_no_claim_of_the_author() -> None:
    """A self-audit quoting its judges ("Prosecutor (1): '...'") reports what the tool said,
    often on another run: no claim of the author, true or false."""
    section = ("3.1 Chief Justice Synthesis (Score: 1/5)",)
    own = DENIAL.replace("Their", "Our").replace(", a clear strength", "")
    quoted = f"Dialectical Tension: Defense (5): '{own}' Prosecutor (1): 'Rewarding nothing.'"
    blocks = _blocks(("heading", section[0], 3, ()), ("paragraph", quoted, 3, section))
    assert _contradicted(blocks) == []
    said = _blocks(("heading", section[0], 3, ()),
                   ("paragraph", own, 3, section))
    assert _contradicted(said) == [3]
