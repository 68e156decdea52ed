"""The report's claims checked against the code: cited paths verified against the audited
commit's files, feature claims against the graph the repo detective rebuilt. Runs in the
aggregator, after fan-in, because it needs both detectives' facts."""

from __future__ import annotations

import re

from automaton_auditor.forensics.pdf.claims import FEATURES, normalise_path
from automaton_auditor.state import CitedPath, FeatureClaim, Finding, RebuiltGraph, ReportFacts

_JUDGE_NODE = re.compile(r"judge|prosecutor|defen[cs]e|tech_?lead|bench|opinion", re.IGNORECASE)
_DETECTIVE_NODE = re.compile(r"detective|investigat|analy[sz]|inspect|repo|doc|vision|pdf",
                             re.IGNORECASE)
FEATURE_LABELS = {
    "parallel_judges": "the judges run in parallel",
    "parallel_detectives": "the detectives run in parallel",
    "fan_in": "parallel branches are gathered by a fan-in node",
    "conditional_routing": "the graph routes with conditional edges",
}
MAX_PATH_FINDINGS = 25


def _repo_slug(repo_url: str | None) -> str | None:
    if not repo_url:
        return None
    match = re.search(r"github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$", repo_url.strip())
    return f"{match.group(1)}/{match.group(2)}".lower() if match else None


def _verify(path: str, files: set[str]) -> str | None:
    """How a cited path matches the tree: "exact"; "suffix" (cited relative to a
    sub-folder: `nodes/judges.py` for `src/nodes/judges.py`); "trimmed" (cited with extra
    leading folders such as the repository's name, at least folder/file left); or None."""
    if path in files:
        return "exact"
    if any(f.endswith("/" + path) for f in files):
        return "suffix"
    parts = path.split("/")
    for start in range(1, len(parts) - 1):
        if "/".join(parts[start:]) in files:
            return "trimmed"
    return None


def split_paths(cited: list[CitedPath], repo_files: list[str], repo_url: str | None = None
                ) -> tuple[dict[str, str], list[CitedPath], list[str], list[str]]:
    """Split cited paths with a folder part into verified ({path: how}) and hallucinated;
    match bare names to basenames. Returns (verified, hallucinated, bare_matched,
    bare_unmatched), every list sorted."""
    files = {normalise_path(f) for f in repo_files}
    basenames = {f.rsplit("/", 1)[-1] for f in files}
    own = _repo_slug(repo_url)
    verified: dict[str, str] = {}
    hallucinated: list[CitedPath] = []
    bare_hit: set[str] = set()
    bare_miss: set[str] = set()
    for item in cited:
        if item.source_repo and own and item.source_repo != own:
            continue  # a file of another repository: not this audit's claim to check
        if item.bare_name:
            (bare_hit if item.path in basenames else bare_miss).add(item.path)
            continue
        how = _verify(item.path, files)
        if how:
            verified[item.path] = how
        else:
            hallucinated.append(item)
    hallucinated.sort(key=lambda c: c.path)
    return dict(sorted(verified.items())), hallucinated, sorted(bare_hit), sorted(bare_miss)


def cross_check(facts: ReportFacts, repo_files: list[str], graph: RebuiltGraph | None,
                *, repo_url: str | None = None
                ) -> tuple[list[Finding], list[str], list[str]]:
    """Check the report's cited paths against the commit's files and its feature claims
    against the rebuilt graph. Returns (findings with facets `claims.paths` and
    `claims.features`, verified paths, hallucinated paths), both lists sorted; only paths
    with a folder part are in those lists (bare names are reported in a separate finding)."""
    if not facts.readable:
        return [], [], []
    verified, hallucinated, bare_hit, bare_miss = split_paths(facts.cited_paths, repo_files,
                                                              repo_url)
    findings = _path_findings(facts, verified, hallucinated)
    if bare_hit or bare_miss:
        findings.append(_bare_finding(bare_hit, bare_miss))
    findings.extend(_feature_findings(facts.claims, graph))
    return findings, list(verified), [c.path for c in hallucinated]


def _path_findings(facts: ReportFacts, verified: dict[str, str],
                   hallucinated: list[CitedPath]) -> list[Finding]:
    pages = {c.path: c.page for c in facts.cited_paths if not c.bare_name}
    goal = "File paths the report cites exist in the audited commit"
    if not verified and not hallucinated:
        return [Finding(facet="claims.paths", goal=goal, found=False, pattern="success",
                        location="report", confidence=0.7,
                        rationale="The report cites no repository file path, so none of "
                                  "its claims can be tied to the code.")]
    listing = "\n".join(f"{p} (report p.{pages.get(p)})" for p in verified)
    first = min((pages[p] or 0 for p in verified), default=0)
    findings = [Finding(
        facet="claims.paths", goal=goal, found=bool(verified), pattern="success",
        content=listing or None, location=f"report p.{first}" if first else "report",
        confidence=0.95,
        rationale=f"{len(verified)} of {len(verified) + len(hallucinated)} cited paths with a "
                  f"folder part exist in the commit's file list.",
        data={"verified": list(verified), "suffix_matches": sorted(
            p for p, how in verified.items() if how == "suffix"),
              "trimmed_matches": sorted(p for p, how in verified.items() if how == "trimmed"),
              "hallucinated": [c.path for c in hallucinated]})]
    for item in hallucinated[:MAX_PATH_FINDINGS]:
        findings.append(Finding(
            facet="claims.paths", goal=f"The report cites '{item.path}', a file that does not "
                                       f"exist in the audited commit (hallucinated path)",
            found=True, pattern="failure", content=item.context or item.raw,
            location=f"report p.{item.page}" if item.page else "report", confidence=0.9,
            rationale=f"No file '{item.path}' (nor any file ending with it) is in the "
                      f"commit's tree.", data={"path": item.path, "raw": item.raw}))
    return findings


def _bare_finding(bare_hit: list[str], bare_miss: list[str]) -> Finding:
    return Finding(
        facet="claims.paths", goal="Bare file names the report cites match files in the "
                                   "repository (basename match, lower confidence)",
        found=bool(bare_hit), pattern="neutral", location="report", confidence=0.6,
        content=", ".join(bare_hit + bare_miss)[:2000],
        rationale=f"{len(bare_hit)} bare names match a file's basename; {len(bare_miss)} match "
                  f"none (they may name libraries or files outside the repository).",
        data={"bare_matched": bare_hit, "bare_unmatched": bare_miss})


def _distance(claim: FeatureClaim) -> int:
    """Characters between the subject and the claimed behaviour: the closer, the more
    specific the sentence ("judges run in parallel" beats a long summary sentence)."""
    subject, behaviour = FEATURES.get(claim.feature, (r"^", r"^"))
    spans = [[m.span() for m in re.finditer(rx, claim.sentence, re.IGNORECASE)]
             for rx in (subject, behaviour)]
    gaps = [max(b[0] - a[1], a[0] - b[1], 0) for a in spans[0] for b in spans[1]]
    return min(gaps, default=10_000)


def _feature_findings(claims: list[FeatureClaim], graph: RebuiltGraph | None) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[str] = set()
    # One verdict per feature, on its most specific sentence (document order breaks ties).
    for claim in sorted(claims, key=lambda c: (list(FEATURES).index(c.feature)
                                               if c.feature in FEATURES else 99,
                                               _distance(c))):
        if claim.feature in seen:
            continue
        seen.add(claim.feature)
        verdict, why = check_feature(claim.feature, graph)
        label = FEATURE_LABELS.get(claim.feature, claim.feature)
        where = f"report p.{claim.page}" if claim.page else "report"
        if verdict == "contradicted":
            goal, pattern = f"The report claims {label}, but the rebuilt graph contradicts it", \
                "failure"
        elif verdict == "confirmed":
            goal, pattern = f"The report's claim that {label} is confirmed by the code", "success"
        else:
            goal, pattern = f"The report claims {label} (not checkable against the code)", \
                "neutral"
        findings.append(Finding(
            facet="claims.features", goal=goal, found=True, pattern=pattern,
            content=claim.sentence, location=where, rationale=why,
            confidence=0.8 if verdict != "unverified" else 0.4,
            data={"feature": claim.feature, "verdict": verdict}))
    return findings


def _second_layer(graph: RebuiltGraph) -> tuple[str, list[str]] | None:
    """A fan-out leaving a fan-in node: the parallel layer after the first join (in a
    courtroom, the judges after the evidence aggregator), whatever the nodes are named."""
    for source, targets in sorted(graph.fan_out.items()):
        if source in graph.fan_in and targets:
            return source, sorted(targets)
    return None


def _parallel(graph: RebuiltGraph, kind: re.Pattern[str], noun: str) -> tuple[str, str]:
    members = sorted(n for n in graph.nodes if kind.search(n))
    if not members:
        layer = _second_layer(graph) if noun == "judges" else None
        if layer:
            return "confirmed", (f"No node is named like {noun}, but the join '{layer[0]}' fans "
                                 f"out again to {', '.join(layer[1])} (a second parallel layer).")
        return "unverified", f"The rebuilt graph has no node named like {noun}."
    for source, targets in sorted(graph.fan_out.items()):
        hit = sorted(t for t in targets if kind.search(t))
        if len(hit) >= 2 or (hit and len(members) == 1):
            return "confirmed", f"'{source}' fans out to {', '.join(hit)}."
    chained = sorted(f"{a} -> {b}" for a, b in graph.edges
                     if kind.search(a) and kind.search(b))
    if chained:
        return "contradicted", (f"The {noun} nodes are chained one after another "
                                f"({', '.join(chained[:4])}), not fanned out.")
    if graph.linear and not graph.fan_out:
        return "contradicted", f"The rebuilt graph is linear: no fan-out reaches {noun}."
    return "unverified", f"No fan-out to the {noun} nodes ({', '.join(members[:5])}) was found."


def check_feature(feature: str, graph: RebuiltGraph | None) -> tuple[str, str]:
    """("confirmed" | "contradicted" | "unverified", why) for one feature claim."""
    if graph is None or not graph.nodes:
        return "unverified", "No graph could be rebuilt from the code to check the claim."
    if feature == "parallel_judges":
        return _parallel(graph, _JUDGE_NODE, "judges")
    if feature == "parallel_detectives":
        return _parallel(graph, _DETECTIVE_NODE, "detectives")
    if feature == "fan_in":
        if graph.fan_in:
            joins = ", ".join(sorted(graph.fan_in)[:4])
            return "confirmed", f"Fan-in node(s) in the rebuilt graph: {joins}."
        if graph.linear:
            return "contradicted", "The rebuilt graph is linear: no node gathers branches."
        return "unverified", "No fan-in node was recognised in the rebuilt graph."
    if feature == "conditional_routing":
        if graph.conditional_sources:
            return "confirmed", ("Conditional edges leave "
                                 f"{', '.join(sorted(graph.conditional_sources)[:4])}.")
        return "contradicted", "The rebuilt graph has no add_conditional_edges call."
    return "unverified", f"No check is defined for '{feature}'."
