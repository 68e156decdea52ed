"""Plans a report lists are no claims of what the code does."""

from __future__ import annotations

from automaton_auditor.forensics.pdf.claims import extract_feature_claims


def test_future_work_is_no_feature_claim() -> None:
    assert extract_feature_claims([(20, "Conditional Edges (Future Enhancement): route on "
                                         "variance.")]) == []
    assert extract_feature_claims([(2, "The final phase, where judicial fan-out and "
                                        "synthesis will be layered on top.")]) == []
    # other gaps left as future work: what the sentence names is still described
    said = ("The graph routes with conditional edges, leaving diagram generation as future "
            "work.")
    assert [c.feature for c in extract_feature_claims([(3, said)])] == ["conditional_routing"]
