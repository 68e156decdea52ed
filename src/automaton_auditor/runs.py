"""Runs: every audit has a run id and is checkpointed, so it can be resumed or replayed.

The run id is the LangGraph thread id. Checkpoints go to ``runs.sqlite`` in the cache
directory through LangGraph's `SqliteSaver` after every step (and the writes of every
finished parallel task), so:

- `stream_audit(input, ...)` runs a new audit; `stream_audit(None, ...)` resumes an
  interrupted or failed one from its last completed step (finished tasks are not re-run);
- `replay(run_id, ...)` re-renders a finished (or judged) run's report from its checkpointed
  state, optionally under another rubric's synthesis rules, without calling any model.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automaton_auditor.cache import default_cache_dir

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from automaton_auditor.config import Settings
    from automaton_auditor.rubric import Rubric

RUNS_DB = "runs.sqlite"
OnUpdate = Callable[[str, Any], None]


class RunError(ValueError):
    """A run id that cannot be resumed or replayed; the message is one line."""


def new_run_id() -> str:
    """A sortable, unique run id: UTC time plus 24 random bits."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def runs_db(root: Path | None = None) -> Path:
    """The checkpoint database (under the cache directory)."""
    return (root or default_cache_dir()) / RUNS_DB


def _serde() -> Any:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from automaton_auditor import state

    # Only our own state models (and LangGraph's safe built-ins) may be revived from disk.
    ours = [state.Evidence, state.JudicialOpinion, state.RuleApplication,
            state.CriterionResult, state.AuditReport, state.RebuiltGraph, state.CitedPath,
            state.FeatureClaim, state.ReportFacts, state.DiagramFacts]
    return JsonPlusSerializer(allowed_msgpack_modules=[(t.__module__, t.__name__) for t in ours])


@contextmanager
def checkpointer(root: Path | None = None) -> Iterator[SqliteSaver]:
    """LangGraph's SQLite checkpointer on ``runs.sqlite`` (WAL: parallel audits share it)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = runs_db(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    with closing(conn):
        conn.execute("PRAGMA journal_mode=WAL")
        saver = SqliteSaver(conn, serde=_serde())
        saver.setup()
        yield saver


def thread_config(run_id: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The graph config that names a run's checkpoint thread."""
    config = dict(extra or {})
    config["configurable"] = {**config.get("configurable", {}), "thread_id": run_id}
    return config


def _enable_opinion_cache(settings: Settings) -> None:
    if settings.reuse_opinions and settings.cache_dir and not settings.offline:
        from automaton_auditor.cache_opinions import enable

        enable(Path(settings.cache_dir))


def stream_audit(graph_input: dict[str, Any] | None, settings: Settings, run_id: str,
                 config: dict[str, Any] | None = None, on_update: OnUpdate | None = None,
                 root: Path | None = None) -> dict[str, Any]:
    """Run (input given) or resume (input None) the audit `run_id`; return the final state.

    `on_update(node, update)` is called after each node. Exceptions propagate: the last
    checkpoint stays, and the run can be resumed.
    """
    from automaton_auditor.graph import compile_graph

    _enable_opinion_cache(settings)
    with checkpointer(root) as saver:
        graph = compile_graph(saver)
        cfg = thread_config(run_id, {"max_concurrency": settings.max_concurrency,
                                     "recursion_limit": 50, **(config or {})})
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


def prune_finished(conn: sqlite3.Connection, run_id: str) -> None:
    """Keep only the last checkpoint of a finished run: replay needs nothing else, and each
    intermediate step holds the whole evidence again (about 2 MB per audit otherwise)."""
    with conn:
        row = conn.execute("SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?",
                           (run_id,)).fetchone()
        if not row or row[0] is None:
            return
        conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id != ?",
                     (run_id, row[0]))
        conn.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id != ?",
                     (run_id, row[0]))


@dataclass(frozen=True)
class RunInfo:
    """What the checkpoints say about one run."""

    run_id: str
    target: str
    report: str
    next_nodes: tuple[str, ...]
    finished: bool
    values: dict[str, Any]

    @property
    def status(self) -> str:
        """done, or where the run stopped."""
        if self.finished:
            return "done"
        return f"stopped before {', '.join(self.next_nodes)}" if self.next_nodes else "stopped"


def load_run(run_id: str, root: Path | None = None) -> RunInfo:
    """The latest checkpoint of `run_id`; raises `RunError` when there is none."""
    from automaton_auditor.graph import compile_graph

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
    """The most recent runs, newest first (checkpoint ids are time-ordered)."""
    path = runs_db(root)
    if not path.exists():
        return []
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)) as conn:
            rows = conn.execute("SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints "
                                "GROUP BY thread_id ORDER BY last DESC LIMIT ?",
                                (limit,)).fetchall()
    except sqlite3.Error:
        return []
    runs = []
    for (thread_id, _last) in rows:
        try:
            runs.append(load_run(str(thread_id), root))
        except RunError:
            continue
    return runs


def replay_state(info: RunInfo, rubric: Rubric | None = None,
                 output_dir: str | None = None) -> dict[str, Any]:
    """A finished run's state re-ruled and re-rendered: the Chief Justice (pure Python)
    applies `rubric`'s synthesis rules (default: the run's own rubric) to the checkpointed
    opinions, and the report writer writes the files. No model is called; nothing is
    written to the checkpoints."""
    from automaton_auditor.config import Settings
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
        values["rubric"] = rubric.model_dump()
    if output_dir is not None:
        settings = Settings.from_state(values.get("settings"))
        values["settings"] = {**settings.to_state(), "output_dir": output_dir}
    previous = [e for e in values.get("errors") or [] if not e.startswith("rubric: ")]
    ruling = chief_justice(values)  # type: ignore[arg-type]
    values.update(results=ruling["results"], errors=previous + ruling["errors"],
                  timings={**(values.get("timings") or {}), **ruling["timings"]})
    values.update(report_writer(values))  # type: ignore[arg-type]
    return values
