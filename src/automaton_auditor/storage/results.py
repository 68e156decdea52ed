"""Whole-audit reuse: an audit whose inputs did not change is answered from its finished run.

"Unchanged" means the same target and report as given, the same commit SHA (read without
cloning), the same report SHA-256, the same rubric, the same settings (the output folder
aside) and the same auditor code (`kv.code_version`). Only deterministic runs are reused:
the offline bench, no vision model, a finished run with valid input that neither aborted nor
lost a detective. The service re-writes the report (new date) under the run id of the run
that produced it, so `audit replay` still works on it. `--no-cache` bypasses it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automaton_auditor.settings import Settings
from automaton_auditor.state import AuditReport, DetectiveStatus
from automaton_auditor.storage.kv import KeyValueStore, code_version, digest_of

KIND = "result"
# Settings that do not change what an audit finds or rules.
_NEUTRAL_SETTINGS = ("output_dir", "cache_dir", "reuse_opinions", "max_concurrency")


@dataclass(frozen=True)
class StoredResult:
    """A finished audit as stored: its report, manifest and detective statuses."""

    report: AuditReport
    manifest: dict[str, Any]
    detective_status: dict[str, DetectiveStatus]


def reusable(settings: Settings) -> bool:
    """Whether runs under these settings are deterministic enough to be reused."""
    return bool(settings.cache_dir) and settings.offline and not settings.vision_model


def result_key(target: str, report: str, commit: str, report_sha: str,
               rubric: dict[str, Any], settings: Settings) -> str:
    """The key of a finished audit's result."""
    shaping = {k: v for k, v in settings.to_state().items() if k not in _NEUTRAL_SETTINGS}
    return digest_of(target, report, commit, report_sha, rubric, shaping, code_version())


def load_result(settings: Settings, key: str) -> StoredResult | None:
    """The stored result under `key`, or None when absent or unreadable."""
    body = KeyValueStore(Path(settings.cache_dir or "")).get(KIND, key)
    if body is None:
        return None
    try:
        stored = json.loads(body)
        return StoredResult(AuditReport.model_validate(stored["report"]),
                            dict(stored["manifest"]),
                            {k: DetectiveStatus.model_validate(v)
                             for k, v in (stored.get("detective_status") or {}).items()})
    except (ValueError, KeyError, TypeError):
        return None  # unreadable: the audit runs (and stores a fresh entry)


def store_result(settings: Settings, key: str, report: AuditReport, manifest: dict[str, Any],
                 detective_status: dict[str, DetectiveStatus]) -> None:
    """Store a finished audit under `key`."""
    body = json.dumps({"report": report.model_dump(mode="json"), "manifest": manifest,
                       "detective_status": {k: v.model_dump()
                                            for k, v in detective_status.items()}})
    KeyValueStore(Path(settings.cache_dir or "")).put(KIND, key, body)
