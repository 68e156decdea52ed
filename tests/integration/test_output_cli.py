"""SARIF, baselines and `audit diff` through the CLI, on a repository that gains a
shell-injection flaw."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.integration.unsafe import (
    OS_SYSTEM_LINE,
    TOOLS,
    audit,
    commit_unsafe_tools,
    read_json,
    written_report,
)
from tests.unit.test_output_formats import validate_sarif


def test_sarif_of_a_shell_injection_validates_and_points_at_the_line(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    commit_unsafe_tools(auditee_repo)
    sarif = tmp_path / "scan.sarif"
    result = audit("run", str(auditee_repo), str(report_pdf), "--output-dir",
                   str(tmp_path / "out"), "--quiet", "--sarif", str(sarif))
    assert result.returncode == 0, result.stderr
    log = read_json(sarif)
    validate_sarif(log)
    [shell] = [r for r in log["runs"][0]["results"] if r["ruleId"].endswith("safety.os_system")]
    physical = shell["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == TOOLS
    assert physical["region"]["startLine"] == OS_SYSTEM_LINE
    assert shell["level"] == "error" and "git clone" in shell["message"]["text"]
    markdown = written_report(tmp_path / "out").with_name("report.md").read_text("utf-8")
    first_risk = markdown.split("Top risks:", 1)[1].strip().splitlines()[0]
    # the bandit check on the same line is named in the same risk, not a second one
    assert first_risk.startswith("1. **Security** — Found: os.system / os.popen call")
    assert f" at `{TOOLS}:{OS_SYSTEM_LINE}`: " in first_risk
    second = markdown.split("Top risks:", 1)[1].strip().splitlines()[1]
    assert f"`{TOOLS}:{OS_SYSTEM_LINE}`" not in second


def test_format_sarif_prints_sarif_only(auditee_repo: Path, report_pdf: Path,
                                        tmp_path: Path) -> None:
    result = audit("run", str(auditee_repo), str(report_pdf), "--output-dir", str(tmp_path),
                   "--format", "sarif")
    assert result.returncode == 0, result.stderr
    validate_sarif(json.loads(result.stdout))


def test_diff_and_baseline_catch_the_regression(auditee_repo: Path, report_pdf: Path,
                                                tmp_path: Path) -> None:
    before = tmp_path / "before.json"
    result = audit("run", str(auditee_repo), str(report_pdf), "--output-dir",
                   str(tmp_path / "a"), "--quiet")
    assert result.returncode == 0, result.stderr
    shutil.copy(written_report(tmp_path / "a"), before)
    commit_unsafe_tools(auditee_repo)
    gated = audit("run", str(auditee_repo), str(report_pdf), "--output-dir",
                  str(tmp_path / "b"), "--quiet", "--baseline", str(before))
    assert gated.returncode == 1, gated.stderr
    assert "regression" in gated.stderr and len(gated.stderr.strip().splitlines()) == 1
    after = written_report(tmp_path / "b")

    shown = audit("diff", str(before), str(after))
    assert shown.returncode == 1, shown.stderr
    assert "Safe Tool Engineering" in shown.stdout
    assert f"Found: os.system / os.popen call ({TOOLS}:{OS_SYSTEM_LINE})" in shown.stdout
    assert all(len(line) <= 80 for line in shown.stdout.splitlines())
    as_json = audit("diff", str(before), str(after.parent), "--json")
    data = json.loads(as_json.stdout)
    assert data["regression"] is True
    assert any(f["facet"] == "safety.os_system" for f in data["new_failures"])
    reverse = audit("diff", str(after), str(before))
    assert reverse.returncode == 0 and reverse.stdout.rstrip().endswith("no regression")


def test_diff_refuses_what_is_not_an_audit_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("[1, 2]", encoding="utf-8")
    result = audit("diff", str(tmp_path / "x.json"), "no-such-run-id")
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and len(result.stderr.splitlines()) == 1
