"""The machine-readable twins of the report: report.json (every key of `AuditReport`, plus a
schema version, structured locations, the failure facts, top risks and warnings) and
report.sarif; and reading a report.json back.

Schema versions: a report.json without ``schema_version`` is 1.0. 1.1 adds, beside the
existing keys: ``schema_version``; ``path``, ``line`` (and ``url`` for GitHub targets) on
every evidence item; ``failures`` (every failure fact once, with its criteria),
``top_risks`` and ``warnings`` (the auditor's own limitations). 1.2 writes ``final_score``
as null on a criterion that was not judged (``judged: false``): its score was a placeholder,
and ``jq '.criteria[].final_score'`` must not read it as a 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from automaton_auditor.output.locations import location_url, parse_location
from automaton_auditor.output.risks import (
    FailureFact,
    all_evidence,
    failure_facts,
    limitations,
    top_risks,
)
from automaton_auditor.output.sarif import sarif_log
from automaton_auditor.safefile import UnsafeFile, loads_untrusted, read_bounded_text
from automaton_auditor.state import AuditReport

SCHEMA_VERSION = "1.2"
# A report.json read back (`--baseline`, `audit diff`) is hostile input like a rubric. A real
# one is a few hundred KB (capped facts, at most `max_files` paths); past this it is not ours,
# and decoding it would cost ~20 times its size in memory.
MAX_REPORT_BYTES = 20_000_000


class ReportFileError(ValueError):
    """A file that is not a report.json this tool wrote (one line, for an `error:`)."""


def fact_record(fact: FailureFact) -> dict[str, Any]:
    """A failure fact as JSON."""
    where = fact.where
    return {"facet": fact.facet, "goal": fact.goal, "rationale": fact.rationale,
            "location": fact.location, "path": where.path, "line": where.line,
            "consequence": fact.consequence, "confirmed": fact.confirmed,
            "confidence": fact.confidence, "criteria": list(fact.criteria),
            "evidence_ids": list(fact.evidence_ids)}


def report_document(report: AuditReport) -> dict[str, Any]:
    """The report as report.json holds it."""
    data = {"schema_version": SCHEMA_VERSION, **report.model_dump(mode="json")}
    for criterion in data["criteria"]:
        if not criterion["judged"]:
            criterion["final_score"] = None
    for items in data["evidence"].values():
        for item in items:
            where = parse_location(item["location"])
            item["path"], item["line"] = where.path, where.line
            if url := location_url(where, report.repo_url, report.commit):
                item["url"] = url
    data["failures"] = [fact_record(f) for f in failure_facts(all_evidence(report))]
    data["top_risks"] = [fact_record(f) for f in top_risks(report)]
    data["warnings"] = limitations(report)
    return data


def report_json(report: AuditReport) -> str:
    """report.json's text."""
    return json.dumps(report_document(report), indent=2, ensure_ascii=False) + "\n"


def sarif_json(report: AuditReport) -> str:
    """report.sarif's text."""
    return json.dumps(sarif_log(report), indent=2, ensure_ascii=False) + "\n"


def _placeholder_score(criterion: object) -> object:
    """A criterion read back: a not-judged one written with a null score (schema 1.2) gets
    the placeholder the model holds; anything else is left for validation to judge."""
    if (isinstance(criterion, dict) and criterion.get("judged") is False
            and criterion.get("final_score") is None):
        return {**criterion, "final_score": 1}
    return criterion


def load_report(path: Path) -> AuditReport:
    """A report.json read back (any schema version); `ReportFileError` says why not. Read as
    hostile input (`safefile`): a regular file (a FIFO never blocks, a device is never read),
    at most MAX_REPORT_BYTES, nested at most `safefile.MAX_NESTING` deep, no lone surrogate."""
    try:
        data = loads_untrusted(read_bounded_text(path, MAX_REPORT_BYTES, "report.json"))
    except UnsafeFile as exc:  # its message names the file
        raise ReportFileError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise ReportFileError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno})"
                              ) from None
    except ValueError as exc:  # `UnsafeJson` ("<JSON path>: <rule>"), a 5,000-digit number
        raise ReportFileError(f"{path}: {exc}") from None
    if not isinstance(data, dict) or "criteria" not in data:
        raise ReportFileError(f"{path}: not an audit report.json (no criteria)")
    known = {k: v for k, v in data.items() if k in AuditReport.model_fields}
    if isinstance(known["criteria"], list):
        known["criteria"] = [_placeholder_score(c) for c in known["criteria"]]
    try:
        return AuditReport.model_validate(known)
    except ValueError as exc:
        first = str(exc).splitlines()[:3]
        raise ReportFileError(f"{path}: not an audit report.json ({' '.join(first)})") from None
