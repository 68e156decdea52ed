"""The detective layer: three parallel nodes that only collect facts.

Each node runs its tools, routes every finding to the rubric dimensions it bears on and writes
its evidence under its own key, so parallel writes never collide. A detective never raises:
an unexpected failure becomes an error line and a found=False finding -- except while the
audit is stopping (Ctrl-C, SIGTERM), when a failure is the stop's doing (its git or PDF reader
killed), not the input's: the node then records nothing, and `audit resume` runs it again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from automaton_auditor.containment import Closed, closing, scratch_dir
from automaton_auditor.exits import interrupted
from automaton_auditor.forensics.code.analyze import code_findings, code_warnings
from automaton_auditor.forensics.code.names import code_names
from automaton_auditor.forensics.git.acquire import (
    AcquisitionError,
    acquire,
    git_findings,
    parse_target,
)
from automaton_auditor.forensics.git.story import history_warnings
from automaton_auditor.forensics.pdf import prefetch as cache_prefetch
from automaton_auditor.forensics.pdf.reader import ReportError, unreadable_findings
from automaton_auditor.forensics.vision.inspector import vision_findings
from automaton_auditor.nodes.limits import (
    cache_dir,
    git_limits,
    reader_bounds,
    report_limits,
    vision_limits,
)
from automaton_auditor.rubric import Rubric, concept_terms, route
from automaton_auditor.settings import Settings
from automaton_auditor.state import AgentState, DetectiveStatus, Evidence, Finding, Source
from automaton_auditor.storage import facts as cache_facts
from automaton_auditor.storage.facts import DocFacts, RepoFacts, VisionFacts

log = logging.getLogger(__name__)
INPUT_FACETS: dict[Source, str] = {"repo": "repo.acquire", "doc": "doc.ingest",
                                   "vision": "vision.extract", "aggregator": "claims.paths"}


def route_findings(findings: Iterable[Finding], source: Source, rubric: Rubric) -> list[Evidence]:
    """Bind each finding to every dimension it bears on (duplicates by id dropped)."""
    evidence: dict[str, Evidence] = {}
    for finding in findings:
        for dimension_id in route(finding.facet, rubric):
            item = Evidence.from_finding(finding, source, dimension_id)
            evidence.setdefault(item.evidence_id, item)
    return list(evidence.values())


def _crash_update(source: Source, node: str, exc: BaseException, rubric: Rubric) -> dict[str, Any]:
    message = f"{node}: unexpected {type(exc).__name__}: {exc}"
    finding = Finding(facet=INPUT_FACETS[source], goal=f"{node} completes", found=False,
                      pattern="success", location="auditor", rationale=message, confidence=1.0)
    return {"evidences": {source: route_findings([finding], source, rubric)},
            "errors": [message],
            "detective_status": {source: DetectiveStatus(state="failed", reason=message)}}


Body = Callable[[AgentState, Settings, Rubric], dict[str, Any]]


def run_guarded(state: AgentState, source: Source, node: str, body: Body) -> dict[str, Any]:
    """Run a detective body: time it, and turn any exception into evidence and an error."""
    started = time.perf_counter()
    settings = Settings.from_state(state.get("settings"))
    rubric = Rubric.from_state(state["rubric"])
    try:
        update = body(state, settings, rubric)
    except Exception as exc:  # a detective degrades, it never takes the audit down
        if _stopping(exc):
            raise  # the audit is stopping: record no verdict that a resume would keep
        log.exception("%s failed", node)
        update = _crash_update(source, node, exc, rubric)
    failed = any(s.state != "ok" for s in (update.get("detective_status") or {}).values())
    if failed and _audit_stopping():  # its child was killed by the stop
        raise KeyboardInterrupt
    update["timings"] = {node: round(time.perf_counter() - started, 4)}
    return update


def _audit_stopping() -> bool:
    """Ctrl-C or a stop signal arrived, or the child processes are being killed."""
    return interrupted() or closing()


def _stopping(exc: Exception) -> bool:
    """Whether `exc` comes from the audit stopping rather than from the detective's input."""
    return (_audit_stopping() or isinstance(exc, Closed)
            or (isinstance(exc, AcquisitionError) and exc.kind == "interrupted"))


def _repo_update(facts: RepoFacts, rubric: Rubric) -> dict[str, Any]:
    # A shallow history is a warning, and "degraded" keeps its run out of the result cache.
    shallow = history_warnings(facts.findings)
    warnings = [f"repo: {line}" for line in (*shallow, *code_warnings(facts.findings))]
    reason = "shallow history" if shallow else "code analysed in part"
    return {"evidences": {"repo": route_findings(facts.findings, "repo", rubric)},
            "commit": facts.commit, "repo_files": facts.files, "code_graph": facts.code_graph,
            "code_names": facts.code_names,
            "errors": warnings,
            "detective_status": {"repo": DetectiveStatus(state="degraded", reason=reason)
                                 if warnings else DetectiveStatus(state="ok")}}


def _cached_repo(state: AgentState, settings: Settings) -> RepoFacts | None:
    """The commit's cached facts, found without cloning (None: clone and parse)."""
    root = cache_dir(settings)
    if root is None:
        return None
    from automaton_auditor.forensics.git.head import head_commit

    limits = git_limits(settings)
    commit = head_commit(parse_target(state["target"], limits), limits.timeout_s)
    if commit is None:
        return None
    key = cache_facts.repo_key(commit, limits.depth, limits.max_files, limits.max_blob_bytes)
    return cache_facts.load(root, "repo", key, RepoFacts)


def _investigate_repo(state: AgentState, settings: Settings, rubric: Rubric) -> dict[str, Any]:
    """Clone (or copy) the target into a temporary directory and collect code facts; a
    commit already audited (same detective version) is answered from the cache."""
    cached = _cached_repo(state, settings)
    if cached is not None:
        return _repo_update(cached, rubric)
    limits = git_limits(settings)
    with scratch_dir("auditor-repo-") as tmp:
        try:
            checkout = acquire(parse_target(state["target"], limits), Path(tmp), limits)
            history = git_findings(checkout.path, limits)
        except AcquisitionError as exc:
            if exc.kind == "interrupted":  # the audit is stopping: no verdict for resume to keep
                raise
            finding = Finding(facet="repo.acquire", goal="Repository can be acquired",
                              found=False, pattern="success", location=state["target"],
                              rationale=f"{exc.kind}: {exc}", confidence=1.0)
            return {"evidences": {"repo": route_findings([finding], "repo", rubric)},
                    "errors": [f"repo: {exc.kind}: {exc}"],
                    "detective_status": {"repo": DetectiveStatus(state="failed",
                                                                 reason=f"{exc.kind}: {exc}")}}
        acquired = Finding(facet="repo.acquire", goal="Repository can be acquired", found=True,
                           pattern="neutral", location=f"commit {checkout.commit[:12]}",
                           content=f"{len(checkout.files)} tracked files",
                           rationale="cloned into a temporary directory", confidence=1.0)
        findings = [acquired, *history]
        code, graph = code_findings(checkout.path, checkout.files, cache_dir=cache_dir(settings))
        findings.extend(code)
        names = code_names(checkout.path, checkout.files)
    facts = cache_facts.roundtrip(RepoFacts(commit=checkout.commit, files=checkout.files,
                                            findings=findings, code_graph=graph,
                                            code_names=names))
    root = cache_dir(settings)
    if root is not None and not checkout.shallow:
        # Stored under the clone's own commit (the pre-clone look-up may have failed); a
        # shallow history is only part of that commit's, so it is never stored.
        cache_facts.save(root, "repo", cache_facts.repo_key(
            checkout.commit, limits.depth, limits.max_files, limits.max_blob_bytes), facts)
    return _repo_update(facts, rubric)


def _report_sha(state: AgentState) -> str:
    from automaton_auditor.forensics.pdf.ingest import sha256_of

    return state.get("report_sha256") or sha256_of(Path(state["report_path"]))


def _analyse_doc(state: AgentState, settings: Settings, rubric: Rubric) -> dict[str, Any]:
    """Ingest the report and collect what it explains and cites (cached by the report's
    SHA-256 and the rubric's concept terms)."""
    root, terms = cache_dir(settings), concept_terms(rubric)
    key = cache_facts.doc_key(_report_sha(state), terms, report_limits(settings))
    if root is not None:
        cached = cache_facts.load(root, "doc", key, DocFacts)
        if cached is not None:
            return _doc_update(cached, rubric)
    # Read in a contained child (started early by the CLI when it could: cache_prefetch).
    try:
        doc = cache_prefetch.doc_facts(key, state["report_path"], terms,
                                       report_limits(settings), reader_bounds(settings))
    except ReportError as exc:
        return {"evidences": {"doc": route_findings(unreadable_findings(exc), "doc", rubric)},
                "errors": [f"doc: {exc.kind}: {exc}"],
                "detective_status": {"doc": DetectiveStatus(state="degraded",
                                                            reason=str(exc))}}
    if root is not None:
        cache_facts.save(root, "doc", key, doc)
    return _doc_update(doc, rubric)


def _doc_update(doc: DocFacts, rubric: Rubric) -> dict[str, Any]:
    return {"evidences": {"doc": route_findings(doc.findings, "doc", rubric)},
            "report_facts": doc.report_facts, "errors": [f"doc: {w}" for w in doc.warnings],
            "detective_status": {"doc": DetectiveStatus(state="ok")}}


def _inspect_diagrams(state: AgentState, settings: Settings, rubric: Rubric) -> dict[str, Any]:
    """Find the report's diagrams and read their flow (with a vision model when configured;
    the model-free facts are cached by the report's SHA-256)."""
    root = None if settings.vision_model else cache_dir(settings)
    key = cache_prefetch.vision_key(_report_sha(state), vision_limits(settings))
    if root is not None:
        cached = cache_facts.load(root, "vision", key, VisionFacts)
        if cached is not None:
            return _vision_update(cached, rubric, DetectiveStatus(state="ok"))
    try:
        diagrams, images = cache_prefetch.diagrams(key, state["report_path"],
                                                   vision_limits(settings),
                                                   reader_bounds(settings))
    except ReportError as exc:  # an unreadable report is evidence, not a crash of the node
        finding = Finding(facet=INPUT_FACETS["vision"], goal="Report diagrams can be read",
                          found=False, pattern="success", location=state["report_path"],
                          rationale=str(exc), confidence=1.0, data={"error_kind": exc.kind})
        return {"evidences": {"vision": route_findings([finding], "vision", rubric)},
                "errors": [f"vision: {exc.kind}: {exc}"],
                "detective_status": {"vision": DetectiveStatus(state="degraded",
                                                               reason=str(exc))}}
    status = DetectiveStatus(state="ok")
    if settings.vision_model and diagrams:
        from automaton_auditor.forensics.vision.inspector import analyze_with_model
        from automaton_auditor.judging.models import build_chat_model, endpoint_of, retry_policy
        from automaton_auditor.retry import circuit_for

        model = build_chat_model(settings.vision_model, settings)
        policy = retry_policy(settings)  # the judges' policy: one for every model call
        circuit = circuit_for(endpoint_of(settings.vision_model), state.get("run_id") or "",
                              policy.circuit_threshold)
        diagrams = asyncio.run(analyze_with_model(diagrams, images, model,
                                                  max_concurrency=settings.max_concurrency,
                                                  policy=policy, circuit=circuit))
        status = DetectiveStatus(state="ok", reason="vision model")
    facts = cache_facts.roundtrip(VisionFacts(findings=vision_findings(diagrams),
                                              diagrams=diagrams))
    if root is not None:
        cache_facts.save(root, "vision", key, facts)
    return _vision_update(facts, rubric, status)


def _vision_update(facts: VisionFacts, rubric: Rubric,
                   status: DetectiveStatus) -> dict[str, Any]:
    return {"evidences": {"vision": route_findings(facts.findings, "vision", rubric)},
            "diagrams": facts.diagrams, "detective_status": {"vision": status}}


def repo_investigator(state: AgentState) -> dict[str, Any]:
    """RepoInvestigator: git narrative and AST facts of the target, under `evidences["repo"]`."""
    return run_guarded(state, "repo", "repo_investigator", _investigate_repo)


def doc_analyst(state: AgentState) -> dict[str, Any]:
    """DocAnalyst: what the report explains and cites, under `evidences["doc"]`."""
    return run_guarded(state, "doc", "doc_analyst", _analyse_doc)


def vision_inspector(state: AgentState) -> dict[str, Any]:
    """VisionInspector: the report's diagrams and their flow, under `evidences["vision"]`."""
    return run_guarded(state, "vision", "vision_inspector", _inspect_diagrams)
