"""Text the auditor did not write (file names, quotes, commit subjects, rubric names, judges'
arguments) as inert Markdown: it reads as it was written but never renders as a tag, a link
or an image, and never carries a control character (`printable`).

Three shapes: `md_text` for running text on one line (a table cell, a heading, a list item),
`md_quote` for a quoted passage of several lines (a block quote: a quote, not markup) and
`md_code` for a name shown as code.

The escapes are CommonMark backslash escapes, so the rendered text is the original one:
``\\<img`` renders as ``<img``. Only what could start markup is escaped, so that code such as
``data["a"][0] -> List[str]`` reads unchanged in the file too:

- ``<`` before a letter, ``/``, ``!`` or ``?``: a tag, a comment, an autolink;
- ``(`` right after ``]``: the only way to a link or an image without a reference definition
  (and no ``](javascript:`` is left for a lax renderer);
- ``[`` first on a line, after any quote or list markers: a reference or footnote definition,
  which would turn a ``[x]`` elsewhere into a link;
- ``&`` before an entity name: an entity could spell a bidi control;
- a backslash that would escape what follows, so none of the escapes above is undone;
- a backtick that opens no code span: it could pair with one of the report's own.

`md_text` leaves the code spans of the text as they are: nothing renders inside one.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict

from automaton_auditor.text import printable

# A backslash before ASCII punctuation, or before whatever the caller appends, is an escape;
# before a line end, a hard line break.
_MARKUP = re.compile(r"\\(?=[!-/:-@\[-`{-~]|\n|\Z)|<(?=[A-Za-z/!?])|(?<=\])\("
                     r"|&(?=#?[A-Za-z0-9]+;)")
# A line's start, with the quote and list markers a definition may follow.
_LINE_START = re.compile(r"^((?:[ \t]*(?:>|(?:[*+-]|\d{1,9}[.)])(?=[ \t]|$)))*[ \t]*)\[",
                         re.MULTILINE)
_TICKS = re.compile(r"`+")


def _escape(text: str) -> str:
    return _LINE_START.sub(r"\1\\[", _MARKUP.sub(lambda m: "\\" + m.group(0), text))


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where CommonMark sees code spans in `text`: a backtick run paired with the next run of
    the same length, an unpaired run being literal backticks."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    by_length: dict[int, list[int]] = defaultdict(list)
    for index, (start, end) in enumerate(runs):
        by_length[end - start].append(index)
    spans, index = [], 0
    while index < len(runs):
        start, end = runs[index]
        same = by_length[end - start]
        after = bisect.bisect_right(same, index)
        if after == len(same):  # no closer: literal backticks, the next run may open
            index += 1
            continue
        closer = same[after]
        spans.append((start, runs[closer][1]))
        index = closer + 1
    return spans


def md_text(text: str) -> str:
    """`text` on one line as inert Markdown, its code spans kept (see the module). The
    caller puts it between characters other than backticks, which would lengthen its runs."""
    text = printable(text, one_line=True)
    parts, done = [], 0
    for start, end in _code_spans(text):
        parts += [_escape(text[done:start]).replace("`", "\\`"), text[start:end]]
        done = end
    parts.append(_escape(text[done:]).replace("`", "\\`"))
    return "".join(parts)


def md_quote(text: str) -> str:
    """`text` (several lines) as inert Markdown for a block quote: every backtick is escaped
    too, since a code span may cross the quote's lines, so the quote renders as written."""
    return _escape(printable(text)).replace("`", "\\`")


def md_code(text: str) -> str:
    """`text` on one line as a Markdown code span, fenced by more backticks than any run it
    holds, so a backtick in a file name cannot close the span early."""
    text = printable(text, one_line=True) or " "
    fence = "`" * (max(map(len, _TICKS.findall(text)), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"
