"""The report's claims checked against the code: cited paths verified against the audited
commit's files (`forensics.path_split`), feature claims against the graph the repo detective
rebuilt (`forensics.feature_claims`), statements against the code's facts. Runs in the
aggregator, after fan-in, because it needs both detectives' facts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from automaton_auditor.forensics.confirmed_claims import confirmed_findings
from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.feature_claims import feature_findings
from automaton_auditor.forensics.path_split import PathSplit, split_paths
from automaton_auditor.forensics.pdf.claims import FEATURES
from automaton_auditor.forensics.synthesis_claims import fact_supremacy_findings
from automaton_auditor.forensics.tooling_claims import tooling_findings
from automaton_auditor.state import (
    CitedPath,
    CodeNames,
    Finding,
    RebuiltGraph,
    ReportFacts,
)

MAX_PATH_FINDINGS = 25
# Checkable statements a report citing no path must make before "nothing is refuted" is
# any support.
MIN_CHECKED = 2
# A sentence that calls the file a stub or future work claims no code in it.
_ADMITS_EMPTY = re.compile(r"\b(?:empty|blank|stubs?|placeholders?|skeletons?|scaffold\w*|"
                           r"not\s+yet|todo|planned|future)\b", re.IGNORECASE)


class CrossCheck(NamedTuple):
    """What `cross_check` returns: findings and the three sorted path lists."""

    findings: list[Finding]
    verified: list[str]
    hallucinated: list[str]
    planned: list[str]


def cross_check(facts: ReportFacts, repo_files: list[str], graph: RebuiltGraph | None,
                *, repo_url: str | None = None, code: Sequence[Finding] = (),
                names: CodeNames | None = None, report_name: str | None = None
                ) -> CrossCheck:
    """Check the report's cited paths against the commit's files, its feature claims
    against the rebuilt graph and its statements against the code's facts (`code`: the
    repo detective's findings) and the names it uses (`names`). Returns findings (facets
    `claims.paths`, `claims.features`, `claims.contradictions`, `claims.placeholders`) and
    the verified, hallucinated and
    planned paths, each sorted; bare names are reported in a separate finding unless they
    name a top-level file. `report_name` is the audited report's file name, if known."""
    if not facts.readable:
        return CrossCheck([], [], [], [])
    split = split_paths(facts.cited_paths, repo_files, repo_url, report_name,
                        names.outputs if names else None)
    findings = _path_findings(facts, split) + _generated_finding(split)
    if split.bare_hit or split.bare_miss:
        findings.append(_bare_finding(split.bare_hit, split.bare_miss))
    findings.extend(feature_findings([c for c in facts.claims if c.feature in FEATURES],
                                      graph, code))
    also = [*empty_file_findings(facts.cited_paths, split, names),
            *tooling_findings(facts.claims, repo_files),
            *fact_supremacy_findings(facts.claims, code)]
    findings.extend(contradiction_findings(facts.claims, code, graph, names, also=also))
    # what the code's own facts bear out, as the graph bears out a parallel claim
    findings.extend(confirmed_findings(facts.claims, code, names, findings))
    # what the code could check: each sentence holding a claim, each bare name of a file
    checkable = len({c.sentence for c in facts.claims}) + len(split.bare_hit)
    findings.extend(_nothing_invented(split, findings, checkable))
    # a run's output is cited as in the repository and is not: listed as hallucinated (what
    # the list means), while its own fact (claims.run_outputs) says it invents nothing
    return CrossCheck(findings, list(split.verified),
                      sorted([*(c.path for c in split.hallucinated), *split.generated]),
                      [c.path for c in split.planned])


def empty_file_findings(cited: Sequence[CitedPath], split: PathSplit,
                        names: CodeNames | None) -> list[Finding]:
    """A `claims.contradictions` fact for each cited file the report asserts things of
    ("Refactored src/tools/x.py to ...") that holds no code at the commit (`CodeNames.empty`),
    unless the sentence calls it a stub or future work."""
    empty = set(names.empty) if names else set()
    findings: list[Finding] = []
    done: set[str] = set()  # one fact per file (a set: scanning the findings is quadratic)
    for item in cited:
        if item.path not in empty or item.path not in split.verified or not item.asserted \
                or _ADMITS_EMPTY.search(item.context) or item.path in done:
            continue
        done.add(item.path)
        where = f"report p.{item.page}" if item.page else "report"
        findings.append(Finding(
            facet="claims.contradictions", goal="The report describes work in a file that "
            "holds no code", found=True, pattern="failure", location=where, confidence=0.85,
            content=f"{where}: {' '.join((item.context or item.raw).split())[:400]}\n"
                    f"{item.path}: (no code: the file is blank or only a docstring)",
            rationale=f"The report cites {item.path} as written work, but the file holds no "
                      "code at the audited commit.",
            data={"kind": "empty_file", "path": item.path, "code": [f"{item.path}: empty"]}))
    return findings


def _path_findings(facts: ReportFacts, split: PathSplit) -> list[Finding]:
    verified = split.verified
    # the report's own file at another folder is a path mismatch, not a file it invents
    hallucinated = [c for c in split.hallucinated if c.path not in split.misplaced]
    mismatches = [_misplaced_finding(c, split.misplaced[c.path]) for c in split.hallucinated
                  if c.path in split.misplaced]
    pages: dict[str, int | None] = {}
    for cited in facts.cited_paths:
        for spelling in (cited.path, *cited.variants):
            pages.setdefault(spelling, cited.page)
    goal = "File paths the report cites exist in the audited commit"
    if not verified and not hallucinated:
        findings = [Finding(facet="claims.paths", goal=goal, found=False, pattern="success",
                            location="report", confidence=0.7,
                            rationale="The report cites no repository file path, so none of "
                                      "its claims can be tied to the code.")]
        return findings + mismatches + _planned_finding(split.planned)
    listing = "\n".join(f"{p} (report p.{pages.get(p)})" for p in verified)
    first = min((pages.get(p) or 0 for p in verified), default=0)
    findings = [Finding(
        facet="claims.paths", goal=goal, found=bool(verified), pattern="success",
        content=listing or None, location=f"report p.{first}" if first else "report",
        confidence=0.95,
        rationale=f"{len(verified)} of {len(verified) + len(hallucinated)} cited paths (with a "
                  f"folder part, or top-level files) exist in the commit's file list"
                  + (f"; {len(split.misplaced)} more name(s) the report itself at another "
                     "folder (a path mismatch)." if split.misplaced else "."),
        data={"verified": list(verified), "suffix_matches": sorted(
            p for p, how in verified.items() if how == "suffix"),
              "trimmed_matches": sorted(p for p, how in verified.items() if how == "trimmed"),
              "underscore_matches": sorted(p for p, how in verified.items()
                                           if how == "underscores"),
              "hallucinated": [c.path for c in hallucinated],
              "planned": [c.path for c in split.planned], "disowned": sorted(split.disowned),
              "misplaced": sorted(split.misplaced)})]
    for item in hallucinated[:MAX_PATH_FINDINGS]:
        findings.append(Finding(
            facet="claims.paths", goal=f"The report cites '{item.path}', a file that does not "
                                       f"exist in the audited commit (hallucinated path)",
            found=True, pattern="failure", content=item.context or item.raw,
            location=f"report p.{item.page}" if item.page else "report", confidence=0.9,
            rationale=f"No file '{item.path}' (nor any file ending with it) is in the "
                      f"commit's tree.", data={"path": item.path, "raw": item.raw}))
    return findings + mismatches + _planned_finding(split.planned)


def _misplaced_finding(item: CitedPath, where: list[str]) -> Finding:
    """The report's own file cited at a folder where it is not. It names no component the
    code lacks, so it is no hallucinated path; but the report's file list does not describe
    the tree as it is: a missing extra of report accuracy (judging.extras), as a gap the code
    has since closed is (not full marks, no failure)."""
    return Finding(
        facet="claims.misplaced", goal=f"The report names its own file where the commit holds "
                                       f"it (it names itself '{item.path}': a path mismatch, "
                                       f"not an invented file)",
        found=False, pattern="success", content=item.context or item.raw,
        location=f"report p.{item.page}" if item.page else "report", confidence=0.7,
        rationale=f"No file '{item.path}' is in the commit's tree, but the citation names the "
                  f"audited report itself (its file name, or 'this document'), which the "
                  f"commit holds as {', '.join(where)}.",
        data={"path": item.path, "raw": item.raw, "committed_as": where})


def _nothing_invented(split: PathSplit, findings: list[Finding], checkable: int
                      ) -> list[Finding]:
    """A report that cites no path is short of the success pattern, but not the failure
    pattern (files that do not exist) while nothing it says is contradicted: "zero
    hallucinated paths" then holds, weakly, when it says enough the code can check
    (`checkable`: sentences holding a claim and bare file names, at least `MIN_CHECKED`). A
    report with (almost) nothing to check earns no credit for it: an empty stub would
    otherwise score above a report that cites files and gets one wrong. The fact says how
    much of it the code bore out (a feature claim confirmed, a file named by its bare name):
    "nothing refuted" may rest on nothing checked."""
    if split.verified or split.hallucinated or any(
            f.pattern == "failure" and f.facet.startswith("claims.") for f in findings):
        return []
    if checkable < MIN_CHECKED:
        return [Finding(facet="claims.paths", goal="The report gives the code something to "
                        "cross-reference (cited paths or checkable claims)", found=False,
                        pattern="neutral", location="report", confidence=0.5,
                        data={"cited": 0, "checkable": checkable},
                        rationale=f"Nothing to cross-reference: the report cites no path and "
                                  f"makes {checkable} checkable statement(s) (a sentence "
                                  "holding a claim, a file's bare name), so that nothing is "
                                  "refuted shows little about its accuracy.")]
    borne_out = len(split.bare_hit) + sum(
        1 for f in findings if f.facet == "claims.features" and f.data.get("verdict") ==
        "confirmed")
    return [Finding(facet="claims.paths", goal="The report invents nothing the code refutes "
                    "(zero hallucinated paths, no contradicted claim)", found=True,
                    pattern="success", location="report", confidence=0.5,
                    data={"cited": 0, "checkable": checkable, "borne_out": borne_out},
                    rationale=f"The report cites no path and no claim of it is contradicted; "
                              f"of its {checkable} checkable statement(s), the code bears "
                              f"out {borne_out} (feature claims confirmed, files named by "
                              "their bare name)" + ("." if borne_out else
                                                    ": none was checked against the code."))]


def _generated_finding(split: PathSplit) -> list[Finding]:
    """The cited files that are outputs of a run of the code (`split.generated`), each with
    the line that builds its path: neither verified nor hallucinated. Such a file invents no
    component, but the reader cannot check what the report draws from it: a missing extra of
    report accuracy (judging.extras), as a misplaced file is (not full marks, no failure)."""
    if not split.generated:
        return []
    first = next(iter(split.generated.values()))[0]
    return [Finding(
        facet="claims.run_outputs", goal="Every file the report cites can be checked in the "
                                         "commit (not only a run output the code writes, "
                                         "never committed)",
        found=False, pattern="success", location=f"report p.{first.page}" if first.page
        else "report", confidence=0.7,
        content="\n".join(f"{path} (report p.{item.page or '?'}): {item.context or item.raw}\n"
                          f"  built by {made}" for path, (item, made)
                          in sorted(split.generated.items()))[:2000],
        rationale=f"{len(split.generated)} cited file(s) are not in the commit, but the code "
                  "builds their path for a file a run writes (a template whose run-time "
                  "parts, such as a timestamp, match), so each names one run's output, "
                  "not committed and so not checkable, rather than a file the report "
                  "invents.",
        data={"generated": sorted(split.generated)})]


def _planned_finding(planned: list[CitedPath]) -> list[Finding]:
    if not planned:
        return []
    return [Finding(
        facet="claims.paths", goal="Files the report presents as future work (planned: "
                                   "neither verified nor hallucinated)",
        found=True, pattern="neutral", location=f"report p.{planned[0].page}"
        if planned[0].page else "report", confidence=0.7,
        content="\n".join(f"{c.path} (report p.{c.page}): {c.context}" for c in planned)[:2000],
        rationale=f"{len(planned)} cited file(s) do not exist yet and the report presents them "
                  f"as future work (a remediation plan, a new file), so they claim nothing.",
        data={"planned": [c.path for c in planned]})]


def _bare_finding(bare_hit: list[str], bare_miss: list[str]) -> Finding:
    return Finding(
        facet="claims.paths", goal="Bare file names the report cites match files in the "
                                   "repository (basename match, lower confidence)",
        found=bool(bare_hit), pattern="neutral", location="report", confidence=0.6,
        content=", ".join(bare_hit + bare_miss)[:2000],
        rationale=f"{len(bare_hit)} bare names match a file's basename; {len(bare_miss)} match "
                  f"none (they may name libraries or files outside the repository).",
        data={"bare_matched": bare_hit, "bare_unmatched": bare_miss})
