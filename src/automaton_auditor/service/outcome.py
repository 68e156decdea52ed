"""How a run ends, decided in one place: the exit code a final state earns (the contract in
`automaton_auditor.exits`), the one-line reason, the `warning:` lines, the gates
(``--fail-under``, ``--fail-on``) and the status `audit runs` shows.

A failure is never a verdict: a repository that could not be acquired or judges that gave no
valid opinion make the run `failed` (exit 3); a present report that could not be read leaves
its criteria not judged and the run `incomplete` (exit 0 with a warning).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from automaton_auditor.exits import ExitCode
from automaton_auditor.state import AuditReport, failed_detectives, final_report_of

_FAIL_ON = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*<\s*([0-9]+(?:\.[0-9]+)?)\s*$")


@dataclass(frozen=True)
class Gates:
    """What makes a finished audit exit 1: an overall score below `fail_under`, or a
    criterion below its `fail_on` minimum. A gated criterion that was not judged fails its
    gate (nothing shows it reaches the minimum)."""

    fail_under: float | None = None
    fail_on: tuple[tuple[str, float], ...] = ()

    def failures(self, report: AuditReport | None) -> list[str]:
        """Why the report fails its gates (empty when it passes)."""
        if report is None:
            return []
        failed = []
        if self.fail_under is not None and report.overall_score < self.fail_under:
            failed.append(f"overall score {report.overall_score:.2f} is below --fail-under "
                          f"{self.fail_under:g}")
        scores = {c.dimension_id: c for c in report.criteria}
        for criterion, minimum in self.fail_on:
            result = scores.get(criterion)
            if result is None or not result.judged:
                failed.append(f"{criterion} was not judged (--fail-on {criterion}<{minimum:g})")
            elif result.final_score < minimum:
                failed.append(f"{criterion} scored {result.final_score}, below --fail-on "
                              f"{criterion}<{minimum:g}")
        return failed


def parse_fail_on(values: Sequence[str], criteria: Sequence[str]) -> tuple[tuple[str, float], ...]:
    """``CRITERION<N`` options, checked against the rubric's criterion ids (ValueError with
    a one-line reason otherwise)."""
    gates = []
    for value in values:
        match = _FAIL_ON.match(value)
        if match is None:
            raise ValueError(f"--fail-on {value!r}: expected CRITERION<N, e.g. "
                             f"{criteria[0] if criteria else 'git_forensic_analysis'}<3")
        criterion, minimum = match.group(1), float(match.group(2))
        if criterion not in criteria:
            raise ValueError(f"--fail-on {value!r}: no criterion {criterion!r} in the rubric "
                             f"({', '.join(criteria)})")
        if not 1 <= minimum <= 5:
            raise ValueError(f"--fail-on {value!r}: the minimum must be between 1 and 5")
        gates.append((criterion, minimum))
    return tuple(gates)


@dataclass(frozen=True)
class Outcome:
    """How a run ended: the final graph state, the exit code, a one-line reason, the
    warnings to print and, for a run taken over, where it had stopped."""

    final: dict[str, Any]
    code: ExitCode
    message: str = ""
    warnings: tuple[str, ...] = field(default_factory=tuple)
    resumed_from: str = ""

    @property
    def run_id(self) -> str:
        """The run id, when the run got one."""
        return str(self.final.get("run_id") or "")


def judges_lost(report: AuditReport | None) -> list[str]:
    """Criteria none of whose opinions is valid: the judges' provider failed."""
    if report is None:
        return []
    return [c.dimension_id for c in report.criteria
            if c.judge_opinions and all(o.degraded for o in c.judge_opinions)]


def exit_code(final: dict[str, Any], gates: Gates | None = None) -> ExitCode:
    """The exit code a final state earns."""
    report = final_report_of(final)
    if not final.get("input_ok"):
        return ExitCode.INPUT
    if (final.get("aborted") or failed_detectives(final.get("detective_status"))
            or judges_lost(report)):
        return ExitCode.FAILED
    if (gates or Gates()).failures(report):
        return ExitCode.FAIL_UNDER
    return ExitCode.OK


def failure_reason(final: dict[str, Any], code: ExitCode, gates: Gates | None = None) -> str:
    """The one-line reason for a non-zero exit code ("" for 0)."""
    if code == ExitCode.INPUT:
        return str(final.get("input_error") or "invalid input")
    if code == ExitCode.FAILED:
        lost = judges_lost(final_report_of(final))
        reason = final.get("aborted") or "; ".join(
            f"{k} {v}" for k, v in failed_detectives(final.get("detective_status")).items()) \
            or f"no judge gave a valid opinion on {len(lost)} criteria"
        return f"audit failed: {reason} (partial report written; resume with: audit resume " \
               f"{final.get('run_id')})" if final.get("run_id") else f"audit failed: {reason}"
    if code == ExitCode.FAIL_UNDER:
        return "; ".join((gates or Gates()).failures(final_report_of(final)))
    return ""


def warnings_of(final: dict[str, Any]) -> tuple[str, ...]:
    """The `warning:` lines a finished run prints about unusable inputs whose criteria were
    not judged (the detectives' own warnings, such as a shallow history or uncommitted
    changes, travel in the state's errors as "<source>: warning: ...")."""
    report = final_report_of(final)
    lines = []
    statuses = final.get("detective_status") or {}
    unjudged = [c for c in report.criteria if not c.judged] if report is not None else []
    for source in ("doc", "vision"):
        status = statuses.get(source)
        if status is not None and status.state == "degraded":
            what = "the report could not be read" if source == "doc" else \
                "the report's diagrams could not be read"
            lines.append(f"{what} ({status.reason})")
            if source == "doc":
                break  # the diagrams' failure has the same cause
    if unjudged:
        lines.append(f"{len(unjudged)} of {len(report.criteria) if report else 0} criteria "
                     f"not judged: {', '.join(c.dimension_id for c in unjudged)}")
    return tuple(lines)


def outcome_of(final: dict[str, Any], gates: Gates | None = None) -> Outcome:
    """The `Outcome` of a final state."""
    code = exit_code(final, gates)
    return Outcome(final, code, failure_reason(final, code, gates), warnings_of(final))


def run_status(values: dict[str, Any], finished: bool) -> str:
    """What `audit runs` shows: done, incomplete (criteria not judged), failed (exit 3) or
    interrupted (stopped before the end; `audit resume` continues it)."""
    if not finished:
        return "interrupted"
    code = exit_code(values)
    if code in (ExitCode.FAILED, ExitCode.INPUT):
        return "failed"
    report = final_report_of(values)
    if report is not None and not all(c.judged for c in report.criteria):
        return "incomplete"
    return "done"
