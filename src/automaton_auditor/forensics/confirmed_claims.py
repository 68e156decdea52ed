"""Report descriptions the code's own facts bear out, as the graph bears out a parallel claim.

Three clear cases, each a sentence of the report's prose that describes the built system (the
clause `behaviour_claims` keeps: not hedged, not about another team's system; a library
sentence as `usage` reads it):

- the clone said to run in a temporary directory ("All repository cloning is performed
  inside a tempfile.TemporaryDirectory() context"), when every clone call writes into a fresh
  temporary directory (`safety.clone_sandbox` found, none unproved, none in code that never
  runs), none is removed before the clone is read (`safety.clone_deleted_early`), and every
  mechanism the sentence names (``TemporaryDirectory``, ``mkdtemp``, ``atexit``, ``rmtree``)
  is in the code's lines; a sentence that also says it is removed needs the removal too;
- the clone's temporary directory said to be removed after use, when every sandboxed clone's
  directory is removed on every path (`safety.clone_cleanup` found, nothing kept or removed
  only in part);
- a library said to be used (Python's ``ast`` module, a PDF library) that the code uses for
  that job (`usage.library_confirmations`: ``ast.parse``, not an ``ast.AST`` annotation).

Each is a `claims.features` fact with the verdict "confirmed", quoting the sentence and the
code's lines; a kind the report also misstates (a contradiction of that kind), or a sandbox
sentence about what the system looks for in the code it audits ("rewards sandboxed git
operations"), confirms nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from automaton_auditor.forensics.behaviour_claims import described_clause
from automaton_auditor.forensics.failure_claims import CLEANUP_FACT, quoted_lines
from automaton_auditor.forensics.pdf.libraries import library_key
from automaton_auditor.forensics.usage import MAX_QUOTED, library_confirmations
from automaton_auditor.state import CodeNames, FeatureClaim, Finding

CONFIRMED_KINDS = ("sandbox_claim", "cleanup_claim", "library_use")
_LABELS = {"sandbox_claim": "the repository is cloned into a fresh temporary directory",
           "cleanup_claim": "the clone's temporary directory is removed after use"}
# A sandbox sentence that also says the directory goes away.
_REMOVED = re.compile(r"\b(?:clean\w*|purg\w*|delet\w*|remov\w*|destroy\w*|discard\w*|"
                      r"wip\w*|torn\s+down|auto(?:matic(?:ally)?)?[\s-]+clean\w*)\b",
                      re.IGNORECASE)
# The mechanisms a sentence may name (the kind of temporary directory, how it is removed),
# each of which the code's quoted lines must show.
_MECHANISMS = (re.compile(r"TemporaryDirectory|Temporary\s+Directory"),
               re.compile(r"\bmkdtemp\b"), re.compile(r"\batexit\b"),
               re.compile(r"\brmtree\b"))
# What the system looks for or rewards in the code it audits is no description of its own.
_AUDITS = re.compile(r"\b(?:detect\w*|flag\w*|scan\w*|reward\w*|penali[sz]\w*|look\w*\s+for|"
                     r"check\w*|search\w*|rubric|peers?|verif\w*)\b", re.IGNORECASE)
_SANDBOX_FACT, _EARLY_FACT = "safety.clone_sandbox", "safety.clone_deleted_early"


def _fact(code: Sequence[Finding], facet: str) -> Finding | None:
    return next((f for f in code if f.facet == facet), None)


def _removed(code: Sequence[Finding]) -> list[str] | None:
    """The lines that remove every sandboxed clone's directory on every path, or None."""
    fact = _fact(code, CLEANUP_FACT)
    if fact is None or not fact.found or not fact.data.get("removed") or any(
            fact.data.get(k) for k in ("kept", "partial", "alive", "early", "on_error",
                                       "through_state")):
        return None
    return quoted_lines(fact)[:MAX_QUOTED]


def _sandboxed(code: Sequence[Finding]) -> list[str] | None:
    """The lines that show every clone written into a fresh temporary directory that is
    not removed before the clone is read, or None (a clone in code that never runs, whose
    destination is not followed, may be the one the report describes)."""
    fact, early = _fact(code, _SANDBOX_FACT), _fact(code, _EARLY_FACT)
    if fact is None or not fact.found or fact.confidence < 0.9 or early is None \
            or early.found or not fact.data.get("tempdir_calls") or fact.data.get("unproved") \
            or fact.data.get("never_run"):
        return None
    return quoted_lines(fact)


def _borne_out(claim: FeatureClaim, clause: str, code: Sequence[Finding]) -> list[str] | None:
    """The code's lines that bear out a sandbox or cleanup clause (a sandbox clause that says
    the directory is removed needs the removal too), or None; every mechanism the sentence
    names (TemporaryDirectory, mkdtemp, atexit, rmtree) must be in them."""
    if _AUDITS.search(clause):
        return None
    sandbox = _sandboxed(code)
    cleanup = _removed(code) if claim.feature == "cleanup_claim" or _REMOVED.search(clause) \
        else []
    if sandbox is None or cleanup is None:
        return None
    shown = [*sandbox, *cleanup]
    if any(kind.search(claim.sentence) and not any(kind.search(line) for line in shown)
           for kind in _MECHANISMS):
        return None  # the sentence names a mechanism the code does not use
    return cleanup if claim.feature == "cleanup_claim" else [*sandbox[:MAX_QUOTED], *cleanup]


def _confirmed(claim: FeatureClaim, label: str, why: str, lines: list[str]) -> Finding:
    where = f"report p.{claim.page}" if claim.page else "report"
    return Finding(
        facet="claims.features", goal=f"The report's claim that {label} is confirmed by the "
        "code", found=True, pattern="success", location=where, confidence=0.8,
        content=f"{where}: {claim.sentence}\n" + "\n".join(lines), rationale=why,
        data={"feature": claim.feature, "verdict": "confirmed", "code": lines})


def _check(claim: FeatureClaim, code: Sequence[Finding], names: CodeNames | None,
           wrong: set[str]) -> Finding | None:
    """The confirmed fact of one sentence, or None (`wrong`: libraries the report misstates
    elsewhere, which confirm nothing)."""
    if claim.feature == "library_use":
        said = [(lib, lines) for lib, lines in (library_confirmations(claim.sentence, names)
                                                if names else [])
                if library_key(lib) not in wrong]
        if not said:
            return None
        lib, used = said[0]
        return _confirmed(claim, f"the code uses {lib}", f"The report says the system uses "
                          f"{lib}; the code does: {'; '.join(used)}.", used)
    clause = described_clause(claim)
    lines = None if clause is None else _borne_out(claim, clause, code)
    if not lines:
        return None
    fact = _fact(code, _SANDBOX_FACT if claim.feature == "sandbox_claim" else CLEANUP_FACT)
    return _confirmed(claim, _LABELS[claim.feature], f"The code's facts bear it out: "
                      f"{fact.rationale if fact else ''} Lines: {'; '.join(lines)}.", lines)


def confirmed_findings(claims: Sequence[FeatureClaim], code: Sequence[Finding],
                       names: CodeNames | None, found: Sequence[Finding]) -> list[Finding]:
    """A confirmed `claims.features` fact per kind of `CONFIRMED_KINDS` the report states
    and the code's facts (`code`, `names`) bear out, on its first such sentence (see the
    module's docstring); none for a kind `found` already holds a contradiction of."""
    misstated = {f.data.get("kind") for f in found if f.facet == "claims.contradictions"}
    wrong = {library_key(str(lib)) for f in found if f.facet == "claims.contradictions"
             and f.data.get("kind") == "usage" for lib in f.data.get("said") or ()}
    if misstated & {"sandbox_claim", "cleanup_claim"}:
        misstated |= {"sandbox_claim", "cleanup_claim"}  # one directory, one story
    findings: list[Finding] = []
    for claim in claims:
        if claim.feature not in CONFIRMED_KINDS or claim.feature in misstated \
                or any(f.data.get("feature") == claim.feature for f in findings):
            continue
        if (confirmed := _check(claim, code, names, wrong)) is not None:
            findings.append(confirmed)
    return findings
