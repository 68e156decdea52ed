"""Opt-in real-world regression test: the auditor's verdicts on labelled peer submissions.

Runs only with AUDITOR_REALWORLD=1 and the peers' git mirrors present (see README.md here).
Every labelled direction and every labelled cited path must hold. The label files themselves
are checked on every run (no auditor, no mirror needed).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent.parent / "bench" / "realworld.py"
LABEL_FILES = sorted((HERE / "peers").glob("*.json"))
KEYS = {"repo", "commit", "report_path", "grade", "grade_why", "criteria", "cited_paths",
        "defects", "files"}


def _load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("realworld_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


def _label(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- label files


@pytest.mark.parametrize("path", LABEL_FILES, ids=lambda p: p.stem)
def test_label_file_is_consistent(path: Path) -> None:
    data = _label(path)
    assert data.keys() >= KEYS, KEYS - data.keys()
    assert path.stem == bench.label_name(data).replace("/", "__")
    assert data.get("snapshot") in (None, "interim")
    assert len(data["commit"]) == 40
    assert 1 <= data["grade"] <= 10
    files = set(data["files"])
    if data["report_path"] is not None:
        assert data["report_path"] in files
    for cid, lab in data["criteria"].items():
        assert cid in bench.CRITERIA, cid
        assert lab["direction"] in ("high", "mid", "low"), lab
        assert lab["why"].strip(), cid
    cited = data["cited_paths"]
    for p in cited["verified"]:
        assert p in files, f"labelled verified but absent at the commit: {p}"
    for p in cited["hallucinated"]:
        assert p not in files, f"labelled hallucinated but present at the commit: {p}"
    lists = [set(cited[k]) for k in ("verified", "hallucinated", "planned")]
    assert not (lists[0] & lists[1] or lists[0] & lists[2] or lists[1] & lists[2])


def test_set_is_big_enough() -> None:
    assert len(LABEL_FILES) >= 8


def test_second_reading_file_is_consistent() -> None:
    """Every cell read again names a labelled criterion of a labelled peer at its commit."""
    labels = {bench.label_name(_label(p)): _label(p) for p in LABEL_FILES}
    cells = json.loads(bench.SECOND_READING.read_text(encoding="utf-8"))["cells"]
    assert len(cells) == len({(c["repo"], c["criterion"]) for c in cells}) >= 30
    for cell in cells:
        peer = labels[cell["repo"]]
        assert cell["commit"] == peer["commit"], cell["repo"]
        assert cell["criterion"] in peer["criteria"], cell
        assert cell["direction"] in ("high", "mid", "low") and cell["why"].strip(), cell


# --------------------------------------------------------------------------- live audits

LIVE = os.environ.get("AUDITOR_REALWORLD") == "1"
PRESENT = [p for p in LABEL_FILES
           if LIVE and bench.find_git_dir(_label(p)["repo"], _label(p)["commit"]) is not None]
live = pytest.mark.skipif(
    not LIVE or not PRESENT,
    reason=("set AUDITOR_REALWORLD=1 to audit the labelled peers" if not LIVE
            else f"no peer mirror found ({bench.MIRROR_ROOT} or AUDITOR_PEERS_DIR)"),
)
_OUTCOMES: dict[str, Any] = {}


def _outcome(path: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    if path.stem not in _OUTCOMES:
        work = tmp_path_factory.mktemp(path.stem)
        _OUTCOMES[path.stem] = bench.audit_peer(_label(path), work)
    out = _OUTCOMES[path.stem]
    assert out.status == "ok", f"audit did not finish: {out.detail}"
    return out


@live
@pytest.mark.parametrize("path", PRESENT or LABEL_FILES[:1], ids=lambda p: p.stem)
def test_labelled_directions_hold(path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    peer = _label(path)
    out = _outcome(path, tmp_path_factory)
    wrong = [
        f"{cid}: labelled {lab}, auditor {score}  -- {peer['criteria'][cid]['why']}"
        for cid, lab, score, ok in bench.compare_directions(peer, out)
        if not ok
    ]
    assert not wrong, "\n".join(wrong)


@live
@pytest.mark.parametrize("path", PRESENT or LABEL_FILES[:1], ids=lambda p: p.stem)
def test_cited_paths_classified(path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    peer = _label(path)
    out = _outcome(path, tmp_path_factory)
    wrong = [
        f"{p}: labelled {lab}, auditor {got}"
        for p, lab, got, ok in bench.compare_paths(peer, out)
        if not ok
    ]
    assert not wrong, "\n".join(wrong)
