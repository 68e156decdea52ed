"""The detectives' cached facts: repository facts by commit SHA, parsed reports by SHA-256.

Entries are the detectives' outputs *before* rubric routing (findings, not evidence), so a
changed rubric re-routes cached facts; only the doc entry depends on the rubric, through its
concept terms, which are part of its key. Every key carries `detective_version()`.

Determinism: a cold run passes its facts through the same JSON form a warm run reads
(`roundtrip`), so cold and warm runs hand the graph identical objects.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field, ValidationError
from pydantic_core import PydanticSerializationError

from automaton_auditor.state import CodeNames, DiagramFacts, Finding, RebuiltGraph, ReportFacts
from automaton_auditor.storage.kv import KeyValueStore, detective_version, digest_of
from automaton_auditor.text import encodable_tree

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class RepoFacts(BaseModel):
    """What the repo detective learnt about one commit."""

    commit: str
    files: list[str]
    findings: list[Finding]
    code_graph: RebuiltGraph | None = None
    code_names: CodeNames | None = None


class DocFacts(BaseModel):
    """What the doc detective learnt about one report (for one set of concept terms)."""

    findings: list[Finding]
    report_facts: ReportFacts | None = None
    warnings: list[str] = Field(default_factory=list)


class VisionFacts(BaseModel):
    """The model-free diagram facts of one report."""

    findings: list[Finding]
    diagrams: list[DiagramFacts]


def roundtrip(value: M) -> M:
    """`value` as a warm run would read it back (JSON), so cold and warm runs agree.

    Every fact taken from audited files passes here, so this is where text JSON cannot carry
    (a lone surrogate in a node name) is made `encodable`: a student's string must never
    stop the facts, and with them the criteria, from being judged."""
    try:
        return type(value).model_validate_json(value.model_dump_json())
    except (PydanticSerializationError, UnicodeEncodeError):
        clean = type(value).model_validate(encodable_tree(value.model_dump()))
        return type(value).model_validate_json(clean.model_dump_json())


def repo_key(commit: str, depth: int | None, max_files: int, max_blob_bytes: int) -> str:
    """Key of a commit's facts: the SHA, the acquisition limits that shape them, the version."""
    return f"{commit}:{digest_of(depth, max_files, max_blob_bytes)[:12]}:{detective_version()}"


def report_key(sha256: str, extra: object) -> str:
    """Key of a report's facts: its SHA-256, what else shapes them (concept terms, limits)."""
    return f"{sha256}:{digest_of(extra)[:16]}:{detective_version()}"


def doc_key(sha256: str, terms: list[str], limits: object) -> str:
    """Key of a report's doc facts: its SHA-256, the concept terms, the ingestion limits and
    whether docling's full pipeline was asked for."""
    import os

    return report_key(sha256, {"concepts": terms, "limits": limits_key(limits),
                               "full": os.environ.get("AUDITOR_DOCLING_FULL") == "1"})


def load(root: Path, kind: str, key: str, model: type[M]) -> M | None:
    """A cached entry, or None when absent; a corrupt entry is dropped and reads as absent."""
    body = KeyValueStore(root).get(kind, key)
    if body is None:
        return None
    try:
        return model.model_validate_json(body)
    except (ValidationError, ValueError):
        log.warning("cache entry %s/%s is unreadable; rebuilding it", kind, key[:24])
        KeyValueStore(root).delete(kind, key)
        return None


def save(root: Path, kind: str, key: str, value: BaseModel) -> None:
    """Store an entry (failures are silent: they only cost a recomputation)."""
    KeyValueStore(root).put(kind, key, value.model_dump_json())


def valid_sha(value: str) -> bool:
    """True for a full SHA-1 or SHA-256 object name."""
    return bool(_SHA.match(value))


def limits_key(limits: object) -> dict[str, object]:
    """The fields of a limits dataclass, for a cache key."""
    from dataclasses import asdict, is_dataclass

    return asdict(limits) if is_dataclass(limits) and not isinstance(limits, type) else {}
