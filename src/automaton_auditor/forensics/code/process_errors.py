"""``safety.subprocess_errors``: whether the code sees its process and git calls fail
(`failures`), including calls made through a helper that returns their result.

``def _run(cmd): return subprocess.run(cmd, check=False, ...)`` checks nothing itself; its
callers do (``result = _run([...]); if result.returncode != 0: raise ...``). A process call
whose function returns its result (``return subprocess.run(...)``, or a name bound to it and
returned) is checked when every resolved call of that function reads the result the way
`failures` reads a process call's (``check=True`` passed on, the exit status tested, an
``except`` that catches the failure), following a caller that returns the helper's result
in turn a few levels up. Unresolved callers are not seen; a helper nothing calls stays
unchecked.
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, function_defs
from automaton_auditor.forensics.code.facts import call_finding
from automaton_auditor.forensics.code.failures import failure_checks
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.state import Finding
from automaton_auditor.text import clip

MAX_LEVELS = 3  # helpers of helpers: ``_git() -> _run() -> subprocess.run``


def through_wrappers(calls: list[tuple[str, JSON]], graph: CallGraph,
                     repo: Path | None) -> list[tuple[str, JSON]]:
    """`calls` (process calls), each unchecked one whose function returns its result marked
    ``checked`` (with ``checked_in``, the caller's file) when all its function's callers
    check it."""
    if repo is None:
        return calls
    out = []
    for path, call in calls:
        seen = None if call.get("checked") else _by_callers(
            graph, repo, (path, str(call.get("func") or "")), int(call["line"]), MAX_LEVELS)
        out.append((path, {**call, "checked": seen[1], "checked_in": seen[0],
                           "wrapper": call["func"]} if seen else call))
    return out


def errors_finding(calls: list[tuple[str, JSON]], repo: Path | None,
                   clones: frozenset[tuple[str, int]] = frozenset()) -> Finding:
    """``safety.subprocess_errors``: how many process and git library calls the code sees
    fail (`failures`: ``check=True``, an ``except`` that catches it, or its exit status
    read), each quoted with the line that shows it; the unchecked calls quoted when they are
    the majority, and those an ``except`` swallows with it. A swallowed call is no check;
    one that does not clone (`clones`: (path, line) of the calls that clone) answers its
    failure with a default (``except CalledProcessError: return []`` around ``git log``)
    and is said, not counted against the rest: the rubric's error handling is the clone's,
    whose swallowed failure hides an authentication error and counts against it."""
    handled = [(p, c) for p, c in calls if c.get("checked")]
    unchecked = [(p, c) for p, c in calls if not c.get("checked")]
    # an except around them that drops the error: no check, said with its lines
    swallowed = [(p, c) for p, c in unchecked if c.get("swallowed")]
    aside = [(p, c) for p, c in swallowed if (p, int(c["line"])) not in clones]
    found = bool(handled) and len(handled) * 2 >= len(calls) - len(aside)
    listed = [f"{p}:{c['line']}" for p, c in unchecked[:5]]
    helpers = sorted({str(c["wrapper"]) for _p, c in handled if c.get("wrapper")})
    wrapped = (f" Through a helper that returns the call's result ({', '.join(helpers[:3])}),"
               " checked by each of its callers." if helpers else "")
    finding = call_finding(
        "safety.subprocess_errors", "Subprocess and git calls are checked for errors", found,
        "success", (handled if found else unchecked) or calls,
        f"{len(handled)} of {len(calls)} subprocess or git library call(s) are checked for "
        "errors (check=True, an except that catches their error, or their returncode read "
        "afterwards; an except that drops the error is none)." + wrapped
        + (f" Unchecked: {', '.join(listed)}." if listed else "") + _swallowed_text(
            swallowed, repo, clones) + (
            f" Not counted against the check: the {len(aside)} swallowed call(s) that do not "
            "clone answer their failure with a default value; a failed clone is still seen."
            if aside and found else ""),
        confidence=0.75, handled=len(handled), total=len(calls),
        unchecked=[f"{p}:{c['line']}" for p, c in unchecked[:50]],
        swallowed=[f"{p}:{c['line']}" for p, c in swallowed[:50]])
    if repo is None or not (found or swallowed):
        return finding
    quote = "\n".join([*(f"{p}:{c['line']}: {c['snippet']}\n" +
                         line_at(repo, c.get("checked_in") or p, int(c["checked"]))
                         for p, c in (handled if found else [])[:10]),
                       *(f"{p}:{c['line']}: {c['snippet']}\n" + "\n".join(_handler(repo, p, c))
                         for p, c in swallowed[:10])])
    return finding.model_copy(update={"content": clip(quote, 4000)})


def _handler(repo: Path | None, path: str, call: JSON) -> list[str]:
    """The swallowing ``except`` of `call`, quoted line by line (a few lines at most)."""
    start, end = [*call["swallowed"], 0][:2]
    lines = range(int(start), min(max(int(end), int(start)), int(start) + 3) + 1)
    quoted = [line_at(repo, path, n) for n in lines]
    return [q for q in quoted if not q.split(": ", 1)[-1].startswith("#")]


def _swallowed_text(swallowed: list[tuple[str, JSON]], repo: Path | None,
                    clones: frozenset[tuple[str, int]]) -> str:
    """The calls whose error an ``except`` swallows, each with that handler quoted."""
    if not swallowed:
        return ""
    cloning = any((p, int(c["line"])) in clones for p, c in swallowed)
    said = "; ".join(f"{p}:{c['line']} caught by `{' '.join(_handler(repo, p, c))}`"
                     for p, c in swallowed[:3])
    return (f" Swallowed: {len(swallowed)} of them sit in a try whose except drops the error "
            "(no raise, no log or print, the exception and git's output kept in nothing it "
            "does), so the error itself is lost: what the handler returns (a default such as "
            "None or []) does not say what failed"
            + (" (a failed clone's authentication error included)" if cloning else "")
            + f": {said}.")


def _by_callers(graph: CallGraph, repo: Path, key: Key, line: int,
                levels: int) -> tuple[str, int] | None:
    """(caller file, line) of the first caller's check when the call at `line` is returned
    by `key` and every caller of `key` checks the result; None otherwise."""
    if not levels or not key[1] or not _returned(repo, key, line):
        return None
    callers = graph.callers(key)
    if not callers:
        return None
    first: tuple[str, int] | None = None
    for caller, index in callers:
        site = graph.sites(caller)[index]
        at = int(site["line"])
        seen = _checks(graph, repo, caller[0], at, str(site["name"]).rsplit(".", 1)[-1])
        found = (caller[0], seen) if seen else _by_callers(graph, repo, caller, at,
                                                           levels - 1)
        if found is None:
            return None
        first = first or found
    return first


def _returned(repo: Path, key: Key, line: int) -> bool:
    """True when function `key` returns the value of its call at `line` itself (``return
    subprocess.run(...)``, ``r = subprocess.run(...); return r``), read on the syntax: not
    a part of it (``return r.stdout``) nor something built from it."""
    tree = parse_file(str(repo / key[0]))
    node = next((n for q, n in function_defs(tree) if q == key[1]
                 and n.lineno <= line <= (n.end_lineno or 0)), None) if tree else None
    if node is None:
        return False
    bound = {t.id for n in ast.walk(node) if isinstance(n, ast.Assign) and _at(n.value, line)
             for t in n.targets if isinstance(t, ast.Name)}
    return any(isinstance(n, ast.Return) and n.value is not None and (
        _at(n.value, line) or (isinstance(n.value, ast.Name) and n.value.id in bound))
        for n in ast.walk(node))


def _at(value: ast.expr | None, line: int) -> bool:
    value = value.value if isinstance(value, ast.Await) else value
    return isinstance(value, ast.Call) and value.lineno == line


def _checks(graph: CallGraph, repo: Path, path: str, line: int, name: str) -> int:
    """The line showing that the helper call `name` at `line` of `path` is checked, or 0."""
    tree = parse_file(str(repo / path))
    if tree is None:
        return 0
    imports = graph.facts.get(path, {}).get("imports") or {}
    return failure_checks(tree, imports, frozenset({(line, name)})).get(line, 0)
