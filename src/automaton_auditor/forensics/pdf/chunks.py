"""RAG-lite over a report: heading-aware chunks and BM25 ranking (bm25s).

Chunks never cross a heading or a page, so every chunk (and any quote taken from it) has
exactly one page and one heading.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from automaton_auditor.forensics.pdf.model import Block, Chunk

if TYPE_CHECKING:
    from automaton_auditor.forensics.pdf.model import IngestedReport

MAX_CHUNK = 1000
SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9`*\u2022\u25cf])")


def sentences(text: str) -> list[str]:
    """Split prose into sentences (abbreviation-tolerant enough for evidence quotes)."""
    return [s.strip() for s in SENTENCE_SPLIT.split(text) if s.strip()]


def _pieces(text: str, limit: int) -> list[str]:
    """Cut one block's text into pieces of at most `limit` characters, at sentence
    boundaries when possible, else at word boundaries, else hard."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in sentences(text):
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            pieces.extend([current] if current else [])
            current = ""
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if current and len(current) + 1 + len(sentence) > limit:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return [p for p in pieces if p]


def make_chunks(blocks: list[Block], limit: int = MAX_CHUNK) -> list[Chunk]:
    """Group consecutive body blocks of the same page and heading into chunks of at most
    `limit` characters; a heading's text leads its section's first chunk (a heading with
    no body of its own makes no chunk)."""
    chunks: list[Chunk] = []
    buffer = ""
    has_body = False
    key: tuple[int | None, str | None] | None = None

    def flush() -> None:
        nonlocal buffer, has_body
        if has_body and buffer.strip() and key is not None:
            chunks.append(Chunk(text=buffer.strip(), page=key[0], heading=key[1],
                                index=len(chunks)))
        buffer, has_body = "", False

    for block in blocks:
        if block.kind in ("furniture", "toc"):
            continue
        block_key = (block.page, block.heading)
        if block_key != key or block.kind == "heading":
            flush()
            key = block_key
        for piece in _pieces(block.text, limit):
            if buffer and len(buffer) + 1 + len(piece) > limit:
                flush()
            buffer = f"{buffer}\n{piece}" if buffer else piece
            has_body = has_body or block.kind != "heading"
    flush()
    return chunks


def _tokenize(texts: list[str]) -> Any:
    import bm25s  # type: ignore[import-untyped]

    return bm25s.tokenize(texts, stopwords="en", show_progress=False)


def _index(report: IngestedReport) -> Any:
    import bm25s  # type: ignore[import-untyped,unused-ignore]

    if report._index is None:
        retriever = bm25s.BM25()
        texts = [f"{c.heading or ''}\n{c.text}" for c in report.chunks]
        retriever.index(_tokenize(texts), show_progress=False)
        report._index = retriever
    return report._index


def ask(report: IngestedReport, question: str, k: int = 5) -> list[Chunk]:
    """The `k` chunks most relevant to `question` by BM25 (heading text counts too),
    best first; ties keep document order. Chunks scoring zero are never returned."""
    if not report.chunks or k <= 0 or not question.strip():
        return []
    query = _tokenize([question])
    if not query.vocab:
        return []
    retriever = _index(report)
    # Map the query's vocabulary onto the corpus's, dropping unknown words.
    words = {i: w for w, i in query.vocab.items()}
    known = [[words[i] for i in query.ids[0] if words[i] in retriever.vocab_dict]]
    if not known[0]:
        return []
    docs, scores = retriever.retrieve(known, k=len(report.chunks), show_progress=False)
    ranked = sorted(((float(s), int(d)) for d, s in zip(docs[0], scores[0], strict=True)
                     if s > 0), key=lambda pair: (-round(pair[0], 6), pair[1]))
    return [report.chunks[d] for _, d in ranked[:k]]
