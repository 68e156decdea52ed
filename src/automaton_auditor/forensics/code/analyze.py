"""AST forensics over the audited repository: every Python file, no hard-coded paths.

`code_findings` lists the tracked Python files (skipping virtual environments, vendored,
generated and test folders), takes per-file facts from the cache (keyed by git blob id)
or parses them (a byte prefilter skips files that cannot hold a fact; GC is off while
parsing), then turns the facts into findings: state, graph, safety, llm, judges, justice.
The audited code is parsed, never imported or executed.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from automaton_auditor.containment import scratch_dir
from automaton_auditor.forensics.code import cache as code_ast_cache
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.reexports import module_suffixes, op_refs
from automaton_auditor.forensics.code.source import forget_files
from automaton_auditor.forensics.code.walk import parse_chunk, read_facts
from automaton_auditor.forensics.git.runner import run_git
from automaton_auditor.forensics.vendored import VENDORED_DIRS
from automaton_auditor.state import Finding, RebuiltGraph

SKIP_DIRS = re.compile(rf"(^|/)({VENDORED_DIRS}|tests?|testing)/")
SKIP_FILES = re.compile(r"(_pb2(_grpc)?\.py|(^|/)test_[^/]*\.py|_test\.py|conftest\.py)$")
# Below this many files to parse, worker start-up costs more than it saves. Measured on
# sympy (896 audited files, 74 parsed after the prefilter) on this 2-core machine under
# load: 1 process 2.5-3.8 s wall, 2 forkserver workers 4.3-5.4 s; so one process is the
# default and workers are opt-in (``workers=2``).
PARALLEL_MIN_FILES = 400
DEFAULT_WORKERS = 1


# The code pass reads at most this many Python files, and this many bytes of them, taken in
# path order (the rest are left out and a warning says so): without a bound a repository of
# 12,000 generated graph modules (1.3 MB of git objects) took 7 minutes and 720 MB. A count
# and a size, never a clock, so the same commit always gives the same facts. A project of
# the size audited here has tens to hundreds.
MAX_PYTHON_FILES = 3000
MAX_PYTHON_BYTES = 40_000_000


def python_files(files: list[str]) -> list[str]:
    """The tracked Python files worth auditing, sorted."""
    return sorted(f for f in files if f.endswith(".py") and not SKIP_DIRS.search(f)
                  and not SKIP_FILES.search(f))


def within_caps(repo: Path, files: list[str], max_files: int = MAX_PYTHON_FILES,
                max_bytes: int = MAX_PYTHON_BYTES) -> tuple[list[str], int]:
    """`files` without the Python files past the caps (the first `max_files` of
    `python_files` in path order whose sizes add up to at most `max_bytes`; every other
    file kept), and how many Python files there were to audit."""
    paths = python_files(files)
    kept: set[str] = set()
    total = 0
    for path in paths[:max_files]:
        with contextlib.suppress(OSError):  # lstat: a link is never followed when read
            total += (repo / path).lstat().st_size
        if total > max_bytes:
            break
        kept.add(path)
    if len(kept) == len(paths):
        return files, len(paths)
    left_out = set(paths) - kept
    return [f for f in files if f not in left_out], len(paths)


def code_warnings(findings: list[Finding]) -> list[str]:
    """Warning lines for a code pass that read only part of the Python files (the caps)."""
    parsed = next((f for f in findings if f.facet == "repo.acquire"
                   and f.data.get("python_total") is not None), None)
    if parsed is None or parsed.data["python_total"] <= parsed.data["python_files"]:
        return []
    return [f"warning: the repository has {parsed.data['python_total']} Python files to "
            f"audit; only the first {parsed.data['python_files']} in path order were analysed "
            f"(caps: {MAX_PYTHON_FILES} files, {MAX_PYTHON_BYTES // 1_000_000} MB), so code "
            "facts about the rest are unknown"]


def blob_ids(repo: Path, files: list[str]) -> dict[str, str]:
    """Path -> git blob id at HEAD (``git ls-tree``, a few ms); content hashes otherwise."""
    out = b""
    # Only our own clone (or a test fixture) has a .git here; never let git search the
    # parent directories for some other repository.
    if (repo / ".git").exists():
        with scratch_dir("git-home-") as home:
            result = run_git(["ls-tree", "-r", "-z", "HEAD", "--"], cwd=repo, home=Path(home),
                             timeout_s=60)
        out = result.stdout if result.returncode == 0 else b""
    ids: dict[str, str] = {}
    for record in out.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3:  # symlinks and submodules too: the result key covers them
            ids[raw.decode("utf-8", "replace")] = (parts[0] + b":" + parts[2]).decode("ascii")
    for path in files:
        if path not in ids:
            ids[path] = _hash_file(repo / path)
    return ids


def _hash_file(path: Path) -> str:
    try:
        if path.is_symlink() or not path.is_file():
            return ""
        data = path.read_bytes()
    except OSError:
        return ""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def parse_files(repo: Path, paths: list[str], workers: int | None = None) -> dict[str, JSON]:
    """Facts for each path, in one process or split across `workers` processes."""
    if not paths:
        return {}
    workers = workers if workers is not None else DEFAULT_WORKERS
    if workers <= 1 or len(paths) < PARALLEL_MIN_FILES:
        return parse_chunk(str(repo), paths)
    chunks = [paths[i::workers] for i in range(workers)]
    import multiprocessing

    # forkserver: the caller may run LangGraph threads, and fork with threads can deadlock.
    context = multiprocessing.get_context("forkserver")
    results: dict[str, JSON] = {}
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for part in pool.map(parse_chunk, [str(repo)] * workers, chunks):
                results.update(part)
    except (BrokenProcessPool, RuntimeError, OSError):
        # Workers cannot start (e.g. a caller's __main__ without a main guard, or no
        # semaphores in a sandbox): parse in this process instead.
        return parse_chunk(str(repo), paths)
    return results


# How deep a chain of keyword-free imports from the graph code is followed (one round per
# level; a hostile chain stops here, and what lies beyond stays unknown, see wired_scope).
IMPORT_ROUNDS = 25


def collect_facts(repo: Path, files: list[str], cache_dir: Path | None = None,
                  workers: int | None = None, blobs: dict[str, str] | None = None
                  ) -> tuple[dict[str, JSON], dict[str, int]]:
    """Per-file facts for the repository's Python files, using and filling the cache."""
    paths = python_files(files)
    blobs = blobs if blobs is not None else blob_ids(repo, paths)
    cached = code_ast_cache.load(cache_dir, ((p, blobs[p]) for p in paths if blobs.get(p))) \
        if cache_dir else {}
    todo = [p for p in paths if p not in cached]
    fresh = parse_files(repo, todo, workers)
    if cache_dir:
        code_ast_cache.store(cache_dir, ((p, blobs[p], f) for p, f in fresh.items()
                                         if blobs.get(p)))
    facts = {**cached, **fresh}
    # Skipped modules the graph code names or imports (transitively) are parsed after all:
    # their constants name nodes, and what the graph imports bounds what it can run.
    forced, done, rounds = _imported_by_graph_code(facts), set(), 0
    while forced and rounds < IMPORT_ROUNDS:
        rounds += 1
        extra = {p: read_facts(repo, p, force=True) for p in forced}
        facts.update(extra)
        if cache_dir:
            code_ast_cache.store(cache_dir, ((p, blobs[p], f) for p, f in extra.items()
                                             if blobs.get(p)))
        done.update(forced)
        forced = _imported_by_graph_code(facts, done)
    stats = {"python_files": len(paths), "cached": len(cached), "parsed": len(todo),
             "skipped_prefilter": sum(1 for f in facts.values() if "skipped" in f),
             "errors": sum(1 for f in facts.values() if "error" in f)}
    return dict(sorted(facts.items())), stats


def _imported_by_graph_code(facts: dict[str, JSON], through: set[str] | None = None
                            ) -> list[str]:
    """Prefilter-skipped modules that graph code names (``add_node(names.REPO, ...)``) or
    imports, directly or through modules it imports in turn (parsed or forced): they are
    parsed after all (and cached like any file)."""
    skipped = module_suffixes(sorted(p for p, f in facts.items() if "skipped" in f))
    parsed = module_suffixes(sorted(p for p, f in facts.items() if "skipped" not in f))
    refs: set[str] = set()
    queue = []
    for path, facts_of in facts.items():
        for op in facts_of.get("ops") or []:
            op_refs([op.get("args"), op.get("kwargs")], refs)
        if facts_of.get("ops") or path in (through or ()):
            queue.append(path)
    # A node module's helper without trigger words (the model client class its nodes call)
    # runs as much as the node does, so imports are followed through parsed modules too.
    seen = set(queue)
    while queue:
        # "pkg.mod.name" -> "pkg.mod.name._": `_module_of` tries every prefix
        imported = {f"{name}._" for name in (facts[queue.pop()].get("imports") or {}).values()}
        refs |= imported
        for hit in {_module_of(ref, parsed) for ref in imported} - seen - {None}:
            seen.add(str(hit))
            queue.append(str(hit))
    return sorted({hit for ref in refs if (hit := _module_of(ref, skipped)) is not None})


def _module_of(ref: str, by_suffix: dict[str, str]) -> str | None:
    """The module `ref` (``pkg.mod.name``) names, by its longest known prefix."""
    parts = ref.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        hit = by_suffix.get(".".join(parts[:cut]))
        if hit:
            return hit
    return None


def code_findings(repo: Path, files: list[str], cache_dir: Path | None = None,
                  workers: int | None = None) -> tuple[list[Finding], RebuiltGraph | None]:
    """Findings with facets ``state.*``, ``graph.*``, ``safety.*``, ``llm.*``, ``judges.*``
    and ``justice.*`` for the repository at `repo` (a work tree whose tracked paths are
    `files`), and the main audited graph rebuilt statically (None when there is none)."""
    from automaton_auditor.forensics.code.findings import build_findings

    forget_files()
    files, total = within_caps(repo, files)
    blobs = blob_ids(repo, files) if cache_dir else None
    # Findings also read prompt files and function bodies, so the whole-result key covers
    # every tracked file's blob id (and the code that computes findings).
    key = code_ast_cache.result_key(blobs) if blobs and all(blobs.values()) else None
    if cache_dir and key:
        hit = code_ast_cache.load_result(cache_dir, key)
        if hit is not None:
            return hit
    facts, stats = collect_facts(repo, files, cache_dir, workers, blobs)
    stats["python_total"] = total
    result = build_findings(repo, files, facts, stats)
    if cache_dir and key:
        code_ast_cache.store_result(cache_dir, key, result)
    return result
