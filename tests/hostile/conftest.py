"""Fixtures of the hostile suite: the shared valid inputs, built once per module, and a
fresh set of folders per case (see `harness.Case`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.builders import make_pdf, valid_repo
from tests.hostile.harness import KNOWN_HANG_TIMEOUT_S, Case, worst_cases
from tests.hostile.processes import become_subreaper


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "hostile_slow: one of the slowest hostile cases (still runs by default; "
                   "deselect with -m 'not hostile_slow')")
    config.addinivalue_line(
        "markers", "hostile_hang: a known hang (see harness.hangs): a shorter watchdog")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in worst_cases():
        terminalreporter.write_line(line)


@pytest.fixture(scope="module", autouse=True)
def _subreaper() -> Iterator[None]:
    become_subreaper()
    yield


@pytest.fixture(scope="module")
def good_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small valid repository with a stepwise history (never modified by a case)."""
    return valid_repo(tmp_path_factory.mktemp("good") / "auditee", "good")


@pytest.fixture(scope="module")
def good_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small valid report (never modified by a case)."""
    return make_pdf(tmp_path_factory.mktemp("goodpdf") / "report.pdf")


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache per module: the shared report is parsed once. Every case that builds a
    repository gives it a commit of its own (`valid_repo(tag=...)`), so no cached fact of
    another case answers for it."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def case(request: pytest.FixtureRequest, tmp_path: Path, good_repo: Path, good_pdf: Path,
         module_cache: Path) -> Case:
    """A fresh set of folders for one case (see `harness.Case`)."""
    known_hang = request.node.get_closest_marker("hostile_hang") is not None
    return Case(tmp_path, watched=(good_repo.parent, good_pdf.parent), cache=module_cache,
                hang_timeout=KNOWN_HANG_TIMEOUT_S if known_hang else None)
