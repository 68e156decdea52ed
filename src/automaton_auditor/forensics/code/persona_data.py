"""Persona instructions a judge reads from a repository data file: ``dim["judicial_logic"]
.get(self.persona)`` over a rubric.json whose criteria each hold one text per persona.

Three things must hold. The file (JSON or YAML) is one the code names: its path or file name
is a string literal of a Python file. Under some key K it holds a mapping whose keys name two
or more personas, each to a text of its own (mappings where two personas share one text are
left out). And the code reads that key and then indexes what it got with a value it does not
fix (``X["K"][persona]``, ``X["K"].get(persona)``): the judge's persona. Prompts the
judges' model calls receive could not be followed here (the rubric is read at run time), so
these entries stand for each persona's own text. One read gives one entry: what a persona's
model call receives of its own is at most its longest entry (``per_read``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.common import JSON, parse_module
from automaton_auditor.forensics.code.data_files import (
    DATA,
    MAX_DEPTH,
    line_of,
    load_data,
    read_text,
)
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.prompt_eval import TEMPLATES, Evaluator
from automaton_auditor.forensics.code.prompt_lines import WORD, persona_named
from automaton_auditor.forensics.code.prompt_values import Fn, Frame, Program, Txt
from automaton_auditor.forensics.code.walk import MAX_FILE_BYTES

MAX_DATA_FILES = 50
ASIDE = re.compile(r"(^|/)(docs?|reports?|audit|tests?|node_modules|\.[^/]+)/", re.I)
PERSONA_TEXT = re.compile(r"prosecut|defen[cs]e|tech[\s_-]?lead", re.I)


def _mappings(data: Any, depth: int = 0) -> list[tuple[str, dict[str, str]]]:
    """Every (key, {persona: text}) in the data: a mapping under `key` whose keys name two or
    more personas, each to a different text."""
    if depth > MAX_DEPTH:
        return []
    found: list[tuple[str, dict[str, str]]] = []
    values = list(data.values()) if isinstance(data, dict) else \
        data if isinstance(data, list) else []
    for key, value in (data.items() if isinstance(data, dict) else []):
        texts = {persona_named(str(k)): v.strip() for k, v in value.items()
                 if isinstance(v, str) and v.strip()} if isinstance(value, dict) else {}
        texts.pop(None, None)
        if len(texts) >= 2 and len({t.lower() for t in texts.values()}) == len(texts):
            found.append((str(key), {str(p): t for p, t in texts.items()}))
    for value in values:
        found += _mappings(value, depth + 1)
    return found


def _qual(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """Each function with its qualified name (``Class.method``), and the module's own code."""
    out: list[tuple[str, ast.AST]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((stmt.name, stmt))
        elif isinstance(stmt, ast.ClassDef):
            out += [(f"{stmt.name}.{m.name}", m) for m in stmt.body
                    if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
        else:
            out.append(("", stmt))
    return out


def _keyed_read(node: ast.AST, keys: set[str]) -> str | None:
    """K for ``X["K"][v]`` or ``X["K"].get(v)`` (also ``X.get("K")``), v not a literal."""
    inner: ast.AST | None = None
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
        inner = node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and node.args and not isinstance(node.args[0], ast.Constant):
        inner = node.func.value
    key: ast.AST | None = inner.slice if isinstance(inner, ast.Subscript) else (
        inner.args[0] if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
        and inner.func.attr == "get" and inner.args else None)
    if isinstance(key, ast.Constant) and key.value in keys:
        return str(key.value)
    return None


class _Traced(Evaluator):
    """Reads one function with the persona-keyed read standing for a marked text, and notes
    where that text first reaches a prompt template, a chat message or a model call."""

    MARK = "\x00persona-entry\x00"

    def __init__(self, program: Program, path: str, read: ast.AST) -> None:
        super().__init__(program)
        self.where = (path, *(getattr(read, a, 0) for a in
                              ("lineno", "col_offset", "end_lineno", "end_col_offset")))
        self.part = (self.MARK, f"{path}:{getattr(read, 'lineno', 1)}")
        self.reached = ""

    def value(self, node: ast.expr, env: dict[str, Any], frame: Frame) -> Any:
        """The marked text for the read, else what `Evaluator` reads."""
        if (frame.path, *(getattr(node, a, 0) for a in ("lineno", "col_offset", "end_lineno",
                                                         "end_col_offset"))) == self.where:
            return Txt((self.part,))
        return super().value(node, env, frame)

    def call_expr(self, node: ast.Call, env: dict[str, Any], frame: Frame) -> Any:
        """`Evaluator.call_expr`, noting a template or message built with the marked text."""
        out = super().call_expr(node, env, frame)
        tail = node.func.attr if isinstance(node.func, ast.Attribute) else \
            getattr(node.func, "id", "")
        if not self.reached and isinstance(out, Txt) and self.part in out.parts and \
                (tail in TEMPLATES or tail.endswith("Message")):
            self.reached = f"{frame.path}:{node.lineno}"
        return out


def _reaches(program: Program, path: str, qual: str, read: ast.AST) -> str:
    """Where the value the read gives, in the function `qual` (``Class.method``) that makes
    it, reaches a prompt template, a chat message or a model call ("" when it is not seen
    to)."""
    owner, _, name = qual.rpartition(".")
    found = program.lookup(path, owner or name)
    node = found[1] if found else None
    if owner and isinstance(node, ast.ClassDef):
        node = next((m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
                     and m.name == name), None)
    if found is None or not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return ""
    traced = _Traced(program, path, read)
    cls = f"{found[0]}::{owner}" if owner else ""
    inst = traced.instance(cls, [], {}, Frame(path)) if cls else None
    traced.call(Fn(found[0], node, cls), [], {}, Frame(path), inst)
    called = next((call for text, call in traced.inputs if traced.part in text.parts), "")
    return traced.reached or called


def _reads(py: dict[str, str], keys: set[str], scope: Scope | None,
           program: Program) -> dict[str, tuple[str, str]]:
    """Per key: the first place (path:line) code the graph may run reads it by persona, and
    where what it reads reaches a prompt ("" when not seen to)."""
    found: dict[str, tuple[str, str]] = {}
    for path, text in py.items():
        if not any(f'"{k}"' in text or f"'{k}'" in text for k in keys):
            continue
        tree = parse_module(text)
        if tree is None:
            continue
        for qual, node in _qual(tree):
            if scope is not None and not scope.runs(path, qual):
                continue  # a read nothing in the graph runs
            for sub in ast.walk(node):
                key = _keyed_read(sub, keys)
                if key and (key not in found or not found[key][1]):
                    found[key] = (f"{path}:{getattr(sub, 'lineno', 1)}",
                                  _reaches(program, path, qual, sub) if qual else "")
    return found


def _named(rel: str, py: dict[str, str]) -> bool:
    """The code names the file: a string literal ending with its path or file name."""
    name = rel.rsplit("/", 1)[-1]
    literal = re.compile(r"[\"'](?:[^\"'\n]*/)?" + re.escape(name) + r"[\"']")
    return any(literal.search(text) for text in py.values())


def data_candidates(repo: Path, files: list[str], python: list[str],
                    scope: Scope | None = None) -> list[JSON]:
    """Per persona, the entries the code reads by persona from a data file it names (see the
    module docstring): ``loc``, ``name``, ``persona``, ``text`` (the entries), ``per_read``
    (words of the longest entry), ``quote`` (each entry with its line) and ``read``."""
    data: list[tuple[str, str, list[tuple[str, dict[str, str]]]]] = []
    for rel in sorted(f for f in files if f.lower().endswith(DATA) and not ASIDE.search(f)):
        if len(data) >= MAX_DATA_FILES:
            break
        raw = read_text(repo, rel)
        if raw is None or len({m.group(0).lower()[:4] for m in PERSONA_TEXT.finditer(raw)}) < 2:
            continue  # names fewer than two personas: no mapping by persona
        found = _mappings(load_data(rel, raw))
        if found:
            data.append((rel, raw, found))
    if not data:
        return []
    py = {p: t for p in sorted(python) if (t := read_text(repo, p, MAX_FILE_BYTES)) is not None}
    reads = _reads(py, {k for _, _, found in data for k, _ in found}, scope,
                   Program(repo, sorted(py)))
    out: list[JSON] = []
    for rel, raw, found in data:
        if _named(rel, py):
            out += _entries(rel, raw, [(k, m) for k, m in found if k in reads], reads)
    return out


def _entries(rel: str, raw: str, found: list[tuple[str, dict[str, str]]],
             reads: dict[str, tuple[str, str]]) -> list[JSON]:
    """One candidate per (key, persona): its entries in file order, with their lines."""
    groups: dict[tuple[str, str], list[tuple[int, str]]] = {}
    cursor = 0
    for key, mapping in found:
        for persona, text in mapping.items():
            line, cursor = line_of(raw, text, rel.endswith(".json"), cursor)
            groups.setdefault((key, persona), []).append((line, text))
    return [{"loc": f"{rel}:{entries[0][0]}", "name": f"{rel}:{key}[{persona}]",
             "persona": persona, "text": "\n".join(t for _, t in entries),
             "per_read": max(len(WORD.findall(t)) for _, t in entries),
             "read": reads[key][0], "reaches": reads[key][1],
             "quote": f"read by persona at {reads[key][0]}" + (
                 f", reaching the prompt at {reads[key][1]}" if reads[key][1] else "") + "\n" +
             "\n".join(
                 f"{rel}:{line}: {text[:160]}" for line, text in entries[:4])}
            for (key, persona), entries in groups.items()]
