"""The report of a run's checkpointed state, ruled and rendered without running a node: a
finished run's report re-rendered (`audit replay`), and the partial report of a run that was
stopped (Ctrl-C, SIGTERM, SIGHUP) or crashed, written from its last checkpoint so that every
audit that got past its input check leaves a report behind.

A partial report rules on what the checkpoint holds: criteria whose judges had not ruled are
"not judged" with the reason, and the summary says why the audit stopped. Nothing is written
to the checkpoints: `audit resume` continues the run as if no report had been written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from automaton_auditor.state import CriterionResult
from automaton_auditor.storage.runs import RunError, RunInfo

if TYPE_CHECKING:
    from automaton_auditor.rubric import Rubric

# Why a criterion has no ruling when the Chief Justice itself could not rule (a crash there).
NOT_RULED = "the audit stopped before the Chief Justice ruled"


def rule_and_render(values: dict[str, Any]) -> dict[str, Any]:
    """`values` with the Chief Justice's ruling (pure Python) and the report files written.
    Errors recorded by an earlier ruling are replaced by this one's."""
    from automaton_auditor.nodes.justice import chief_justice
    from automaton_auditor.nodes.report import report_writer

    previous = [e for e in values.get("errors") or [] if not e.startswith("rubric: ")]
    ruling = chief_justice(values)  # type: ignore[arg-type]
    values.update(results=ruling["results"], errors=previous + ruling["errors"],
                  timings={**(values.get("timings") or {}), **ruling["timings"]})
    values.update(report_writer(values))  # type: ignore[arg-type]
    return values


def replay_state(info: RunInfo, rubric: Rubric | None = None,
                 output_dir: str | None = None) -> dict[str, Any]:
    """A finished run's state re-ruled and re-rendered: the Chief Justice (pure Python)
    applies `rubric`'s synthesis rules (default: the run's own rubric) to the checkpointed
    opinions, and the report writer writes the files. No model is called; nothing is
    written to the checkpoints."""
    values = dict(info.values)
    if not values.get("opinions"):
        raise RunError(f"run {info.run_id} has no opinions yet ({info.status}): "
                       f"use `audit resume {info.run_id}`")
    if rubric is not None:
        old = {d.get("id") for d in values.get("rubric", {}).get("dimensions", [])}
        new = {d.id for d in rubric.dimensions}
        if old != new:
            raise RunError("the rubric's dimensions differ from the run's; replay can only "
                           "change synthesis rules and wording")
        values["rubric"] = rubric.to_state()
    if output_dir is not None:
        from automaton_auditor.settings import Settings

        settings = Settings.from_state(values.get("settings"))
        values["settings"] = {**settings.to_state(), "output_dir": output_dir}
    return rule_and_render(values)


def partial_report(values: dict[str, Any], why: str) -> dict[str, Any] | None:
    """The state of a stopped or crashed run with its partial report written, or None when
    no report can be written (the run stopped before its inputs were checked, or writing
    failed: the caller then says no report was written)."""
    if not values.get("input_ok") or not values.get("rubric"):
        return None  # nothing was checked yet: there is nothing to report on
    values = {**values, "aborted": why}
    try:
        return rule_and_render(values)
    except Exception as exc:  # a crash in the ruling itself: the criteria are not ruled
        values["errors"] = [*(values.get("errors") or []),
                            f"chief_justice: {type(exc).__name__}: {exc}"]
    try:
        from automaton_auditor.nodes.report import report_writer

        values["results"] = _not_ruled(values["rubric"])
        values.update(report_writer(values))  # type: ignore[arg-type]
        return values
    except Exception:  # the report cannot be written (disk full, output folder gone)
        return None


def _not_ruled(rubric: dict[str, Any]) -> list[CriterionResult]:
    """Every criterion of `rubric`, not judged because no ruling was made."""
    from automaton_auditor.rubric import Rubric

    return [CriterionResult(dimension_id=d.id, dimension_name=d.name,
                            target_artifact=d.target_artifact, final_score=1,
                            judge_opinions=[], remediation="", deciding_rule="not ruled",
                            judged=False, not_judged_reason=NOT_RULED)
            for d in Rubric.from_state(rubric).dimensions]
