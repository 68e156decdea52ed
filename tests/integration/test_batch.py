"""`audit batch`: parallel audits from a CSV/TSV file, one failing, one summary."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from automaton_auditor.batch import (
    MAX_BATCH_BYTES,
    BatchFileError,
    JobResult,
    read_jobs,
    write_summary,
)


def _batch(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUDITOR_CACHE_DIR": str(cache), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "automaton_auditor", "batch", *args],
                          capture_output=True, text=True, timeout=600, env=env)


def test_batch_keeps_going_past_a_failure_and_exits_with_the_worst_status(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.csv"
    # A header, a comment, a relative report path, and a row whose report is missing.
    pairs.write_text(
        "target,report\n"
        "# the same repository twice: each row gets its own report folder\n"
        f"{auditee_repo},{report_pdf.name}\n"
        f"{auditee_repo},{report_pdf}\n"
        f"{auditee_repo},missing.pdf\n", encoding="utf-8")
    out = tmp_path / "out"
    result = _batch([str(pairs), "--parallel", "2", "--output-dir", str(out)],
                    tmp_path / "cache")
    assert result.returncode == 2, result.stderr  # the missing report is an input error
    summary = json.loads((out / "batch_summary.json").read_text(encoding="utf-8"))
    audits = summary["audits"]
    assert [a["exit_code"] for a in audits] == [0, 0, 2]
    assert summary["exit_code"] == 2
    assert "report not found" in audits[2]["error"]
    assert audits[0]["overall"] is not None and len(audits[0]["criteria"]) == 10
    assert audits[0]["criteria"] == audits[1]["criteria"]  # same inputs, same ruling
    assert Path(audits[0]["report_file"]).parent.parent.name == "row-001"
    assert Path(audits[1]["report_file"]).is_file()
    # Row 2 waits for row 1 (same report) and, its inputs being identical, reuses its result.
    assert audits[0]["run_id"] == audits[1]["run_id"]
    manifest = json.loads((Path(audits[1]["report_file"]).parent / "run_manifest.json")
                          .read_text(encoding="utf-8"))
    assert manifest["reused_result"] is True
    with (out / "batch_summary.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["exit_code"] for r in rows] == ["0", "0", "2"]
    assert rows[0]["overall"] and rows[0][next(iter(audits[0]["criteria"]))]
    assert "batch: 3 audits, exit 2" in result.stdout  # the Rich summary table
    assert "report not found" in result.stdout and "C10 " in result.stdout


def test_an_output_folder_that_is_a_file_is_refused_before_any_row_runs(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(f"{auditee_repo},{report_pdf}\n", encoding="utf-8")
    out = tmp_path / "out"
    out.write_text("a file, not a folder\n", encoding="utf-8")
    result = _batch([str(pairs), "--output-dir", str(out / "sub")], tmp_path / "cache")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: --output-dir {out / 'sub'}: {out} is a file, not a folder"]
    assert not (tmp_path / "cache").exists()  # refused before any audit read a thing


def test_pairs_files_tsv_and_errors(tmp_path: Path) -> None:
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("https://github.com/o/r\tr.pdf\trubric.json\n", encoding="utf-8")
    [job] = read_jobs(tsv, tmp_path / "out")
    assert job.target == "https://github.com/o/r"
    assert job.report == str(tmp_path / "r.pdf") and job.rubric == str(tmp_path / "rubric.json")
    bad = tmp_path / "bad.csv"
    bad.write_text("only-one-column\n", encoding="utf-8")
    with pytest.raises(BatchFileError, match="row 1"):
        read_jobs(bad, tmp_path)
    empty = tmp_path / "empty.csv"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(BatchFileError, match="no audits"):
        read_jobs(empty, tmp_path)


def test_unreadable_pairs_file_exits_2(tmp_path: Path) -> None:
    result = _batch([str(tmp_path / "absent.csv")], tmp_path / "cache")
    assert result.returncode == 2
    assert result.stderr.startswith("error: batch file not found: ")


def test_a_pairs_file_is_read_as_hostile_input(tmp_path: Path) -> None:
    """A FIFO would block the read and /dev/zero fill memory: both refused unread."""
    fifo = tmp_path / "pairs.csv"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.csv"
    with huge.open("wb") as handle:
        handle.truncate(MAX_BATCH_BYTES + 1)
    for path, needle in [(fifo, "not a regular file"), (Path("/dev/zero"), "not a regular"),
                         (huge, "larger than")]:
        with pytest.raises(BatchFileError, match=needle):
            read_jobs(path, tmp_path)


def test_a_field_over_the_csv_limit_is_one_error_line(tmp_path: Path) -> None:
    """A 200 KB field passes the csv module's 128 KB limit: a BatchFileError (one `error:`
    line, exit 2), not a csv.Error traceback with exit 1."""
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("target,report\nrepo," + "a" * 200_000 + "\n")
    with pytest.raises(BatchFileError, match="row 2: field larger than field limit"):
        read_jobs(pairs, tmp_path)
    result = _batch([str(pairs), "--output-dir", str(tmp_path / "out")], tmp_path / "cache")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: pairs.csv row 2") and "Traceback" not in \
        result.stderr


def test_the_summary_csv_holds_no_formula(tmp_path: Path) -> None:
    """A target kept as written (a URL) or an error quoting it that a spreadsheet would run
    (`=HYPERLINK(...)`, `@SUM`, `+`, `-`) is written with a leading quote; the JSON keeps it."""
    bad = ['=HYPERLINK("http://127.0.0.1/x","click")&T("://")', "@SUM(1+1)*cmd|x", "+1+1",
           "-2+3://x"]
    results = [JobResult(n, text, "r.pdf", 2, 0.1, status="refused", error=text)
               for n, text in enumerate(bad, start=1)]
    paths = write_summary(results, tmp_path)
    rows = list(csv.DictReader(io.StringIO(Path(paths["csv"]).read_text())))
    assert [r["target"] for r in rows] == [f"'{text}" for text in bad]
    assert [r["error"] for r in rows] == [f"'{text}" for text in bad]
    assert [r["row"] for r in rows] == ["1", "2", "3", "4"]
    audits = json.loads(Path(paths["json"]).read_text())["audits"]
    assert [a["target"] for a in audits] == bad
