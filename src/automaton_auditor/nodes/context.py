"""context_builder: validates the inputs before any detective runs."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.git.acquire import InvalidTarget, Target, parse_target
from automaton_auditor.forensics.pdf.ingest import sha256_of
from automaton_auditor.nodes.limits import git_limits
from automaton_auditor.rubric import load_rubric
from automaton_auditor.safefile import is_regular
from automaton_auditor.settings import Settings
from automaton_auditor.state import AgentState

DETECTIVES = ["repo_investigator", "doc_analyst", "vision_inspector"]


def _check_report(path: Path) -> str | None:
    """Why the report path is no usable input (exit 2), or None. A present regular file whose
    content cannot be read is evidence instead: its criteria are not judged (exit 0)."""
    if not path.exists():
        return f"report not found: {path}"
    if not is_regular(path):
        return f"report is not a regular file: {path}"
    if not os.access(path, os.R_OK):
        return f"report is not readable: {path}"
    return None


def _uncommitted(target: Target, settings: Settings) -> list[str]:
    """The local target's paths that differ from its last commit (not audited)."""
    if target.kind != "local":
        return []
    from automaton_auditor.forensics.git.worktree import uncommitted_changes

    return uncommitted_changes(Path(target.value), min(20.0, settings.git_timeout_s)) or []


def _settings(state: AgentState) -> Settings:
    """The run's settings. Callers other than the CLI (LangGraph Server, the SDK) may send
    only target and report: they get the serving process's layered settings (its project
    config and AUDITOR_* environment; never anything from the target)."""
    if state.get("settings"):
        return Settings.from_state(state.get("settings"))
    from automaton_auditor.settings.layers import SettingsError, resolve_settings

    try:
        return resolve_settings(targets=[str(state.get("target") or "")],
                                export_dotenv=False).settings
    except SettingsError:
        return Settings()


def receive_report(state: AgentState, settings: Settings) -> tuple[dict[str, Any], str | None]:
    """A report sent as bytes (`report_base64`, LangGraph Server callers on another machine)
    written to ``inbox/<sha256><suffix>`` under the cache directory (or the user's private
    fallback cache), by a rename onto that name, so nothing planted there is followed:
    the state update that points `report_path` at it, and a problem if it cannot be taken."""
    import base64
    import binascii
    import hashlib

    encoded = state.get("report_base64") or ""
    if not encoded:
        return {}, None
    update: dict[str, Any] = {"report_base64": ""}  # the bytes are not kept in the state
    if len(encoded) * 3 // 4 > settings.max_report_mb * 1024 * 1024:
        return update, f"report too large: more than {settings.max_report_mb} MB"
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return update, "report_base64 is not valid base64"
    from automaton_auditor.safefile import replace_bytes
    from automaton_auditor.storage.kv import default_cache_dir, fallback_cache_dir, make_cache_dir

    # Never a shared folder such as /tmp/inbox, where another user could plant the name
    inbox = Path(settings.cache_dir or default_cache_dir()) / "inbox"
    suffix = Path(state.get("report_path") or "report.pdf").suffix.lower()[:8] or ".pdf"
    try:
        try:
            make_cache_dir(inbox)  # never a home directory that does not exist
        except OSError:  # a missing or read-only home: the user's private fallback cache
            inbox = fallback_cache_dir() / "inbox"
            inbox.mkdir(exist_ok=True)
        path = inbox / f"{hashlib.sha256(data).hexdigest()}{suffix}"
        replace_bytes(path, data)  # a link or FIFO planted under that name is replaced
    except OSError as exc:
        return update, f"the report sent as bytes could not be stored: {exc.strerror or exc}"
    update["report_path"] = str(path)
    return update, None


def context_builder(state: AgentState) -> dict[str, Any]:
    """Validate the target and the report; the first problem becomes `input_error`."""
    settings = _settings(state)
    problems: list[str] = []
    target = None
    try:
        target = parse_target(state["target"], git_limits(settings))
    except InvalidTarget as exc:
        problems.append(str(exc))
    update, received_problem = receive_report(state, settings)
    report = Path(update.get("report_path") or state["report_path"])
    report_problem = received_problem or _check_report(report)
    update["started_at"] = time.time()
    if not state.get("settings"):
        update["settings"] = settings.to_state()
    if not state.get("rubric"):
        update["rubric"] = load_rubric().to_state()
    if report_problem:
        problems.append(report_problem)
    else:
        try:
            update["report_sha256"] = sha256_of(report)
        except OSError as exc:
            problems.append(f"report is not readable: {report}: {exc.strerror}")
    update["input_ok"] = not problems
    update["input_error"] = problems[0] if problems else None
    update["errors"] = [f"input: {p}" for p in problems]
    changed = _uncommitted(target, settings) if target is not None and not problems else []
    if changed:
        update["uncommitted"] = changed
        update["errors"].append(
            f"input: warning: the local target has uncommitted changes ({len(changed)} "
            f"path(s), e.g. {changed[0]}); the audit reads its last commit, not the work tree")
    return update


def route_after_context(state: AgentState) -> list[str] | str:
    """Valid input fans out to the three detectives; invalid input goes straight to the
    report writer, which still writes a report saying why."""
    return DETECTIVES if state.get("input_ok") else "report_writer"
