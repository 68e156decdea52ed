"""Report descriptions of a mechanism, read against the code's own facts that show it failing.

Two cases, each a sentence of the report's prose that `forensics.behaviour_claims` has kept
(not hedged, not about another team's system) and the facts of the code, never its names:

- the clone said to run in a sandbox, a temporary directory ("Sandboxed git clone", "Git
  sandboxing works", "clones into a temporary directory"; `pdf.behaviours.SANDBOX`) when the
  code clones and makes no temporary directory anywhere, not even a fixed folder under the
  system's temp folder (`safety.clone_sandbox` not found, no ``tempdir_calls``;
  `safety.clone_temp_root` not found); or said to work there ("Git sandboxing works
  (tested ...)") when its ``TemporaryDirectory`` is removed as the function that made it
  returns the path, before the tools read the clone (`safety.clone_deleted_early`). A
  sentence that only describes that design ("Clone wrapped in tempfile.TemporaryDirectory()")
  says what the code does: the directory's early removal is the tools' flaw, charged there;
- a node's output said to be merged into the state by a reducer ("Detectives produce
  Dict[str, List[Evidence]] merged via operator.ior"; `pdf.behaviours.MERGED`) when the
  nodes the sentence names, or the detectives when it speaks of detectives or evidence,
  return only keys the state does not declare, so LangGraph drops their whole return
  (`graph.state.dropped_keys`, its ``whole`` nodes).

A clone the facts do not locate, a clone whose destination they could not follow, or a node
that returns a declared key beside the dropped ones contradicts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from automaton_auditor.forensics.code.topology import DETECTIVE
from automaton_auditor.forensics.diagrams.flow import match_score, name_tokens
from automaton_auditor.forensics.pdf.behaviours import MERGED
from automaton_auditor.forensics.usage import Misquote
from automaton_auditor.state import Finding

MAX_QUOTED = 6
# A sandbox said to work ("Git sandboxing works (tested with public repo)"), not only built.
_WORKS = re.compile(r"\b(?:works?|working|tested|verified|functional|operational|"
                    r"succeed\w*|successful\w*|confirmed|proven)\b", re.IGNORECASE)
# The claim kinds read here: each failure is one fact of the code, so however many sentences
# describe its mechanism, the report misstates it once (`contradictions`).
FAILURE_KINDS = ("sandbox_claim", "merge_claim", "override_claim")
CLEANUP_FACT, OVERRIDE_FACT = "safety.clone_cleanup", "justice.inverted_override"
# The words of a check's flag that say it matched, not what it looks for.
_FLAG_WORDS = {"found", "has", "is", "any", "detected", "flag", "flagged", "seen", "hit"}
# The clause names the context manager that removes its directory by itself.
_TEMPORARY_DIRECTORY = re.compile(r"(?:tempfile\.\s?)?TemporaryDirectory\b|"
                                  r"tempfile\.\s?Temporary\s+Directory\b")
# A sentence about the detectives' output, which names no node of the graph.
_DETECTIVES = re.compile(r"\bdetectives?\b|\bevidences?\b", re.IGNORECASE)
# Where the steps of a flow written as text part: an arrow, or the lone "fi" some text layers
# read an arrow glyph as ("Detectives produce ... merged via operator.ior fi EvidenceAggregator
# validates").
_STEP = re.compile(r"\s(?:\u2192|\u27f6|\u21d2|->|fi)\s")


def quoted_lines(fact: Finding) -> list[str]:
    """The lines a fact quotes (its content), else its location: what a misquote cites."""
    return (fact.content or fact.location).splitlines()


def sandbox_misquote(clause: str, facts: Mapping[str, Finding]) -> Misquote | None:
    """A clone said to run in a temporary directory that the code never makes, or said to
    work there when the code removes the directory before the clone is read (see the
    module's docstring). `clause`: the part of the sentence that says it."""
    early = facts.get("safety.clone_deleted_early")
    if early is not None and early.found:
        if not _WORKS.search(clause):
            return None  # the design the code follows: its flaw is the tools' to charge
        return Misquote(
            said="the clone made and used in a temporary directory",
            rationale="The report says the sandboxed clone works; the directory it is "
                      "cloned into is a "
                      "TemporaryDirectory whose path its function returns, so it is removed "
                      "as the function returns and the tools that read the clone find a "
                      "directory that no longer exists.", code=quoted_lines(early)[:MAX_QUOTED])
    sandbox, root = facts.get("safety.clone_sandbox"), facts.get("safety.clone_temp_root")
    kept = _kept_mkdtemp(facts) if _TEMPORARY_DIRECTORY.search(clause) else []
    if kept:
        return Misquote(
            said="the clone sandboxed in a tempfile.TemporaryDirectory",
            rationale="The report says the clone is sandboxed in a TemporaryDirectory (removed "
                      "by itself when done); a clone the code makes is written into a "
                      f"directory made with mkdtemp ({', '.join(k.split(': ', 1)[0] for k in kept)}"
                      "), not a TemporaryDirectory, and no call anywhere removes it.",
            code=[*dict.fromkeys([*kept, *quoted_lines(sandbox or facts[CLEANUP_FACT])])
                  ][:MAX_QUOTED], data={"fact": CLEANUP_FACT})
    if sandbox is None or sandbox.found or not sandbox.data.get("locations") \
            or sandbox.data.get("tempdir_calls") or root is None or root.found:
        return None  # sandboxed, no clone located, a temp dir somewhere, or a /tmp folder
    return Misquote(
        said="the clone made in a temporary directory",
        rationale="The report says the repository is cloned into a temporary directory (a "
                  "sandbox); the code clones and makes no temporary directory anywhere (no "
                  "tempfile.TemporaryDirectory or mkdtemp call, no folder under the system's "
                  "temp folder).",
        code=[*quoted_lines(sandbox)[:MAX_QUOTED - 1], "code: no tempfile.TemporaryDirectory or "
              "mkdtemp call anywhere"])


def _kept_mkdtemp(facts: Mapping[str, Finding]) -> list[str]:
    """The lines making a clone's directory with ``mkdtemp`` that nothing removes: a clone
    call writes into it (`safety.clone_sandbox`'s ``tempdir_calls``) and no call anywhere
    removes it, not even on failure or through the state (`safety.clone_cleanup`)."""
    cleanup, sandbox = facts.get(CLEANUP_FACT), facts.get("safety.clone_sandbox")
    if cleanup is None or cleanup.found or sandbox is None or cleanup.data.get("partial") \
            or cleanup.data.get("through_state") or cleanup.data.get("alive"):
        return []
    made = set(cleanup.data.get("kept") or []) & set(sandbox.data.get("tempdir_calls") or [])
    return [line for line in quoted_lines(cleanup)
            if line.split(": ", 1)[0] in made and "mkdtemp" in line.split(": ", 1)[-1]]


def override_misquote(clause: str, facts: Mapping[str, Finding]) -> Misquote | None:
    """A score said to be capped when a check finds something, when the code's cap on that
    check's evidence fires only when it finds nothing (`justice.inverted_override`). The
    clause must name the check: its flag's words ("os.system" for ``found_os_system``) or
    its evidence's key ("safe tool engineering")."""
    fact = facts.get(OVERRIDE_FACT)
    if fact is None or not fact.found:
        return None
    said = " ".join(re.sub(r"[^a-z0-9]+", " ", clause.lower()).split())
    names = [" ".join(w for w in str(fact.data.get(k) or "").lower().split("_")
                      if w not in _FLAG_WORDS) for k in ("flag", "key")]
    if not any(name and f" {name} " in f" {said} " for name in names):
        return None
    return Misquote(
        said="a score capped when the check finds a violation",
        rationale="The report says the score is capped when the check finds what it looks "
                  f"for; the code's cap is inverted: {fact.rationale}",
        code=quoted_lines(fact)[:MAX_QUOTED + 2], data={"fact": OVERRIDE_FACT})


def _names(word: str, node: str) -> bool:
    """Whether a word of the sentence names the node: its own name ("RepoInvestigator",
    "the Prosecutor"), or a word of several parts within it; "Evidence" alone does not name
    an EvidenceAggregator."""
    score = match_score(word, node)
    return score == 1.0 or (score >= 0.8 and len(name_tokens(word)) > 1)


def _step(clause: str) -> str:
    """The step of a flow written as text that says the merge (the whole clause when it is
    no flow): the nodes of the other steps are not said to be merged."""
    match = MERGED.search(clause)
    if match is None:
        return clause
    start = max((m.end() for m in _STEP.finditer(clause, 0, match.start())), default=0)
    after = _STEP.search(clause, match.end())
    return clause[start: after.start() if after else len(clause)]


def merge_misquote(clause: str, facts: Mapping[str, Finding]) -> Misquote | None:
    """Nodes' output said to be merged by a reducer that LangGraph drops whole (see the
    module's docstring). `clause`: the part of the sentence that says it."""
    dropped = facts.get("graph.state.dropped_keys")
    whole = dropped.data.get("whole") if dropped is not None and dropped.found else None
    if dropped is None or not isinstance(whole, dict) or not whole:
        return None
    step = _step(clause)
    words = re.findall(r"[A-Za-z][\w-]{3,}", step)
    named = [n for n in sorted(whole) if any(_names(w, n) for w in words)]
    if not named and _DETECTIVES.search(step):
        named = [n for n in sorted(whole) if DETECTIVE.search(n)]
    if not named:
        return None
    keys = dropped.data.get("nodes") or {}
    returned = "; ".join(f"{n} returns {', '.join(keys.get(n) or [])}" for n in named)
    places = {place for n in named for place in whole[n]}
    quoted = [*dict.fromkeys(line for line in quoted_lines(dropped)
                             if line.split(": ", 1)[0] in places)]
    channels = ", ".join(dropped.data.get("channels") or [])
    return Misquote(
        said="the nodes' output merged into the state by a reducer",
        rationale=f"The report says the output of {', '.join(named)} is merged into the state "
                  f"by a reducer; the state declares none of the keys they return ({returned}),"
                  " so LangGraph drops their whole return and no reducer ever receives it.",
        code=[*quoted[:MAX_QUOTED - 1], f"the state declares: {channels}"])
