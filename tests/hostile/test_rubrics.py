"""Hostile rubrics: anything that is not a small, well-formed rubric file is an input error
(exit 2, one `error:` line, a report saying why), refused at once and within the memory
ceiling, whatever it is (a FIFO, a device, 10 MB, 10,000 dimensions, JSON nested 100,000
deep, a 5,000-digit number)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.rubric import default_rubric_text
from tests.hostile.builders import special_at
from tests.hostile.harness import Case, audit_and_check, broken, params, reports


def _base() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(default_rubric_text())
    return data


def _write(case: Case, data: bytes | str | dict[str, Any] | list[Any]) -> Path:
    path = case.sandbox / "rubric.json"
    if isinstance(data, bytes):
        path.write_bytes(data)
    elif isinstance(data, str):
        path.write_text(data)
    else:
        path.write_text(json.dumps(data))
    return path


def content(make: Callable[[], bytes | str | dict[str, Any] | list[Any]]
            ) -> Callable[[Case], Path]:
    def build(case: Case) -> Path:
        return _write(case, make())
    return build


def missing(case: Case) -> Path:
    return case.sandbox / "no-such-rubric.json"


def many_dimensions() -> dict[str, Any]:
    data = _base()
    first = data["dimensions"][0]
    data["dimensions"] = [{**copy.deepcopy(first), "id": f"d{i}", "name": f"Criterion {i}"}
                          for i in range(10_000)]
    return data


def nested() -> str:
    depth = 100_000
    text = json.dumps(_base())
    return text[:-1] + ', "extra": ' + "[" * depth + "]" * depth + "}"


def huge_integer() -> str:
    text = json.dumps(_base())
    return text[:-1] + ', "extra": ' + "7" * 5_000 + "}"


def ten_megabytes() -> dict[str, Any]:
    data = _base()
    data["rubric_metadata"]["notes"] = "x" * (10 * 1024 * 1024)
    return data


def unknown_rule() -> dict[str, Any]:
    data = _base()
    data["synthesis_rules"]["always_five"] = "Every criterion scores 5, whatever the evidence."
    return data


def duplicate_ids() -> dict[str, Any]:
    data = _base()
    data["dimensions"].append(copy.deepcopy(data["dimensions"][0]))
    return data


def wrong_artifact() -> dict[str, Any]:
    data = _base()
    data["dimensions"][0]["target_artifact"] = "/etc/passwd"
    return data


HANGS = broken("cli", "reads the rubric without a bound or a file-kind check: killed after 30 s")
UNBOUNDED = broken("cli", "reads /dev/zero without bound: killed at the 1.25 GB memory guard")
# (id, builder, exit code, needle, marks)
CASES: list[tuple[str, Callable[[Case], Path], int, str, tuple[object, ...]]] = [
    ("missing", missing, 2, "rubric", ()),
    ("directory", special_at("rubric.json", "dir"), 2, "rubric", ()),
    ("fifo", special_at("rubric.json", "fifo"), 2, "rubric", (HANGS,)),
    ("dev-zero", lambda case: Path("/dev/zero"), 2, "rubric", (UNBOUNDED,)),
    ("symlink-dev-zero", special_at("rubric.json", "dev-zero"), 2, "rubric", (UNBOUNDED,)),
    ("empty", content(lambda: b""), 2, "json", ()),
    ("not-json", content(lambda: "dimensions: [criterion one]\n"), 2, "json", ()),
    ("not-utf8", content(lambda: b'{"rubric_metadata": "\xff\xfe"}'), 2, "rubric", ()),
    ("top-level-array", content(lambda: [_base()]), 2, "$", ()),
    ("dimensions-10000", content(many_dimensions), 2, "dimensions",
     (pytest.mark.hostile_slow,
      broken("cli", "no cap on dimensions: the audit runs on (killed after 30 s)"))),
    ("nested-100000", content(nested), 2, "rubric",
     (broken("cli", "RecursionError: exit 1 with a traceback"),)),
    ("integer-5000-digits", content(huge_integer), 2, "rubric",
     (broken("cli", "ValueError (int digits limit): exit 1 with a traceback"),)),
    ("ten-megabytes", content(ten_megabytes), 2, "rubric",
     (broken("cli", "no size cap: a 10 MB rubric is accepted and audited (exit 0)"),)),
    ("duplicate-ids", content(duplicate_ids), 2, "duplicate", ()),
    ("wrong-artifact", content(wrong_artifact), 2, "target_artifact", ()),
]


@pytest.mark.parametrize(("build", "code", "needle"), params(CASES))
def test_rubric(case: Case, good_repo: Path, good_pdf: Path, build: Callable[[Case], Path],
                code: int, needle: str) -> None:
    audit_and_check(case, good_repo, good_pdf, code, "error", needle,
                    "--rubric", str(build(case)), fast=True)


def test_unknown_synthesis_rule(case: Case, good_repo: Path, good_pdf: Path) -> None:
    """A rule the Chief Justice does not implement is named in the report, not applied."""
    rubric = _write(case, unknown_rule())
    audit_and_check(case, good_repo, good_pdf, 0, "any", "", "--rubric", str(rubric))
    assert "always_five" in reports(case.out)[0].read_text(encoding="utf-8")
