"""The CI kit as a user meets it: the GitHub Action's steps run by hand against a local
repository (bench/run_action.py), the pre-commit hook's command line, the Dockerfile's
inputs."""

from __future__ import annotations

import importlib.util
import itertools
import os
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import yaml

from tests.integration.unsafe import OS_SYSTEM_LINE, TOOLS, commit_unsafe_tools, read_json
from tests.unit.test_output_formats import validate_sarif

ROOT = Path(__file__).resolve().parents[2]


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_action", ROOT / "bench" / "run_action.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _uses(runs: list) -> list[str]:
    return [r.uses.split("@")[0] for r in runs if r.code is None]


def test_action_gates_a_shell_injection_and_writes_sarif(auditee_repo: Path, report_pdf: Path,
                                                          tmp_path: Path) -> None:
    commit_unsafe_tools(auditee_repo)
    runs = _runner().run_action(auditee_repo, {"report": str(report_pdf), "fail-under": "3"},
                                tmp_path / "runner", extra_env={"UV_OFFLINE": "1"})
    assert _uses(runs) == ["astral-sh/setup-uv", "github/codeql-action/upload-sarif"]
    audit_step = next(r for r in runs if r.name == "Audit")
    assert audit_step.code == 0  # the audit step never fails: the upload must still run
    assert audit_step.outputs["exit-code"] == "1"
    assert runs[-1].name == "Gate" and runs[-1].code == 1
    sarif = Path(audit_step.outputs["sarif"])
    assert not sarif.is_relative_to(auditee_repo)  # nothing written into the audited repo
    log = read_json(sarif)
    validate_sarif(log)
    shell = next(r for r in log["runs"][0]["results"] if r["ruleId"].endswith("os_system"))
    location = shell["locations"][0]["physicalLocation"]
    assert (location["artifactLocation"]["uri"], location["region"]["startLine"]) == (
        TOOLS, OS_SYSTEM_LINE)
    assert float(audit_step.outputs["overall-score"]) > 0
    assert audit_step.outputs["report"].endswith("report.md")


def test_action_passes_a_repository_above_its_gate(auditee_repo: Path, report_pdf: Path,
                                                    tmp_path: Path) -> None:
    runs = _runner().run_action(auditee_repo, {"report": str(report_pdf), "fail-under": "1"},
                                tmp_path / "runner", extra_env={"UV_OFFLINE": "1"})
    assert [r.code for r in runs if r.code is not None] == [0, 0, 0]
    assert next(r for r in runs if r.name == "Audit").outputs["exit-code"] == "0"


def test_pre_commit_hook_runs_the_audit_of_the_repository_at_hand(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["pass_filenames"] is False and hook["language"] == "python"
    entry = shlex.split(hook["entry"])
    assert entry[0] == "audit"
    args = [str(report_pdf), "--fail-under=5", f"--output-dir={tmp_path / 'out'}"]
    result = subprocess.run([sys.executable, "-m", "automaton_auditor", *entry[1:], *args],
                            cwd=auditee_repo, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr  # the fixture is not a 5/5 submission
    assert "below --fail-under" in result.stderr


def test_dockerfile_copies_what_the_locked_install_needs() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    copied = [source for line in text.splitlines()
              if line.startswith("COPY ") and "--from" not in line
              for source in line.split()[1:-1]]
    for source in copied:
        assert (ROOT / source).exists(), source
    # the package's embedded rubric is a symlink into rubric/: it must be in the build
    data = ROOT / "src" / "automaton_auditor" / "data" / "automaton_auditor_rubric.json"
    assert data.resolve().is_relative_to(ROOT / "rubric") and "rubric" in copied
    assert "uv sync --locked --no-dev --no-editable" in text
    assert 'ENTRYPOINT ["audit"]' in text


FAKE_UV = '''#!/usr/bin/env python3
"""A stand-in for uv: records the audit's command line, answers like a failed gate."""
import json, os, sys
args = sys.argv[1:]
if "sync" in args:
    sys.exit(0)
if "audit" in args:
    rest = args[args.index("audit") + 1:]
    with open(os.environ["FAKE_LOG"], "w") as log:
        json.dump(rest, log)
    with open(rest[rest.index("--sarif") + 1], "w") as sarif:
        sarif.write("{}")
    print(json.dumps({"overall_score": 2.5}))
    sys.exit(1)
os.execv(sys.executable, [sys.executable, *args[args.index("python") + 1:]])
'''


def test_action_turns_its_inputs_into_gates(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "uv"
    fake.parent.mkdir()
    fake.write_text(FAKE_UV.replace("/usr/bin/env python3", sys.executable), encoding="utf-8")
    fake.chmod(0o755)
    log = tmp_path / "audit-args.json"
    runs = _runner().run_action(tmp_path, {
        "report": "docs/report.pdf", "fail-on": "safe_tool_engineering<4,\n graph_orchestration<3",
        "baseline": "last.json"}, tmp_path / "runner",
        extra_env={"PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}",
                   "FAKE_LOG": str(log)})
    args = read_json(log)
    assert args[:3] == ["run", ".", "docs/report.pdf"]
    pairs = list(itertools.pairwise(args))
    assert ("--fail-on", "safe_tool_engineering<4") in pairs
    assert ("--fail-on", "graph_orchestration<3") in pairs
    assert ("--baseline", "last.json") in pairs and "--fail-under" not in args
    assert ("--sarif", str(tmp_path / "runner" / "automaton-auditor" / "automaton-auditor.sarif")
            ) in pairs
    audit_step = next(r for r in runs if r.name == "Audit")
    assert audit_step.outputs["exit-code"] == "1"
    assert audit_step.outputs["overall-score"] == "2.5"
    assert runs[-1].name == "Gate" and runs[-1].code == 1
