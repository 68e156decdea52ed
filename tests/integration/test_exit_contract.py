"""The exit-code contract of the README, one test per row, through the real entry point:
usage and input errors → 2 with ONE `error:` line and nothing written; a present but
unreadable report → 0, a `warning:` line, its criteria not judged; an unacquirable repository
→ 3 with a partial report whose repository criteria are not judged; a failed gate → 1; a
local path with any legal characters works; settings never come from the audit target."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

TIMEOUT = 600


def _run(args: list[str], cwd: Path | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("AUDITOR_MODEL", "OPENAI_", "AUDITOR_VISION"))}
    return subprocess.run([sys.executable, "-m", "automaton_auditor", *args], cwd=cwd,
                          env={**clean, **(env or {})}, capture_output=True, text=True,
                          timeout=TIMEOUT)


def _lines(stderr: str, prefix: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith(prefix)]


def _one_error(result: subprocess.CompletedProcess[str], needle: str, code: int = 2) -> None:
    assert result.returncode == code, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert needle in lines[0], lines[0]


def _report(out: Path) -> dict:
    found = sorted(out.glob("**/report.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text(encoding="utf-8"))


def _not_judged(data: dict) -> set[str]:
    return {c["dimension_id"] for c in data["criteria"] if not c["judged"]}


# --- 2: usage errors -------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "needle"), [
    (["--upload-pack=x", "REPORT"], "No such option: --upload-pack"),
    (["only-one-argument"], "Missing argument 'REPORT'"),
    (["run", "a", "b", "--depth", "x"], "Invalid value for '--depth'"),
    (["runs", "--bogus"], "No such option: --bogus"),
    (["batch"], "Missing argument 'PAIRS'"),
])
def test_usage_errors_are_one_line_exit_2(args: list[str], needle: str) -> None:
    _one_error(_run(args), needle)


def test_version_and_short_help() -> None:
    version = _run(["--version"])
    assert version.returncode == 0 and version.stdout.startswith("audit (automaton-auditor) ")
    assert _run(["-h"]).returncode == 0 and "Usage" in _run(["-h"]).stdout
    assert "--fail-on" in _run(["run", "-h"]).stdout


# --- 2: inputs that are no input (nothing written) -----------------------------------------


def _rubric_cases(tmp: Path) -> list[tuple[str, str]]:
    deep = tmp / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    many = tmp / "many.json"
    dim = {"id": "d{}", "name": "n", "target_artifact": "github_repo",
           "forensic_instruction": "x"}
    many.write_text(json.dumps({"rubric_metadata": {"rubric_name": "r"}, "dimensions": [
        {**dim, "id": f"d{i}"} for i in range(201)]}), encoding="utf-8")
    huge_int = tmp / "int.json"
    huge_int.write_text('{"rubric_metadata": {"rubric_name": "r", "version": ' + "9" * 5000
                        + "}}", encoding="utf-8")
    big = tmp / "big.json"
    with big.open("wb") as handle:
        handle.truncate(6_000_000)
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    bad = tmp / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    return [(str(deep), "nested deeper"), (str(many), "more than 200"),
            (str(huge_int), "not usable JSON"), (str(big), "larger than"),
            (str(fifo), "not a regular file"), ("/dev/zero", "not a regular file"),
            (str(bad), "not valid JSON"), (str(tmp / "missing.json"), "rubric not found")]


def test_bad_rubrics_exit_2_without_reading_or_writing(auditee_repo: Path, report_pdf: Path,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "out"
    for rubric, needle in _rubric_cases(tmp_path):
        result = _run([str(auditee_repo), str(report_pdf), "--rubric", rubric,
                       "--output-dir", str(out)])
        _one_error(result, needle)
    assert not out.exists()


def test_bad_report_paths_exit_2_and_keep_the_last_good_report(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _run([str(auditee_repo), str(report_pdf), "--output-dir", str(out), "-q",
                 "--no-cache"]).returncode == 0
    good = _report(out)
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    for report, needle in [(tmp_path / "deeep.pdf", "report not found"),
                           (tmp_path, "not a regular file"), (fifo, "not a regular file")]:
        _one_error(_run([str(auditee_repo), str(report), "--output-dir", str(out)]), needle)
    assert _report(out) == good  # a typo never overwrites the last good report
    _one_error(_run([str(tmp_path / "nope"), str(report_pdf), "--output-dir", str(out)]),
                "does not exist")
    _one_error(_run([str(auditee_repo), str(report_pdf), "--fail-on", "nosuch<3"]),
               "no criterion 'nosuch'")


def test_a_broken_model_is_exit_2_before_any_work(auditee_repo: Path, report_pdf: Path,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "out"
    _one_error(_run([str(auditee_repo), str(report_pdf), "--model", "foo:bar",
                     "--output-dir", str(out)]), "model foo:bar cannot be used")
    _one_error(_run([str(auditee_repo), str(report_pdf), "--model", "openai:gpt-4o-mini",
                     "--output-dir", str(out)]), "OPENAI_API_KEY is not set")
    # another provider is refused before its key is asked for: its SDK's client is not bounded
    _one_error(_run([str(auditee_repo), str(report_pdf), "--model", "anthropic:claude-x",
                     "--output-dir", str(out)]), "provider 'anthropic' is not supported")
    _one_error(_run([str(auditee_repo), str(report_pdf), "--vision-model", "gpt-oss:20b",
                     "--output-dir", str(out)], env={"OPENAI_API_KEY": "k"}),
               "write openai:gpt-oss:20b")
    assert not out.exists()


# --- 0: a present report that cannot be read ----------------------------------------------


def _unreadable_reports(tmp: Path, pdf: Path) -> list[Path]:
    empty = tmp / "empty.pdf"
    empty.write_bytes(b"")
    text = tmp / "text.pdf"
    text.write_text("just some text, no PDF at all\n", encoding="utf-8")
    truncated = tmp / "truncated.pdf"
    truncated.write_bytes(pdf.read_bytes()[:300])
    png = tmp / "picture.pdf"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    return [empty, text, truncated, png]


def test_unreadable_report_is_exit_0_with_a_warning_and_not_judged(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    for number, report in enumerate(_unreadable_reports(tmp_path, report_pdf)):
        out = tmp_path / f"out{number}"
        result = _run([str(auditee_repo), str(report), "--output-dir", str(out), "-q"])
        assert result.returncode == 0, (report.name, result.stderr)
        assert _lines(result.stderr, "warning: the report could not be read"), result.stderr
        assert not _lines(result.stderr, "error:"), result.stderr
        data = _report(out)
        report_criteria = {c["dimension_id"] for c in data["criteria"]
                           if c["target_artifact"] != "github_repo"}
        assert _not_judged(data) == report_criteria, report.name
        assert data["verdict"] == "incomplete"
        judged = [c["final_score"] for c in data["criteria"] if c["judged"]]
        assert data["overall_score"] == pytest.approx(sum(judged) / len(judged), abs=0.01)


# --- 3: a repository that cannot be acquired ------------------------------------------------


def test_unacquirable_repository_is_exit_3_and_its_criteria_not_judged(
        report_pdf: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    # nothing listens on 127.0.0.1:443: the clone fails at once, without the internet
    result = _run(["https://127.0.0.1/owner/repo", str(report_pdf), "--allow-host",
                   "127.0.0.1", "--output-dir", str(out), "-q"])
    assert result.returncode == 3, result.stderr
    errors = _lines(result.stderr, "error:")
    assert len(errors) == 1 and "audit failed: repo failed" in errors[0]
    assert "resume with: audit resume" in errors[0]
    data = _report(out)
    assert data["verdict"] == "incomplete"
    assert {c["dimension_id"] for c in data["criteria"]
            if c["target_artifact"] == "github_repo"} <= _not_judged(data)
    assert (out / "owner" / "repo" / "report.json").is_file()  # owner/name for URLs
    runs = _run(["runs"])
    assert "failed" in runs.stdout.splitlines()[1]


# --- 1: gates; and any legal local path ----------------------------------------------------


def test_gates_and_a_path_with_any_legal_characters(auditee_repo: Path, report_pdf: Path,
                                                    tmp_path: Path) -> None:
    odd = tmp_path / "a (copy) ünï cödé"
    shutil.copytree(auditee_repo, odd)
    out = tmp_path / "out"
    result = _run([str(odd), str(report_pdf), "--output-dir", str(out), "-q",
                   "--fail-under", "5"])
    assert result.returncode == 1, result.stderr
    assert "below --fail-under 5" in result.stderr
    data = _report(out)
    weakest = min(data["criteria"], key=lambda c: c["final_score"])
    gate = f"{weakest['dimension_id']}<{weakest['final_score'] + 1}"
    result = _run([str(odd), str(report_pdf), "--output-dir", str(out), "-q",
                   "--fail-on", gate])
    assert result.returncode == 1 and "below --fail-on" in result.stderr, result.stderr
    passing = f"{weakest['dimension_id']}<{weakest['final_score']}"
    assert _run([str(odd), str(report_pdf), "--output-dir", str(out), "-q",
                 "--fail-on", passing]).returncode == 0


def test_two_targets_named_alike_never_share_a_report_folder(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "repo", tmp_path / "b" / "repo"
    shutil.copytree(auditee_repo, first)
    shutil.copytree(auditee_repo, second)
    out = tmp_path / "out"
    for target in (first, second):
        assert _run([str(target), str(report_pdf), "--output-dir", str(out), "-q"]
                    ).returncode == 0
    assert len(list(out.glob("repo-*/report.md"))) == 2


# --- settings never come from the target ---------------------------------------------------


class _Sink(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_POST(self) -> None:  # pragma: no cover - must never be reached
        _Sink.hits.append(self.path)
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        return


def test_the_targets_env_is_never_read(auditee_repo: Path, report_pdf: Path,
                                       tmp_path: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        (auditee_repo / ".env").write_text(
            f"AUDITOR_MODEL=openai:evil\nOPENAI_BASE_URL=http://127.0.0.1:{port}/v1\n"
            "OPENAI_API_KEY=sk-student\nAUDITOR_OUTPUT_DIR=inside\n", encoding="utf-8")
        (auditee_repo / "auditor.toml").write_text('model = "openai:evil2"\n',
                                                   encoding="utf-8")
        out = tmp_path / "out"
        result = _run([".", str(report_pdf), "--output-dir", str(out), "-q"],
                      cwd=auditee_repo)
        assert result.returncode == 0, result.stderr
        assert _report(out)["bench"] == "offline bench (rule-based judges)"
        assert _Sink.hits == []
        shown = _run(["config", "."], cwd=auditee_repo)
        assert "never read from the audit target" in shown.stdout
        assert "evil" not in shown.stdout
        # the default output folder is never inside the audited repository
        result = _run([".", str(report_pdf), "-q"], cwd=auditee_repo,
                      env={"XDG_DATA_HOME": str(tmp_path / "data")})
        assert result.returncode == 0, result.stderr
        assert not (auditee_repo / "audit").exists()
        assert list((tmp_path / "data").glob("**/report.md"))
    finally:
        server.shutdown()
