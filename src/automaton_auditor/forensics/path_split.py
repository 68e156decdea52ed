"""The report's cited paths sorted against the audited commit's files: verified (under the
spelling that matched), hallucinated, planned (future work), a run's output, the report's
own file at another folder, and bare file names found or not (`split_paths`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from automaton_auditor.forensics.code.output_paths import run_output
from automaton_auditor.forensics.pdf.citations import normalise_path
from automaton_auditor.forensics.pdf.not_claims import names_the_report
from automaton_auditor.forensics.tails import Tails
from automaton_auditor.state import CitedPath


def _repo_slug(repo_url: str | None) -> str | None:
    if not repo_url:
        return None
    match = re.search(r"github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$", repo_url.strip())
    return f"{match.group(1)}/{match.group(2)}".lower() if match else None


def _verify(path: str, files: set[str], tails: Tails) -> str | None:
    """How a cited path matches the tree: "exact"; "suffix" (cited relative to a
    sub-folder: `nodes/judges.py` for `src/nodes/judges.py`); "trimmed" (cited with extra
    leading folders such as the repository's name, at least folder/file left); or None.
    `tails` indexes `files` by their trailing folders (a scan per citation is quadratic)."""
    if path in files:
        return "exact"
    if tails.longer(path):
        return "suffix"
    # a file that is the path minus one or more leading folders, with folder/file left
    if any(2 <= d < path.count("/") + 1 for d in tails.named_tails(path)):
        return "trimmed"
    return None


@dataclass
class PathSplit:
    """The report's cited paths sorted by what the commit's files say about them."""

    verified: dict[str, str] = field(default_factory=dict)  # spelling that matched -> how
    hallucinated: list[CitedPath] = field(default_factory=list)
    planned: list[CitedPath] = field(default_factory=list)  # future work, absent: no claim
    # absent, but a path the code builds for what a run writes -> where it builds it
    generated: dict[str, tuple[CitedPath, str]] = field(default_factory=dict)
    disowned: list[str] = field(default_factory=list)  # the report says it does not exist
    # the report's own file named at another folder -> where the commit holds that name
    misplaced: dict[str, list[str]] = field(default_factory=dict)
    bare_hit: list[str] = field(default_factory=list)
    bare_miss: list[str] = field(default_factory=list)


def _match(item: CitedPath, files: set[str], tails: Tails, squashed: dict[str, list[str]]
           ) -> tuple[str, str] | None:
    """The first spelling of the citation that names a file, and how it matched; failing
    that, the one file the citation names once underscores are set aside ("underscores",
    see `_squash`)."""
    for spelling in (item.path, *item.variants):
        how = _verify(spelling, files, tails)
        if how:
            return spelling, how
    twins = squashed.get(_squash(item.path), []) if "_" not in item.path else []
    return (twins[0], "underscores") if len(twins) == 1 else None


def _squash(path: str) -> str:
    """A path without its underscores. A LaTeX report that typesets `repo_tools.py` with a
    math-mode subscript leaves `repotools.py` in the text layer: a citation with no
    underscore at all that matches exactly one file once underscores are set aside names
    that file."""
    return path.replace("_", "")


def _counts(item: CitedPath, repairs: set[str], folders: set[str]) -> bool:
    """Does a citation that matched no file still count (as missing)? Not for an unknown
    extension (an API name). A repaired spelling does when its folder exists and the repair
    is a plain gap closed (`chief _justice.py`) or one that made other citations of this
    report match files (a font that drops underscores drops them everywhere). A planned
    file may sit in a folder still to come: there a confirmed repair is enough."""
    folder = item.path.rpartition("/")[0]
    confirmed = item.repair in repairs
    return bool(item.repair) and (item.repair == "joined" or confirmed) and (
        folder in folders or (confirmed and not item.asserted))


def split_paths(cited: list[CitedPath], repo_files: list[str], repo_url: str | None = None,
                report_name: str | None = None, outputs: dict[str, str] | None = None
                ) -> PathSplit:
    """Split cited paths into verified (any spelling matches a file; a bare name only as a
    top-level file), hallucinated (asserted, no match), planned (future work, no match),
    generated (asserted, no match, but a path the code builds for a run's output: `outputs`,
    `CodeNames.outputs`) and bare names matched to basenames or not; every list sorted. A
    missing path that names the audited report itself (`report_name`, the report's file
    name) at another folder is misplaced: still listed as hallucinated, but a path mismatch,
    not an invented file."""
    files = {normalise_path(f) for f in repo_files}
    folders = {f.rsplit("/", 1)[0] for f in files if "/" in f}
    folders |= {f.rsplit("/", i)[0] for f in folders for i in range(1, f.count("/") + 1)}
    basenames = {f.rsplit("/", 1)[-1] for f in files}
    tails = Tails(((f, f) for f in sorted(files)), "/")
    own = _repo_slug(repo_url)
    squashed: dict[str, list[str]] = {}
    for name in sorted(files):
        if "_" in name:
            squashed.setdefault(_squash(name), []).append(name)
    split = PathSplit()
    unmatched: list[CitedPath] = []
    repairs: set[str] = set()
    for item in cited:
        if item.source_repo and own and item.source_repo != own:
            continue  # a file of another repository: not this audit's claim to check
        if item.bare_name:
            _split_bare(item, files, basenames, split)
            continue
        hit = _match(item, files, tails, squashed)
        if hit:
            split.verified[hit[0]] = hit[1]
            if item.repair and hit[0] == item.path:
                repairs.add(item.repair)
        else:
            unmatched.append(item)
    for item in unmatched:
        if item.verify_only and not _counts(item, repairs, folders):
            continue  # maybe not a file at all (an API name, a guessed repair)
        made = run_output(item.path, outputs) if item.asserted and outputs else None
        if made:  # one run's output: runs are not committed, so its absence proves nothing
            split.generated[item.path] = (item, made)
        elif item.asserted:
            split.hallucinated.append(item)
            where = names_the_report(item, report_name, files)
            if where:
                split.misplaced[item.path] = where
        elif item.future:
            split.planned.append(item)
        else:
            split.disowned.append(item.path)
    split.hallucinated, split.planned = _outermost(split.hallucinated, split.planned)
    split.verified = dict(sorted(split.verified.items()))
    split.bare_hit, split.bare_miss = sorted(split.bare_hit), sorted(split.bare_miss)
    return split


def _split_bare(item: CitedPath, files: set[str], basenames: set[str], split: PathSplit) -> None:
    if item.path in files:  # a top-level file (README.md, pyproject.toml)
        split.verified[item.path] = "exact"
    elif item.path in basenames:
        split.bare_hit.append(item.path)
    elif item.verify_only:
        return  # a name that is no file of this repository may be no file at all (`.NET`)
    elif item.future:
        split.planned.append(item)
    else:
        split.bare_miss.append(item.path)


def _outermost(hallucinated: list[CitedPath], planned: list[CitedPath]
               ) -> tuple[list[CitedPath], list[CitedPath]]:
    """Drop a missing path that another missing citation contains as its tail (the report
    wrote `report_x/a.md` once and `audit/report_x/a.md` elsewhere), sort both lists. The
    missing paths are indexed by their tails: comparing every pair took minutes on a
    report citing 100,000 paths."""
    every = Tails(((c.path, c.path) for c in (*hallucinated, *planned)), "/")

    def kept(items: list[CitedPath]) -> list[CitedPath]:
        return sorted((c for c in items if not every.longer(c.path)), key=lambda c: c.path)

    return kept(hallucinated), kept(planned)
