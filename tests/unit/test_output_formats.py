"""SARIF 2.1.0 and the JSON twin, on constructed reports. The SARIF schema is the OASIS
standard's (sarif-2.1/schema/sarif-schema-2.1.0.json of oasis-tcs/sarif-spec, errata 01),
vendored in tests/fixtures."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from automaton_auditor.output.document import (
    SCHEMA_VERSION,
    ReportFileError,
    load_report,
    report_document,
    report_json,
)
from automaton_auditor.output.sarif import sarif_log
from tests.conftest import make_evidence
from tests.unit.output_helpers import GITHUB, SHA, criterion, report, unsafe_evidence

SCHEMA = Path(__file__).resolve().parents[1] / "fixtures" / "sarif-schema-2.1.0.json"


def validate_sarif(log: dict[str, Any]) -> None:
    """Raise unless `log` is valid SARIF 2.1.0."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)


def _unsafe_report(**extra: Any) -> Any:
    evidence = unsafe_evidence()
    return report([criterion("safe_tool_engineering", 3, evidence)], evidence, **extra)


def test_sarif_of_a_shell_injection_validates_and_points_at_the_call() -> None:
    log = sarif_log(_unsafe_report())
    validate_sarif(log)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "automaton-auditor" and driver["version"]
    assert driver["informationUri"].startswith("https://")
    first = run["results"][0]
    assert first["ruleId"] == "safe_tool_engineering/safety.os_system"
    assert first["level"] == "error"
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "src/tools/clone.py"
    assert physical["region"] == {"startLine": 12}
    assert first["message"]["text"].startswith("Found: os.system / os.popen call: ")
    rule = driver["rules"][first["ruleIndex"]]
    assert rule["id"] == first["ruleId"] and rule["help"]["text"]
    assert rule["properties"]["security-severity"]
    assert run["versionControlProvenance"] == [{"repositoryUri": GITHUB, "revisionId": SHA}]


def test_sarif_results_are_failure_facts_with_a_file_location_only() -> None:
    evidence = [*unsafe_evidence(),
                make_evidence("hallucinated path", facet="claims.paths", pattern="failure",
                              dimension="safe_tool_engineering", location="report p.3")]
    log = sarif_log(report([criterion("safe_tool_engineering", 3, evidence)], evidence))
    results = log["runs"][0]["results"]
    # os.system, eval, the unsandboxed clone; not the vacuous timeout check, not the page.
    assert [r["ruleId"].split("/")[1] for r in results] == [
        "safety.os_system", "safety.eval_exec", "safety.clone_sandbox"]
    assert [r["level"] for r in results] == ["error", "error", "warning"]
    assert log["runs"][0]["properties"]["failure_facts_without_file"] == 1


def test_a_fact_naming_several_calls_gives_one_result_per_call() -> None:
    shell = make_evidence("subprocess call with shell=True", facet="safety.shell_true",
                          pattern="failure", dimension="tools", location="a.py:3", security=True,
                          content="a.py:3: run(cmd, shell=True)\nb.py:9: run(c2, shell=True)",
                          data={"locations": ["a.py:3", "b.py:9"]})
    log = sarif_log(report([criterion("tools", 2, [shell])], [shell], repo_url="/tmp/x"))
    validate_sarif(log)
    places = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
               r["locations"][0]["physicalLocation"]["region"]["startLine"],
               r["message"]["text"].rsplit("Quoted: ", 1)[1])
              for r in log["runs"][0]["results"]]
    assert places == [("a.py", 3, "`run(cmd, shell=True)`"), ("b.py", 9, "`run(c2, shell=True)`")]
    assert "versionControlProvenance" not in log["runs"][0]  # a local target


def test_an_empty_report_is_valid_sarif() -> None:
    validate_sarif(sarif_log(report([], [])))


def test_json_twin_keeps_every_key_and_adds_version_and_locations() -> None:
    rep = _unsafe_report()
    data = report_document(rep)
    assert set(rep.model_dump()) <= set(data)
    assert data["schema_version"] == SCHEMA_VERSION
    item = next(e for e in data["evidence"]["repo"] if e["facet"] == "safety.os_system")
    assert (item["path"], item["line"]) == ("src/tools/clone.py", 12)
    assert item["url"] == f"{GITHUB}/blob/{SHA}/src/tools/clone.py#L12"
    repo_wide = next(e for e in data["evidence"]["repo"] if e["location"] == ".")
    assert repo_wide["path"] is None and repo_wide["line"] is None
    assert data["top_risks"][0]["facet"] == "safety.os_system"
    assert [f["facet"] for f in data["failures"]] == [
        "safety.os_system", "safety.eval_exec", "safety.clone_sandbox"]


def test_report_json_reads_back(tmp_path: Path) -> None:
    rep = _unsafe_report()
    path = tmp_path / "report.json"
    path.write_text(report_json(rep), encoding="utf-8")
    assert load_report(path) == rep


def test_a_criterion_not_judged_has_a_null_score_and_reads_back(tmp_path: Path) -> None:
    judged = criterion("safe_tool_engineering", 4, [])
    unread = criterion("report_accuracy", 1, [], judged=False,
                       not_judged_reason="doc input unusable (no text layer)")
    rep = report([judged, unread], [])
    data = report_document(rep)
    assert [c["final_score"] for c in data["criteria"]] == [4, None]
    path = tmp_path / "report.json"
    path.write_text(report_json(rep), encoding="utf-8")
    assert load_report(path) == rep
    # a judged criterion without a score is not a report this tool wrote
    data["criteria"][0]["final_score"] = None
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ReportFileError, match=re.escape("not an audit report.json")):
        load_report(path)


@pytest.mark.parametrize(("text", "why"), [
    (None, "not found"), ("{", "not valid JSON"), ("[]", "no criteria"),
    ('{"criteria": 3}', "not an audit report.json"),
    # once a RecursionError traceback (the decoder), then a failure writing the diff
    ('{"criteria": ' + "[" * 100_000 + "]" * 100_000 + "}", "$: nested deeper than 32"),
    ('{"criteria": [], "target": "\\ud800"}', "$.target: lone surrogate"),
])
def test_a_bad_report_json_is_refused_in_one_line(tmp_path: Path, text: str | None,
                                                  why: str) -> None:
    path = tmp_path / "report.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ReportFileError, match=re.escape(why)) as caught:
        load_report(path)
    assert "\n" not in str(caught.value)


def test_the_schema_check_catches_a_broken_log() -> None:
    log = sarif_log(_unsafe_report())
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif(log)
