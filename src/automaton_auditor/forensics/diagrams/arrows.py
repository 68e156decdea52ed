"""Arrow chains: flows written as text, such as
``START -> entry -> [RepoInvestigator || DocAnalyst] -> EvidenceAggregator -> ...``.

Reports draw pipelines this way in code listings and captions. The text layer of a PDF
mangles them (listing line numbers, a comment column interleaved, a page break inside a
bracket group), so the parser reads segments between arrows and keeps only short ones:
a segment is a node name, a bracket group of parallel nodes (``[a || b]``, ``[a ∥ b]``,
``[a, b]``) or a decision (``(conditional: x?)``) with a ``YES``/``NO`` branch marker.
Only chains of at least three nodes with a parallel group, or four nodes, are kept: prose
such as "graph -> nodes -> tools" is not a diagram.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from automaton_auditor.forensics.diagrams.flow import ParsedFlow

MAX_ARROWS = 5000
_ARROW = re.compile(r"\s*(?:-+>|→|⟶|⇒)\s*")
_GROUP = re.compile(r"\[([^\[\]]{1,400})\]")
_GROUP_SPLIT = re.compile(r"\|\||∥|,|\|")
_PAREN = re.compile(r"\((?:[^()\[\]]|\([^()\[\]]*\))*\)")
_DECISION = re.compile(r"\(\s*conditional:\s*([^()\[\]]{1,60}?)\s*\)", re.IGNORECASE)
_MARKER = re.compile(r"\b(?:YES|NO|yes|no|True|False|else)\s*$")
_IDENT = re.compile(r"[A-Za-z_][\w.]*[\w?]|[A-Za-z]")
_STOP = {"a", "an", "and", "or", "the", "to", "of", "then", "via", "with", "for", "in", "on",
         "is", "are", "by", "from", "into", "each", "all", "flow", "step"}
_LISTING_NUMBER = re.compile(r"^(\s*)(\d{1,3})\s+(?=\S)")


@dataclass
class _Segment:
    head: list[str]
    tail: list[str]
    short: bool
    marker: bool
    is_group: bool


def strip_listing_numbers(text: str) -> str:
    """Remove code-listing line numbers (1, 2, 3 ... at line starts), which the text layer
    keeps and which would otherwise read as node names."""
    out, last = [], None
    for line in text.split("\n"):
        match = _LISTING_NUMBER.match(line)
        if match:
            number = int(match.group(2))
            rest = line[match.end():]
            if number == 1 or (last is not None and number == last + 1) or _ARROW.search(rest):
                line, last = match.group(1) + rest, number
        out.append(line)
    return "\n".join(out)


def _idents(text: str) -> list[str]:
    return [w.rstrip(".") for w in _IDENT.findall(text)
            if w.lower().rstrip(".") not in _STOP and len(w.rstrip(".")) >= 2]


def _segment(raw: str, decisions: dict[str, str]) -> _Segment:
    def keep_decision(match: re.Match[str]) -> str:
        token = f"decision{len(decisions)}_"
        decisions[token] = match.group(1).strip()
        return f" {token} "

    text = _DECISION.sub(keep_decision, raw)
    for _ in range(2):  # nested parentheses, one level at a time
        text = _PAREN.sub(" ", text)
    marker = bool(_MARKER.search(text))
    text = _MARKER.sub(" ", text)
    group = _GROUP.search(text)
    # A bracket group is a node only when it opens the segment: "[a || b] comment" is one,
    # prose that merely contains "x[0]" somewhere is not.
    if group and len(raw) <= 400 and not _idents(text[: group.start()]):
        members = [ids[0] for ids in (_idents(p) for p in _GROUP_SPLIT.split(group.group(1)))
                   if ids]
        return _Segment(members, members, True, marker, len(members) >= 2)
    ids = _idents(text)
    return _Segment(ids[:1], ids[-1:], 0 < len(ids) <= 2, marker, False)


def _name(token: str, decisions: dict[str, str]) -> str:
    return decisions.get(token, token)


def _chains(segments: list[_Segment], decisions: dict[str, str]) -> list[ParsedFlow]:
    chains: list[ParsedFlow] = []
    current = ParsedFlow(kind="arrow")
    groups = 0
    last_decision: str | None = None
    for index in range(len(segments) - 1):
        src_seg, dst_seg = segments[index], segments[index + 1]
        sources = src_seg.tail
        if src_seg.marker and last_decision:
            sources = [last_decision]
        for src in sources:
            for dst in dst_seg.head:
                cond = src in decisions or src_seg.marker
                current.add(_name(src, decisions), _name(dst, decisions), cond)
        groups += dst_seg.is_group
        for token in dst_seg.tail:
            if token in decisions:
                last_decision = token
        if not dst_seg.short or index == len(segments) - 2:
            if len(current.labels) >= 4 or (len(current.labels) >= 3 and groups):
                current.decisions = sorted(decisions[t] for t in decisions
                                           if decisions[t] in current.labels)
                chains.append(current)
            current, groups, last_decision = ParsedFlow(kind="arrow"), 0, None
    return chains


def parse_arrows(text: str) -> list[tuple[int, ParsedFlow]]:
    """Every arrow chain in the text, as (offset of its first arrow, flow)."""
    text = strip_listing_numbers(text)
    arrows = list(_ARROW.finditer(text))[:MAX_ARROWS]
    if len(arrows) < 2:
        return []
    found: list[tuple[int, ParsedFlow]] = []
    # Split into runs of arrows whose in-between segments are short, then parse each run.
    bounds = [0, *[p for a in arrows for p in (a.start(), a.end())], len(text)]
    raw_segments = [text[bounds[i]: bounds[i + 1]] for i in range(0, len(bounds) - 1, 2)]
    decisions: dict[str, str] = {}
    segments = [_segment(raw[-400:] if i == 0 else raw[:400] if i == len(raw_segments) - 1
                         else raw, decisions) for i, raw in enumerate(raw_segments)]
    start = 0
    for index in range(1, len(segments)):
        if not segments[index].short or index == len(segments) - 1:
            run = segments[start: index + 1]
            found.extend((arrows[start].start(), flow) for flow in _chains(run, decisions))
            start = index
    return found
