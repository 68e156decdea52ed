"""Tokens of one function's source: the names and string values its code uses.

Used for facts that live in a function's body as a whole (does the clone function handle
authentication errors, check return codes, validate the URL?). Comments are dropped by
the tokenizer; only code tokens count.
"""

from __future__ import annotations

import ast
import io
import tokenize
from functools import lru_cache
from pathlib import Path

from automaton_auditor.forensics.code.common import parse_module
from automaton_auditor.text import clip


@lru_cache(maxsize=256)
def _lines(path: str) -> tuple[str, ...]:
    try:
        target = Path(path)
        if target.is_symlink():
            return ()
        return tuple(target.read_text("utf-8-sig", errors="replace").splitlines(keepends=True))
    except OSError:
        return ()


def parse_file(path: str) -> ast.Module | None:
    """The syntax tree of the file at `path` (read once, as `function_source` reads it),
    or None when it cannot be read (missing, a symlink, empty) or parsed, hostile nesting
    included."""
    lines = _lines(path)
    if not lines:
        return None
    return parse_module("".join(lines))


def source_text(path: str) -> str:
    """The text of the file at `path` as `parse_file` reads it ("" when unreadable)."""
    return "".join(_lines(path))


def forget_files() -> None:
    """Drop the lines read so far: a new audit's work tree may reuse an earlier one's path."""
    _lines.cache_clear()


def function_tokens(repo: Path, path: str, start: int, end: int) -> list[str]:
    """NAME and STRING tokens of lines start..end of a repository file (no comments)."""
    lines = _lines(str(repo / path))[max(start - 1, 0):end]
    tokens: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
            if tok.type in (tokenize.NAME, tokenize.STRING):
                tokens.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # a partial function body still gave its first tokens
    return tokens


def function_source(repo: Path, path: str, start: int, end: int, limit: int = 2000) -> str:
    """Lines start..end of a repository file, cut to `limit` characters."""
    text = "".join(_lines(str(repo / path))[max(start - 1, 0):end])
    return clip(text, limit)


def line_at(repo: Path | None, path: str, line: int, limit: int = 200) -> str:
    """``path:line: code`` for one line of a repository file (the code stripped and cut)."""
    lines = _lines(str(repo / path)) if repo is not None else ()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return f"{path}:{line}: {clip(text, limit)}"


def code_at(repo: Path | None, path: str, line: int) -> str:
    """The code of one line, as `line_at` quotes it, without its place or a closing colon
    (``if p_score <= 2``), to quote inside a sentence."""
    return line_at(repo, path, line).split(": ", 1)[-1].rstrip(":")


def statement_at(repo: Path | None, path: str, line: int, limit: int = 200,
                 most: int = 8) -> str:
    """`line_at` for a statement that goes on past its first line (``weighted = (`` ...
    ``)``): its lines, up to `most`, joined on one line until its brackets close, so the
    quote shows what the statement computes."""
    lines = _lines(str(repo / path)) if repo is not None else ()
    if not 0 < line <= len(lines):
        return line_at(repo, path, line, limit)
    parts: list[str] = []
    depth = 0
    for text in lines[line - 1:line - 1 + most]:
        parts.append(text.strip())
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        if depth <= 0:
            break
    return f"{path}:{line}: {clip(' '.join(parts), limit)}"
