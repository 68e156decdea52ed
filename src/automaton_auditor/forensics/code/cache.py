"""Per-file AST facts cached by git blob id, so a second audit of a commit parses nothing.

Entries live in the shared key-value store (`storage.kv`, file ``ast_facts.sqlite``): a key is
``<facts version>:<blob id>:<path>`` (facts mention their path, so identical blobs at two paths
are two entries), and a whole result is keyed by every tracked blob id plus the auditor's code
version. A corrupt entry is ignored and rebuilt; the cache can only save time, never change facts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.walk import FACTS_VERSION
from automaton_auditor.state import Finding, RebuiltGraph
from automaton_auditor.storage.kv import KeyValueStore, code_version

DB_NAME = "ast_facts.sqlite"
FILE_KIND, RESULT_KIND = "file", "result"


def _key(blob: str, path: str) -> str:
    return f"{FACTS_VERSION}:{blob}:{path}"


def _store(cache_dir: Path) -> KeyValueStore:
    return KeyValueStore(cache_dir, DB_NAME)


def load(cache_dir: Path, wanted: Iterable[tuple[str, str]]) -> dict[str, JSON]:
    """Cached facts by path for the (path, blob) pairs present and readable."""
    keys = {_key(blob, path): path for path, blob in wanted}
    found: dict[str, JSON] = {}
    for key, body in _store(cache_dir).get_many(FILE_KIND, list(keys)).items():
        try:
            value = json.loads(body)
        except (ValueError, TypeError):
            continue  # a corrupt entry is parsed again and overwritten
        if isinstance(value, dict) and key in keys:
            found[keys[key]] = value
    return found


def store(cache_dir: Path, entries: Iterable[tuple[str, str, JSON]]) -> None:
    """Save facts for (path, blob, facts) triples; failures only cost a future re-parse."""
    _store(cache_dir).put_many(FILE_KIND, [(_key(blob, path), json.dumps(facts, sort_keys=True))
                                           for path, blob, facts in entries])


def result_key(blobs: dict[str, str]) -> str:
    """Key of a whole result: every tracked path with its blob id, and the code version."""
    digest = hashlib.sha256(f"{FACTS_VERSION}:{code_version()}".encode())
    for path, blob in sorted(blobs.items()):
        digest.update(f"{path}\0{blob}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def load_result(cache_dir: Path, key: str) -> tuple[list[Finding], RebuiltGraph | None] | None:
    """A cached (findings, graph) pair, or None (absent or corrupt)."""
    body = _store(cache_dir).get(RESULT_KIND, key)
    if body is None:
        return None
    try:
        data = json.loads(body)
        findings = [Finding.model_validate(item) for item in data["findings"]]
        graph = RebuiltGraph.model_validate(data["graph"]) if data["graph"] else None
    except (ValueError, TypeError, KeyError):
        return None
    return findings, graph


def store_result(cache_dir: Path, key: str,
                 result: tuple[list[Finding], RebuiltGraph | None]) -> None:
    """Save a whole result; a failure only costs recomputing it."""
    findings, graph = result
    body = json.dumps({"findings": [f.model_dump(mode="json") for f in findings],
                       "graph": graph.model_dump(mode="json") if graph else None})
    _store(cache_dir).put(RESULT_KIND, key, body)
