"""The audit as SARIF 2.1.0, for GitHub code scanning and every tool that reads it.

Each failure fact with a file location is a result, once per file location it names (a
call fact names each call): rule id ``<criterion>/<facet>``, level from its consequence
(security: error, functional break: warning, integrity and docs: note; a fact below 0.5
confidence is a note), the message quoting the fact. Failure facts without a file location
(a report page, the git history) are counted in the run's properties, not reported.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from typing import Any

from automaton_auditor.output.locations import Location
from automaton_auditor.output.risks import FailureFact, all_evidence, failure_facts
from automaton_auditor.output.summary import CONSEQUENCE_LABEL, fact_headline
from automaton_auditor.state import AuditReport

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "automaton-auditor"
FALLBACK_URI = "https://pypi.org/project/automaton-auditor/"
LEVELS = {"security": "error", "functional": "warning", "integrity": "note", "docs": "note"}
# GitHub code scanning ranks security alerts by this property (CVSS-like, 0.0-10.0).
SECURITY_SEVERITY = "8.0"
MAX_RESULTS_PER_FACT = 20
LOW_CONFIDENCE = 0.5


def tool_version() -> str:
    """The installed version of this tool."""
    try:
        return metadata.version(TOOL_NAME)
    except metadata.PackageNotFoundError:
        return "0.0.0"


def information_uri() -> str:
    """Where the tool is documented: the package's home page, else its registry page."""
    try:
        urls = metadata.metadata(TOOL_NAME).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        urls = []
    for entry in urls:
        _label, _, url = str(entry).partition(", ")
        if url.startswith("https://"):
            return url
    return FALLBACK_URI


def rule_id(fact: FailureFact) -> str:
    """``<criterion>/<facet>``: the first criterion the fact bears on (stable across runs)."""
    return f"{fact.criteria[0]}/{fact.facet}" if fact.criteria else fact.facet


def level_of(fact: FailureFact) -> str:
    """SARIF level from the fact's consequence and confidence."""
    return "note" if fact.confidence < LOW_CONFIDENCE else LEVELS[fact.consequence]


def _rule(fact: FailureFact, names: dict[str, str]) -> dict[str, Any]:
    criteria = [names.get(c, c) for c in fact.criteria]
    kind = CONSEQUENCE_LABEL[fact.consequence].lower()
    help_text = (f"{fact_headline(fact)}. A {kind} under the rubric criterion "
                 f"{' and '.join(repr(c) for c in criteria) or 'none'}: the auditor reports it "
                 "when its detectives establish this fact in the code. The audit report's "
                 "Remediation Plan lists every place and what the criterion asks for.")
    properties: dict[str, Any] = {"tags": [fact.consequence, *fact.criteria],
                                  "precision": "high" if fact.confirmed else "medium"}
    if fact.consequence == "security":
        properties["security-severity"] = SECURITY_SEVERITY
    return {"id": rule_id(fact), "name": fact.facet.replace(".", "_"),
            "shortDescription": {"text": fact_headline(fact)},
            "fullDescription": {"text": f"{fact_headline(fact)} ({', '.join(criteria)})."},
            "help": {"text": help_text, "markdown": help_text},
            "defaultConfiguration": {"level": LEVELS[fact.consequence]},
            "properties": properties}


def _fingerprint(fact: FailureFact, location: Location) -> str:
    # Matched by facet and file, not line: a moved line is the same alert.
    key = f"{fact.facet}|{location.path}|{fact.quote_at(location) or ''}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _result(fact: FailureFact, location: Location, index: int) -> dict[str, Any]:
    quote = fact.quote_at(location)
    text = f"{fact_headline(fact)}: {fact.rationale}" + (f" Quoted: `{quote}`" if quote else "")
    physical: dict[str, Any] = {"artifactLocation": {"uri": location.path,
                                                     "uriBaseId": "%SRCROOT%"}}
    if location.line:
        physical["region"] = {"startLine": location.line}
    return {"ruleId": rule_id(fact), "ruleIndex": index, "level": level_of(fact),
            "kind": "fail", "message": {"text": text},
            "locations": [{"physicalLocation": physical}],
            "partialFingerprints": {"auditorFact/v1": _fingerprint(fact, location)},
            "properties": {"confidence": fact.confidence, "consequence": fact.consequence,
                           "criteria": list(fact.criteria),
                           "evidence_ids": list(fact.evidence_ids)}}


def _provenance(report: AuditReport) -> list[dict[str, Any]]:
    if not report.repo_url.startswith("https://") or not report.commit:
        return []
    return [{"repositoryUri": report.repo_url, "revisionId": report.commit}]


def sarif_log(report: AuditReport) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log with one run."""
    names = {c.dimension_id: c.dimension_name for c in report.criteria}
    facts = failure_facts(all_evidence(report))
    located = [f for f in facts if f.files]
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for fact in located:
        rules.setdefault(rule_id(fact), _rule(fact, names))
        index = list(rules).index(rule_id(fact))
        results += [_result(fact, loc, index) for loc in fact.files[:MAX_RESULTS_PER_FACT]]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": TOOL_NAME, "version": tool_version(),
                            "semanticVersion": tool_version(),
                            "informationUri": information_uri(),
                            "rules": list(rules.values())}},
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"overall_score": report.overall_score, "verdict": report.verdict,
                       "scores": {c.dimension_id: c.final_score for c in report.criteria},
                       "failure_facts_without_file": len(facts) - len(located),
                       "run_id": report.run_id, "target": report.repo_url},
    }
    if provenance := _provenance(report):
        run["versionControlProvenance"] = provenance
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
