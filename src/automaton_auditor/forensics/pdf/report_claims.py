"""The statements a report makes about its code, read from its blocks for the cross-check.

Feature claims (`claims.extract_feature_claims`) are read from prose outside future-work
sections; statements the code's facts can contradict (`claims.extract_statements`) from prose
and headings, each with the lead-in and section text that qualify it (`qualifiers`: what is
or is not built, and what the code is said to do outside future-work sections); how the
built system behaves from prose whose section does not say its part is not built yet (how
the state is merged from its headings too: `behaviours.STATED_BEHAVIOURS`).
"""

from __future__ import annotations

from dataclasses import replace

from automaton_auditor.forensics.pdf.behaviours import (
    BEHAVIOURS,
    CLEANUP_SUBJECT,
    HEADED_BEHAVIOURS,
    STATED_BEHAVIOURS,
)
from automaton_auditor.forensics.pdf.chunks import SENTENCE_SPLIT
from automaton_auditor.forensics.pdf.citations import FUTURE_SENTENCE, NOT_YET
from automaton_auditor.forensics.pdf.claims import (
    IN_PLANS,
    OUTSIDE_PLANS,
    extract_feature_claims,
    extract_statements,
)
from automaton_auditor.forensics.pdf.concepts import CONTENTS
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.qualifiers import around, lead_in, not_disclosed, still_open
from automaton_auditor.forensics.pdf.reviews import Review, unquote_judges
from automaton_auditor.state import FeatureClaim


def report_claims(blocks: list[Block], future: list[bool], review: list[Review | None]
                  ) -> list[FeatureClaim]:
    """The claims of a report's blocks in reading order; `future`: whether each block sits
    in a future-work section (`citations.future_flags`), `review`: in which review of a
    peer's work (`reviews.review_scopes`). A review quotes what an auditor found, here or in
    the peer's code: only what the author concedes is still open there is read. A judge's
    quoted words (`reviews.unquote_judges`) are read as none."""
    # a judge's quoted words are what the author's tool said, not what the author says
    blocks = [replace(b, text=unquote_judges(b.text)) for b in blocks]
    conceded = _conceded(blocks, review)
    kept = [i for i, seen in enumerate(review) if seen is None]
    blocks, future = [blocks[i] for i in kept], [future[i] for i in kept]
    # Feature claims are read from prose only: a heading or contents entry asserts nothing,
    # and neither does a future-work section ("Fix: add a should_retry conditional edge").
    prose_blocks = [b for b, planned in zip(blocks, future, strict=True)
                    if b.kind in ("paragraph", "list") and not planned
                    and not any(CONTENTS.search(h) for h in b.section)]
    prose = [(b.page, b.text) for b in prose_blocks]
    # Statements the code's facts can contradict; a placeholder may sit on a heading's line.
    said = [(b.page, b.text, plan, at) for at, (b, plan) in enumerate(zip(blocks, future,
                                                                        strict=True))
            if b.kind in ("paragraph", "list", "heading")
            and not any(CONTENTS.search(h) for h in b.section)]
    current = [(p, t, at) for p, t, plan, at in said if not plan]
    # How-it-works claims in a section that says its part is not built yet describe the
    # design, not the code ("The judicial layer is designed but not yet wired ... the node
    # retries up to two times"); what such a section says is or is not built is still read.
    unbuilt = {b.section for b in blocks if b.section and NOT_YET.search(b.text)}
    built = [(b.page, b.text) for b in prose_blocks if b.section not in unbuilt]
    # a removal said of nothing named, under a heading that names the clone ("Sandboxed Git")
    cloned = [(b.page, b.text) for b in prose_blocks if b.section not in unbuilt
              and CLEANUP_SUBJECT.search(b.section[-1] if b.section else "")]
    return (extract_feature_claims(prose, SENTENCE_SPLIT) + conceded
            + extract_statements([(p, t) for p, t, _, _ in said], SENTENCE_SPLIT,
                                 IN_PLANS, context=lambda k: (
                                     lead_in(blocks, said[k][3]), around(blocks, said[k][3])))
            + extract_statements([(p, t) for p, t, _ in current], SENTENCE_SPLIT,
                                 OUTSIDE_PLANS, context=lambda k: (
                                     lead_in(blocks, current[k][2]),
                                     around(blocks, current[k][2])))
            + extract_statements(built, SENTENCE_SPLIT, not_disclosed(
                BEHAVIOURS, blocks, NOT_YET, SENTENCE_SPLIT), FUTURE_SENTENCE)
            + extract_statements(cloned, SENTENCE_SPLIT, not_disclosed(
                HEADED_BEHAVIOURS, blocks, NOT_YET, SENTENCE_SPLIT), FUTURE_SENTENCE)
            + extract_statements([(p, t) for p, t, at in current
                                  if blocks[at].section not in unbuilt], SENTENCE_SPLIT,
                                 not_disclosed(STATED_BEHAVIOURS, blocks, NOT_YET,
                                               SENTENCE_SPLIT), FUTURE_SENTENCE))


def _conceded(blocks: list[Block], review: list[Review | None]) -> list[FeatureClaim]:
    """What is or is not built, said in a review of this code a peer's agent made, that
    the author concedes is still open ("No conditional edges | Identified as known gap"),
    and the nodes it says are stubs ("VisionInspector was a stub: the peer flagged ..."):
    the author repeats the finding about their own code."""
    received = [(b.page, b.text) for b, seen in zip(blocks, review, strict=True)
                if seen == "received" and b.kind in ("paragraph", "list")]
    return [claim for claim in extract_statements(received, SENTENCE_SPLIT, IN_PLANS)
            if claim.feature == "node_admitted" or still_open(claim.sentence)]
