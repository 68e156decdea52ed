"""The file paths a report cites, read so that they survive PDF text extraction.

A PDF's text layer breaks identifiers: a space before `_` or after `/`, a path cut at a line
end, an underscore a LaTeX font draws as a rule (`src/tools/git tools.py`). Such a break is
repaired here into a candidate spelling (`repair` says how) that only counts when it matches
the repository (`verify_only`) unless a second extractor read the path whole or the same
repair was confirmed elsewhere in the report (the cross-check decides, it has the file list).
A dotted API name (`operator.add/operator.ior`) has no file extension we know, so it is only
ever verified, never hallucinated. Each citation also says whether the report presents the
file as future work (`future`: a remediation section, "(new file)", "will add") and whether
some citation asserts it exists (`asserted`; "src/x.py does not exist" does not).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from automaton_auditor.forensics.pdf.not_claims import disowns, old_side
from automaton_auditor.forensics.pdf.textlayer import GAP_CORE
from automaton_auditor.state import CitedPath

# Extensions a cited file plausibly has; another "extension" (`operator.ior`) is an API name.
KNOWN_EXT = frozenset({
    "py", "pyi", "pyx", "ipynb", "md", "markdown", "rst", "txt", "json", "jsonl", "yaml", "yml",
    "toml", "cfg", "ini", "conf", "env", "lock", "sh", "bash", "ps1", "bat", "js", "mjs", "cjs",
    "ts", "tsx", "jsx", "vue", "html", "htm", "css", "scss", "xml", "csv", "tsv", "sql", "mmd",
    "dot", "puml", "pdf", "png", "jpg", "jpeg", "gif", "svg", "webp", "docx", "tex", "bib", "log",
    "db", "sqlite", "pkl", "parquet", "c", "h", "cpp", "hpp", "go", "rs", "java", "rb", "php"})
_EXT = "|".join(sorted(KNOWN_EXT, key=len, reverse=True))
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
# Files named without a known extension: dotfiles (`.env.example`, `.gitignore`) and the build
# files known by name. Words like these are often no file at all (`.NET`, "a Makefile-style
# target"), so they only count when the repository has them (`verify_only`).
_NAMED = re.compile(r"(?<![\w@/.\\-])(?:\.[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)*|Dockerfile|"
                    r"Containerfile|Makefile|Procfile|Justfile|Vagrantfile)(?![\w/.-]*\w)")
_LINE_SUFFIX = re.compile(r"(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)$")
# A space the text layer put inside a path (before "_", around "/", after "name." before a
# known extension): removing it rebuilds the identifier (`src/nodes/chief _justice.py`).
_GAP = re.compile(rf"{GAP_CORE}|(?<=[A-Za-z_]\.) (?=(?:{_EXT})\b)")
# A file name whose underscores the font drew as rules: words separated by single spaces
# right after a folder part (`rubric/week2 rubric.json`), at most two gaps.
_SPACED = re.compile(rf"(?<![\w@/.\\-])((?:[\w.-]+/)+)([A-Za-z0-9]+(?: [A-Za-z0-9]+){{1,2}})"
                     rf"\.({_EXT})(?![\w/-])")
# A file name with spaces in it (`audit/report_x/audit_report_Jane Doe.md`, or a name a line
# end cut where the text layer now has a space): kept as written, it counts only when a file
# of the repository has that very name, since prose puts spaces everywhere.
_SPACED_NAME = re.compile(rf"(?<![\w@/.\\-])(?:[\w.-]+/)+[\w.-]+(?: [\w.-]+){{1,3}}"
                          rf"\.(?:{_EXT})(?![\w/-])")
# A bare file name given as where something is ("Location: Architecture_Report.md", "File:
# judges.py") names a file of the repository: it is checked as a path (a file of that name
# anywhere verifies it, none leaves it missing), not set aside as a name that may be no file.
_LOCATED = re.compile(r"\b(?:locations?|files?|paths?)\s*:\s*[`'\"\u2018\u201c]?$", re.IGNORECASE)
# A path a table cell or line end cut inside a word, the text layer leaving a space at the cut
# (`src/pkg/agent s/judges.py`, `src/pkg/doc_t ools.py`, `src/pkg/graph .py`): a part with a
# folder and no extension, one space, then the rest up to an extension.
_CUT = re.compile(r"(?<![\w@/.\\-])((?:\.{1,2}/)?(?:[\w.-]+/)+[\w.-]*\w) "
                  r"((?:[\w.-]+/)*[\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}"
                  r"(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)?)(?![\w/-])")
# A framework's name (`Node.js`) is not a file the report plans.
_FRAMEWORK = re.compile(r"^[A-Z][a-z]+\.js$")
FUTURE_HEADING = re.compile(
    r"\b(?:remediation|future|next steps?|roadmap|to-?do|planned|improvement plan|action plan|"
    r"(?:completion|forward|test|implementation|integration|development) plan|"
    r"plan for (?:the )?(?:final|next)|deferred|files? to (?:modify|create|add|change)|priority \d|"
    r"recommendations?|proposed)\b", re.IGNORECASE)
# The sentence says the work is not built yet ("designed but not yet wired", "what remains is
# building the three node functions in src/nodes/judges.py"): an interim report's plan.
NOT_YET = re.compile(
    r"\bnot\s+yet\s+(?:been\s+)?(?:implemented|wired|built|written|connected|integrated)\b|"
    r"\bwhat remains\b|\bremains? to be (?:built|implemented|written|wired|done)\b|"
    r"\byet to be (?:built|implemented|written|wired)\b|\bwhat(?:'s| is) (?:still )?missing\b",
    re.IGNORECASE)
FUTURE_SENTENCE = re.compile(
    r"\(new file\)|\bnew file\b|\bwill (?:add|create|introduce|move|extract|split|write)\b|"
    r"\bwill be (?:enforced|implemented|added|built|wired|created|introduced|written|handled|"
    r"integrated)\b|\b(?:when|once) (?:added|implemented|built|wired|in place)\b|"
    r"\bto be (?:added|created|written|introduced)\b|\bplanned\b|\bfuture work\b|"
    r"\bfiles? to (?:modify|create|add|change)\b|\bproposed\b|\bTODO\b|"
    + NOT_YET.pattern, re.IGNORECASE)
# Where a sentence ends: ". " (not after "e.g", "i.e", "vs", "cf", "etc") or a line break.
# Distinct paths a report's citations are checked for: real reports cite tens; past this
# the rest are counted and a warning says so (the cap keeps the facts and report bounded).
MAX_CITED_PATHS = 5000
_BOUNDARY = re.compile(r"(?<!e\.g)(?<!i\.e)(?<!\bvs)(?<!\bcf)(?<!etc)\.\s|\n")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)[.)]?\s")
# A long command-line option right before a path (`--pdf-path audit/x.pdf`, `--out=r.md`):
# the path is an argument of a run, an input it fetches or an output it writes.
_OPTION_BEFORE = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*(?:=|[ \t]*\n?[ \t]*)$")
# Where a run writes ("save URLs to audit/x.txt", "the report is written to out/r.md", a
# shell's `> audit/x.txt`): an output of the system, not a claim that the file is committed
# (verified when present, else planned: a file the run will make).
_OUTPUT_BEFORE = re.compile(r"\b(?:sav(?:e|es|ed|ing)|writ(?:e|es|ten|ing)|export(?:s|ed|ing)?|"
                            r"dump(?:s|ed|ing)?)\b(?:\s+[\w-]+){0,3}\s+(?:to|into)\s+[`'\"]?$|"
                            r"(?:^|\s)>>?[ \t]*$", re.IGNORECASE)
# A path right after an imperative that makes it, at the start of a sentence, line or list item
# ("- Judges: Add `src/nodes/judges.py` with three nodes"): a plan, not a claim.
_MAKE_BEFORE = re.compile(r"(?:^|[\n:;\u2022*]\s*|[.!?]\s+|-\s+)(?:Add|Create|Implement|Introduce|"
                          r"Write|Build)\s+(?:(?:a|an|the|new)\s+)*[`'\"]?$")
# A path in an example (`AST parse errors (e.g., "Invalid Python syntax in src/broken.py")`):
# verified when present, never hallucinated (an example names no file of the repository);
# an example of what a plan will touch stays planned.
_EXAMPLE_BEFORE = re.compile(r"\b(?:e\.g\.?|for (?:example|instance))[,:]?\s[^;\n]{0,50}$",
                             re.IGNORECASE)
# A path the challenge asks for ("the final submission spec calls for `src/nodes/justice.py`"):
# a requirement the report quotes, not a claim that the file is committed.
_REQUIRED_BEFORE = re.compile(r"\b(?:spec(?:ification)?|rubric|challenge|brief|assignment)\b"
                              r"[^.;\n]{0,30}\b(?:calls for|requires|expects|asks for|mandates)"
                              r"\s+(?:(?:a|an|the)\s+)?[`'\"]?$", re.IGNORECASE)


@dataclass(frozen=True)
class Passage:
    """A piece of report text on one page; `future` when it sits in a future-work section."""

    page: int | None
    text: str
    future: bool = False
    quoted: bool = False  # in a review of a peer's work (`reviews`): its paths claim nothing


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


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence (or line) holding text[start:end], at most 300 characters."""
    window = max(0, start - 400)  # the quote is cut at 300 characters anyway
    left = max((m.end() for m in _BOUNDARY.finditer(text, window, start)), default=window)
    right = next((m.start() + 1 for m in _BOUNDARY.finditer(text, end)), len(text))
    return " ".join(text[left:right].split())[:300]


def glued_variants(path: str) -> list[str]:
    """`path` without a capitalised word glued to its first folder (OCR reads "In src/x.py"
    as `Insrc/x.py`): spellings to verify, counted only when the commit holds the file."""
    head, _, rest = path.partition("/")
    return [f"{head[k:]}/{rest}" for k in range(2, min(len(head) - 2, 10)) if rest and
            head[0].isupper() and head[1:k].isalpha() and head[1:k].islower()
            and re.match(r"[a-z_.]", head[k])]


def _known_ext(path: str) -> bool:
    return path.rsplit(".", 1)[-1].lower() in KNOWN_EXT


def _cited(raw: str, path: str, passage: Passage, context: str, planned: bool = False,
           **extra: object) -> CitedPath:
    disowned = disowns(context) or passage.quoted
    future = planned or passage.future or bool(FUTURE_SENTENCE.search(context))
    return CitedPath(raw=raw, path=path, page=passage.page, context=context,
                     future=future, asserted=not (future or disowned), **extra)


def _joined(text: str) -> tuple[str, list[int]]:
    """`text` without the spaces `_GAP` finds, and each kept character's original index."""
    gaps = {match.start() for match in _GAP.finditer(text)}
    index = [i for i in range(len(text)) if i not in gaps]
    return "".join(text[i] for i in index), index


def _repaired(text: str, passage: Passage) -> Iterator[tuple[tuple[int, int], CitedPath]]:
    """Paths rebuilt from broken text, with the span of the original text they cover."""
    if _GAP.search(text):
        joined, index = _joined(text)
        for match in _PATH.finditer(joined):
            start, end = index[match.start()], index[match.end() - 1] + 1
            if " " in text[start:end]:
                path = normalise_path(match.group(0))
                yield (start, end), _cited(text[start:end], path, passage,
                                           sentence_around(text, start, end),
                                           repair="joined", verify_only=True)
    for match in _SPACED.finditer(text):
        folders, words, ext = match.groups()
        spellings = [f"{folders}{sep.join(words.split())}.{ext}" for sep in ("_", "", "-")]
        yield match.span(), _cited(
            match.group(0), normalise_path(spellings[0]), passage,
            sentence_around(text, *match.span()), repair="underscore", verify_only=True,
            variants=[normalise_path(s) for s in spellings[1:]])


def _cuts(text: str, passage: Passage) -> Iterator[tuple[tuple[int, int], CitedPath]]:
    """Paths cut inside a word, joined across the cut. The joined spelling is a guess
    (`src/utils tests/a.py` is a folder and a file): it only counts when it names a file or
    the same repair matched files elsewhere in the report; the spelling as written (a file
    name with a space) and the part after the cut (when it has a folder) stay variants."""
    for match in _CUT.finditer(text):
        head, tail = match.groups()
        joined, written = normalise_path(head + tail), normalise_path(match.group(0))
        if _PATH.fullmatch(head) or _SPACED.fullmatch(written) or not _known_ext(joined):
            continue  # a whole path before the space, or a spaced name `_SPACED` repairs
        variants = [written, *([normalise_path(tail)] if "/" in tail else [])]
        yield match.span(), _cited(match.group(0), joined, passage,
                                   sentence_around(text, *match.span()), repair="cut",
                                   verify_only=True, variants=variants)


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def passage_paths(passage: Passage) -> Iterator[CitedPath]:
    """Every path cited in one passage: GitHub file URLs, paths with a folder part (cut
    inside a word, whole, repaired, or with spaces in the file name), then bare file names
    in what is left."""
    text = re.sub(r"(?<=\w)\\(?=\w)", "/", passage.text)
    for match in _URL.finditer(text):
        github = _GITHUB_FILE.match(match.group(0).rstrip(".,;:"))
        if github:
            yield _cited(match.group(0), normalise_path(github.group(3)), passage,
                         sentence_around(text, *match.span()),
                         source_repo=f"{github.group(1)}/{github.group(2)}".lower())
    masked = _mask(text, (m.span() for m in _URL.finditer(text)))
    cuts = list(_cuts(masked, passage))
    yield from (cited for _span, cited in cuts)
    masked = _mask(masked, (span for span, _cited_path in cuts))
    whole = list(_PATH.finditer(masked))
    for match in whole:
        path = normalise_path(match.group(0))
        # An option's argument is no claim that the file is committed: verified when present,
        # never hallucinated (`run --pdf-path audit/cache/report.pdf` downloads it there).
        before = masked[max(0, match.start() - 60):match.start()]
        # What a run writes is verified when committed, else something the run will make.
        output = bool(_OUTPUT_BEFORE.search(before))
        cited = _cited(match.group(0), path, passage, sentence_around(text, *match.span()),
                       verify_only=bool(_OPTION_BEFORE.search(before)) or not _known_ext(path),
                       variants=glued_variants(path), planned=output or bool(
                           _MAKE_BEFORE.search(before) or _REQUIRED_BEFORE.search(before)))
        # an example in a plan ("update the detector, for example src/x.py") is still a plan
        example = not cited.future and bool(_EXAMPLE_BEFORE.search(before))
        # the old side of a correction ("Claimed: X → Actual: Y") says X is not there
        yield cited.model_copy(update={"verify_only": cited.verify_only or example, "asserted":
                                       cited.asserted and not old_side(masked, *match.span())})
    masked = _mask(masked, (m.span() for m in whole))
    seen = {normalise_path(m.group(0)) for m in whole}  # once: not per repaired citation
    repaired = [(span, cited) for span, cited in _repaired(masked, passage)
                if cited.path and cited.path not in seen]
    yield from (cited for _span, cited in repaired)
    masked = _mask(masked, (span for span, _cited_path in repaired))
    # not masked: when no file has the spaced name, the words in it are read as before
    for match in _SPACED_NAME.finditer(masked):
        yield _cited(match.group(0), normalise_path(match.group(0)), passage,
                     sentence_around(text, *match.span()), verify_only=True)
    for match in _BARE.finditer(masked):
        located = _LOCATED.search(masked, max(0, match.start() - 30), match.start())
        yield _cited(match.group(0), normalise_path(match.group(0)), passage,
                     sentence_around(text, *match.span()), bare_name=located is None)
    masked = _mask(masked, (m.span() for m in _BARE.finditer(masked)))
    for match in _NAMED.finditer(masked):
        yield _cited(match.group(0), match.group(0), passage,
                     sentence_around(text, *match.span()), bare_name=True, verify_only=True)


def _merge(first: CitedPath, other: CitedPath) -> CitedPath:
    """One entry per path: the first citation, with what every citation says about it."""
    variants = [v for v in (*first.variants, *other.variants) if v != first.path]
    return first.model_copy(update={
        "future": first.future or other.future, "asserted": first.asserted or other.asserted,
        "verify_only": first.verify_only and other.verify_only,
        "repair": first.repair if other.repair else None,
        "variants": list(dict.fromkeys(variants))})


def extract_cited_paths(passages: Iterable[Passage | tuple[int | None, str]],
                        second: dict[int, str] | None = None) -> list[CitedPath]:
    """`cited_paths` without its cap: every path the passages cite."""
    return cited_paths(passages, second, limit=None)[0]


def cited_paths(passages: Iterable[Passage | tuple[int | None, str]],
                second: dict[int, str] | None = None, *, limit: int | None = MAX_CITED_PATHS
                ) -> tuple[list[CitedPath], int]:
    """Every file path cited in the passages, one entry per (path, bare) with every citation's
    flags merged, sorted: paths with a folder part first, then bare file names. GitHub file
    URLs count as citations of their path; `source_repo` records the URL's repository.
    Only the first `limit` distinct citations in reading order are kept; the second value
    is how many there were in all (a hostile report can cite 100,000 paths, each carried
    through the state and checked against the tree).

    `second` is the same report's text per page as a second extractor read it: where it
    reads a path differently on a page, its spelling joins the citation's variants (and leads
    when the first reading needed a repair); a path only it reads is cited too."""
    pages: dict[int | None, list[Passage]] = {}
    for item in passages:
        passage = item if isinstance(item, Passage) else Passage(*item)
        pages.setdefault(passage.page, []).append(passage)
    found: dict[tuple[str, bool], CitedPath] = {}
    beyond: set[tuple[str, bool]] = set()  # distinct citations past the cap, only counted
    for page in sorted(set(pages) | set(second or {}), key=lambda p: (p is None, p or 0)):
        mentions = [c for p in pages.get(page, []) for c in passage_paths(p)]
        if second and page in second:
            mentions = _reconcile(mentions, pages.get(page, []),
                                  passage_paths(Passage(page, second[page])))
        for cited in mentions:
            if not cited.path or (cited.bare_name and cited.future
                                  and _FRAMEWORK.match(cited.path)):
                continue
            key = (cited.path, cited.bare_name)
            if key in found:
                found[key] = _merge(found[key], cited)
            elif limit is None or len(found) < limit:
                found[key] = cited
            else:
                beyond.add(key)
    return sorted(found.values(), key=lambda c: (c.bare_name, c.path)), len(found) + len(beyond)


def _skeleton(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _reconcile(mine: list[CitedPath], passages: list[Passage],
               second: Iterable[CitedPath]) -> list[CitedPath]:
    """Fold the second extractor's paths on one page into the first one's mentions there."""
    mentions = list(mine)
    by_path: dict[str, list[int]] = {}
    by_skeleton: dict[str, int] = {}
    for i, cited in enumerate(mentions):
        if not cited.bare_name:
            by_path.setdefault(cited.path, []).append(i)
            by_skeleton.setdefault(_skeleton(cited.path), i)
    skeletons: list[str] = []
    seen: set[str] = set()
    for other in second:
        if other.bare_name or other.source_repo or other.path in seen:
            continue  # bare names and URLs read the same in both
        seen.add(other.path)
        whole = not (other.repair or other.verify_only)
        if other.path in by_path:
            for i in by_path[other.path] if whole else ():  # read whole: repair corroborated
                mentions[i] = mentions[i].model_copy(update={"verify_only": False,
                                                             "repair": None})
            continue
        key = _skeleton(other.path)
        if key in by_skeleton:
            i = by_skeleton[key]
            mentions[i] = _with_variant(mentions[i], other)
            continue
        skeletons = skeletons or [_skeleton(p.text) for p in passages]
        home = next((p for p, text in zip(passages, skeletons, strict=True) if key in text),
                    None)
        planned, quoted = bool(home and home.future), bool(home and home.quoted)
        mentions.append(other.model_copy(update={"future": other.future or planned, "asserted":
                                                 other.asserted and not (planned or quoted)}))
    return mentions


def _with_variant(mine: CitedPath, other: CitedPath) -> CitedPath:
    """Add the second extractor's spelling; it leads when only it read the path whole."""
    if mine.repair and not other.repair:
        return mine.model_copy(update={"path": other.path, "repair": None, "verify_only": False,
                                       "variants": [mine.path, *mine.variants]})
    return mine.model_copy(update={"variants": [*mine.variants, other.path]})


def future_flags(headings: Iterable[tuple[bool, int, str, tuple[str, ...]]]) -> list[bool]:
    """For blocks given as (is_heading, level, text, section path), in document order: does
    each sit in a future-work section? A future-work heading opens a scope that the next
    heading at its depth closes (by section number when it is numbered, else by level)."""
    flags: list[bool] = []
    scope: tuple[int, int] | None = None  # (level, numbering depth or 0)
    for is_heading, level, text, section in headings:
        if is_heading:
            number = _NUMBER.match(text)
            depth = len(number.group(1).split(".")) if number else 0
            if scope is not None and _closes(scope, level, depth):
                scope = None
            if scope is None and FUTURE_HEADING.search(text):
                scope = (level, depth)
        flags.append(scope is not None or any(FUTURE_HEADING.search(s) for s in section))
    return flags


def _closes(scope: tuple[int, int], level: int, depth: int) -> bool:
    opened_level, opened_depth = scope
    if opened_depth:  # numbered: "8." closes "7. Remediation"; "Priority 1" does not
        return (0 < depth <= opened_depth) or level < opened_level
    return level <= opened_level
