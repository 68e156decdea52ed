"""A queued task is hostile input: anyone who can write to the broker can send one.

Before a worker runs a task it checks, without touching a file or the network:

- the shape: exactly a job object and an options object, the job's fields of the right types
  and lengths, a run id of the form `new_run_id` gives, the message under `MAX_TASK_CHARS`;
- the places: every local path it names (target, report, rubric, output folder) lies, after
  symbolic links are resolved, under one of the worker's roots (`audit worker --root`), so a
  task cannot make a worker read or write elsewhere on its machine;
- the settings: they must validate, and those that bound what an audit may cost or reach
  (`CAPPED`, `allowed_hosts`) may be tightened by the task but never loosened past the
  worker's own, so every task still ends within the worker's limits.

A task that fails a check is refused with one line (`BadTask`), never run.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields
from typing import Any

from automaton_auditor.batch import Job, is_url

# A real task is a few kilobytes (paths and settings); far above that is not ours.
MAX_TASK_CHARS = 256 * 1024
MAX_PATH_CHARS = 4096
RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
OPTION_KEYS = frozenset({"settings", "fail_under", "database_url"})
# Settings that bound an audit's time, memory, disk and calls: a task gets the smaller of
# its value and the worker's.
CAPPED = ("call_timeout_s", "max_retries", "max_output_tokens", "max_concurrency",
          "git_timeout_s", "max_repo_mb", "max_files", "max_blob_bytes", "max_report_mb",
          "max_report_pages", "report_timeout_s", "max_ocr_pages", "ocr_budget_s",
          "max_diagrams", "reader_memory_mb", "reader_ocr_memory_mb", "reader_cpu_s",
          "reader_timeout_s")


class BadTask(ValueError):
    """A task a worker refuses to run; the message is one line."""


@dataclass(frozen=True)
class Limits:
    """What a worker lets a task do: its roots (real paths) and its own settings."""

    roots: tuple[str, ...]
    settings: dict[str, Any]


def read_task(args: tuple[Any, ...], kwargs: dict[str, Any],
              limits: Limits) -> tuple[Job, dict[str, Any]]:
    """The job and options of a task, checked; raises `BadTask`."""
    if kwargs or len(args) != 2 or not all(isinstance(a, dict) for a in args):
        raise BadTask("not an audit task: expected a job object and an options object")
    try:
        size = len(json.dumps(args))
    except (TypeError, ValueError):
        size = MAX_TASK_CHARS + 1
    if size > MAX_TASK_CHARS:
        raise BadTask(f"task over {MAX_TASK_CHARS // 1024} KB")
    job = _job(args[0], limits.roots)
    return job, _options(args[1], limits)


def named(args: tuple[Any, ...]) -> tuple[int, str, str]:
    """(row, target, report) as a refused task names them, for its summary line."""
    raw = args[0] if args and isinstance(args[0], dict) else {}
    row = raw.get("row")
    row = row if isinstance(row, int) and not isinstance(row, bool) else 0
    return row, str(raw.get("target") or "")[:300], str(raw.get("report") or "")[:300]


def _text(name: str, value: Any, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_PATH_CHARS \
            or "\x00" in value:
        raise BadTask(f"job {name}: expected a string of 1 to {MAX_PATH_CHARS} characters")
    return value


def _job(raw: dict[str, Any], roots: tuple[str, ...]) -> Job:
    names = {f.name for f in fields(Job)}
    unknown = sorted(str(k)[:40] for k in raw if k not in names)
    if unknown or not {"row", "target", "report"} <= set(raw):
        raise BadTask(f"job fields: unknown {unknown}" if unknown else
                      "job fields: row, target and report are required")
    row = raw["row"]
    if not isinstance(row, int) or isinstance(row, bool) or not 0 <= row < 10**9:
        raise BadTask("job row: expected a row number")
    run_id = _text("run_id", raw.get("run_id"))
    if not RUN_ID.fullmatch(run_id or ""):
        raise BadTask("job run_id: not a run id (YYYYMMDD-HHMMSS-xxxxxx)")
    job = Job(row, str(_text("target", raw["target"])), str(_text("report", raw["report"])),
              _text("rubric", raw.get("rubric"), optional=True),
              str(_text("output_dir", raw.get("output_dir", "audit"))), run_id)
    for name in ("target", "report", "rubric", "output_dir"):
        inside_roots(name, getattr(job, name), roots)
    return job


def inside_roots(name: str, value: str | None, roots: tuple[str, ...]) -> None:
    """Raise `BadTask` unless local path `value` lies under a root (URLs are the
    acquisition's to check, against the capped allowed hosts)."""
    if value is None or (is_url(value) and not value.lower().startswith("file:")):
        return
    if value.lower().startswith("file:"):
        raise BadTask(f"{name}: a file: URL; give the path")
    if not os.path.isabs(value):
        raise BadTask(f"{name}: not an absolute path")
    real = os.path.realpath(value)
    if not any(real == root or real.startswith(root.rstrip(os.sep) + os.sep)
               for root in roots):
        raise BadTask(f"{name} {value[:200]!r} is outside the worker's roots "
                      f"({', '.join(roots)[:300]}; audit worker --root)")


def _options(raw: dict[str, Any], limits: Limits) -> dict[str, Any]:
    from pydantic import ValidationError

    from automaton_auditor.settings import Settings

    unknown = sorted(str(k)[:40] for k in raw if k not in OPTION_KEYS)
    settings = {} if raw.get("settings") is None else raw["settings"]
    fail_under = raw.get("fail_under")
    if unknown or not isinstance(settings, dict) or not (
            fail_under is None or (isinstance(fail_under, int | float)
                                   and not isinstance(fail_under, bool))):
        raise BadTask(f"options: unknown {unknown}" if unknown else
                      "options: settings must be an object, fail_under a number")
    try:
        checked = Settings.from_state(settings)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))[:80]
        raise BadTask(f"settings {where}: {first.get('msg', 'invalid')}"[:300]) from None
    inside_roots("rubric_path", checked.rubric_path, limits.roots)
    state = {k: v for k, v in settings.items() if k in Settings.model_fields}
    for name in CAPPED:
        own = limits.settings.get(name, getattr(checked, name))
        state[name] = min(getattr(checked, name), own)
    allowed = limits.settings.get("allowed_hosts", checked.allowed_hosts)
    state["allowed_hosts"] = [h for h in checked.allowed_hosts if h in allowed]
    return {"settings": state, "fail_under": fail_under}
