"""Hostile rubrics: anything that is not a small, well-formed rubric file is an input error
(exit 2, one `error:` line naming the file and the rule, no report), refused at once and
within the memory ceiling, whatever it is (a FIFO, a device, 10 MB, 300 or 10,000
dimensions, JSON nested 100,000 deep, a 5,000-digit number). The caps are the rubric
module's own constants."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.rubric import (
    MAX_DIMENSIONS,
    MAX_RUBRIC_BYTES,
    default_rubric_text,
)
from automaton_auditor.safefile import MAX_NESTING
from tests.hostile.builders import special_at
from tests.hostile.harness import Case, audit_and_check, params, reports


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


def many_dimensions(count: int) -> dict[str, Any]:
    data = _base()
    first = data["dimensions"][0]
    data["dimensions"] = [{**copy.deepcopy(first), "id": f"d{i}", "name": f"Criterion {i}"}
                          for i in range(count)]
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


def lone_surrogate() -> dict[str, Any]:
    """Valid JSON ("\\ud800") that no UTF-8 report can hold: once accepted, the whole audit
    ran and then failed writing report.md (exit 3, a 0-byte report)."""
    data = _base()
    data["rubric_metadata"]["version"] = "\ud800" + data["rubric_metadata"]["version"]
    return data


def spliced(old: str, new: str) -> Callable[[], str]:
    """The default rubric's JSON text with its first `old` replaced by `new`: what
    `json.dumps` cannot write (a key twice, NaN, a key holding a NUL)."""
    return lambda: json.dumps(_base()).replace(old, new, 1)


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


# (id, builder, exit code, the rule the error line names, marks)
CASES: list[tuple[str, Callable[[Case], Path], int, str, tuple[object, ...]]] = [
    ("missing", missing, 2, "not found", ()),
    ("directory", special_at("rubric.json", "dir"), 2, "not a regular file", ()),
    ("fifo", special_at("rubric.json", "fifo"), 2, "not a regular file", ()),
    ("dev-zero", lambda case: Path("/dev/zero"), 2, "not a regular file", ()),
    ("symlink-dev-zero", special_at("rubric.json", "dev-zero"), 2, "not a regular file", ()),
    ("empty", content(lambda: b""), 2, "not valid json", ()),
    ("not-json", content(lambda: "dimensions: [criterion one]\n"), 2, "not valid json", ()),
    ("not-utf8", content(lambda: b'{"rubric_metadata": "\xff\xfe"}'), 2, "utf-8", ()),
    ("top-level-array", content(lambda: [_base()]), 2, "$", ()),
    ("dimensions-300", content(lambda: many_dimensions(300)), 2,
     f"more than {MAX_DIMENSIONS}", ()),
    ("dimensions-10000", content(lambda: many_dimensions(10_000)), 2,
     f"larger than {MAX_RUBRIC_BYTES:,} bytes", ()),
    ("nested-100000", content(nested), 2, f"nested deeper than {MAX_NESTING}", ()),
    ("integer-5000-digits", content(huge_integer), 2, "5000 digits", ()),
    ("ten-megabytes", content(ten_megabytes), 2, f"larger than {MAX_RUBRIC_BYTES:,} bytes", ()),
    ("duplicate-ids", content(duplicate_ids), 2, "duplicate", ()),
    ("wrong-artifact", content(wrong_artifact), 2, "target_artifact", ()),
    ("lone-surrogate", content(lone_surrogate), 2, "$.rubric_metadata.version: lone surrogate",
     ()),
    # json.loads keeps the last of two equal keys: the rubric read would not be the one shown
    ("duplicate-key", content(spliced('"id": "', '"id": "first", "id": "')), 2,
     'key "id" given twice in one object', ()),
    ("nan", content(spliced('"version"', '"weight": NaN, "version"')), 2,
     "NaN is not a JSON number", ()),
    ("infinity", content(spliced('"version"', '"w": -Infinity, "version"')), 2,
     "-Infinity is not a JSON number", ()),
    ("float-1e400", content(spliced('"version"', '"w": 1e400, "version"')), 2,
     "1e400 is past a float's range", ()),
    # the NUL in the key is not echoed (nor kept in the message a batch summary records)
    ("nul-in-key", content(spliced('"rubric_metadata"', '"rub\\u0000ric": 1, "rubric_metadata"')),
     2, "$.rubric: extra inputs are not permitted", ()),
]


@pytest.mark.parametrize(("build", "code", "rule"), params(CASES))
def test_rubric(case: Case, good_repo: Path, good_pdf: Path, build: Callable[[Case], Path],
                code: int, rule: str) -> None:
    """Refused before anything starts (no git, no reader: one process), in ONE line that
    names the file and the rule."""
    rubric = build(case)
    result = audit_and_check(case, good_repo, good_pdf, code, "error", rule,
                             "--rubric", str(rubric), fast=True)
    assert str(rubric) in result.lines()[0], result.describe()
    assert result.peak_processes == 1, result.describe()


def test_unknown_synthesis_rule(case: Case, good_repo: Path, good_pdf: Path) -> None:
    """A rule the Chief Justice does not implement is named in the report, not applied."""
    rubric = _write(case, unknown_rule())
    audit_and_check(case, good_repo, good_pdf, 0, "any", "", "--rubric", str(rubric))
    assert "always_five" in reports(case.out)[0].read_text(encoding="utf-8")
