"""A queued task is hostile input (`queue.guard`): its shape, the paths it names and the
settings it carries are checked before a worker runs it. No broker needed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.queue.guard import MAX_TASK_CHARS, BadTask, Limits, named, read_task
from automaton_auditor.settings import Settings

RUN_ID = "20260101-000000-abcdef"


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Limits]:
    root = tmp_path / "shared"
    (root / "repo").mkdir(parents=True)
    (root / "r.pdf").write_bytes(b"%PDF")
    own = Settings(git_timeout_s=60, reader_memory_mb=512,
                   allowed_hosts=("github.com", "gitlab.com")).to_state()
    return root, Limits((os.path.realpath(root),), own)


def _job(root: Path, **changes: Any) -> dict[str, Any]:
    return {"row": 3, "target": str(root / "repo"), "report": str(root / "r.pdf"),
            "rubric": None, "output_dir": str(root / "out"), "run_id": RUN_ID, **changes}


def test_a_well_formed_task_is_read(place: tuple[Path, Limits]) -> None:
    root, limits = place
    job, options = read_task((_job(root), {"settings": {}, "fail_under": None}), {}, limits)
    assert job.row == 3 and job.run_id == RUN_ID and options["fail_under"] is None


@pytest.mark.parametrize("args, kwargs, needle", [
    (("notadict", 5), {}, "not an audit task"),
    ((), {}, "not an audit task"),
    (({}, {}), {"extra": 1}, "not an audit task"),
])
def test_a_task_of_another_shape_is_refused(place: tuple[Path, Limits], args: tuple[Any, ...],
                                            kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(BadTask, match=needle):
        read_task(args, kwargs, place[1])


@pytest.mark.parametrize("changes, needle", [
    ({"evil": 1}, "unknown"),
    ({"row": "x"}, "row"),
    ({"row": True}, "row"),
    ({"target": 5}, "target"),
    ({"report": "a" * 5000}, "report"),
    ({"run_id": "../../../tmp/evil"}, "run_id"),
    ({"run_id": None}, "run_id"),
    ({"output_dir": "/etc/cron.d"}, "outside the worker's roots"),
    ({"target": "/home"}, "outside the worker's roots"),
    ({"target": "file:///etc"}, "file: URL"),
    ({"rubric": "relative.json"}, "not an absolute path"),
])
def test_a_job_with_bad_fields_or_paths_elsewhere_is_refused(
        place: tuple[Path, Limits], changes: dict[str, Any], needle: str) -> None:
    root, limits = place
    with pytest.raises(BadTask, match=needle) as caught:
        read_task((_job(root, **changes), {"settings": {}}), {}, limits)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 600


def test_a_symlink_inside_a_root_that_leads_out_is_refused(place: tuple[Path, Limits],
                                                          tmp_path: Path) -> None:
    root, limits = place
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(BadTask, match="outside"):
        read_task((_job(root, output_dir=str(root / "link" / "out")), {}), {}, limits)


def test_a_url_target_is_left_to_the_acquisitions_host_check(
        place: tuple[Path, Limits]) -> None:
    root, limits = place
    job, _ = read_task((_job(root, target="https://github.com/a/b"), {}), {}, limits)
    assert job.target == "https://github.com/a/b"


@pytest.mark.parametrize("options, needle", [
    ({"settings": {"call_timeout_s": "x"}}, "settings call_timeout_s"),
    ({"settings": {"rubric_path": "/etc/passwd"}}, "rubric_path"),
    ({"settings": []}, "settings must be an object"),
    ({"fail_under": "7"}, "fail_under"),
    ({"shell": "rm -rf /"}, "unknown"),
])
def test_bad_options_are_refused_in_one_line(place: tuple[Path, Limits],
                                             options: dict[str, Any], needle: str) -> None:
    root, limits = place
    with pytest.raises(BadTask, match=needle) as caught:
        read_task((_job(root), options), {}, limits)
    assert "\n" not in str(caught.value)


def test_a_task_tightens_the_workers_limits_but_never_loosens_them(
        place: tuple[Path, Limits]) -> None:
    """A task that asks for a day-long clone, 1 TB of reader memory or any host still runs
    within the worker's own limits, so it ends when the worker's audits end."""
    root, limits = place
    settings = {"git_timeout_s": 86400.0 * 365, "reader_memory_mb": 10**6,
                "report_timeout_s": 5.0, "allowed_hosts": ["github.com", "169.254.169.254"]}
    _, options = read_task((_job(root), {"settings": settings}), {}, limits)
    checked = Settings.from_state(options["settings"])
    assert checked.git_timeout_s == 60 and checked.reader_memory_mb == 512
    assert checked.report_timeout_s == 5.0  # tighter than the worker's: kept
    assert checked.allowed_hosts == ("github.com",)


def test_an_oversized_task_is_refused(place: tuple[Path, Limits]) -> None:
    root, limits = place
    with pytest.raises(BadTask, match="KB"):
        read_task((_job(root), {"settings": {"model": "x" * MAX_TASK_CHARS}}), {}, limits)


def test_a_refused_task_is_named_by_what_it_says() -> None:
    assert named(({"row": 4, "target": "t", "report": "r"}, {})) == (4, "t", "r")
    assert named(("junk",)) == (0, "", "")


def _answered(value: Any) -> Any:
    from automaton_auditor.batch import Job, write_summary
    from automaton_auditor.queue.submit import result_of

    job = Job(2, "/shared/repo", "/shared/r.pdf", None, "/shared/out", RUN_ID)
    return job, result_of(job, {"status": "SUCCESS", "result": value}), write_summary


@pytest.mark.parametrize("value", [
    {"exit_code": "x", "seconds": 1.0},
    {"exit_code": 0, "seconds": 1.0, "overall": "high"},
    {"exit_code": 0, "seconds": float("nan")},
    {"exit_code": 0, "seconds": 1.0, "criteria": ["a"]},
    {"exit_code": 0, "seconds": 1.0, "criteria": {"a": "5"}},
    {"exit_code": 0, "seconds": 1.0, "error": 5},
    {"exit_code": True, "seconds": 1.0},
])
def test_a_malformed_answer_from_the_result_backend_is_a_failed_row(
        value: dict[str, Any], tmp_path: Path) -> None:
    """The result backend is the broker: anyone who writes to it can answer for a worker. An
    answer of the wrong types used to reach the summary (a TypeError or ValueError traceback
    in `audit batch --queue`); it is the row's failure instead, and the summary is written."""
    job, result, write_summary = _answered({"row": 9, "target": "/elsewhere", "report": "x",
                                            **value})
    assert (result.exit_code, result.status) == (3, "failed")
    assert "malformed" in result.error and (result.row, result.target) == (job.row, job.target)
    write_summary([result], tmp_path)


def test_a_well_formed_answer_keeps_the_rows_own_names() -> None:
    job, result, _ = _answered({"row": 9, "target": "/elsewhere", "report": "x",
                                "exit_code": 0, "seconds": 2.5, "overall": 3.1,
                                "criteria": {"a": 5, "b": None}, "worker": "w", "new": 1})
    assert (result.row, result.target, result.report) == (job.row, job.target, job.report)
    assert (result.exit_code, result.overall, result.criteria) == (0, 3.1, {"a": 5, "b": None})
