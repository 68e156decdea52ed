"""Parsers for diagrams written as text: Mermaid, Graphviz DOT and arrow chains.

Each parser takes the text layer of one page and returns the `ParsedFlow`s it finds. They are
tolerant (a report's text layer mangles code blocks: line numbers, interleaved columns) and
bounded (a hostile PDF may carry huge text). Names come out as the diagram writes them
(labels win over ids); matching to code names is `diagram_flow.match_names`'s job.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from automaton_auditor.forensics.diagrams.flow import MAX_SOURCE_CHARS, ParsedFlow

MAX_BLOCK_LINES = 300
MAX_WRAPPED_CHARS = 240  # a statement left open longer than this is no wrapped label
MAX_TEXT_CHARS = 400_000  # the whole document's text layer, bounded
Block = tuple[int, int, ParsedFlow]

# --- Mermaid ---------------------------------------------------------------------------------

_MERMAID_HEAD = re.compile(
    r"^\s*(?:(graph|flowchart)(?:\s+(?:TD|TB|LR|RL|BT))?|(stateDiagram)(?:-v2)?|"
    r"(sequenceDiagram))\s*;?\s*$", re.MULTILINE)
_MERMAID_SKIP = re.compile(
    r"^\s*(subgraph|end\b|classDef|class\s|style\s|linkStyle|click\s|direction\s|%%|note\s|"
    r"participant\s|actor\s|autonumber|activate|deactivate|loop|alt|else|opt|par|and|rect)")
_SHAPE = (r"\(\[.*?\]\)|\[\[.*?\]\]|\[\(.*?\)\]|\(\(.*?\)\)|\{\{.*?\}\}|\[.*?\]|\(.*?\)|"
          r"\{.*?\}|>.*?\]")
# An id may hold a hyphen (``fan-out``) but never a link's first dash: ``A-->B`` and
# ``A-.->B`` written without spaces are two nodes and a link, not one id ``A--``.
_M_ID = r"\[\*\]|[A-Za-z0-9_](?:[\w.]|-(?![-.>]))*"
_M_NODE = re.compile(rf"\s*({_M_ID})\s*({_SHAPE})?(?::::[\w-]+)?\s*")
_M_LINK = re.compile(r"\s*(<?(?:-{2,}|={2,}|-\.+-)(?:>|x|o)?)(?:\|([^|]*)\|)?\s*")
_M_TEXT_LINKS = (
    (re.compile(r"--\s+([^>|\-][^|]*?)\s+-->"), r"-->|\1|"),
    (re.compile(r"-\.\s+(.+?)\s+\.->"), r"-.->|\1|"),
    (re.compile(r"==\s+(.+?)\s+==>"), r"==>|\1|"),
)
# A label stating a parallel split: such a node is no decision, whatever its shape
# (``B{Parallel Fan-Out} --> C`` draws the split in a rhombus)
SPLIT_LABEL = re.compile(r"\b(?:parallel|fan[- ]?out|concurrent(?:ly)?)\b", re.IGNORECASE)
_SEQ_MSG = re.compile(r"^\s*([\w .]+?)\s*(?:-{1,2}>>|-{1,2}>|-{1,2}x|-{1,2}\))\s*[+-]?"
                      r"\s*([\w .]+?)\s*:")
_SEQ_ALIAS = re.compile(r"^\s*(?:participant|actor)\s+(\w+)\s+as\s+(.+?)\s*$")
_STATE_ALIAS = re.compile(r'^\s*state\s+"([^"]+)"\s+as\s+(\w+)')


def clean_label(text: str) -> str:
    """A node label without markup: HTML tags, entities, quotes and extra spaces removed."""
    text = re.sub(r"<[^>]*>", " ", text)
    text = text.replace("&nbsp;", " ").replace("&amp;", "&").replace('\\"', "")
    text = re.sub(r"\s+", " ", text.strip("\"'` "))
    return text.strip()[:80]


def _shape_label(shape: str) -> str:
    inner = shape
    while len(inner) >= 2 and inner[0] in "([{>" and inner[-1] in ")]}":
        inner = inner[1:-1]
    return clean_label(inner)


def _mermaid_group(line: str, pos: int, labels: dict[str, str],
                   decisions: set[str]) -> tuple[list[str], int]:
    """Parse ``A[..] & B`` at `pos`; return the node ids and the position after them."""
    ids: list[str] = []
    while True:
        match = _M_NODE.match(line, pos)
        if not match:
            return ids, pos
        node_id, shape = match.group(1), match.group(2)
        if shape:
            labels.setdefault(node_id, _shape_label(shape))
            if shape.startswith("{") and not shape.startswith("{{") \
                    and not SPLIT_LABEL.search(labels[node_id]):
                decisions.add(node_id)
        ids.append(node_id)
        pos = match.end()
        if not line.startswith("&", pos):
            return ids, pos
        pos += 1


def _mermaid_statement(line: str, raw_edges: list[tuple[str, str, bool]],
                       labels: dict[str, str], decisions: set[str]) -> None:
    for pattern, repl in _M_TEXT_LINKS:
        line = pattern.sub(repl, line)
    sources, pos = _mermaid_group(line, 0, labels, decisions)
    while sources:
        link = _M_LINK.match(line, pos)
        if not link:
            return
        targets, pos = _mermaid_group(line, link.end(), labels, decisions)
        dotted = "." in link.group(1)
        for src in sources:
            for dst in targets:
                raw_edges.append((src, dst, dotted or src in decisions))
        sources = targets


def _mermaid_name(node_id: str, labels: dict[str, str], *, as_target: bool) -> str:
    if node_id == "[*]":
        return "END" if as_target else "START"
    label = labels.get(node_id) or node_id
    return {"__start__": "START", "__end__": "END"}.get(label, label)


def parse_mermaid_block(lines: list[str], head: re.Match[str]) -> ParsedFlow:
    """Parse the lines of one Mermaid block (the header line already consumed)."""
    diagram_type = ("sequence" if head.group(3) else "state" if head.group(2)
                    else "flowchart")
    flow = ParsedFlow(kind="mermaid", diagram_type=diagram_type)
    labels: dict[str, str] = {}
    decisions: set[str] = set()
    raw_edges: list[tuple[str, str, bool]] = []
    for raw_line in lines[:MAX_BLOCK_LINES]:
        for line in raw_line.split(";"):
            if diagram_type == "sequence":
                _sequence_line(line, raw_edges, labels)
                continue
            alias = _STATE_ALIAS.match(line)
            if alias:
                labels[alias.group(2)] = clean_label(alias.group(1))
            elif line.strip() and not _MERMAID_SKIP.match(line):
                _mermaid_statement(line.split(" : ")[0], raw_edges, labels, decisions)
    for src, dst, cond in raw_edges:
        flow.add(_mermaid_name(src, labels, as_target=False),
                 _mermaid_name(dst, labels, as_target=True), cond)
    flow.decisions = sorted({_mermaid_name(d, labels, as_target=False) for d in decisions})
    return flow


def _sequence_line(line: str, raw_edges: list[tuple[str, str, bool]],
                   labels: dict[str, str]) -> None:
    alias = _SEQ_ALIAS.match(line)
    if alias:
        labels[alias.group(1)] = clean_label(alias.group(2))
        return
    msg = _SEQ_MSG.match(line)
    if msg:
        raw_edges.append((msg.group(1).strip(), msg.group(2).strip(), False))


# Keywords that open a Mermaid line of each diagram type (lower case, as Mermaid writes them):
# a prose line beginning "Parallel" or "And" is no ``par``/``and`` line of a flowchart.
# A word processor capitalises a line's first letter ("End"): keywords match in any case.
_FLOW_WORDS = re.compile(r"^\s*(?:subgraph|end|classDef|class|style|linkStyle|click|"
                         r"direction)\b|^\s*%%", re.IGNORECASE)
_SEQ_WORDS = re.compile(r"^\s*(?:participant|actor|autonumber|activate|deactivate|loop|alt|"
                        r"else|opt|par|and|rect|critical|break|end|note|Note)\b|^\s*%%")
_STATE_LINE = re.compile(r"^\s*(?:state\b|note\b|[{}]|[\w*\[\]]+\s*:\s)|^\s*%%")
_LISTING_NUMBER = re.compile(r"^\s*\d{1,3}\s+(?=\S)")


def mermaid_head(line: str) -> str | None:
    """The diagram type a Mermaid header line opens (``flowchart``, ``state``,
    ``sequence``), or None when the line is no header."""
    head = _MERMAID_HEAD.match(line)
    if not head:
        return None
    return "sequence" if head.group(3) else "state" if head.group(2) else "flowchart"


def mermaid_line(line: str, diagram_type: str = "flowchart") -> bool:
    """Whether a line reads as one statement of a Mermaid diagram of `diagram_type`: a node
    followed by a link (``A --> B``, ``P -->|yes|`` cut short), a node declared alone, a
    keyword line (in any case), or a sequence message or state line."""
    line = _LISTING_NUMBER.sub("", line).split(";")[0]
    if diagram_type == "sequence":
        return bool(_SEQ_WORDS.match(line) or _SEQ_MSG.match(line))
    if diagram_type == "state" and _STATE_LINE.match(line):
        return True
    if _FLOW_WORDS.match(line):
        return True
    for pattern, repl in _M_TEXT_LINKS:
        line = pattern.sub(repl, line)
    node = _M_NODE.match(line)
    if not node:
        return False
    if _M_LINK.match(line, node.end()) or (line[node.end():][:1] in ("[", "(", "{")
                                           and unclosed(line)):  # a label wrapped
        return True
    # A node declared alone (``A["Label"]``, or a bare id listed in a subgraph)
    return not line[node.end():].strip()


def unclosed(line: str) -> bool:
    """A line that leaves a quote or bracket open: the next line carries on its statement
    (a long label wrapped by the page). A line ending in ``{`` opens a subgraph or a
    composite state, no label."""
    pairs = [("[", "]"), ("(", ")")] + ([] if line.rstrip().endswith("{") else [("{", "}")])
    return line.count('"') % 2 == 1 or any(line.count(o) > line.count(c) for o, c in pairs)


def _mermaid_body(text: str, start: int, diagram_type: str,
                  furniture: Callable[[str], bool]) -> tuple[list[str], int]:
    """The statement lines of the block whose header line ends at `start`, and the offset
    where the block ends. The text layer keeps no blank line after a block, so the block
    ends at the first line that is no Mermaid statement, at a fence, or at the next
    header; a running header or footer between two pages (`furniture`) is skipped, so a
    block cut by a page break is read whole."""
    body: list[str] = []
    end = pos = start
    for line in text[start:].split("\n")[1:MAX_BLOCK_LINES]:
        pos += len(line) + 1
        stripped = line.strip()
        if not stripped or stripped.startswith("```"):
            if body:
                break
            end = pos
            continue
        if _MERMAID_HEAD.match(line):
            break
        if body and unclosed(body[-1]) and len(body[-1]) < MAX_WRAPPED_CHARS:
            body[-1] = f"{body[-1]} {stripped}"  # one statement, wrapped by the page
        elif mermaid_line(line, diagram_type):
            body.append(_LISTING_NUMBER.sub("", line))
        elif furniture(stripped):
            continue
        else:
            break
        end = pos
    return body, end


def _no_furniture(_line: str) -> bool:
    return False


def parse_mermaid(text: str, furniture: Callable[[str], bool] = _no_furniture) -> list[Block]:
    """Every Mermaid block in the text: a header line (``graph TD``, ``flowchart LR``,
    ``stateDiagram-v2``, ``sequenceDiagram``) and the statement lines after it
    (`_mermaid_body`); one block is one diagram. `furniture` tells a page's running header
    or footer line. Returns (start, end, flow) with the block's character span."""
    text = text[:MAX_TEXT_CHARS]
    blocks = []
    for head in _MERMAID_HEAD.finditer(text):
        body, end = _mermaid_body(text, head.end(), mermaid_head(head.group(0)) or "flowchart",
                                  furniture)
        flow = parse_mermaid_block(body, head)
        if flow.edges:
            blocks.append((head.start(), end, flow))
    return blocks


# --- Graphviz DOT ----------------------------------------------------------------------------

_DOT_HEAD = re.compile(r"\b(?:strict\s+)?(di)?graph\s*(?:\"[^\"]*\"|\w+)?\s*\{")
_DOT_ID = r'"(?:[^"\\]|\\.)*"|[\w.]+'
_DOT_GROUP = re.compile(r"\{([^{}]*)\}")
_DOT_ATTRS = re.compile(r"\[([^\]]*)\]\s*$")
_DOT_LABEL = re.compile(r'label\s*=\s*("(?:[^"\\]|\\.)*"|[\w.]+)')
_DOT_KEYWORDS = {"node", "edge", "graph", "subgraph", "digraph", "strict"}


def _dot_body(text: str, start: int) -> str:
    depth = 0
    for index in range(start, min(len(text), start + MAX_SOURCE_CHARS)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start + 1: index]
    return text[start + 1: start + MAX_SOURCE_CHARS]


def _dot_ids(part: str) -> list[str]:
    group = _DOT_GROUP.search(part)
    inner = group.group(1) if group else part
    return [clean_label(m) for m in re.findall(_DOT_ID, inner)
            if m not in _DOT_KEYWORDS and not m.startswith("subgraph")]


def _dot_statement(stmt: str, flow_edges: list[tuple[str, str, bool]],
                   labels: dict[str, str]) -> None:
    stmt = re.sub(r"^\s*subgraph\s*[\w\"]*\s*\{?", "", stmt).strip(" {}\t")
    attrs_match = _DOT_ATTRS.search(stmt)
    attrs = attrs_match.group(1) if attrs_match else ""
    body = stmt[: attrs_match.start()] if attrs_match else stmt
    parts = re.split(r"\s*-[->]\s*", body)
    if len(parts) < 2:
        ids = _dot_ids(body)
        label = _DOT_LABEL.search(attrs)
        if len(ids) == 1 and label and ids[0] not in _DOT_KEYWORDS:
            labels[ids[0]] = clean_label(label.group(1).replace("\\n", " "))
        return
    dashed = bool(re.search(r"style\s*=\s*\"?(dashed|dotted)", attrs))
    groups = [_dot_ids(p) for p in parts]
    for sources, targets in itertools.pairwise(groups):
        flow_edges.extend((s, t, dashed) for s in sources for t in targets)


def parse_dot(text: str) -> list[Block]:
    """Every Graphviz ``digraph``/``graph`` block in the text, edges with labels, as
    (start, end, flow) with the block's character span."""
    # Comments are blanked to spaces (not removed) so that spans stay valid offsets.
    text = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: " " * len(m.group(0)),
                  text[:MAX_TEXT_CHARS], flags=re.DOTALL)
    blocks = []
    for head in _DOT_HEAD.finditer(text):
        body = _dot_body(text, head.end() - 1)
        raw_edges: list[tuple[str, str, bool]] = []
        labels: dict[str, str] = {}
        for stmt in re.split(r"[;\n]", body):
            if stmt.strip() and "=" not in stmt.split("[")[0]:
                _dot_statement(stmt, raw_edges, labels)
        flow = ParsedFlow(kind="dot")
        for src, dst, cond in raw_edges:
            flow.add(labels.get(src, src), labels.get(dst, dst), cond)
        if flow.edges:
            blocks.append((head.start(), head.end() + len(body) + 1, flow))
    return blocks
