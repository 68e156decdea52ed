"""Tail look-ups answer exactly what scanning every name would, and cited paths are checked
without comparing every pair: a hostile report cites 100,000 paths."""

from __future__ import annotations

import random

import pytest

from automaton_auditor.forensics import path_split
from automaton_auditor.forensics.path_split import split_paths
from automaton_auditor.forensics.pdf import citations
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.reader import report_facts
from automaton_auditor.forensics.tails import Tails
from automaton_auditor.state import CitedPath
from tests.unit.report_helpers import ingested


def _names(rng: random.Random, count: int, sep: str) -> list[str]:
    parts = ["a", "b", "src", "", "x.py"]
    return [sep.join(rng.choice(parts) for _ in range(rng.randint(1, 4))) for _ in range(count)]


@pytest.mark.parametrize("sep", ["/", "."])
def test_tails_answer_as_a_scan_would(sep: str) -> None:
    rng = random.Random(7)
    names = _names(rng, 300, sep)
    index = Tails(((f"v{i}", n) for i, n in enumerate(names)), sep)
    for query in [*_names(rng, 300, sep), *names]:
        assert list(index.exact(query)) == [f"v{i}" for i, n in enumerate(names) if n == query]
        assert list(index.longer(query)) == [f"v{i}" for i, n in enumerate(names)
                                             if n.endswith(sep + query)]
        parts = query.split(sep)
        assert list(index.named_tails(query)) == [
            d for d in range(1, len(parts) + 1) if sep.join(parts[-d:]) in names]


def _verify_by_scan(path: str, files: set[str]) -> str | None:
    """The matching rule as a scan of every file (what `_verify` replaced)."""
    if path in files:
        return "exact"
    if any(f.endswith("/" + path) for f in files):
        return "suffix"
    parts = path.split("/")
    return "trimmed" if any("/".join(parts[s:]) in files for s in range(1, len(parts) - 1)) \
        else None


def test_cited_paths_match_files_as_a_scan_would() -> None:
    rng = random.Random(3)
    files = {n for n in _names(rng, 200, "/") if n}
    index = Tails(((f, f) for f in sorted(files)), "/")
    for path in _names(rng, 400, "/"):
        assert path_split._verify(path, files, index) == _verify_by_scan(path, files)


class _Counting(str):
    """A path that counts the `endswith` calls made on it (a pairwise scan makes n^2)."""

    calls = 0

    def endswith(self, *args: object) -> bool:  # type: ignore[override]
        _Counting.calls += 1
        return super().endswith(*args)  # type: ignore[arg-type]


def test_missing_paths_are_not_compared_pairwise() -> None:
    cited = [CitedPath(raw="x", path=f"src/m{k}.py", asserted=True) for k in range(2000)]
    cited += [CitedPath(raw="x", path=f"audit/src/m{k}.py", asserted=True)
              for k in range(0, 2000, 2)]
    for item in cited:
        object.__setattr__(item, "path", _Counting(item.path))
    _Counting.calls = 0
    split = split_paths(cited, ["README.md", "src/graph.py"])
    # src/mK.py is dropped where audit/src/mK.py is cited too (its outermost spelling)
    assert len(split.hallucinated) == 2000
    assert sum(p.path.startswith("audit/") for p in split.hallucinated) == 1000
    assert _Counting.calls < 10 * len(cited)


def test_citations_past_the_cap_are_counted_and_a_warning_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n".join(f"See src/m{k}.py for the node." for k in (9, 3, 7, 3, 1))
    cited, total = citations.cited_paths([(1, text)], limit=3)
    assert [c.path for c in cited] == ["src/m3.py", "src/m7.py", "src/m9.py"]  # reading order
    assert total == 4
    assert len(citations.extract_cited_paths([(1, text)])) == 4  # uncapped
    monkeypatch.setattr(citations, "MAX_CITED_PATHS", 2)
    monkeypatch.setattr(citations.cited_paths, "__kwdefaults__", {"limit": 2})
    report = ingested([Block("paragraph", text, 1)], 1, name="r.md")
    assert len(report_facts(report).cited_paths) == 2
    assert report.warnings == ["the report cites 4 distinct paths; only the first 2 (in "
                               "reading order) were checked against the code"]
