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
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automaton_auditor.exits import (
    NOTHING_TO_RESUME,
    ExitCode,
    interruption,
    is_interrupt,
    set_resume_hint,
)
from automaton_auditor.service.outcome import (
    Gates,
    Outcome,
    exit_code,
    outcome_of,
    parse_fail_on,
    run_status,
)
from automaton_auditor.service.partial import partial_report, replay_state

__all__ = ["Gates", "Outcome", "RubricRefused", "load_rubric_or_refuse", "parse_fail_on",
           "recent_runs", "replay_audit", "resume_audit", "run_audit", "run_status"]
from automaton_auditor.state import final_report_of
from automaton_auditor.storage import checkpoints
from automaton_auditor.storage.postgres import RunStoreError
from automaton_auditor.storage.runs import RunError, RunInfo, new_run_id, thread_config

if TYPE_CHECKING:  # pydantic is imported when a run starts: `audit --help` stays fast
    from automaton_auditor.rubric import Rubric
    from automaton_auditor.settings import Settings

OnUpdate = Callable[[str, Any], None]


class RubricRefused(ValueError):
    """The rubric cannot be used (nothing is written: exit 2)."""


def load_rubric_or_refuse(target: str, report: str, settings: Settings) -> Rubric:
    """The run's rubric; a malformed one is refused before anything is written."""
    from automaton_auditor.rubric import RubricError, load_rubric

    try:
        return load_rubric(Path(settings.rubric_path) if settings.rubric_path else None)
    except RubricError as exc:
        raise RubricRefused(f"bad rubric: {exc}") from None


def check_inputs(state: dict[str, Any]) -> dict[str, Any] | None:
    """Validate the inputs before anything heavy is imported or anything is written: bad
    input answers fast with one line and exit 2, and leaves every earlier report as it was."""
    from automaton_auditor.nodes.context import context_builder

    checked = {**state, **context_builder(state)}  # type: ignore[arg-type]
    return None if checked["input_ok"] else checked


def run_audit(target: str, report: str, rubric: Rubric, settings: Settings, *,
              gates: Gates | None = None, on_update: OnUpdate | None = None,
              prefetch: bool = True, run_id: str | None = None) -> Outcome:
    """Audit `target` and `report` under `rubric`; never raises. A given `run_id` (a queue
    task's) that already started is never started over: it answers from its end or resumes."""
    database_url = settings.database_url  # None: runs.sqlite in the cache directory
    known = run_id and _continue(run_id, gates, on_update, database_url, queued=True)
    if known:
        return known
    rubric_data = rubric.to_state()
    rejected = check_inputs({"target": target, "report_path": report, "rubric": rubric_data,
                             "settings": settings.to_state()})
    if rejected is not None:
        return outcome_of(rejected, gates)
    # An unchanged deterministic audit is answered from its finished run (no graph at all).
    final = _reuse(target, report, rubric_data, settings)
    if final is not None:
        return outcome_of(final, gates)
    if prefetch:
        _prefetch_report(report, rubric, settings)
    run_id = run_id or new_run_id()
    state = {"target": target, "report_path": report, "rubric": rubric_data,
             "settings": settings.to_state(), "run_id": run_id}
    try:
        outcome = _guarded(run_id, gates, lambda: stream_audit(
            state, settings, run_id, on_update, database_url=database_url),
            _runs_root(settings), database_url, {**state, "input_ok": True})
    finally:
        from automaton_auditor.forensics.pdf import prefetch as report_prefetch

        report_prefetch.cancel_all()
    if outcome.code != ExitCode.INTERRUPTED:
        _remember(outcome.final, rubric_data, settings)
    return outcome


def resume_audit(run_id: str, *, gates: Gates | None = None,
                 on_update: OnUpdate | None = None, database_url: str | None = None) -> Outcome:
    """Continue an interrupted or failed run from its last completed step; never raises."""
    outcome = _continue(run_id, gates, on_update, database_url)
    assert outcome is not None  # only a queued run may be unknown
    return outcome


def _continue(run_id: str, gates: Gates | None, on_update: OnUpdate | None,
              database_url: str | None, queued: bool = False) -> Outcome | None:
    """Resume run `run_id`. For a queued run (a task delivered again), a finished run answers
    with its end and an unknown one gives None (start it); otherwise both are input errors."""
    try:
        info = load_run(run_id, database_url=database_url)
    except RunError as exc:
        if queued and not isinstance(exc, RunStoreError):
            return None
        return Outcome({"run_id": run_id}, ExitCode.INPUT, str(exc))
    if info.finished and queued:
        return replace(outcome_of(info.values, gates), resumed_from=info.status)
    fork = None
    if info.finished:
        if run_status(info.values, True) != "failed":
            return Outcome(info.values, ExitCode.INPUT,
                           f"run {run_id} is finished; use `audit replay {run_id}` to re-render "
                           "its report")
        fork = detectives_checkpoint(run_id, database_url=database_url)  # detectives again
        if fork is None:
            return Outcome(info.values, ExitCode.INPUT,
                           f"run {run_id} failed before its detectives; audit it again")
    from automaton_auditor.settings import Settings

    settings = Settings.from_state(info.values.get("settings"))
    outcome = _guarded(run_id, gates, lambda: stream_audit(
        None, settings, run_id, on_update, info.values, fork, database_url=database_url),
        None, database_url)
    return replace(outcome, resumed_from=info.status)


def replay_audit(run_id: str, rubric: Rubric | None = None, output_dir: str | None = None, *,
                 gates: Gates | None = None, database_url: str | None = None) -> Outcome:
    """Re-rule and re-render a judged run's report from its checkpoint; never raises."""
    try:
        final = replay_state(load_run(run_id, database_url=database_url), rubric, output_dir)
    except RunError as exc:
        return Outcome({}, ExitCode.INPUT, str(exc))
    return outcome_of(final, gates)


def _resume_hint(run_id: str, root: Path | None, database_url: str | None) -> str:
    """How to continue `run_id`: offered only when a checkpoint of it exists."""
    if checkpoints.has_checkpoint(run_id, root, database_url):
        return f"resume with: audit resume {run_id}"
    return NOTHING_TO_RESUME


def _guarded(run_id: str, gates: Gates | None, run: Callable[[], dict[str, Any]],
             root: Path | None = None, database_url: str | None = None,
             started: dict[str, Any] | None = None) -> Outcome:
    """`run()`'s outcome, with a crash or Ctrl-C turned into one line that says how to resume
    and a partial report from the last checkpoint, or from `started` (the checked input)
    when there is none yet (a library may wrap Ctrl-C into another exception: it is still an
    interrupt)."""
    # A SIGTERM's grace period may end while a node still runs: the hint is said then.
    set_resume_hint(lambda: _resume_hint(run_id, root, database_url))
    try:
        final = run()
    except KeyboardInterrupt:  # SIGTERM and SIGHUP take this path too (`exits`)
        return _stopped(run_id, root, database_url, interruption(), started=started)
    except RunStoreError as exc:  # the run database is unusable: nothing ran
        return Outcome({"run_id": run_id}, ExitCode.INPUT, str(exc))
    except Exception as exc:  # the graph degrades internally; this is the last line of defence
        if is_interrupt(exc):
            return _stopped(run_id, root, database_url, interruption(), started=started)
        return _stopped(run_id, root, database_url, f"{type(exc).__name__}: {exc}",
                        ExitCode.FAILED, started)
    finally:
        set_resume_hint(None)
    return outcome_of(final, gates)


def _stopped(run_id: str, root: Path | None, database_url: str | None, why: str,
             code: ExitCode = ExitCode.INTERRUPTED, started: dict[str, Any] | None = None
             ) -> Outcome:
    """The outcome of a run stopped (or crashed) for reason `why`: its partial report written
    from the last checkpoint (or from `started`), and one line saying so and how to resume."""
    hint = _resume_hint(run_id, root, database_url)
    try:
        values = dict(load_run(run_id, root, database_url).values)
    except Exception:  # no checkpoint yet, or it cannot be read
        values = dict(started or {})
    final = partial_report(values, why)
    written = "partial report written; " if final is not None else "no report written; "
    if code == ExitCode.INTERRUPTED:
        return Outcome(final or {"run_id": run_id}, code, f"{why}; {written}{hint}")
    return Outcome(final or {"run_id": run_id}, code, f"audit failed: {why} ({written}{hint})")


def stream_audit(graph_input: dict[str, Any] | None, settings: Settings, run_id: str,
                 on_update: OnUpdate | None = None, resumed: dict[str, Any] | None = None,
                 fork: str | None = None, *, database_url: str | None = None
                 ) -> dict[str, Any]:
    """Run (input given) or resume (input None) the audit `run_id`; return the final state.
    `fork` names a checkpoint to continue from instead of the last one (a failed run).

    `on_update(node, update)` is called after each node. Exceptions propagate: the last
    checkpoint stays, and the run can be resumed. A failed run keeps its checkpoints (resume
    runs its detectives again); a finished one keeps only its last.
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
    with checkpoints.open_checkpointer(_runs_root(settings), database_url) as saver:
        graph = compile_graph(saver)
        cfg = thread_config(run_id, {"max_concurrency": settings.max_concurrency,
                                     "recursion_limit": 50, **trace})
        if fork is not None:
            cfg["configurable"]["checkpoint_id"] = fork
        final: dict[str, Any] = dict(graph_input or graph.get_state(cfg).values)
        for mode, chunk in graph.stream(graph_input, cfg, stream_mode=["updates", "values"]):
            if mode == "values":
                final = chunk
                continue
            for node, update in chunk.items():
                if on_update is not None:
                    on_update(node, update)
        head = thread_config(run_id)
        if not graph.get_state(head).next and exit_code(final) != ExitCode.FAILED:
            checkpoints.prune_finished(saver, run_id)
    return final


def _runs_root(settings: Settings) -> Path | None:
    """Runs live in the cache directory; with --no-cache, in the default one all the same
    (resume must work)."""
    return None if settings.cache_dir is None else Path(settings.cache_dir)


def _enable_opinion_cache(settings: Settings) -> None:
    if settings.reuse_opinions and settings.cache_dir and not settings.offline:
        from automaton_auditor.storage.opinions import enable

        enable(Path(settings.cache_dir))


def load_run(run_id: str, root: Path | None = None,
             database_url: str | None = None) -> RunInfo:
    """The latest checkpoint of `run_id`; raises `RunError` when there is none."""
    from automaton_auditor.graph import compile_graph

    if not checkpoints.runs_recorded(root, database_url):
        raise RunError(f"no run {run_id!r} (no runs recorded in "
                       f"{Path(checkpoints.location(root)).parent})")
    with checkpoints.open_checkpointer(root, database_url) as saver:
        snapshot = compile_graph(saver).get_state(thread_config(run_id))
    values = dict(snapshot.values or {})
    if not values:
        raise RunError(f"no run {run_id!r} in {checkpoints.location(root, database_url)}")
    finished = not snapshot.next and "final_report" in values
    return RunInfo(run_id, str(values.get("target", "")), str(values.get("report_path", "")),
                   tuple(snapshot.next), finished, values)


def detectives_checkpoint(run_id: str, root: Path | None = None,
                          database_url: str | None = None) -> str | None:
    """The checkpoint of `run_id` taken just before its detectives ran (None if none kept)."""
    from automaton_auditor.graph import compile_graph

    with checkpoints.open_checkpointer(root, database_url) as saver:
        for snapshot in compile_graph(saver).get_state_history(thread_config(run_id)):
            if "repo_investigator" in snapshot.next:
                return str(snapshot.config["configurable"]["checkpoint_id"])
    return None


def recent_runs(limit: int = 20, root: Path | None = None,
                database_url: str | None = None) -> list[RunInfo]:
    """The most recent runs, newest first; `RunStoreError` when the database is unusable."""
    runs = []
    for thread_id in checkpoints.recent_thread_ids(limit, root, database_url):
        try:
            runs.append(load_run(thread_id, root, database_url))
        except RunError:
            continue
    return runs


def _prefetch_report(report: str, rubric: Rubric, settings: Settings) -> None:
    """Start reading the report in a second process while this one starts the graph."""
    from automaton_auditor.forensics.pdf import prefetch as report_prefetch
    from automaton_auditor.nodes.limits import (
        cache_dir,
        reader_bounds,
        report_limits,
        vision_limits,
    )
    from automaton_auditor.rubric import concept_terms

    report_prefetch.prefetch_report(report, concept_terms(rubric), report_limits(settings),
                                    vision_limits(settings), reader_bounds(settings),
                                    cache_dir(settings),
                                    vision_cached=not settings.vision_model)


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
