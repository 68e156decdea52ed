"""Arrow chains: flows written as text, such as
``START -> entry -> [RepoInvestigator || DocAnalyst] -> EvidenceAggregator -> ...``.

Reports draw pipelines this way in code listings and captions. The text layer of a PDF
mangles them (listing line numbers, a comment column interleaved, a page break inside a
bracket group), so the parser reads segments between arrows and keeps only short ones:
a segment is a node name, a bracket group of parallel nodes (``[a || b]``, ``[a ∥ b]``,
``[a, b]``) or a decision (``(conditional: x?)``) with a ``YES``/``NO`` branch marker. A
bracket list of quoted strings (``"Dialectical Synthesis" -> ["dialectical", "courtroom"]``)
maps a key to its values, keywords or synonyms: it is no group of nodes and ends the chain.
Only chains of at least three connected nodes with a parallel group, or four connected nodes,
are kept (names merely listed between arrows do not add up): prose
such as "graph -> nodes -> tools" is not a diagram.

Text-art trees hang branches off a trunk: ``X`` then ``|`` then ``+---> A``, ``+---> B``
(or ``├──> A``, ``└──> B``). Each branch line starts at the node above the trunk, not at
the sibling written before it: a fan-out, not a chain.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

from automaton_auditor.forensics.diagrams.flow import Edge, ParsedFlow, connected_pieces

MAX_ARROWS = 5000
_ARROW = re.compile(r"\s*(?:[-─]+[>▶►]|→|⟶|⇒)\s*")
_TRUNK = re.compile(r"^\s*(?:[|│┃║]|[vV↓▼]\s*$|$)")  # trunk, arrow head or blank line
_BRANCH = re.compile(r"^\s*[+├└`\\|│]\s*(?:[-─]+[>▶►]|→)")  # a branch off the trunk
_HEAD = re.compile(r"^\s*[vV↓▼]\s*$")  # the trunk's arrow head
MAX_TRUNK_LINES = 40  # how far up a branch looks for the node it hangs off
_GROUP = re.compile(r"\[([^\[\]]{1,400})\]")
_GROUP_SPLIT = re.compile(r"\|\||∥|,|\|")
# ``"Synthesis" -> ["dialectical", "courtroom"]``: a keyword mapped to quoted synonyms, no flow
_QUOTED = re.compile(r"\s*([\"“”'‘’]).{0,80}[\"“”'‘’]\s*", re.DOTALL)
_PAREN = re.compile(r"\((?:[^()\[\]]|\([^()\[\]]*\))*\)")
_DECISION = re.compile(r"\(\s*conditional:\s*([^()\[\]]{1,60}?)\s*\)", re.IGNORECASE)
# "Detectives(Parallel)": one name standing for a group of nodes that run in parallel
_PARALLEL_NOTE = re.compile(r"\(\s*(?:in\s+|run\s+in\s+)?(?:parallel|concurrent(?:ly)?)\s*\)",
                            re.IGNORECASE)
_MARKER = re.compile(r"\b(?:YES|NO|yes|no|True|False|else)\s*$")
_IDENT = re.compile(r"[A-Za-z_][\w.]*[\w?]|[A-Za-z]")
_STOP = {"a", "an", "and", "or", "the", "to", "of", "then", "via", "with", "for", "in", "on",
         "is", "are", "by", "from", "into", "each", "all", "flow", "step"}
_TWO_WORDS = re.compile(r"\s*[A-Za-z_]\w*[ \t]+[A-Za-z_]\w*\s*")  # a name of two words
_LISTING_NUMBER = re.compile(r"^(\s*)(\d{1,3})\s+(?=\S)")
# An edge list that closes a fan-out with a quantified source: "S -> a, S -> b; each Judge
# plus Fallback -> Chief" (the noun names the group just listed; "plus"/"and" add nodes).
_EACH = re.compile(r"(?:^|[;,:]|\band\b)\s*(?:each|every|all(?:\s+the)?|both)\s+([A-Za-z_]\w*)"
                   r"((?:\s*(?:,|\bplus\b|\band\b|&|\+)\s*[A-Za-z_]\w*)*)\s*$", re.IGNORECASE)
_EACH_PREFIX = "each:"  # a segment tail token standing for the last fan-out's targets


@dataclass
class _Segment:
    head: list[str]
    tail: list[str]
    short: bool
    marker: bool
    is_group: bool
    branch_of: str | None = None  # the node this segment hangs off, when reached by a branch
    parallel: bool = False  # one name annotated as a group running in parallel
    joins: tuple[str, list[str]] | None = None  # (join node, the run's branches) on its last


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
        if all(_QUOTED.fullmatch(p) for p in _GROUP_SPLIT.split(group.group(1))):
            return _Segment([], [], False, marker, False)  # a list of strings: data, no nodes
        members = [ids[0] for ids in (_idents(p) for p in _GROUP_SPLIT.split(group.group(1)))
                   if ids]
        return _Segment(members, members, True, marker, len(members) >= 2)
    ids = _idents(text)
    each = _EACH.search(text)
    before = _idents(text[: each.start()]) if each else []
    if each and len(before) == 1:
        tail = [_EACH_PREFIX + each.group(1), *_idents(re.sub(r"\bplus\b", " ", each.group(2)))]
        return _Segment(before, tail, True, marker, False)
    if len(ids) == 2 and _TWO_WORDS.fullmatch(text):  # "-> Judge Collector ->": one node
        name = " ".join(ids)
        return _Segment([name], [name], True, marker, False)
    return _Segment(ids[:1], ids[-1:], 0 < len(ids) <= 2, marker, False,
                    parallel=len(ids) == 1 and bool(_PARALLEL_NOTE.search(raw)))


def _last_fan_out(flow: ParsedFlow, token: str) -> list[str]:
    """The nodes "each <noun>" stands for: the targets of the flow's latest fan-out (a
    source with two or more targets), else the noun itself."""
    targets: dict[str, list[str]] = {}
    for src, dst in flow.edges:
        targets.setdefault(src, []).append(dst)
    for src, _dst in reversed(flow.edges):
        if len(targets[src]) >= 2:
            return targets[src]
    return [token.removeprefix(_EACH_PREFIX)]


def _name(token: str, decisions: dict[str, str]) -> str:
    return decisions.get(token, token)


def _largest_piece(edges: list[Edge]) -> int:
    """How many nodes the largest connected piece of `edges` holds (directions ignored).
    Arrows scattered through a sentence ("Judges -> Judge Collector -> Chief Justice: ...")
    or a list of "x -> y" pairs add up many names but no flow: each piece stays small."""
    return max((len({n for edge in piece for n in edge})
                for piece in connected_pieces(edges, lambda edge: edge)), default=0)


def _chains(segments: list[_Segment], decisions: dict[str, str]) -> list[ParsedFlow]:
    chains: list[ParsedFlow] = []
    current = ParsedFlow(kind="arrow")
    groups = 0
    last_decision: str | None = None
    for index in range(len(segments) - 1):
        src_seg, dst_seg = segments[index], segments[index + 1]
        sources = [n for t in src_seg.tail for n in (
            _last_fan_out(current, t) if t.startswith(_EACH_PREFIX) else [t])]
        if dst_seg.branch_of:
            sources = [dst_seg.branch_of]
        elif src_seg.marker and last_decision:
            sources = [last_decision]
        for src in sources:
            for dst in dst_seg.head:
                cond = src in decisions or src_seg.marker
                current.add(_name(src, decisions), _name(dst, decisions), cond)
        if dst_seg.joins:
            join, targets = dst_seg.joins
            for target in targets:
                current.add(_name(target, decisions), join)
        groups += dst_seg.is_group
        for seg in (src_seg, dst_seg):
            name = _name(seg.head[0], decisions) if seg.parallel else ""
            if name and name in current.labels and name not in current.parallel:
                current.parallel.append(name)
                groups += 1
        for token in dst_seg.tail:
            if token in decisions:
                last_decision = token
        if not dst_seg.short or index == len(segments) - 2:
            size = _largest_piece(current.edges)
            if size >= 4 or (size >= 3 and groups):
                current.decisions = sorted(decisions[t] for t in decisions
                                           if decisions[t] in current.labels)
                chains.append(current)
            current, groups, last_decision = ParsedFlow(kind="arrow"), 0, None
    return chains


def _node_name(line: str) -> str | None:
    """The node a text-art line names (its comment in parentheses dropped), or None when
    the line is prose rather than a short node label."""
    for _ in range(2):
        line = _PAREN.sub(" ", line)
    ids = _idents(line.split("(")[0])
    return ids[0] if 0 < len(ids) <= 2 else None


def _is_text(line: str) -> bool:
    return not _TRUNK.match(line) and not _BRANCH.match(line)


def _trunk_node(lines: list[str], index: int) -> str | None:
    """The node a branch on line `index` hangs off: the first line above that is neither
    trunk, blank, nor a sibling branch (with its wrapped continuation lines)."""
    row = index - 1
    while row >= max(index - MAX_TRUNK_LINES, 0):
        if not _is_text(lines[row]):
            row -= 1
            continue
        top = row  # a wrapped label: climb to the block's first line (a heading or prose
        # above the drawing is no part of its label)
        while top > 0 and _is_text(lines[top - 1]) and _node_name(lines[top - 1]):
            top -= 1
        if top > 0 and _BRANCH.match(lines[top - 1]):
            row = top - 1  # the continuation of a sibling branch's text
            continue
        return _node_name(lines[top])
    return None


def _join_node(lines: list[str], index: int) -> str | None:
    """The node the trunk reaches, through an arrow head (``v``), below the last branch of a
    run on line `index`: where the branches meet again (fan-in). None without a head."""
    row = index + 1
    while row < len(lines) and _is_text(lines[row]):  # the branch's wrapped label
        row += 1
    head = False
    while row < min(index + MAX_TRUNK_LINES, len(lines)) and _TRUNK.match(lines[row]):
        head = head or bool(_HEAD.match(lines[row]))
        row += 1
    if not head or row >= len(lines) or _BRANCH.match(lines[row]):
        return None
    return _node_name(lines[row])


def _mark_branches(text: str, arrows: list[re.Match[str]], segments: list[_Segment]) -> None:
    """Text-art trees: each segment reached by a branch arrow hangs off its trunk node; the
    last branch of a run also carries the node where the run's branches join, if any."""
    lines = text.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    rows: list[int] = []
    sources: list[str | None] = []
    for arrow in arrows:
        at = arrow.start() + len(arrow.group(0)) - len(arrow.group(0).lstrip())
        row = bisect.bisect_right(starts, at) - 1
        rows.append(row)
        branch = _BRANCH.match(lines[row][: at - starts[row] + 8])
        # only the line's first arrow is the branch (``|---> A ---+---> B``: A hangs off the
        # trunk, B follows A)
        branch = branch if branch and branch.end() > at - starts[row] else None
        sources.append(_trunk_node(lines, row) if branch else None)
    run: list[str] = []  # the branches so far of the current run off one trunk node
    for index, source in enumerate(sources):
        segments[index + 1].branch_of = source
        run = [*run, *segments[index + 1].head] if source else []
        following = sources[index + 1] if index + 1 < len(sources) else None
        if source and following != source:  # the run's last branch
            join = _join_node(lines, rows[index])
            segments[index + 1].joins = (join, run) if join else None
            run = []


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
    _mark_branches(text, arrows, segments)
    start = 0
    for index in range(1, len(segments)):
        if not segments[index].short or index == len(segments) - 1:
            run = segments[start: index + 1]
            if not _intended(text, arrows[start].start()):
                found.extend((arrows[start].start(), flow) for flow in _chains(run, decisions))
            start = index
    return found


# "The diagram should show: A → B → C": a sentence saying what a drawing ought to hold is an
# instruction or a plan, not the drawing (a report's caption left as written)
_INTENT = re.compile(r"\b(?:should|would|will|must|could|is to|are to|needs? to)\s+"
                     r"(?:show|depict|illustrate|draw|display)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n\s*\n")


def _intended(text: str, offset: int) -> bool:
    """Whether the sentence holding the arrow at `offset` says, before it, what a diagram
    should show."""
    before = text[max(0, offset - 200): offset]
    ends = list(_SENTENCE_END.finditer(before))
    return bool(_INTENT.search(before[ends[-1].end():] if ends else before))


# A drawing made of characters: box corners (``┌──┐``, ``+----+``) or trunk lines holding only
# ``|`` and arrow heads (``v``, ``▼``). A file tree (``├── src/``) has neither.
_BOX_LINE = re.compile(r"[┌┐╔╗]|\+-{3,}\+")
_TRUNK_LINE = re.compile(r"^\s*[|│┃║vV▼↓](?:\s+[|│┃║vV▼↓])*\s*$")


def text_art(text: str) -> bool:
    """True when a page's text holds a drawing made of characters (two box lines, or two
    trunk lines), read or not; prose arrow chains and file trees are no such drawing."""
    lines = text.splitlines()
    return (sum(1 for line in lines if _BOX_LINE.search(line)) >= 2
            or sum(1 for line in lines if _TRUNK_LINE.match(line)) >= 2)
