"""``llm.unhandled_errors``: a judge's schema-bound model call that nothing guards.

A runnable bound with ``with_structured_output(Opinion)`` raises when the model's reply does
not fit the schema (pydantic's ValidationError, LangChain's OutputParserException: both
ValueErrors), and so does a failed request. With no ``try`` around the call whose handler
catches such an error (`retries.catches_malformed`: a ValueError or a broader class, or an
error named for parsing or validation), in its function or in a caller on the way up to the
graph node (resolved calls, a few levels, or a reference by name in the same file), no
``.with_retry(...)`` or ``.with_fallbacks(...)`` in the function that binds or invokes it
and no node RetryPolicy that retries a malformed reply (`node_retry`), the error leaves the
judge node and ends the graph's run: one malformed reply loses every opinion.

The calls are those `answers` follows to an opinion schema's binding (`opinion_invokes`), in
code the graph runs when that is known. The fact only sets a ceiling (`judging.extras
.CEILING_FAILURES`): the missing retry is weighed by ``llm.retry`` already.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from automaton_auditor.forensics.code.answers import (
    Answers,
    Fn,
    functions_in,
    opinion_invokes,
)
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, class_names, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.facts import calls_of
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.prompt_values import Program
from automaton_auditor.forensics.code.retries import catches_malformed
from automaton_auditor.forensics.code.source import (
    function_source,
    line_at,
    parse_file,
    statement_at,
)
from automaton_auditor.forensics.code.state_schema import typed_classes
from automaton_auditor.forensics.code.structured_output import library_bindings
from automaton_auditor.state import Finding

FACET = "llm.unhandled_errors"
GOAL = ("A judge's schema-bound model call has no error handling: a malformed reply raises "
        "out of the judge node and ends the run")
MAX_UP = 4  # callers followed up from the function that invokes the model
WRAPPED = re.compile(r"\.with_(?:retry|fallbacks)\s*\(")
MAX_QUOTED = 6
SOURCE_LIMIT = 50_000  # characters of the invoking function read for a wrapper


def _caught(fn: ast.AST, line: int) -> int | None:
    """The line of a ``try`` of `fn`'s own body whose body holds `line` and one of whose
    handlers catches a malformed reply; None when there is none."""
    for node in own_nodes(getattr(fn, "body", [])):
        if isinstance(node, ast.Try | ast.TryStar) and node.body and \
                node.body[0].lineno <= line <= (node.body[-1].end_lineno or 0) and any(
                    catches_malformed(class_names(h.type) if h.type else None)
                    for h in node.handlers):
            return node.lineno
    return None


def _function(repo: Path, key: Key) -> ast.AST | None:
    tree = parse_file(str(repo / key[0]))
    return next((n for q, n in function_defs(tree) if q == key[1]), None) if tree else None


def _named_in_try(repo: Path, key: Key) -> str | None:
    """``path:line`` of a guarding ``try`` around a reference to function `key` by its name
    in another function of its file: a closure handed to a runner (``await
    controller.run(llm_call)``) is called where the call graph does not follow. A nested
    function's name is read in the function that defines it only (another may define its
    own of that name)."""
    tree = parse_file(str(repo / key[0]))
    outer, _, name = key[1].rpartition(".")
    nested = any(q == outer for q, _f in function_defs(tree)) if tree and outer else False
    for qual, fn in function_defs(tree) if tree else []:
        if qual == key[1] or (nested and qual != outer):
            continue
        for node in own_nodes(fn.body):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                caught = _caught(fn, node.lineno)
                if caught is not None:
                    return f"{key[0]}:{caught}"
    return None


def _guard(repo: Path, graph: CallGraph, key: Key, line: int,
           seen: frozenset[Key]) -> str | None:
    """``path:line`` of a ``try`` that catches an error raised at `line` of function `key`:
    in the function, else around a resolved call of it or a reference to it by name in its
    file, a few callers up; None when none."""
    fn = _function(repo, key)
    if fn is None:
        return f"{key[0]}:{line}"  # not read: not charged
    caught = _caught(fn, line)
    if caught is not None:
        return f"{key[0]}:{caught}"
    named = _named_in_try(repo, key)
    if named:
        return named
    if len(seen) > MAX_UP:
        return None
    for caller, index in graph.callers(key):
        if caller not in seen:
            found = _guard(repo, graph, caller, int(graph.sites(caller)[index]["line"]),
                           seen | {caller})
            if found:
                return found
    return None


def _calls(facts: dict[str, JSON], repo: Path,
           scope: Scope | None) -> list[tuple[str, str, Fn, ast.Call, str]]:
    """(path, function, its node, the invoke, its binding's ``path:line``) of every call of
    a runnable bound to an opinion schema by a model library (a stand-in class's own
    ``with_structured_output`` is none), outside ``except`` handlers (a call there is the
    handling: the try again after a failure)."""
    bound = {f"{p}:{c['line']}" for p, c in library_bindings(facts, calls_of(facts,
                                                                            "structured"))}
    classes = typed_classes(facts)
    models = {n for n, (_p, _c, root) in classes.items() if root == "BaseModel"}
    parsed = sorted(p for p, f in facts.items() if "skipped" not in f and "error" not in f)
    answers = Answers(Program(repo, parsed), models)
    found = []
    for path in parsed if models else []:
        quals = {i["line"]: q for q, i in (facts[path].get("functions") or {}).items()}
        for line, fn in functions_in(answers, path):
            qual = quals.get(line, "?")
            if scope is not None and not scope.runs(path, qual):
                continue
            handled = {id(n) for h in own_nodes(fn.body) if isinstance(h, ast.ExceptHandler)
                       for n in ast.walk(h)}
            calls = [n for n in own_nodes(fn.body) if isinstance(n, ast.Call)
                     and id(n) not in handled]
            found += [(path, qual, fn, call, kind[2])
                      for call, kind in opinion_invokes(answers, path, fn, calls)
                      if kind[2] in bound]
    return found


def _wrapped(repo: Path, path: str, fn: Fn, binding: str) -> bool:
    """A ``with_retry``/``with_fallbacks`` in the invoking function or the binding's line."""
    where, _, line = binding.rpartition(":")
    text = function_source(repo, path, fn.lineno, fn.end_lineno or fn.lineno, SOURCE_LIMIT) \
        + line_at(repo, where, int(line or 0), 400)
    return bool(WRAPPED.search(text))


def unhandled_finding(facts: dict[str, JSON], repo: Path, graph: CallGraph,
                      scope: Scope | None = None,
                      policies: list[JSON] | None = None) -> Finding:
    """``llm.unhandled_errors`` (see the module docstring); `policies`: the graph's node
    RetryPolicies (`node_retry.node_policies`): one that retries a malformed reply guards
    the judges' calls."""
    open_calls: list[tuple[str, ast.Call]] = []
    guards = [f"RetryPolicy on node {p['node']}" for p in policies or [] if p["malformed"]]
    for path, qual, fn, call, binding in [] if guards else _calls(facts, repo, scope):
        guard = "with_retry/with_fallbacks" if _wrapped(repo, path, fn, binding) else \
            _guard(repo, graph, (path, qual), call.lineno, frozenset({(path, qual)}))
        if guard:
            guards.append(guard)
        else:
            open_calls.append((path, call))
    where = ", ".join(f"{p}:{c.lineno}" for p, c in open_calls[:4])
    text = (f"No try catches an error of the schema-bound opinion call"
            f"{'s' * (len(open_calls) > 1)}"
            f" at {where}, in {'its function' if len(open_calls) == 1 else 'their functions'}"
            " or a caller up to the graph node, and no with_retry/with_fallbacks wraps the "
            "model: a reply that does not fit the schema raises out of the node and ends the "
            "run." if open_calls else
            f"Every schema-bound opinion call is guarded "
            f"({', '.join(sorted(set(guards))[:4])})." if guards else
            "No schema-bound opinion call found.")
    return Finding(
        facet=FACET, goal=GOAL, found=bool(open_calls), pattern="failure",
        location=f"{open_calls[0][0]}:{open_calls[0][1].lineno}" if open_calls else ".",
        content="\n".join(statement_at(repo, p, c.lineno) for p, c in
                          open_calls[:MAX_QUOTED]) or None,
        rationale=text, confidence=0.6,
        data={"open": [f"{p}:{c.lineno}" for p, c in open_calls[:20]],
              "guards": sorted(set(guards))[:20]})
