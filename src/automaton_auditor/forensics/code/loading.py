"""Modules of the repository that cannot be imported, and the criteria whose credited code
lives only in them. Read from the code, never run.

A module cannot be imported (`unimportable`) when:

- its source does not parse (a syntax error: the walk's ``error`` fact);
- a statement that runs when it loads fails: ``from X import name`` where the repository
  module ``X`` binds no ``name``, or a relative import of a module the repository does not
  hold (`imports.broken_imports`), or a read of a name never defined (the analyser's F821);
- it imports, when it loads, a repository module that cannot be imported (transitively);
- an import in the body of a ``try`` fails (as above) and the handler that catches it ends
  the import: it raises, calls ``sys.exit``, or its own fallback import fails in turn and
  its handler does (``try: from .graph import app / except ImportError: sys.exit(1)``).

What may not run on import is left out: function bodies, the branches of an ``if`` (``if
__name__ == "__main__":``, ``if TYPE_CHECKING:``, a platform or version test), the body of a
``try`` whose handler catches the error (ImportError, NameError or a base class) and the
handlers (unless that body's import fails, above), annotations under ``from __future__
import annotations``.

`load_findings`: for the criteria judged from functions (``judges``: persona prompts,
``justice``: synthesis rules, ``llm``: structured output, ``safety``: the tools), the
Python files the found success facts of that family cite. ``<family>.cannot_load`` is found
when every one of them cannot be imported: the code the criterion is credited for never
runs. It quotes each module's failing line. When only some can't, it says which and is
not found (no charge).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from automaton_auditor.forensics.code.analysers import Analysis, diagnostic_name
from automaton_auditor.forensics.code.common import EXIT_CALLS, JSON, caught_names, dotted
from automaton_auditor.forensics.code.imports import (
    ImportChecks,
    loaded_files,
    module_files,
    top_statements,
)
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.state import Finding

GUARDS = {"ImportError", "ModuleNotFoundError", "NameError", "Exception", "BaseException"}
FAMILIES = {"judges": "persona prompts", "justice": "synthesis rules",
            "llm": "structured output", "safety": "tools"}
SYNTAX = re.compile(r"syntax error line (\d+)")
MAX_QUOTED = 10
# the data keys whose values cite places in the code (``path:line`` or ``path:function``)
CITING = ("locations", "functions", "lines", "prompt_words")


Imports = list[ast.Import | ast.ImportFrom]


@dataclass
class Fallback:
    """A module-level ``try`` whose handler catches an import failure: `tries`, the imports
    of its body; `handler`, what runs when one of them fails (the first catching handler)."""

    tries: Imports
    handler: LoadWalk


def _exit_line(body: list[ast.stmt]) -> int | None:
    """The line of a statement of `body` (not nested) that ends the import: ``raise``, or
    a call that ends the process (`common.EXIT_CALLS`)."""
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            return stmt.lineno
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and (dotted(stmt.value.func) or "").rsplit(".", 1)[-1] in EXIT_CALLS:
            return stmt.lineno
    return None


def _catches(handler: ast.ExceptHandler) -> bool:
    names = caught_names(handler)
    return names is None or bool(GUARDS.intersection(names))


class LoadWalk:
    """The import statements and the name reads (line, name) that run when a module loads."""

    def __init__(self, tree: ast.Module, lazy: bool | None = None) -> None:
        self.lazy = any(isinstance(s, ast.ImportFrom) and s.module == "__future__" and any(
            a.name == "annotations" for a in s.names) for s in tree.body) \
            if lazy is None else lazy
        self.imports: Imports = []
        self.reads: set[tuple[int, str]] = set()
        self.fallbacks: list[Fallback] = []
        self.exits = _exit_line(tree.body)  # read for a handler's body
        for stmt in tree.body:
            self._stmt(stmt)

    def maybe(self) -> Imports:
        """Every import that may run on load: its own, and those of its tries' bodies and
        handlers (followed, so that whether they fail is known)."""
        return [*self.imports, *(i for fb in self.fallbacks
                                 for i in [*fb.tries, *fb.handler.maybe()])]

    def _stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            self.imports.append(stmt)
        elif isinstance(stmt, ast.If):  # either branch may be the one that never runs
            self._exprs([stmt.test])
        elif isinstance(stmt, ast.Try | ast.TryStar) and any(map(_catches, stmt.handlers)):
            self._body([*stmt.orelse, *stmt.finalbody])  # a failure there is handled
            tries = [i for i in top_statements(stmt.body)
                     if isinstance(i, ast.Import | ast.ImportFrom)]
            handler = next(h for h in stmt.handlers if _catches(h))
            if tries:
                body = ast.Module(body=handler.body, type_ignores=[])
                self.fallbacks.append(Fallback(tries, LoadWalk(body, self.lazy)))
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            args = stmt.args
            self._exprs([*stmt.decorator_list, *args.defaults, *args.kw_defaults])
            if not self.lazy:  # annotations are evaluated when the def runs
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs,
                         *([args.vararg] if args.vararg else []),
                         *([args.kwarg] if args.kwarg else [])]
                self._exprs([stmt.returns, *(a.annotation for a in every)])
        elif isinstance(stmt, ast.ClassDef):
            self._exprs([*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)])
            self._body(stmt.body)
        elif isinstance(stmt, ast.AnnAssign):
            self._exprs([stmt.target, stmt.value, None if self.lazy else stmt.annotation])
        else:
            for value in ast.iter_fields(stmt):
                items = value[1] if isinstance(value[1], list) else [value[1]]
                for item in items:
                    if isinstance(item, ast.stmt):
                        self._stmt(item)
                    elif isinstance(item, ast.AST) and not isinstance(item, ast.ExceptHandler):
                        self._exprs([item])  # a handler runs only when its try fails

    def _body(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self._stmt(stmt)

    def _exprs(self, nodes: list[ast.expr | ast.AST | None]) -> None:
        todo = [n for n in nodes if n is not None]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.stmt):  # the body of a ``match`` case
                self._stmt(node)
                continue
            if isinstance(node, ast.Lambda):  # its body runs when it is called
                todo += [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.reads.add((node.lineno, node.id))
            todo.extend(ast.iter_child_nodes(node))


def _closure(repo: Path, files: list[str], roots: set[str]
             ) -> tuple[dict[str, LoadWalk], dict[str, list[tuple[int, str]]]]:
    """What runs on import in `roots` and the repository modules they load, transitively;
    and each one's imports of repository modules (line, file)."""
    modules = module_files(files)
    walks: dict[str, LoadWalk] = {}
    edges: dict[str, list[tuple[int, str]]] = {}
    todo = sorted(roots & set(files))
    while todo:
        path = todo.pop()
        if path in edges:
            continue
        tree = parse_file(str(repo / path))
        try:
            walk = LoadWalk(tree) if tree is not None else None
        except RecursionError:
            walk = None  # hostile nesting: nothing is claimed about this module
        edges[path] = [] if walk is None else sorted(
            {(s.lineno, t) for s in walk.imports for t in loaded_files(s, path, modules)
             if t != path})
        if walk is not None:
            walks[path] = walk
            todo += [t for s in walk.maybe() for t in loaded_files(s, path, modules)
                     if t not in edges]
    return walks, edges


def unimportable(repo: Path, facts: dict[str, JSON], analysis: Analysis, roots: set[str],
                 checks: ImportChecks | None = None) -> dict[str, JSON]:
    """Path -> why the module cannot be imported, for `roots` and the repository modules
    they import: the failing ``line`` of that module, a ``why``, and ``via`` (the
    repository module whose failure it imports) when inherited."""
    files = sorted(p for p in facts if p.endswith(".py"))
    walks, edges = _closure(repo, files, roots)
    failed: dict[str, JSON] = {}
    for path in sorted(edges):
        match = SYNTAX.match(str(facts[path].get("error") or ""))
        if match:
            failed[path] = {"line": int(match.group(1)), "why": facts[path]["error"]}
    runs = {p: {s.lineno for s in w.imports} for p, w in walks.items()}
    broken = (checks or ImportChecks(repo, files)).broken(walks)
    own = [(d["path"], d["line"], d["message"]) for d in broken
           if d["line"] in runs[d["path"]]]
    own += [(d["path"], d["line"], d["message"]) for d in analysis.diagnostics
            if d["code"] == "F821" and d["path"] in walks
            and (d["line"], diagnostic_name(d)) in walks[d["path"]].reads]
    for path, line, why in sorted(own):
        failed.setdefault(path, {"line": line, "why": why})
    at = {(d["path"], d["line"]): str(d["message"]) for d in broken}
    modules = module_files(files)
    grown = True
    while grown:  # a module importing one that cannot be imported cannot be either
        grown = False
        for path in sorted(edges):
            hit = next(((line, t) for line, t in edges[path] if t in failed), None)
            if path in failed:
                continue
            if hit is not None:
                failed[path] = {"line": hit[0], "why": f"it imports {hit[1]}, which cannot "
                                "be imported", "via": hit[1]}
            elif path in walks and (handled := _handled(walks[path], path, failed, at, modules)):
                failed[path] = handled
            else:
                continue
            grown = True
    return dict(sorted(failed.items()))


def _failing(stmts: Imports, path: str, failed: dict[str, JSON],
             at: dict[tuple[str, int], str], modules: dict[str, str]) -> JSON | None:
    """The first of `stmts` (imports of `path`) that fails: a broken import (`at`, by
    line) or one loading a module in `failed`."""
    for stmt in stmts:
        if (path, stmt.lineno) in at:
            return {"line": stmt.lineno, "why": at[path, stmt.lineno]}
        hit = next((t for t in loaded_files(stmt, path, modules) if t in failed), None)
        if hit is not None and hit != path:
            return {"line": stmt.lineno, "why": f"it imports {hit}, which cannot be imported",
                    "via": hit}
    return None


def _handled(walk: LoadWalk, path: str, failed: dict[str, JSON],
             at: dict[tuple[str, int], str], modules: dict[str, str]) -> JSON | None:
    """A ``try`` of `walk` whose body's import fails while its handler ends the import
    too: it raises or exits, or its own import (or fallback, in turn) fails."""
    for fallback in walk.fallbacks:
        first = _failing(fallback.tries, path, failed, at, modules)
        if first is None:
            continue
        handler = fallback.handler
        then = _failing(handler.imports, path, failed, at, modules) or \
            _handled(handler, path, failed, at, modules)
        if handler.exits is not None:
            tail = f"the handler that catches it ends the import (line {handler.exits})"
        elif then is not None:
            tail = f"the handler's fallback fails too (line {then['line']}: {then['why']})"
        else:
            continue
        return {**first, "why": f"{first['why']}; {tail}"}
    return None


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value \
        if isinstance(value, list) else []
    return [s for item in items for s in _strings(item)]


def cited_refs(finding: Finding) -> list[str]:
    """The places a fact cites (``path:line`` or ``path:function``): its location and the
    places its data lists (the persona prompts' lines, model calls and entry functions)."""
    return [finding.location, *(s for key in CITING for s in _strings(finding.data.get(key)))]


def _cited(finding: Finding) -> set[str]:
    """The Python files a fact cites (`cited_refs`)."""
    return {p for p in (r.split(":", 1)[0] for r in cited_refs(finding)) if p.endswith(".py")}


def _chain(repo: Path, path: str, failed: dict[str, JSON]) -> str:
    """The module's failing line, and the import chain down to the first failure."""
    parts, seen = [], set()
    while path in failed and path not in seen:
        seen.add(path)
        why = failed[path]
        parts.append(f"{line_at(repo, path, why['line'])}  [{why['why']}]")
        path = str(why.get("via") or "")
    return "\n  ".join(parts)


def load_findings(repo: Path, facts: dict[str, JSON], analysis: Analysis,
                  findings: list[Finding], checks: ImportChecks | None = None
                  ) -> list[Finding]:
    """``<family>.cannot_load`` for each family whose credited facts cite a Python file that
    cannot be imported (see the module docstring)."""
    cited = {family: sorted(set().union(*(
        _cited(f) for f in findings if f.found and f.pattern == "success"
        and f.facet.startswith(family + ".")))) for family in FAMILIES}
    failed = unimportable(repo, facts, analysis, set().union(*cited.values()), checks)
    out = []
    for family, what in FAMILIES.items():
        broken = [p for p in cited[family] if p in failed]
        if not broken:
            continue
        every = len(broken) == len(cited[family])
        fine = sorted(set(cited[family]) - set(broken))
        out.append(Finding(
            facet=f"{family}.cannot_load",
            goal=f"The {what} live in modules that cannot be imported",
            found=every, pattern="failure", confidence=0.85,
            location=f"{broken[0]}:{failed[broken[0]]['line']}",
            content="\n".join(_chain(repo, p, failed) for p in broken[:MAX_QUOTED]),
            rationale=(f"Every module the facts crediting the {what} cite ({', '.join(broken)})"
                       " fails when it is imported (quoted): that code never runs."
                       if every else
                       f"{len(broken)} of the {len(cited[family])} modules the facts crediting "
                       f"the {what} cite fail when imported ({', '.join(broken)}); "
                       f"{', '.join(fine)} can be imported: not charged."),
            data={"modules": broken, "importable": fine,
                  "lines": [f"{p}:{failed[p]['line']}" for p in broken]}))
    return out
