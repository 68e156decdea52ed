"""Sections of a report that review a peer's work, which say nothing of the audited code.

The challenge has each author audit a peer's repository and read the peer's audit of their
own. A report quotes both: what its agent found in the peer's code ("Me to Peer B's
Auditor: ... the Chief Justice relied on deterministic Python logic", "4.1 Findings from
Auditing Our Peer") and what the peer's agent found in this code ("Peer audit flagged
src/graph.py and src/state.py as missing", under "4.2 Findings from Peer Audit of Our
Repository"). Neither is the author's claim about the code audited here: a sentence in such
a section is no claim to check, and a path in it is quoted, not cited as existing (verified
when the commit has it, never hallucinated). A section or lead-in line opens the review:
a heading, or a short line ending in a colon, that names a peer together with an audit, its
findings or the agent that made them. The author's own sections stay theirs: a self-audit,
a response to the feedback ("Changes Made in Response to Peer Feedback"), an update, a
plan, a reflection on the loop. One sentence in a review received is still the author's:
a finding they concede is still open ("No conditional edges | Identified as known gap").
"""

from __future__ import annotations

import re
from typing import Literal

from automaton_auditor.forensics.pdf.model import Block

Review = Literal["given", "received"]
_FLAGS = re.IGNORECASE
_PEER = re.compile(r"\bpeers?\b", _FLAGS)
# What a review is: an audit, its findings, the peer's agent that made them or the peer's
# repository it read ("Peer Reports in Markdown Format" is about the author's tool).
_REVIEW = re.compile(r"\b(?:audit\w*|review\w*|feedback|findings?|found|caught|discovered|"
                     r"detected|critique|results|highlights|repos|repositor(?:y|ies)|repo|"
                     r"codebase|submission)\b|\bpeer(?:\s+[A-Z])?(?:['\u2019]s)?\s+(?:agents?|"
                     r"auditors?|swarm)\b", _FLAGS)
# The author's own work in a heading that names the peer: a self-audit (not one the peer's
# agent beat: "Caught That the Self-Audit Missed"), a response, an update, a plan, lessons,
# a guess at what a peer's agent might catch (no review received: the author's own critique).
_OWN = re.compile(r"\bself[\s-]?(?:audit|evaluat|assess|review)\w*(?!\s+(?:missed|failed|"
                  r"did\s*n))|\b(?:respon(?:se|ses|d|ding)|updat\w*|improv\w*|chang\w*|"
                  r"integrat\w*|lessons?|learnings|takeaways?|insights?|reflect\w*|evolution|"
                  r"plans?|priority|would|might|could|exchange|cycle|loop)\b", _FLAGS)
# The author's agent reviewing the peer ("Our Audit of Peer", "Auditing the Peer's
# Repository", "Me to Peer B's Auditor", "Outgoing Audit (Our Agent → Peer Repository)") ...
_GIVEN = re.compile(r"\b(?:audit\w*|review\w*|evaluat\w*|assess\w*)\s+(?:of\s+)?(?:(?:the|a|"
                    r"my|our)\s+)?peer|\bpeer(?:['\u2019]s)?\s+repo\w*|\b(?:me|us|we|I)\s+"
                    r"(?:\w+\s+)?to\s+peer|\bout(?:going|bound)\b", _FLAGS)
# ... or the peer's agent reviewing this code ("Peer Findings Received", "What the Peer
# Agent Caught", "Peer A's Auditor to me", "Findings from Peer Audit of Our Repository").
_RECEIVED = re.compile(r"\b(?:received|incoming|inbound|caught|highlighted|flagged|noted)\b|"
                       r"\b(?:by|from)\s+(?:(?:a|the|my|our)\s+)?peer|\bto\s+(?:me|us)\b|"
                       r"\b(?:of|in|on)\s+(?:my|our|this)\s+(?:code\w*|repo\w*|work|system|"
                       r"submission|project|agent)\b|\bpeer(?:['\u2019]s)?\s+(?:feedback|"
                       r"agents?|swarm|auditors?)\b", _FLAGS)
_LEAD_WORDS = 12  # a lead-in line is short: "Me to Peer B's Auditor:"


def review_of(title: str) -> Review | Literal["own"] | None:
    """What a heading or lead-in says its section holds: a review of the peer's work by
    the author's agent ("given"), of this code by the peer's ("received"), the author's own
    work ("own": what follows is theirs again), or nothing said (None)."""
    if _OWN.search(title):
        return "own"
    if not (_PEER.search(title) and _REVIEW.search(title)):
        return None
    return "given" if _GIVEN.search(title) or not _RECEIVED.search(title) else "received"


def _heading_review(block: Block, title: str | None) -> Review | None:
    """The review the innermost heading above the block that says anything opens; never
    the report's title ("A LangGraph swarm that audits peer repositories" covers it all)."""
    heads = (*block.section, block.text) if block.kind == "heading" else block.section
    for head in reversed(heads):
        said = review_of(head) if head != title else None
        if said is not None:
            return None if said == "own" else said
    return None


def _is_lead(blocks: list[Block], index: int) -> bool:
    """A short paragraph ending in a colon that text follows ("Me to Peer B's Auditor:"
    over the paragraphs of the review), not a list item, nor a label over a value the
    layout cut into fragments ("Peer audit generated by this agent:" over a file name)."""
    block, text = blocks[index], blocks[index].text.strip()
    after = next((b for b in blocks[index + 1:] if b.kind != "furniture"), None)
    return block.kind == "paragraph" and text.endswith(":") \
        and len(text.split()) <= _LEAD_WORDS and after is not None \
        and len(after.text.split()) >= _LEAD_WORDS // 2


def _title(blocks: list[Block]) -> str | None:
    """The report's title: a first heading that every block after it, other headings
    among them, sits under."""
    first = next((i for i, b in enumerate(blocks) if b.kind == "heading"), None)
    if first is None:
        return None
    text, rest = blocks[first].text, [b for b in blocks[first + 1:] if b.kind != "furniture"]
    return text if any(b.kind == "heading" for b in rest) \
        and all(b.section[:1] == (text,) for b in rest) else None


def review_scopes(blocks: list[Block]) -> list[Review | None]:
    """For each block, the review of a peer's work it sits in, if any: the one its
    headings open, unless a lead-in line since the start of its section says otherwise (a
    lead-in opens or closes a review up to the next lead-in or the section's end)."""
    scopes: list[Review | None] = []
    title = _title(blocks)
    section: tuple[str, ...] | None = None
    lead: Review | Literal["own"] | None = None
    for at, block in enumerate(blocks):
        if block.kind == "furniture":  # a running header between pages closes nothing
            scopes.append(None)
            continue
        if block.kind == "heading" or block.section != section:
            section, lead = block.section, None
        if _is_lead(blocks, at):
            lead = review_of(block.text) or lead
        scopes.append(_heading_review(block, title) if lead is None
                      else None if lead == "own" else lead)
    return scopes


# A judge's words quoted in the report (a self-audit's "Dialectical Tension: Prosecutor (1):
# 'No parallel orchestration detected.'"): what the author's tool said, often of another
# run, not what the author says of the code. Read as no claim, like a review's findings.
_SPEAKER = (r"\b(?:Prosecutor|Defen[cs]e|Tech\s*Lead|Judge|Chief\s*Justice)"
            r"(?:\s*\(\s*\d(?:\.\d+)?(?:\s*/\s*5)?\s*\))?\s*[:\uff1a]\s*")
JUDGE_QUOTE = re.compile(_SPEAKER + r"(?:'[^'\n]{1,400}'|\"[^\"\n]{1,400}\"|"
                         r"\u2018[^\u2019\n]{1,400}\u2019|\u201c[^\u201d\n]{1,400}\u201d)",
                         re.IGNORECASE)


def unquote_judges(text: str) -> str:
    """`text` with every judge's quoted words blanked (the same length: offsets hold)."""
    return JUDGE_QUOTE.sub(lambda m: " " * len(m.group(0)), text) if ":" in text or \
        "\uff1a" in text else text
