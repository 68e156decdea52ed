"""What the report claims: the file paths it cites and the features it says the code has.

Extraction runs in the doc detective; the check against the code (`forensics.crosscheck`)
runs in the aggregator, after fan-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from automaton_auditor.state import CitedPath, FeatureClaim

# --- cited paths --------------------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s<>\"'`)\]]+", re.IGNORECASE)
_GITHUB_FILE = re.compile(
    r"https?://(?:www\.)?github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/(?:blob|tree|raw)/"
    r"[^/\s]+/([^\s#?]+)", re.IGNORECASE)
_PATH = re.compile(
    r"(?<![\w@/.\\-])(?:\.{1,2}/)?(?:[\w.-]+/)+[\w.-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}"
    r"(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)?(?![\w/-])")
_BARE_EXT = ("py|ipynb|md|json|ya?ml|toml|txt|cfg|ini|lock|sh|js|ts|tsx|jsx|html|css|pdf|png|"
             "jpe?g|svg|csv|sql|mmd|dot")
_BARE = re.compile(rf"(?<![\w@/.\\-])[\w-]*[A-Za-z_][\w-]*\.(?:{_BARE_EXT})(?![\w/-])")
_LINE_SUFFIX = re.compile(r"(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)$")


def normalise_path(raw: str) -> str:
    """Repository-relative form of a cited path: no line suffix, no `./`, `/` separators,
    no trailing punctuation."""
    path = raw.strip().replace("\\", "/")
    previous = None
    while path != previous:  # peel quotes, brackets, punctuation and line suffixes in turn
        previous = path
        path = _LINE_SUFFIX.sub("", path.strip("`'\"“”‘’()[]<>*")).rstrip(".,;:!?")
    while path.startswith(("./", "../")):
        path = path.split("/", 1)[1]
    return re.sub(r"/{2,}", "/", path).lstrip("/")


def _sentence_around(text: str, start: int, end: int) -> str:
    left = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start))
    right_candidates = [i for i in (text.find(". ", end), text.find("\n", end)) if i != -1]
    right = min(right_candidates) if right_candidates else len(text)
    return " ".join(text[left + 1: right + 1].split())[:300]


def extract_cited_paths(passages: Iterable[tuple[int | None, str]]) -> list[CitedPath]:
    """Every file path cited in `(page, text)` passages, deduplicated by normalised path
    (first citation kept), sorted: paths with a folder part first, then bare file names.
    GitHub file URLs count as citations of their path; `source_repo` records the URL's
    repository so the cross-check can ignore other repositories."""
    found: dict[tuple[str, bool], CitedPath] = {}

    def keep(cited: CitedPath) -> None:
        if cited.path and (cited.path, cited.bare_name) not in found:
            found[(cited.path, cited.bare_name)] = cited

    for page, raw_text in passages:
        text = re.sub(r"(?<=\w)\\(?=\w)", "/", raw_text)
        for match in _URL.finditer(text):
            github = _GITHUB_FILE.match(match.group(0).rstrip(".,;:"))
            if github:
                keep(CitedPath(raw=match.group(0), path=normalise_path(github.group(3)),
                               page=page, context=_sentence_around(text, *match.span()),
                               source_repo=f"{github.group(1)}/{github.group(2)}".lower()))
        masked = _URL.sub(lambda m: " " * len(m.group(0)), text)
        for match in _PATH.finditer(masked):
            keep(CitedPath(raw=match.group(0), path=normalise_path(match.group(0)), page=page,
                           context=_sentence_around(text, *match.span())))
        masked = _PATH.sub(lambda m: " " * len(m.group(0)), masked)
        for match in _BARE.finditer(masked):
            keep(CitedPath(raw=match.group(0), path=normalise_path(match.group(0)), page=page,
                           context=_sentence_around(text, *match.span()), bare_name=True))
    return sorted(found.values(), key=lambda c: (c.bare_name, c.path))


# --- feature claims -------------------------------------------------------------------------------

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


# --- cross-check ----------------------------------------------------------------------------------
