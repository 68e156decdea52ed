"""``justice.markdown_report``: the verdict is written to a Markdown file, in sections.

The rubric asks to "verify the output is a structured Markdown report, not a console print";
its success pattern names the sections: an Executive Summary, a Criterion Breakdown (with
dissent) and a Remediation Plan. Read from what the code does:

- a write of text (`file_writes`): a file opened for writing in text mode (``open(path,
  "w")``, ``Path.open("w")``) whose handle is written to, or ``Path.write_text``, in a function some
  code names (`unnamed`: one nothing names never runs; a library entry its tests import
  counts) outside the repository's tests;
- Markdown: the path it writes ends in ``.md`` (its names followed to their values), or
  its text is read out of the run's result by key (``out.get("final_report_markdown")``)
  while the synthesis holds Markdown headings, or the writing function (or one it calls)
  holds such headings; a path with another extension (``run.log``) is never one;
- the sections: the headings (``# ...``, ``**...**``) the code around the write holds: the
  writing function, its callers and what they call, the Chief Justice's code, and a template
  file that code names (``report.md.j2``, or a Markdown file in a templates folder: one
  elsewhere is an earlier run's output). A heading with a run-time part
  (``f"## {criterion.name}"``) is a per-criterion breakdown.

A print is no file, and headings no code writes to a file are no report.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, TEST_PATH, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.file_writes import MARKDOWN_EXT, Write, file_writes
from automaton_auditor.forensics.code.output_paths import FIELD
from automaton_auditor.forensics.code.report_text import CALLED, Use, text_uses
from automaton_auditor.forensics.code.source import line_at, parse_file, source_text
from automaton_auditor.forensics.code.unnamed import named_nowhere
from automaton_auditor.forensics.code.walk import repo_bytes
from automaton_auditor.state import Finding

FACET = "justice.markdown_report"
GOAL = ("The verdict is written to a Markdown file with an Executive Summary, a Criterion "
        "Breakdown and a Remediation Plan")
TEMPLATE_EXT = (".j2", ".jinja", ".jinja2", ".tmpl", ".mustache")
# a Markdown file is a template only in a templates folder: elsewhere one the code names is
# an earlier run's output (``audit/report_onpeer_generated/report.md``), not what it writes
TEMPLATE_DIR = re.compile(r"(^|/)templates?/", re.I)
HEADING = re.compile(r"^\s*((?:#{1,6}\s+|\*\*).+)$", re.M)
# a string that opens with a heading: a file without one holds no serializer of the report
HEADED = re.compile(r"(?:['\"]|\\n)\s*(?:#{1,6}\s|\*\*)")
RUNTIME = "{}"  # a heading's part known only at run time
# The success pattern's sections, as headings name them
SECTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Executive Summary", re.compile(r"summary|overview", re.I)),
    ("Criterion Breakdown", re.compile(r"criteri|dimension|breakdown|^\W*\{\}", re.I)),
    ("Remediation Plan", re.compile(r"remediation|recommendation|improvement|next step",
                                    re.I)),
)
DISSENT = re.compile(r"dissent", re.I)
DEPTH = 4  # calls followed from the writing function
MAX_TESTS = 200  # test files read for calls of a function nothing else names


def headings(node: ast.AST) -> set[str]:
    """The Markdown headings a function's (or module's) own strings hold, run-time parts as
    ``{}``."""
    found: set[str] = set()
    for sub in own_nodes(getattr(node, "body", [])):
        if isinstance(sub, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str)
                           else RUNTIME for v in sub.values)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            text = sub.value
        else:
            continue
        found |= heading_lines(text[:20_000])
    return found


def heading_lines(text: str) -> set[str]:
    """The Markdown headings of a text (``# ...``, ``**...**``) as written, marks included,
    each cut to 80 characters."""
    return {m.strip()[:80] for m in HEADING.findall(text)}


class _Functions:
    """The repository's function nodes by key (``(path, "<module>")``: the module), each
    file parsed when first asked for: most files hold no write and no heading."""

    def __init__(self, repo: Path, paths: Iterable[str]) -> None:
        self.repo, self.paths = repo, set(paths)
        self._files: dict[str, dict[str, ast.AST]] = {}
        self._heads: dict[Key, set[str]] = {}  # each function's headings, read once

    def get(self, key: Key) -> ast.AST | None:
        """The node of function `key`, None when the file is not read or has none."""
        path, qual = key
        if path not in self.paths:
            return None
        if path not in self._files:
            tree = parse_file(str(self.repo / path))
            self._files[path] = {"<module>": tree, **dict(function_defs(tree))} if tree else {}
        return self._files[path].get(qual)

    def keys(self, path: str) -> list[Key]:
        """The functions of one file (the file parsed if it was not yet)."""
        self.get((path, "<module>"))
        return [(path, qual) for qual in self._files.get(path, {})]

    def headings(self, keys: Iterable[Key]) -> set[str]:
        """The headings the functions `keys` hold."""
        for key in set(keys) - self._heads.keys():
            node = self.get(key)
            self._heads[key] = headings(node) if node is not None else set()
        return {h for key in keys for h in self._heads[key]}


def _called(node: ast.AST) -> set[str]:
    """The names a function calls (``f(...)``, ``self.f(...)``, ``mod.f(...)``: ``f``)."""
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr
            for n in own_nodes(getattr(node, "body", []))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute)}


def _by_name(keys: Iterable[Key]) -> dict[str, list[Key]]:
    """Functions by their own name (``Class.method``: ``method``)."""
    by_name: dict[str, list[Key]] = {}
    for path, qual in sorted(set(keys)):
        by_name.setdefault(qual.rsplit(".", 1)[-1], []).append((path, qual))
    return by_name


def _around(key: Key, graph: CallGraph, nodes: _Functions,
            by_name: dict[str, list[Key]], up: bool) -> set[Key]:
    """The writing function (with its callers when `up`) and what they call, a few calls
    deep: through the call graph, and
    by name where the facts left its file out (a file with no trigger word has no calls in
    the call graph): a function of the same file, else the one function of the repository
    with that name."""
    # the function that hands the writer its text builds it: its callers and what they call
    callers = {caller for caller, _line in graph.callers(key)} \
        if up and key in graph.functions else set()
    seen = {key, *callers}
    todo = [(k, 0) for k in sorted(seen)]
    while todo:
        here, depth = todo.pop()
        found = set(graph.reachable([here], 1)) - {here}
        node = nodes.get(here) if depth < DEPTH else None
        for name in _called(node) if node is not None else ():
            keys = by_name.get(name, [])
            same = [k for k in keys if k[0] == here[0]]
            found |= set(same or (keys if len(keys) == 1 else []))
        todo += [(k, depth + 1) for k in sorted(found - seen) if depth < DEPTH]
        seen |= found
    return seen


def _template_headings(repo: Path, files: list[str], named: set[str]) -> dict[str, set[str]]:
    """The headings of each template file whose name the code around a write holds."""
    found: dict[str, set[str]] = {}
    for path in files:
        name = path.rsplit("/", 1)[-1]
        template = name.lower().endswith(TEMPLATE_EXT) or (
            name.lower().endswith(MARKDOWN_EXT) and TEMPLATE_DIR.search(path) is not None)
        if not template or name not in named or TEST_PATH.search(path):
            continue
        data = repo_bytes(repo, path)
        if data is not None:
            found[path] = heading_lines(data.decode("utf-8", "replace"))
    return found


def _idle(repo: Path, files: list[str], facts: dict[str, JSON],
          writes: list[Write]) -> set[Key]:
    """The writing functions nothing names (`unnamed`), less those the repository's tests
    name: a library's entry (``run_audit(...)`` that its README shows) is imported by its
    tests, not by its own code."""
    idle = named_nowhere(facts, [(w.path, w.func) for w in writes if w.func], repo)
    paths = [f for f in files if f.endswith(".py") and TEST_PATH.search(f)][:MAX_TESTS]
    tests = [data for path in paths if (data := repo_bytes(repo, path)) is not None]
    return {key for key in idle if not any(
        re.search(rb"\b" + re.escape(key[1].rsplit(".", 1)[-1].encode()) + rb"\b", text)
        for text in tests)}


def _strings(node: ast.AST) -> set[str]:
    return {s.value for s in own_nodes(getattr(node, "body", []))
            if isinstance(s, ast.Constant) and isinstance(s.value, str) and len(s.value) < 300}


def markdown_report_finding(repo: Path, files: list[str], facts: dict[str, JSON],
                            graph: CallGraph, synthesis: list[Key]) -> Finding:
    """``justice.markdown_report`` (see the module docstring); `synthesis`: the Chief
    Justice's functions."""
    # every Python file the code pass saw, those its keyword filter left out too: an entry
    # script with none of the trigger words still writes the report
    paths = sorted(p for p, f in facts.items() if "error" not in f and not TEST_PATH.search(p))
    nodes = _Functions(repo, paths)
    # a write calls ``write``, ``write_text`` or ``writelines``: a file without the word has none
    writing = [p for p in paths if "write" in source_text(str(repo / p))]
    writes = [w for p in writing if (tree := nodes.get((p, "<module>"))) is not None
              and isinstance(tree, ast.Module) for w in file_writes(tree, p)]
    # calls resolved by name where the call graph has no file (one the facts skipped)
    by_name = _by_name([*graph.functions, *(k for p in writing for k in nodes.keys(p))])
    idle = _idle(repo, files, facts, writes)
    live = [w for w in writes if (w.path, w.func) not in idle]
    # the synthesis's own headings: a text read out of the run's result is its report
    synthesized = bool(nodes.headings(synthesis))
    marked: list[tuple[Write, set[Key]]] = []
    for write in live:
        key = (write.path, write.func or "<module>")
        if write.markdown_path or (write.from_result and synthesized) or (
                not write.other_ext and nodes.headings(_around(key, graph, nodes, by_name,
                                                               False))):
            marked.append((write, _around(key, graph, nodes, by_name, True)))
    around = {k for _, keys in marked for k in keys} | set(synthesis)
    heads = nodes.headings(around)
    named = {s for k in around if (node := nodes.get(k)) is not None for s in _strings(node)}
    templates = _template_headings(repo, files, named) if marked else {}
    heads |= {h for found in templates.values() for h in found}
    serializer = None if marked else _serializer(repo, paths, nodes)
    return _finding(repo, marked, [w for w in writes if (w.path, w.func) in idle], heads,
                    sorted(templates), serializer)


def section_heads(heads: set[str]) -> list[tuple[str, str]]:
    """(section, the heading that stands for it) for each section of the success pattern
    some heading names: the shallowest such heading, one written out before one with a
    run-time part, the section's own name before a longer one (a prompt's "## Current
    Executive Summary" beside the report's "## Executive Summary")."""
    found = []
    for name, pattern in SECTIONS:
        matching = [h for h in heads if pattern.search(h.lstrip("#* "))]
        if matching:
            found.append((name, min(matching, key=lambda h: (
                len(h) - len(h.lstrip("#")) or 7, RUNTIME in h,
                h.strip("#* :").lower() != name.lower(), len(h), h))))
    return found


def _heads_text(found: list[tuple[str, str]]) -> str:
    """The headings the code writes, quoted as written, each with the section it stands
    for (a heading with a run-time part is one per item, the criteria as a rule)."""
    return ", ".join(f'"{h.replace(RUNTIME, "{…}")}" ('
                     + ("one per item: " if RUNTIME in h else "") + f"{name})"
                     for name, h in found)


def _serializer(repo: Path, paths: list[str], nodes: _Functions) -> Serializer | None:
    """The function that builds the report's Markdown and returns it (the most sections,
    at least two; one that returns a dict hands the text to the state, no serializer), with
    where its text goes (`report_text`)."""
    best: tuple[Key, list[tuple[str, str]], set[str]] | None = None
    for path in paths:
        if not HEADED.search(source_text(str(repo / path))):
            continue
        for key in nodes.keys(path):
            node = nodes.get(key)
            if key[1] == "<module>" or node is None or not _returns_text(node):
                continue
            heads = nodes.headings([key])
            found = section_heads(heads)
            if len(found) >= 2 and (best is None or len(found) > len(best[1])):
                best = (key, found, heads)
    if best is None:
        return None
    (path, qual), found, heads = best
    node = nodes.get((path, qual))
    line = getattr(node, "lineno", 1)
    return Serializer(path, qual, int(line), found, any(DISSENT.search(h) for h in heads),
                      text_uses(repo, paths, qual.rsplit(".", 1)[-1]))


def _returns_text(node: ast.AST) -> bool:
    """The function returns a value that is no dict, list or constant (the text it built)."""
    returns = [n.value for n in own_nodes(getattr(node, "body", []))
               if isinstance(n, ast.Return) and n.value is not None]
    return bool(returns) and not any(isinstance(v, ast.Dict | ast.List | ast.Tuple |
                                                ast.Constant) for v in returns)


class Serializer(NamedTuple):
    """A function that builds the report's Markdown text and returns it, and where its text
    goes."""

    path: str
    qual: str
    line: int
    sections: list[tuple[str, str]]
    dissent: bool
    uses: list[Use]


def _finding(repo: Path, marked: list[tuple[Write, set[Key]]], idle: list[Write],
             heads: set[str], templates: list[str], serializer: Serializer | None) -> Finding:
    found = section_heads(heads) if marked else []
    sections = [name for name, _h in found]
    dissent = any(DISSENT.search(h) for h in heads)
    written = [w for w, _ in marked]
    quoted = [line_at(repo, w.path, w.line) for w in written[:4]]
    where = ", ".join(f"{w.path}:{w.line}" + (f" ({w.targets[0]})" if w.targets[0] != FIELD
                                               else "") for w in written[:3])
    goal = GOAL
    if written:
        reason = (f"{where} write{'s' if len(written) == 1 else ''} a Markdown file; the code "
                  "around it writes " + (f"the headings {_heads_text(found)}" if found else
                                         "none of the sections' headings")
                  + (" (with dissent)" if dissent else "")
                  + (f", from {', '.join(templates[:2])}" if templates else "")
                  + (f"; no heading for {', '.join(n for n, _ in SECTIONS if n not in sections)}"
                     if 0 < len(sections) < len(SECTIONS) else "") + ".")
    elif idle:
        reason = (f"{idle[0].path}:{idle[0].line} writes a file in {idle[0].func}, which no "
                  "code calls; nothing else writes the output to a Markdown file.")
    else:
        reason = "No code writes the output to a Markdown file (printed or returned only)."
    if not written and serializer is not None:
        goal, reason, quoted = _serialized(repo, serializer, reason)
    return Finding(facet=FACET, goal=goal, found=bool(written) and len(sections) >= 2,
                   pattern="success",
                   location=f"{written[0].path}:{written[0].line}" if written else
                   f"{serializer.path}:{serializer.line}" if serializer else ".",
                   content="\n".join(quoted) or None, rationale=reason, confidence=0.6,
                   data={"writes": [f"{w.path}:{w.line}" for w in written[:10]],
                         "sections": sections, "dissent": dissent, "templates": templates[:5],
                         "idle": [f"{w.path}:{w.line}" for w in idle[:10]],
                         "serializer": f"{serializer.path}:{serializer.line}"
                         if serializer and not written else None})


def _serialized(repo: Path, serializer: Serializer, reason: str) -> tuple[str, str, list[str]]:
    """Goal, rationale and quoted lines when no file is written but a function builds the
    report's Markdown: the sections exist in its text, only the file is missing; where the
    text goes is said."""
    ser = serializer
    calls = [u for u in ser.uses if u.how == CALLED]
    uses = [u for u in ser.uses if u.how != CALLED]
    said = "; ".join(f"{u.how} at {u.path}:{u.line}" for u in uses[:5])
    gone = (f"its text is {said}" if uses else
            "its text is not handed on where it is called (" + ", ".join(
                f"{u.path}:{u.line}" for u in calls[:3]) + ")" if calls else
            "nothing in the repository calls it")
    reason = (f"{reason.split(' (', 1)[0].rstrip('.')} on disk. {ser.path}:{ser.line} "
              f"{ser.qual} builds the report as Markdown with the headings "
              f"{_heads_text(ser.sections)}" + (" (with dissent)" if ser.dissent else "")
              + f" and returns it; {gone}.")
    quoted = [line_at(repo, ser.path, ser.line),
              *(line_at(repo, u.path, u.line) for u in (uses or calls)[:4])]
    return ("The verdict's Markdown text, whose sections the code builds, is written to a "
            "file"), reason, quoted
