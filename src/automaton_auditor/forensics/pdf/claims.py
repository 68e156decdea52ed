"""What the report claims about the code's features (parallel judges, a fan-in ...).

The file paths it cites are read by `citations`. Extraction runs in the doc detective; the check
against the code (`forensics.crosscheck`) runs in the aggregator, after fan-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from automaton_auditor.state import FeatureClaim

_PARALLEL = (r"\b(?:in parallel|parallel(?:ly|ism)?|concurrent(?:ly)?|simultaneous(?:ly)?|"
             r"fan[\s-]?out)\b")
FEATURES: dict[str, tuple[str, str]] = {
    # feature: (subject pattern, claim pattern), both must appear in one sentence
    "parallel_judges": (r"\b(?:judges?|judicial|prosecutor|defen[cs]e|tech\s?lead)\b", _PARALLEL),
    "parallel_detectives": (r"\b(?:detectives?|investigators?|doc\s?analyst|vision\s?inspector)\b",
                            _PARALLEL),
    "fan_in": (r"\b(?:aggregat\w*|fan[\s-]?in|synchroni[sz]\w*|join)\b",
               r"\b(?:fan[\s-]?in|waits?|collects?|merges?|gathers?|synchroni[sz]\w*)\b"),
    "conditional_routing": (r"\bconditional(?:\s+\w+)?\s+(?:edges?|routing|routes?|branch\w*)\b",
                            r"."),
}
_NEGATION = re.compile(r"\b(?:not|never|no longer|instead of|rather than|sequential(?:ly)?|"
                       r"cannot|can't|don't|doesn't|isn't|aren't|won't)\b", re.IGNORECASE)


def extract_feature_claims(passages: Iterable[tuple[int | None, str]],
                           sentence_splitter: re.Pattern[str] | None = None,
                           per_feature: int = 3) -> list[FeatureClaim]:
    """Affirmative sentences claiming a checkable feature (parallel judges or detectives,
    a fan-in, conditional routing), at most `per_feature` per feature, in document order."""
    splitter = sentence_splitter or re.compile(r"(?<=[.!?])\s+")
    claims: list[FeatureClaim] = []
    counts: dict[str, int] = {}
    for page, text in passages:
        for sentence in splitter.split(text):
            if _NEGATION.search(sentence):
                continue
            for feature, (subject, claim) in FEATURES.items():
                if counts.get(feature, 0) >= per_feature:
                    continue
                if re.search(subject, sentence, re.IGNORECASE) and \
                        re.search(claim, sentence, re.IGNORECASE):
                    counts[feature] = counts.get(feature, 0) + 1
                    claims.append(FeatureClaim(feature=feature, page=page,
                                               sentence=" ".join(sentence.split())[:400]))
    return claims

