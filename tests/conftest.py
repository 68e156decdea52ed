"""Shared fixtures: evidence builders, the reference rubrics, the corpus folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.state import Evidence, Pattern

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
REFERENCE_RUBRICS = SHARED / "reference" / "rubrics"
CORPUS = SHARED / "corpus" / "pdfs"


def make_evidence(goal: str = "fact", *, found: bool = True, pattern: Pattern = "success",
                  dimension: str = "dim", confidence: float = 0.9, security: bool = False,
                  location: str = "src/a.py:1", facet: str = "graph.test",
                  **extra: Any) -> Evidence:
    """An Evidence with sensible defaults for rule tests."""
    return Evidence(source="repo", dimension=dimension, facet=facet, goal=goal, found=found,
                    pattern=pattern, location=location, rationale=f"because {goal}",
                    confidence=confidence, security=security, **extra)


@pytest.fixture
def reference_rubrics() -> Path:
    if not REFERENCE_RUBRICS.is_dir():
        pytest.skip("../shared/reference/rubrics is not beside the checkout")
    return REFERENCE_RUBRICS


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/pdfs is not beside the checkout")
    return CORPUS


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory,
                    monkeypatch: pytest.MonkeyPatch) -> Path:
    """Caches and run checkpoints never leave the test's temporary folders: point
    AUDITOR_CACHE_DIR at a fresh folder per test (never the user's cache)."""
    root = tmp_path_factory.mktemp("auditor-cache")
    monkeypatch.setenv("AUDITOR_CACHE_DIR", str(root))
    # nor the user's settings (~/.config/automaton-auditor)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
    return root
