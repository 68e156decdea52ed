"""The audit run flow, once: `audit run`, `audit batch`, `audit resume` and `audit replay` all
come through here; the command line only parses flags and prints.

A run is: the rubric loaded (or refused), the inputs checked before anything heavy is
imported, an unchanged deterministic audit answered from its finished run, the report read in a
second process while the graph starts, the checkpointed graph streamed, and the final state
turned into an `Outcome` — the exit code and, when it is not 0, the one-line reason. Nothing
here prints; errors never escape as exceptions (Ctrl-C included), so every caller applies the
same contract (`automaton_auditor.exits`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automaton_auditor.exits import ExitCode
from automaton_auditor.state import failed_detectives, final_report_of
from automaton_auditor.storage.runs import (
    RunError,
    RunInfo,
    checkpointer,
    new_run_id,
    prune_finished,
    recent_thread_ids,
    thread_config,
)

if TYPE_CHECKING:  # pydantic is imported when a run starts: `audit --help` stays fast
    from automaton_auditor.rubric import Rubric
    from automaton_auditor.settings import Settings

OnUpdate = Callable[[str, Any], None]


@dataclass(frozen=True)
class Outcome:
    """How a run ended: the final graph state, the exit code, and a one-line reason."""

    final: dict[str, Any]
    code: ExitCode
    message: str = ""

    @property
    def run_id(self) -> str:
        """The run id, when the run got one."""
        return str(self.final.get("run_id") or "")


def exit_code(final: dict[str, Any], fail_under: float | None) -> ExitCode:
    """The exit code a final state earns."""
    report = final.get("final_report")
    if not final.get("input_ok"):
        return ExitCode.INPUT
    if final.get("aborted") or failed_detectives(final.get("detective_status")):
        return ExitCode.FAILED
    if fail_under is not None and report is not None and report.overall_score < fail_under:
        return ExitCode.FAIL_UNDER
    return ExitCode.OK


def failure_reason(final: dict[str, Any], code: ExitCode, fail_under: float | None) -> str:
    """The one-line reason for a non-zero exit code ("" for 0)."""
    if code == ExitCode.INPUT:
        files = final.get("report_files") or {}
        where = f" (details in {files['markdown']})" if files.get("markdown") else ""
        return f"{final.get('input_error') or 'invalid input'}{where}"
    if code == ExitCode.FAILED:
        reason = final.get("aborted") or "; ".join(
            f"{k} {v}" for k, v in failed_detectives(final.get("detective_status")).items())
        return f"audit failed: {reason} (partial report written)"
    report = final.get("final_report")
    if code == ExitCode.FAIL_UNDER and report is not None:
        return f"overall score {report.overall_score:.2f} is below --fail-under {fail_under}"
    return ""


def outcome_of(final: dict[str, Any], fail_under: float | None) -> Outcome:
    """The `Outcome` of a final state."""
    code = exit_code(final, fail_under)
    return Outcome(final, code, failure_reason(final, code, fail_under))


class RubricRefused(ValueError):
    """The rubric cannot be used; a report saying why has been written."""


def load_rubric_or_refuse(target: str, report: str, settings: Settings) -> Rubric:
    """The run's rubric; a malformed one is refused with a report saying why."""
    from automaton_auditor.rubric import RubricError, load_rubric

    try:
        return load_rubric(Path(settings.rubric_path) if settings.rubric_path else None)
    except RubricError as exc:
        message = f"bad rubric: {exc}"
        write_error_report(target, report, settings, message)
        raise RubricRefused(message) from None


def write_error_report(target: str, report: str, settings: Settings, message: str) -> None:
    """A problem found before the graph still leaves a report saying why."""
    from automaton_auditor.nodes.report import report_writer

    report_writer({"target": target, "report_path": report,
                   "settings": settings.to_state(), "input_ok": False,
                   "input_error": message, "errors": [f"input: {message}"]})


def check_inputs(state: dict[str, Any]) -> dict[str, Any] | None:
    """Validate the inputs before anything heavy is imported: bad input answers fast, with
    the same one-line error and partial report the graph's error path gives."""
    from automaton_auditor.nodes.context import context_builder
    from automaton_auditor.nodes.report import report_writer

    checked = {**state, **context_builder(state)}  # type: ignore[arg-type]
    if checked["input_ok"]:
        return None
    checked.update(report_writer(checked))  # type: ignore[arg-type]
    return checked


def run_audit(target: str, report: str, rubric: Rubric, settings: Settings, *,
              fail_under: float | None = None, on_update: OnUpdate | None = None,
              prefetch: bool = True) -> Outcome:
    """Audit `target` and `report` under `rubric`; never raises."""
    rubric_data = rubric.to_state()
    rejected = check_inputs({"target": target, "report_path": report, "rubric": rubric_data,
                             "settings": settings.to_state()})
    if rejected is not None:
        return outcome_of(rejected, fail_under)
    # An unchanged deterministic audit is answered from its finished run (no graph at all).
    final = _reuse(target, report, rubric_data, settings)
    if final is not None:
        return outcome_of(final, fail_under)
    if prefetch:
        _prefetch_report(report, rubric, settings)
    run_id = new_run_id()
    state = {"target": target, "report_path": report, "rubric": rubric_data,
             "settings": settings.to_state(), "run_id": run_id}
    try:
        outcome = _guarded(run_id, fail_under,
                           lambda: stream_audit(state, settings, run_id, on_update))
    finally:
        from automaton_auditor.forensics.pdf import prefetch as report_prefetch

        report_prefetch.cancel_all()
    if outcome.code != ExitCode.INTERRUPTED:
        _remember(outcome.final, rubric_data, settings)
    return outcome


def resume_audit(run_id: str, *, fail_under: float | None = None,
                 on_update: OnUpdate | None = None) -> Outcome:
    """Continue an interrupted or failed run from its last completed step; never raises."""
    try:
        info = load_run(run_id)
    except RunError as exc:
        return Outcome({}, ExitCode.INPUT, str(exc))
    if info.finished:
        return Outcome(info.values, ExitCode.INPUT,
                       f"run {run_id} is finished; use `audit replay {run_id}` to re-render "
                       "its report")
    from automaton_auditor.settings import Settings

    settings = Settings.from_state(info.values.get("settings"))
    return _guarded(run_id, fail_under,
                    lambda: stream_audit(None, settings, run_id, on_update, info.values))


def replay_audit(run_id: str, rubric: Rubric | None = None, output_dir: str | None = None, *,
                 fail_under: float | None = None) -> Outcome:
    """Re-rule and re-render a judged run's report from its checkpoint; never raises."""
    try:
        final = replay_state(load_run(run_id), rubric, output_dir)
    except RunError as exc:
        return Outcome({}, ExitCode.INPUT, str(exc))
    return outcome_of(final, fail_under)


def _guarded(run_id: str, fail_under: float | None,
             run: Callable[[], dict[str, Any]]) -> Outcome:
    """`run()`'s outcome, with a crash or Ctrl-C turned into one line that says how to resume."""
    try:
        final = run()
    except KeyboardInterrupt:
        return Outcome({"run_id": run_id}, ExitCode.INTERRUPTED,
                       f"interrupted; resume with: audit resume {run_id}")
    except Exception as exc:  # the graph degrades internally; this is the last line of defence
        return Outcome({"run_id": run_id}, ExitCode.FAILED,
                       f"audit failed: {type(exc).__name__}: {exc} (resume with: audit resume "
                       f"{run_id})")
    return outcome_of(final, fail_under)


def stream_audit(graph_input: dict[str, Any] | None, settings: Settings, run_id: str,
                 on_update: OnUpdate | None = None,
                 resumed: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run (input given) or resume (input None) the audit `run_id`; return the final state.

    `on_update(node, update)` is called after each node. Exceptions propagate: the last
    checkpoint stays, and the run can be resumed.
    """
    from automaton_auditor.forensics.git.head import local_head
    from automaton_auditor.graph import compile_graph
    from automaton_auditor.judging.llm_plan import trace_config

    named = graph_input or resumed or {}
    target = str(named.get("target", ""))
    # run_name/tags/metadata name the audit's root run when LangSmith tracing is on.
    trace = trace_config(target, str(named.get("report_path", "")), settings,
                         local_head(Path(target)) if target else None)
    _enable_opinion_cache(settings)
    with checkpointer(_runs_root(settings)) as saver:
        graph = compile_graph(saver)
        cfg = thread_config(run_id, {"max_concurrency": settings.max_concurrency,
                                     "recursion_limit": 50, **trace})
        final: dict[str, Any] = dict(graph_input or graph.get_state(cfg).values)
        for mode, chunk in graph.stream(graph_input, cfg, stream_mode=["updates", "values"]):
            if mode == "values":
                final = chunk
                continue
            for node, update in chunk.items():
                if on_update is not None:
                    on_update(node, update)
        if not graph.get_state(cfg).next:
            prune_finished(saver.conn, run_id)
    return final


def _runs_root(settings: Settings) -> Path | None:
    """Runs live in the cache directory; with --no-cache, in the default one all the same
    (resume must work)."""
    return None if settings.cache_dir is None else Path(settings.cache_dir)


def _enable_opinion_cache(settings: Settings) -> None:
    if settings.reuse_opinions and settings.cache_dir and not settings.offline:
        from automaton_auditor.storage.opinions import enable

        enable(Path(settings.cache_dir))


def load_run(run_id: str, root: Path | None = None) -> RunInfo:
    """The latest checkpoint of `run_id`; raises `RunError` when there is none."""
    from automaton_auditor.graph import compile_graph
    from automaton_auditor.storage.runs import runs_db

    if not runs_db(root).exists():
        raise RunError(f"no run {run_id!r} (no runs recorded in {runs_db(root).parent})")
    with checkpointer(root) as saver:
        snapshot = compile_graph(saver).get_state(thread_config(run_id))
    values = dict(snapshot.values or {})
    if not values:
        raise RunError(f"no run {run_id!r} in {runs_db(root)}")
    finished = not snapshot.next and "final_report" in values
    return RunInfo(run_id, str(values.get("target", "")), str(values.get("report_path", "")),
                   tuple(snapshot.next), finished, values)


def recent_runs(limit: int = 20, root: Path | None = None) -> list[RunInfo]:
    """The most recent runs, newest first."""
    runs = []
    for thread_id in recent_thread_ids(limit, root):
        try:
            runs.append(load_run(thread_id, root))
        except RunError:
            continue
    return runs


def replay_state(info: RunInfo, rubric: Rubric | None = None,
                 output_dir: str | None = None) -> dict[str, Any]:
    """A finished run's state re-ruled and re-rendered: the Chief Justice (pure Python)
    applies `rubric`'s synthesis rules (default: the run's own rubric) to the checkpointed
    opinions, and the report writer writes the files. No model is called; nothing is
    written to the checkpoints."""
    from automaton_auditor.nodes.justice import chief_justice
    from automaton_auditor.nodes.report import report_writer

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
    previous = [e for e in values.get("errors") or [] if not e.startswith("rubric: ")]
    ruling = chief_justice(values)  # type: ignore[arg-type]
    values.update(results=ruling["results"], errors=previous + ruling["errors"],
                  timings={**(values.get("timings") or {}), **ruling["timings"]})
    values.update(report_writer(values))  # type: ignore[arg-type]
    return values


def _prefetch_report(report: str, rubric: Rubric, settings: Settings) -> None:
    """Start reading the report in a second process while this one starts the graph."""
    from automaton_auditor.forensics.pdf import prefetch as report_prefetch
    from automaton_auditor.nodes.limits import cache_dir, report_limits
    from automaton_auditor.rubric import concept_terms

    report_prefetch.prefetch_report(report, concept_terms(rubric), report_limits(settings),
                                    cache_dir(settings))


def _result_key(target: str, report: str, rubric_data: dict[str, Any], settings: Settings,
                commit: str | None = None, report_sha: str | None = None) -> str | None:
    """The key of this audit's result, or None when its commit cannot be told cheaply."""
    from automaton_auditor.forensics.git.acquire import InvalidTarget, parse_target
    from automaton_auditor.forensics.git.head import head_commit
    from automaton_auditor.forensics.pdf.ingest import sha256_of
    from automaton_auditor.nodes.limits import git_limits
    from automaton_auditor.storage.results import result_key

    limits = git_limits(settings)
    try:
        commit = commit or head_commit(parse_target(target, limits), limits.timeout_s)
        report_sha = report_sha or sha256_of(Path(report))
    except (InvalidTarget, OSError):
        return None  # invalid input takes the normal path, which reports it
    if commit is None:
        return None
    return result_key(target, report, commit, report_sha, rubric_data, settings)


def _reuse(target: str, report: str, rubric_data: dict[str, Any],
           settings: Settings) -> dict[str, Any] | None:
    """The final state of an identical finished audit, with its report files re-written under
    `settings.output_dir`; None when there is none (or it cannot be read)."""
    from automaton_auditor.output.files import write_report_files
    from automaton_auditor.storage.results import load_result, reusable

    if not reusable(settings):
        return None
    key = _result_key(target, report, rubric_data, settings)
    stored = load_result(settings, key) if key else None
    if stored is None:
        return None
    audit = stored.report.model_copy(update={
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})
    manifest = {**stored.manifest, "reused_result": True, "settings": settings.to_state()}
    files = write_report_files(audit, Path(settings.output_dir), manifest)
    return {"target": target, "report_path": report, "run_id": audit.run_id,
            "input_ok": True, "final_report": audit, "report_files": files,
            "detective_status": stored.detective_status, "aborted": None}


def _remember(final: dict[str, Any], rubric_data: dict[str, Any], settings: Settings) -> None:
    """Store a finished, clean, deterministic audit for reuse (silently skipped otherwise)."""
    from automaton_auditor.storage.results import reusable, store_result

    statuses = final.get("detective_status") or {}
    audit = final_report_of(final)
    manifest_path = (final.get("report_files") or {}).get("manifest")
    if (not reusable(settings) or audit is None or not final.get("input_ok")
            or final.get("aborted") or not final.get("commit") or not manifest_path
            or any(not s.ok for s in statuses.values())):
        return
    try:
        manifest = json.loads(Path(manifest_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    key = _result_key(final["target"], final["report_path"], rubric_data, settings,
                      final["commit"], final.get("report_sha256"))
    if key is not None:
        store_result(settings, key, audit, manifest, statuses)
