"""Write the report files: Markdown, its JSON twin and the run manifest."""

from __future__ import annotations

import hashlib
import json
import platform
import re
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from automaton_auditor.output.document import report_json, sarif_json
from automaton_auditor.output.markdown import render_markdown
from automaton_auditor.safefile import write_atomic
from automaton_auditor.state import AuditReport

VERSIONED = ("automaton-auditor", "langgraph", "langchain-core", "docling-slim", "pypdfium2")


def _safe(name: str) -> str:
    return (re.sub(r"[^\w.-]+", "_", name).strip("._") or "target")[:80]


def target_slug(target: str) -> str:
    """The report folder of a target, unique per target: ``owner/name`` for URLs (nested
    folders), the folder name plus a short hash of the absolute path for local targets (two
    folders both named ``repo`` never share a report folder)."""
    parsed = urlparse(target)
    if parsed.scheme in {"http", "https"} and parsed.netloc:
        parts = [_safe(p) for p in parsed.path.removesuffix(".git").split("/") if p][:2]
        return "/".join(parts) or _safe(parsed.netloc)
    path = Path(target).expanduser().resolve()
    digest = hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{_safe(path.name)}-{digest}"


def package_versions() -> dict[str, str]:
    """Versions of the packages that shape a result."""
    versions = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def write_report_files(report: AuditReport, output_dir: Path,
                       manifest: dict[str, Any]) -> dict[str, str]:
    """Write `report.md`, `report.json`, `report.sarif` and `run_manifest.json` under a
    per-target folder, all of them or none (`safefile.write_atomic`)."""
    folder = output_dir / target_slug(report.repo_url)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": folder / "report.md", "json": folder / "report.json",
             "sarif": folder / "report.sarif", "manifest": folder / "run_manifest.json"}
    # All four or none: a full disk leaves no truncated report.md beside "no report written".
    write_atomic({paths["markdown"]: render_markdown(report),
                  paths["json"]: report_json(report),
                  paths["sarif"]: sarif_json(report),
                  paths["manifest"]: json.dumps(manifest, indent=2, sort_keys=True,
                                                default=str) + "\n"})
    return {kind: str(path) for kind, path in paths.items()}
