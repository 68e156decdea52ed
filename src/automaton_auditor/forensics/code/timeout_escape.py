"""``safety.timeout_uncaught``: a clone bounded by its process call's own ``timeout=`` whose
``subprocess.TimeoutExpired`` no handler catches, so a slow clone stops the graph run.

``subprocess.run(["git", "clone", ...], timeout=60, check=True)`` raises ``TimeoutExpired``
when the limit is reached. It is no ``CalledProcessError`` (both derive from
``SubprocessError``), so ``except subprocess.CalledProcessError`` lets it through. It is
caught by a ``try`` around the call whose handler names ``TimeoutExpired``,
``SubprocessError``, ``Exception`` or ``BaseException`` (alone or in a tuple), or is a bare
``except:``; in the clone's function, else around the call site in each resolved caller, a
few levels up (test code is no caller: it is not the program's run). A call through a
wrapper that runs the process itself (``_run(["git", "clone", ...])`` ->
``subprocess.run(cmd, timeout=60)``) is read in the wrapper first, then from the clone site.

The escape is claimed when some path up the callers ends, uncaught, in a function the main
graph runs as a node (named directly, not built by a wrapper call that may catch): that node
fails on a slow clone, whatever other callers do. A path that cannot be followed (no resolved
caller, a decorated function, which may catch what it wraps, too many levels) leads to no
node; when no path does, it is not established; a ``@contextmanager`` generator is followed to the
``with`` that enters it. Not covered: GitPython's ``kill_after_timeout`` (the
killed git exits with an error, raised as ``GitCommandError``, which its handlers catch),
git's low-speed limit (git fails, no timeout is raised) and ``asyncio.wait_for`` (its
``TimeoutError`` is raised where it is awaited).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import (
    JSON,
    TEST_PATH,
    caught_names,
    dotted,
    function_defs,
)
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.facts import call_finding
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.state import Finding
from automaton_auditor.text import clip

CATCHES = {"TimeoutExpired", "SubprocessError", "Exception", "BaseException"}
TIMED = {"run", "call", "check_call", "check_output"}  # subprocess calls taking timeout=
# decorators that wrap nothing in a try; a context manager's generator raises out of the
# ``with`` that enters it, at its caller's call site
HARMLESS = {"staticmethod", "classmethod", "contextmanager", "contextlib.contextmanager",
            "asynccontextmanager", "contextlib.asynccontextmanager"}
MAX_LEVELS = 4
WRAPPED = re.compile(r"-> (subprocess\.\w+) \((.+):(\d+)\)$")  # `sandbox.wrapper_clones`


class Escape(NamedTuple):
    """A clone's ``TimeoutExpired`` that reaches graph nodes uncaught."""

    path: str
    line: int  # the clone
    limit: str  # "60 s", or the ``timeout=`` expression
    passed: list[tuple[str, int, str]]  # handlers on the way that do not catch it
    nodes: list[str]  # where it leaves the code: the node functions (``name (path:line)``)


def run_nodes(graph: CallGraph, main: Topology | None) -> frozenset[Key]:
    """The functions LangGraph's main graph runs as nodes, named directly (a node built by a
    call, ``add_node("n", guarded(fn))``, may run `fn` inside a ``try``: left out)."""
    if main is None or main.custom is not None:
        return frozenset()
    return frozenset(k for info in main.nodes.values() if not info["op"].get("wraps")
                     and (k := graph.node_function(info)) is not None)


def timeout_finding(clones: list[tuple[str, JSON]], graph: CallGraph, repo: Path | None,
                    nodes: frozenset[Key]) -> Finding:
    """``safety.timeout_uncaught``: the clones whose time limit raises out of a graph node
    (a failure signal of modest weight: a crash on a slow clone, not a sandbox escape); the
    others with a ``timeout=`` are listed with where it is caught or why it is not followed."""
    read = [(p, c, _escape(graph, repo, nodes, p, c)) for p, c in clones] if repo else []
    found = [e for _p, _c, e in read if isinstance(e, Escape)]
    others = [f"{p}:{c['line']} {e}" for p, c, e in read if isinstance(e, str) and e]
    items = [(p, c) for p, c, e in read if isinstance(e, Escape)]
    finding = call_finding(
        "safety.timeout_uncaught", "A clone's time limit raises an exception nothing "
        "catches", bool(found), "failure", items,
        "; ".join(_sentence(e) for e in found[:3]) + "." if found else
        "No clone's subprocess timeout= is shown to raise TimeoutExpired out of a graph "
        "node" + (f": {'; '.join(others[:3])}." if others else " (no such time limit)."),
        confidence=0.6, escapes=[f"{e.path}:{e.line}" for e in found][:20],
        others=others[:20])
    if found:
        quote = [line_at(repo, e.path, e.line) for e in found[:3]]
        quote += [line_at(repo, p, n) for e in found[:3] for p, n, _c in e.passed[:3]]
        finding = finding.model_copy(update={"content": clip("\n".join(quote), 4000)})
    return finding


def _sentence(e: Escape) -> str:
    own = [(f":{n}" if p == e.path else f"{p}:{n}", c) for p, n, c in e.passed]
    handlers = ", with no try around it" if not own else \
        f", the except at {own[0][0]} catches only {own[0][1]}" if len(own) == 1 else \
        f", the excepts at {', '.join(f'{at} ({c})' for at, c in own[:3])} let it through"
    return (f"A clone that reaches its {e.limit} limit raises TimeoutExpired, which no handler "
            f"catches ({e.path}:{e.line}{handlers}); it leaves the graph node function(s) "
            f"{', '.join(e.nodes[:3])}, so the graph run stops")


def _escape(graph: CallGraph, repo: Path, nodes: frozenset[Key], path: str,
            call: JSON) -> Escape | str:
    """The clone's uncaught ``TimeoutExpired`` (see the module), else where it is caught
    or why it is not followed ("" for a clone without a subprocess ``timeout=``)."""
    how, line = str(call.get("how") or ""), int(call["line"])
    key: Key = (path, str(call.get("func") or ""))
    passed: list[tuple[str, int, str]] = []
    wrapped = WRAPPED.search(how)
    if wrapped is not None:  # the time limit is on the wrapper's process call
        name, where, at = wrapped.group(1), wrapped.group(2), int(wrapped.group(3))
        inner = graph.function_at(where, at)
        site = graph.sites(key)[int(call["site"])] if "site" in call and \
            int(call["site"]) < len(graph.sites(key)) else None
        target = graph.resolve(key, site) if site is not None else None
        limit = _limit(repo, where, at, name)
        if limit and (inner is None or target is None or graph.function_key(target) != inner):
            return "not followed: wrappers between the clone and its process call"
        stop = _caught(repo, inner, at, passed) if limit and inner else ""
        if stop:
            return stop
    else:
        limit = _limit(repo, path, line, how)
    if not limit:
        return ""
    ends, stop = _up(graph, repo, nodes, key, line, passed, MAX_LEVELS, frozenset())
    where = [f"{q} ({p}:{(graph.functions.get((p, q)) or {}).get('line', 1)})"
             for p, q in sorted(set(ends))]
    return stop or Escape(path, line, limit, passed, where)


def _limit(repo: Path, path: str, line: int, name: str) -> str:
    """How the ``timeout=`` of the ``subprocess`` call `name` at `line` reads ("60 s"),
    or "" when it has none (or ``None``)."""
    tail = name.rsplit(".", 1)[-1]
    if not name.startswith("subprocess.") or tail not in TIMED:
        return ""
    tree = parse_file(str(repo / path))
    for node in ast.walk(tree) if tree is not None else []:
        if isinstance(node, ast.Call) and node.lineno == line and \
                (dotted(node.func) or "").endswith(tail):
            value = next((k.value for k in node.keywords if k.arg == "timeout"), None)
            if value is None or (isinstance(value, ast.Constant) and value.value is None):
                return ""
            if isinstance(value, ast.Constant) and isinstance(value.value, int | float):
                return f"{value.value} s"
            return f"timeout={ast.unparse(value)}"
    return ""


def _up(graph: CallGraph, repo: Path, nodes: frozenset[Key], key: Key, line: int,
        passed: list[tuple[str, int, str]], levels: int, seen: frozenset[Key]
        ) -> tuple[list[Key], str]:
    """The graph nodes the exception raised at `line` of `key` leaves uncaught, on some
    path up its callers (`passed` gains the handlers that let it through), and "" ; else,
    when no path reaches a node uncaught, where a handler catches it or why a path cannot
    be followed."""
    stop = _caught(repo, key, line, passed)
    if stop or key in nodes:
        return ([] if stop else [key]), stop
    callers = [(c, i) for c, i in graph.callers(key) if not TEST_PATH.search(c[0])]
    if not callers or levels <= 1 or key in seen:
        return [], f"not followed: {'no resolved caller of' if not callers else 'callers of'}" \
            f" {key[1]} ({key[0]})" + (f" beyond {MAX_LEVELS} levels" if callers else "")
    ends: list[Key] = []
    stops: list[str] = []
    for caller, index in callers:
        # one path that leaves it uncaught up to a node is enough: that node fails
        up, stop = _up(graph, repo, nodes, caller, int(graph.sites(caller)[index]["line"]),
                       passed, levels - 1, seen | {key})
        stops += [stop] if stop else []
        ends += up
    return (ends, "") if ends else ([], stops[0] if stops else "")


def _caught(repo: Path, key: Key, line: int, passed: list[tuple[str, int, str]]) -> str:
    """Where a ``try`` of function `key` around `line` catches ``TimeoutExpired`` ("caught
    at path:line"), or why the function is not read (a decorator may catch what it wraps);
    "" when it lets the exception through (`passed` gains the handlers around `line`)."""
    tree = parse_file(str(repo / key[0]))
    func = next((n for q, n in function_defs(tree) if q == key[1]
                 and n.lineno <= line <= (n.end_lineno or 0)), None) if tree else None
    if func is None:
        return f"not followed: {key[1]} ({key[0]}) not read"
    if any((dotted(d) or "") not in HARMLESS for d in func.decorator_list):
        return f"not followed: {key[1]} ({key[0]}:{func.lineno}) is decorated"
    for node in own_nodes(func.body):
        if not isinstance(node, ast.Try | ast.TryStar) or not node.body or not (
                node.body[0].lineno <= line <= (node.body[-1].end_lineno or 0)):
            continue
        for handler in node.handlers:
            names = caught_names(handler)
            if names is None or CATCHES & set(names):
                return f"caught at {key[0]}:{handler.lineno}"
            passed.append((key[0], handler.lineno, ", ".join(names)))
    return ""
