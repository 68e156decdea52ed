"""Missing extras: success-pattern facts whose absence is not the rubric's failure pattern.

A success-pattern fact that is not found argues against the criterion (`Evidence
.supports_failure`). Most such gaps are the failure pattern itself: a clone outside a temporary
directory is "clones into the working directory", subprocess calls without error handling are
"no error handling around git". Some are not: the success pattern asks for timeouts and for
authentication errors to be reported, but a clone without a timeout is neither a shell
injection nor a clone into the live tree. Such a missing extra keeps the criterion from full
marks without putting it among the failures: the Prosecutor never charges it as the failure
pattern, and while nothing else is charged (the core of the success pattern stands) the offline
bench weighs it at `EXTRA_WEIGHT` of its confidence. Once a core element is missing or a bad
thing is found, extras are no longer extras: each missing one counts in full.

`EXTRAS` is the one table (read by `judging.offline`, whose balance the Chief Justice's rules
also use): a row names the criteria and the facets that are extras there. A found extra counts
in full; only its absence weighs less.
"""

from __future__ import annotations

from dataclasses import dataclass

from automaton_auditor.state import Evidence

EXTRA_WEIGHT = 0.5  # a missing extra weighs half of what a missing core element does


@dataclass(frozen=True)
class Extra:
    """Success-pattern facets whose absence the criteria's failure pattern does not name."""

    criteria: tuple[str, ...]
    facets: tuple[str, ...]
    why: str  # what the failure pattern names instead (quoted in docs and tests)


EXTRAS: tuple[Extra, ...] = (
    # The tools' failure pattern is os.system / shell=True on a URL, a clone into the working
    # directory, no error handling (forensics.code facts safety.*); a timeout, a URL check
    # and an authentication test harden a clone that is already sandboxed and checked; a
    # sandbox removed after use on every path completes it (a directory left behind is no
    # clone into the working directory).
    Extra(("safe_tool_engineering",),
          ("safety.timeouts", "safety.url_validation", "safety.auth_errors",
           "safety.clone_cleanup"),
          "shell injection, a clone into the working directory, no error handling"),
    # The diagram criterion's failure pattern is no diagram, generic boxes or a linear
    # pipeline; a box drawing made of characters is a diagram, but the text layer loses its
    # columns (forensics.vision.findings: vision.pictured): not full marks, no failure.
    Extra(("swarm_visual",), ("vision.pictured",),
          "no diagram, generic boxes with no parallelism, or a linear pipeline"),
    # Report accuracy's failure pattern is files that do not exist and features claimed that
    # the code lacks; a gap the report lists that the code has since closed (forensics
    # .contradictions: claims.stale_gaps) undersells the code, and the report naming its own
    # file at a folder where it is not (forensics.crosscheck: claims.misplaced) or citing a
    # run output of its code that is not committed (claims.run_outputs) invents no
    # component: not full marks, no failure.
    Extra(("report_accuracy",), ("claims.stale_gaps", "claims.misplaced",
                                 "claims.run_outputs"),
          "hallucinated paths, or features claimed that the code contradicts"),
)


# Extras that only set a ceiling (their `judging.caps` row): neither side of the balance
# weighs them, so a clone directory left behind costs full marks and nothing more, whatever
# else is charged (it is no failure pattern of the rubric's).
CEILING_ONLY: tuple[str, ...] = ("safety.clone_cleanup",)


# Failure facts that only set a ceiling too: a defect in how a state or graph that works is
# used (forensics.code.stateflow: a list a node appends to itself, a read no parallel
# branch's write reaches), a variance rule that only breaks the tie (forensics.code
# .tie_breaks) or a rule whose result nothing reads (forensics.code.unused_rules: already
# not counted among the rules), costs full marks, not the balance the rest of the dossier
# strikes; so does a persona prompt that fixes its judge's score band (forensics.code
# .score_bands: a contrarian or forgiving lens, charged only when every persona is banded),
# a judge call no error handling guards (forensics.code.call_errors), whose missing retry
# ``llm.retry`` weighs already, and a judge's code that moves its model's score by persona
# (forensics.code.score_shifts: the model's answer still moves the score within the band).
CEILING_FAILURES: tuple[str, ...] = ("state.doubled_lists", "graph.stale_reads",
                                     "graph.endless_loop", "justice.tie_break",
                                     "justice.unused_rules", "judges.score_band",
                                     "llm.unhandled_errors", "judges.score_shift")


def ceiling_only(fact: Evidence) -> bool:
    """True for a fact that only caps its criterion (`CEILING_ONLY`, `CEILING_FAILURES`),
    never weighed."""
    return fact.facet in CEILING_FAILURES or (fact.facet in CEILING_ONLY and any(
        fact.dimension in row.criteria and fact.facet in row.facets for row in EXTRAS))


def missing_extra(fact: Evidence) -> bool:
    """True for a success-pattern fact not found whose facet is an extra of its criterion."""
    return (fact.pattern == "success" and not fact.found
            and any(fact.dimension in row.criteria and fact.facet in row.facets
                    for row in EXTRAS))
