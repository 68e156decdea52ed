"""A feature the report names as a weakness, a limitation or future work ("exposes weaknesses
such as the stubbed inspector or limited conditional edges") is not claimed to exist."""

from __future__ import annotations

import pytest

from automaton_auditor.forensics.pdf.claims import extract_feature_claims


@pytest.mark.parametrize("sentence", [
    "Auditing itself exposes weaknesses such as the stubbed inspector or limited conditional "
    "edges.",
    "The graph runs without conditional edges beyond the entry router.",
    "Limitations include conditional routing for failed clones.",
    "Conditional edges are still limited to the entry node.",
    "Conditional edges for retries are left for future work.",
    "The only shortcoming is absence of explicit conditional edges for error handling.",
    "A lack of conditional routing means a failed clone still reaches the judges.",
    "When the peer found issues I had missed (conditional edges, format assumptions), it "
    "expanded my auditor's coverage.",
])
def test_a_feature_named_as_a_shortfall_is_not_claimed(sentence: str) -> None:
    assert extract_feature_claims([(4, sentence)]) == []


def test_a_feature_named_beside_a_shortfall_is_still_claimed() -> None:
    claims = extract_feature_claims([
        (4, "The graph routes with conditional edges; its one weakness is the slow clone."),
        (5, "A limited budget aside, conditional edges send failures to the error node.")])
    assert [c.page for c in claims] == [4, 5]
