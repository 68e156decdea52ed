"""How a clone reports its failures: ``safety.auth_errors``, whether an authentication or
permission failure is told apart in code (`auth`) or at least passed on with git's own
message, by the clone function or the helper it hands the clone command to. Only the
first is found: a pass-through of git's stderr (raised, returned or yielded) reports an
authentication failure like any other and tells it apart from none, so alone it makes the
fact neutral, neither support nor the failure pattern. A clone that only tests or hands on
the text of a subprocess error (``str(e)`` of a CalledProcessError: the command and exit
status, not git's message) does neither, and the fact says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.facts import call_finding
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.state import Finding


def _own_or_helper(facts: dict[str, JSON], graph: CallGraph, path: str, func: str,
                   field: str, hands_to: Callable[[JSON], bool]) -> tuple[str, Any] | None:
    """The value of `field` (a per-function fact of `auth.auth_tests`) for the clone
    function itself, or else for a helper it calls at a site `hands_to` accepts, one level
    deep."""
    if value := (facts[path].get(field) or {}).get(func):
        return path, value
    for site in graph.sites((path, func)):
        target = graph.resolve((path, func), site) if hands_to(site) else None
        key = graph.function_key(target) if target is not None else None
        if key and (value := (facts.get(key[0], {}).get(field) or {}).get(key[1])):
            return key[0], value
    return None


def _on_failure(site: JSON) -> bool:
    """A call made with arguments only when something failed (in an ``except`` handler or
    a failure branch: ``_classify_clone_error(result.stderr)``)."""
    return bool(site.get("handler") and site.get("args"))


def _line(found: tuple[str, Any] | None) -> tuple[str, int] | None:
    return (found[0], int(found[1])) if found else None


def _auth_test(facts: dict[str, JSON], graph: CallGraph, path: str,
               func: str) -> tuple[str, int] | None:
    """Where a clone function tests for an authentication failure (`auth`): in its own code,
    or in a helper it calls on failure (`_on_failure`)."""
    return _line(_own_or_helper(facts, graph, path, func, "auth_tests", _on_failure))


def _error_report(facts: dict[str, JSON], graph: CallGraph, path: str,
                  clone: JSON) -> tuple[str, int] | None:
    """Where a clone function passes a failed clone's error on (`auth.auth_tests`): in its
    own code, or in the helper it hands the clone command to (``_safe_run(["git", "clone",
    ...])`` re-raising with git's stderr)."""
    return _line(_own_or_helper(facts, graph, path, str(clone["func"]), "error_reports",
                                lambda site: site.get("line") == clone["line"]))


def _text_only(facts: dict[str, JSON], graph: CallGraph, path: str,
               clone: JSON) -> tuple[str, JSON] | None:
    """Where a clone function, or the helper it hands the clone command or its failure to,
    tests or hands on only a subprocess error's text (`auth._blind`)."""
    return _own_or_helper(facts, graph, path, str(clone["func"]), "auth_blind",
                          lambda site: site.get("line") == clone["line"] or _on_failure(site))


def _blind_text(blind: list[tuple[str, JSON]], repo: Path | None) -> tuple[str, list[str]]:
    """The sentence on the clones that see only a subprocess error's text, and the quoted
    lines (the error, the ``except``, the lines naming and using its text)."""
    if not blind:
        return "", []
    quote = [line_at(repo, p, n) for p, b in blind[:3] for n in sorted(
        {int(b["error"]), int(b["handler"]), *map(int, b["binds"] + b["uses"])})]
    where = ", ".join(f"{p}:{b['uses'][0]}" for p, b in blind[:3])
    return (f" {len(blind)} more test for an authentication failure, or pass the error on, "
            "only through the text of a subprocess error (str(e), f\"{e}\" or e.args of a "
            "CalledProcessError or TimeoutExpired), which holds the command and its exit "
            "status, never git's message (that is in e.stderr), so an authentication "
            f"failure is neither told apart nor reported ({where}).", quote)


def auth_finding(facts: dict[str, JSON], clones: list[tuple[str, JSON]],
                 repo: Path | None, graph: CallGraph) -> Finding:
    """``safety.auth_errors``: clone functions whose code, or a helper they hand the failure
    to (`_auth_test`), singles out an authentication or permission failure (a comparison,
    search or ``except``: `auth`), quoting that line; the word in an error message is no
    test, nor is a test of a subprocess error's text (`_text_only`, said and quoted)."""
    tests = {(p, c["func"]): _auth_test(facts, graph, p, c["func"]) for p, c in clones}
    passed = {(p, c["func"]): _error_report(facts, graph, p, c) for p, c in clones}
    auth = [(p, c) for p, c in clones if tests[(p, c["func"])]]
    # git's own message names an authentication failure; a clone that passes it on reports
    # that failure too, though it does not tell it apart
    reported = [(p, c) for p, c in clones if passed[(p, c["func"])] and (p, c) not in auth]
    where = sorted({t for p, c in auth if (t := tests[(p, c["func"])])}
                   | {r for p, c in reported if (r := passed[(p, c["func"])])})
    blind = list({(b[0], b[1]["handler"]): b for p, c in clones if (p, c) not in auth + reported
                  and (b := _text_only(facts, graph, p, c))}.values())
    aside, quoted = _blind_text(blind, repo)
    listed = f" ({', '.join(f'{p}:{n}' for p, n in where)})" if where else ""
    finding = call_finding(
        "safety.auth_errors", "Clone handles authentication failures", bool(auth),
        # a pass-through alone tells no authentication failure apart, yet reports it like
        # any other failure: neither support nor the failure pattern
        "neutral" if reported and not auth else "success", auth or reported or clones,
        (f"{len(auth)} of {len(clones)} clone function(s) test for authentication or "
         "permission errors in code (their own or a helper they call on failure); "
         f"{len(reported)} more pass git's error on when the clone fails" + listed +
         (": passing git's stderr on is no test for an authentication failure, which is "
          "reported like any other failure, not told apart (neither support nor a failure)."
          if reported and not auth else ".") + aside
         if clones else "No clone function."), confidence=0.5)
    if where or quoted:
        quote = [line_at(repo, p, n) for p, n in where[:10]] + quoted
        first = where[0] if where else (blind[0][0], int(blind[0][1]["uses"][0]))
        finding = finding.model_copy(update={"content": "\n".join(dict.fromkeys(quote)),
                                             "location": f"{first[0]}:{first[1]}"})
    return finding
