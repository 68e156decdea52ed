"""Whole-audit reuse: an audit whose inputs did not change is answered from its finished run.

"Unchanged" means the same target and report as given, the same commit SHA (read without
cloning), the same report SHA-256, the same rubric, the same settings (the output folder
aside) and the same auditor code (a digest of the package's sources, prompts and data).
Only deterministic runs are reused: the offline bench, no vision model, a finished run with
valid input that neither aborted nor lost a detective. The report is re-written (new
date) under the run id of the run that produced it, so `audit replay` still works on it;
the manifest says ``"reused_result": true``. No LangGraph import, no detective, no judge:
this is what makes a warm re-audit near-instant. `--no-cache` bypasses it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from automaton_auditor.cache import KeyValueStore, digest_of
from automaton_auditor.config import Settings
from automaton_auditor.tools.pdf_ingest import sha256_of

KIND = "result"
# Settings that do not change what an audit finds or rules.
_NEUTRAL_SETTINGS = ("output_dir", "cache_dir", "reuse_opinions", "max_concurrency")


@cache
def code_version() -> str:
    """A digest of the auditor's code, prompts and embedded data."""
    digest = hashlib.sha256()
    root = resources.files("automaton_auditor")
    stack = [root]
    files = []
    while stack:
        folder = stack.pop()
        for item in folder.iterdir():
            if item.is_dir() and item.name != "__pycache__":
                stack.append(item)
            elif item.name.endswith((".py", ".md", ".json")):
                files.append(item)
    for item in sorted(files, key=lambda f: str(f)):
        digest.update(str(item).removeprefix(str(root)).encode())
        digest.update(item.read_bytes())
    return digest.hexdigest()[:16]


def reusable(settings: Settings) -> bool:
    """Whether runs under these settings are deterministic enough to be reused."""
    return bool(settings.cache_dir) and settings.offline and not settings.vision_model


def result_key(target: str, report: str, commit: str, report_sha: str,
               rubric: dict[str, Any], settings: Settings) -> str:
    """The key of a finished audit's result."""
    shaping = {k: v for k, v in settings.to_state().items() if k not in _NEUTRAL_SETTINGS}
    return digest_of(target, report, commit, report_sha, rubric, shaping, code_version())


def _current_key(target: str, report: str, rubric: dict[str, Any],
                 settings: Settings) -> str | None:
    from automaton_auditor.cache_head import head_commit
    from automaton_auditor.tools.git import GitLimits, InvalidTarget, parse_target

    limits = GitLimits(timeout_s=settings.git_timeout_s,
                       allowed_hosts=tuple(settings.allowed_hosts))
    try:
        commit = head_commit(parse_target(target, limits), limits.timeout_s)
        report_sha = sha256_of(Path(report))
    except (InvalidTarget, OSError):
        return None  # invalid input takes the normal path, which reports it
    if commit is None:
        return None
    return result_key(target, report, commit, report_sha, rubric, settings)


def reuse(target: str, report: str, rubric: dict[str, Any],
          settings: Settings) -> dict[str, Any] | None:
    """The final state of an identical finished audit, with its report files re-written under
    `settings.output_dir`; None when there is none (or it cannot be read)."""
    if not reusable(settings):
        return None
    key = _current_key(target, report, rubric, settings)
    body = KeyValueStore(Path(settings.cache_dir or "")).get(KIND, key) if key else None
    if body is None:
        return None
    from automaton_auditor.report.files import write_report_files
    from automaton_auditor.state import AuditReport

    try:
        stored = json.loads(body)
        audit = AuditReport.model_validate(stored["report"])
        manifest = dict(stored["manifest"])
    except (ValueError, KeyError, TypeError):
        return None  # unreadable: run the audit (which stores a fresh entry)
    audit = audit.model_copy(update={
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})
    manifest.update(reused_result=True, settings=settings.to_state())
    files = write_report_files(audit, Path(settings.output_dir), manifest)
    return {"target": target, "report_path": report, "run_id": audit.run_id,
            "input_ok": True, "final_report": audit, "report_files": files,
            "detective_status": stored.get("detective_status") or {}, "aborted": None}


def remember(final: dict[str, Any], rubric: dict[str, Any], settings: Settings) -> None:
    """Store a finished, clean, deterministic audit for reuse (silently skipped otherwise)."""
    statuses = final.get("detective_status") or {}
    audit = final.get("final_report")
    manifest_path = (final.get("report_files") or {}).get("manifest")
    if (not reusable(settings) or audit is None or not final.get("input_ok")
            or final.get("aborted") or not final.get("commit") or not manifest_path
            or any(not str(s).startswith("ok") for s in statuses.values())):
        return
    try:
        manifest = json.loads(Path(manifest_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    key = result_key(final["target"], final["report_path"], final["commit"],
                     final.get("report_sha256") or sha256_of(Path(final["report_path"])),
                     rubric, settings)
    body = json.dumps({"report": audit.model_dump(mode="json"), "manifest": manifest,
                       "detective_status": statuses})
    KeyValueStore(Path(settings.cache_dir or "")).put(KIND, key, body)
