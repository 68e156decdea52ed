"""How a clone reports its failures: ``safety.auth_errors``, whether an authentication or
permission failure is told apart in code (`auth`) or at least passed on with git's own
message, by the clone function or the helper it hands the clone command to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.facts import call_finding
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.state import Finding


def _own_or_helper(facts: dict[str, JSON], graph: CallGraph, path: str, func: str,
                   field: str, hands_to: Callable[[JSON], bool]) -> tuple[str, int] | None:
    """The first line of `field` (a per-function fact of `auth.auth_tests`) in the clone
    function itself, or else in a helper it calls at a site `hands_to` accepts, one level
    deep."""
    if line := int((facts[path].get(field) or {}).get(func) or 0):
        return path, line
    for site in graph.sites((path, func)):
        target = graph.resolve((path, func), site) if hands_to(site) else None
        key = graph.function_key(target) if target is not None else None
        if key and (line := int((facts.get(key[0], {}).get(field) or {}).get(key[1]) or 0)):
            return key[0], line
    return None


def _auth_test(facts: dict[str, JSON], graph: CallGraph, path: str,
               func: str) -> tuple[str, int] | None:
    """Where a clone function tests for an authentication failure (`auth`): in its own code,
    or in a helper it calls with arguments only when something failed (in an ``except``
    handler or a failure branch: ``_classify_clone_error(result.stderr)``)."""
    return _own_or_helper(facts, graph, path, func, "auth_tests",
                          lambda site: bool(site.get("handler") and site.get("args")))


def _error_report(facts: dict[str, JSON], graph: CallGraph, path: str,
                  clone: JSON) -> tuple[str, int] | None:
    """Where a clone function passes a failed clone's error on (`auth.auth_tests`): in its
    own code, or in the helper it hands the clone command to (``_safe_run(["git", "clone",
    ...])`` re-raising with git's stderr)."""
    return _own_or_helper(facts, graph, path, str(clone["func"]), "error_reports",
                          lambda site: site.get("line") == clone["line"])


def auth_finding(facts: dict[str, JSON], clones: list[tuple[str, JSON]],
                 repo: Path | None, graph: CallGraph) -> Finding:
    """``safety.auth_errors``: clone functions whose code, or a helper they hand the failure
    to (`_auth_test`), singles out an authentication or permission failure (a comparison,
    search or ``except``: `auth`), quoting that line; the word in an error message is no
    test."""
    tests = {(p, c["func"]): _auth_test(facts, graph, p, c["func"]) for p, c in clones}
    passed = {(p, c["func"]): _error_report(facts, graph, p, c) for p, c in clones}
    auth = [(p, c) for p, c in clones if tests[(p, c["func"])]]
    # git's own message names an authentication failure; a clone that passes it on reports
    # that failure too, though it does not tell it apart
    reported = [(p, c) for p, c in clones if passed[(p, c["func"])] and (p, c) not in auth]
    where = sorted({t for p, c in auth if (t := tests[(p, c["func"])])}
                   | {r for p, c in reported if (r := passed[(p, c["func"])])})
    finding = call_finding(
        "safety.auth_errors", "Clone handles authentication failures", bool(auth or reported),
        "success", auth or reported or clones,
        (f"{len(auth)} of {len(clones)} clone function(s) test for authentication or "
         "permission errors in code (their own or a helper they call on failure); "
         f"{len(reported)} more pass git's error on when the clone "
         "fails (an authentication failure is reported like any other)" +
         (f" ({', '.join(f'{p}:{n}' for p, n in where)})" if where else "") + "."
         if clones else "No clone function."), confidence=0.5)
    if where:
        quote = "\n".join(line_at(repo, p, n) for p, n in where[:10])
        finding = finding.model_copy(update={"content": quote,
                                             "location": f"{where[0][0]}:{where[0][1]}"})
    return finding
