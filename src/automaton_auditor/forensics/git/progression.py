"""Does the history progress from setup to tools to graph orchestration?

Each build stage (setup, tools, state, graph, judges, synthesis: `history.STAGES`, by path)
starts at the first commit that builds it: the first (non-scaffold) commit touching its paths
in which one of its Python files, read as that commit left it, holds working code. A file
whose functions are mostly placeholders (a body that only passes, raises
NotImplementedError, returns a constant such as ``{}`` or ``{"opinions": []}`` or hands its
argument back; or one whose every run writes text calling its output a placeholder, such
as a judge emitting ``"Placeholder assessment"`` with a fixed score) builds nothing: a
scaffold that lays out every stage's file with TODO stubs does not start them; nor does a
graph file that adds no node and no edge (a ``StateGraph(S).compile()`` skeleton).
Without the files' contents (a blobless or long history) a stage starts at its first touch.
The history progresses only when the code stages (all but setup) start in two commits at
least: a .gitignore commit before one commit that starts them all tells no story. Nor does
an order of commits that says when finished files were committed rather than built: tools
and graph starting within a burst (one run of commits minutes apart bringing half of the
code or more, the failure pattern's "timestamps clustered within minutes"), or in the
commits of a replayed history (dated on whole minutes, each only adding files:
`replay.replayed`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection

from automaton_auditor.forensics.git.history import (
    NAMES_LIMIT,
    STAGE_ORDER,
    STAGES,
    Commit,
    code_lines,
    stages_of,
)
from automaton_auditor.state import Finding

# A commit that adds most code files but brings under this share of the code lines is a
# scaffold of placeholders, not an upload of the code.
SCAFFOLD_SHARE = 0.1
SCAFFOLD_STAGES = 4
CORE = ("setup", "tools", "graph")
# Seconds between the graph's first commit and the tools' (the tools after): up to BATCH,
# finished files committed together (the order says nothing, and shows no build); up to
# SITTING, built in turn in one sitting (the order inverts nothing worth a verdict).
BATCH, SITTING = 5 * 60, 30 * 60
READS = 200  # files read to tell placeholders from code, at most
# A graph file that adds no node and no edge (``StateGraph(S).compile()``) is a skeleton: it
# builds no graph yet.
WIRING = re.compile(r"\.(?:add_node|add_edge|add_conditional_edges|add_sequence|"
                    r"set_entry_point)\s*\(|\bgoto\s*=")
# Text a function writes out that calls its own output a placeholder: the code that will
# replace it is not written yet.
PLACEHOLDER = re.compile(r"\bplace-?holders?\b|\bnot (?:yet )?implemented\b", re.IGNORECASE)
# (commit sha, path) -> the file's text at that commit; None when it cannot be read.
Reader = Callable[[str, str], str | None]


def scaffold(commit: Commit, total: int | None) -> bool:
    """The commit adds files but brings under `SCAFFOLD_SHARE` of the `total` code lines
    (when they were read): it lays out placeholders, and the code arrives in later commits."""
    return bool(total) and (commit.lines or 0) < SCAFFOLD_SHARE * (total or 0)


def stage_touches(commits: list[Commit]) -> dict[str, list[int]]:
    """Indexes of the commits touching each stage (by paths, else by subject), in order.
    A scaffold commit counts as setup only: it lays out the project, it does not build each
    stage. That is a commit that only adds empty files, or one touching four or more stages
    at once that brings little of the code (placeholders); one that brings the code of four
    stages at once (a bulk copy) builds them all in that one commit."""
    touches: dict[str, list[int]] = {}
    total = code_lines(commits)
    for index, commit in enumerate(commits[:NAMES_LIMIT]):
        paths = commit.added + commit.changed
        stages = stages_of(paths) or stages_of([commit.subject.replace(" ", "_")])
        empty = commit.lines == 0 and bool(commit.added) and not commit.changed
        if empty or (len(stages) >= SCAFFOLD_STAGES and (not total
                                                         or scaffold(commit, total))):
            stages = ["setup"]
        for stage in stages:
            touches.setdefault(stage, []).append(index)
    return touches


def _stub_body(body: list[ast.stmt]) -> bool:
    """A body that does nothing: pass, ``...``, a docstring, raise NotImplementedError, or
    return a constant (``{}``, ``[]``, ``{"opinions": []}``, a string)."""
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr)
                                           and isinstance(s.value, ast.Constant))
               or (isinstance(s, ast.Return) and (s.value is None or _literal(s.value)))
               or (isinstance(s, ast.Raise) and "NotImplementedError" in ast.unparse(s))
               for s in body)


def _stub(unit: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """A function or method-less class that does nothing (`_stub_body`), that hands its
    argument back untouched (``return state``), or whose unconditional path writes text
    that calls its own output a placeholder (``argument = "Placeholder assessment"``)."""
    if _stub_body(unit.body):
        return True
    if isinstance(unit, ast.ClassDef):
        return False
    params = {a.arg for a in unit.args.posonlyargs + unit.args.args + unit.args.kwonlyargs}
    body = [s for s in unit.body if not _text(s)]
    if len(body) == 1 and isinstance(body[0], ast.Return) \
            and isinstance(body[0].value, ast.Name) and body[0].value.id in params:
        return True
    return any(isinstance(node, ast.Constant) and isinstance(node.value, str)
               and PLACEHOLDER.search(node.value) is not None
               for stmt in _unconditional(unit.body) for node in ast.walk(stmt))


def _text(stmt: ast.stmt) -> bool:
    """A bare string statement (a docstring): text the code never outputs."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


def _unconditional(body: list[ast.stmt]) -> list[ast.stmt]:
    """The simple statements of `body` that run whenever it runs: loop, ``with`` and
    ``try`` bodies are entered; an ``if`` branch or an ``except`` handler (a fallback that
    may never run, e.g. when no model is configured) and nested definitions are not."""
    found: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith):
            found += _unconditional(stmt.body)
        elif isinstance(stmt, ast.Try):
            found += _unconditional(stmt.body + stmt.orelse + stmt.finalbody)
        elif not isinstance(stmt, ast.If | ast.Match | ast.FunctionDef | ast.AsyncFunctionDef
                            | ast.ClassDef) and not _text(stmt):
            found.append(stmt)
    return found


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def placeholder(source: str) -> bool:
    """The file holds no working code: nothing but imports and docstrings, or more than half
    of its functions (and method-less classes) are stubs (`_stub`). Unparsable text
    counts as code (it is not known to be a placeholder)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    units = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
             or (isinstance(n, ast.ClassDef) and not any(
                 isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) for b in n.body))]
    if units:
        return 2 * sum(_stub(u) for u in units) > len(units)
    return _stub_body([s for s in tree.body if not isinstance(s, ast.Import | ast.ImportFrom)])


def _stage_files(commit: Commit, stage: str) -> list[str]:
    pattern = dict(STAGES)[stage]
    return [p for p in commit.added + commit.changed
            if p.endswith(".py") and pattern.search(p.lower())]


def _builds(commit: Commit, stage: str, read: Reader) -> bool:
    """One of the stage's Python files the commit added or changed holds working code as
    the commit left it; True when none can be read (deleted, or not known: a touch). A
    commit named for the stage that changes none of its files builds it only if it brings
    code ("update .gitignore to include personal docs" brings no judge)."""
    files = _stage_files(commit, stage)
    if not files:
        return commit.lines != 0
    texts = [read(commit.sha, p) for p in files]
    readable = [text for text in texts if text is not None]
    return not readable or any(not placeholder(text) and (
        stage != "graph" or WIRING.search(text) is not None) for text in readable)


def files_to_read(commits: list[Commit]) -> list[tuple[str, str]]:
    """The ``(commit sha, path)`` files `stage_firsts` may read, at most `READS`: each
    stage's files in its first touching commit, then in its second, and so on (a stage
    touched in fifty commits does not crowd out the others' first ones)."""
    touches = {stage: hits for stage, hits in stage_touches(commits).items()
               if stage != "setup"}
    wanted: list[tuple[str, str]] = []
    for rank in range(max(map(len, touches.values()), default=0)):
        for stage, hits in touches.items():
            if rank < len(hits):
                commit = commits[hits[rank]]
                wanted += [(commit.sha, path) for path in _stage_files(commit, stage)]
        if len(wanted) >= READS:
            break
    return list(dict.fromkeys(wanted))[:READS]


def stage_firsts(commits: list[Commit], read: Reader | None = None) -> dict[str, int]:
    """Index of the commit that starts each stage: the first (non-scaffold) commit touching
    it that builds it (`_builds`), when `read` can read the files; else the first touch.
    Setup's files are environment, not code: its first touch starts it."""
    touches = stage_touches(commits)
    firsts = {stage: hits[0] for stage, hits in touches.items()}
    if read is None:
        return firsts
    for stage, hits in touches.items():
        if stage != "setup":
            firsts[stage] = next((i for i in hits if _builds(commits[i], stage, read)),
                                 hits[0])
    return firsts


def _inversions(points: dict[str, int]) -> int:
    items = sorted(points.items(), key=lambda kv: (kv[1], STAGE_ORDER[kv[0]]))
    ranks = [STAGE_ORDER[name] for name, _ in items]
    return sum(1 for i in range(len(ranks)) for j in range(i + 1, len(ranks))
               if ranks[i] > ranks[j])


def _why_not(commits: list[Commit], core: dict[str, int], code: dict[str, int]) -> str:
    """Why the core stages do not progress, in the fact's words."""
    missing = [stage for stage in CORE if stage not in core]
    if missing:
        return f"never touched on their own: {', '.join(missing)}"
    if len(set(core.values())) == 1:
        later = [f"{stage} in {commits[first].sha[:8]}" for stage, first in code.items()
                 if first > core["setup"]]
        return (f"setup, tools and graph all start in one commit, "
                f"{commits[core['setup']].sha[:8]}"
                + (f" (later: {', '.join(later)})" if later else ""))
    if len(set(code.values())) == 1:
        start = commits[next(iter(code.values()))]
        return (f"{', '.join(code)} all start in one commit, {start.quote()}; only setup "
                f"comes before it")
    late = [f"{a} starts after {b}" for a, b in (("setup", "tools"), ("tools", "graph"))
            if core[a] > core[b]]
    if not late and core["setup"] > core["graph"]:
        late = ["setup starts after graph"]
    return "; ".join(late) or f"only {len(commits)} commit(s)"


def _one_sitting(commits: list[Commit], core: dict[str, int]) -> bool:
    """Whether graph orchestration starts before the tools only within one sitting: the
    tools' first commit more than `BATCH` and at most `SITTING` seconds after the graph's
    (amare1990: graph at 20:42, the detectives' tools at 20:59, in a history of 26 commits
    over a day). A minute or two apart, the two were committed together, not built in turn:
    no progression is shown."""
    tools, graph = commits[core["tools"]], commits[core["graph"]]
    return BATCH < tools.timestamp - graph.timestamp <= SITTING


def _committed_not_built(tools: Commit, graph: Commit, replayed: Collection[str],
                         burst: list[Commit], share: float) -> str:
    """Why the order in which tools and graph start says when their finished files were
    committed, not built ("" when it does not): both start within the `burst` (the run of
    commits minutes apart that brings half of the code or more: `bursts.burst_finding`), or
    both in replayed commits. When both start in one commit the history orders nothing
    between them, so it says nothing."""
    if tools.sha == graph.sha:
        return ""
    if tools.sha in replayed and graph.sha in replayed:
        return (f"tools ({tools.sha[:8]}) and graph ({graph.sha[:8]}) start in replayed "
                "commits (dated on whole minutes, each only adding files): the order is "
                "staged")
    if {tools.sha, graph.sha} <= {c.sha for c in burst}:
        return (f"tools ({tools.sha[:8]}) and graph ({graph.sha[:8]}) start within one "
                f"run of {len(burst)} commits minutes apart ({burst[0].date} to "
                f"{burst[-1].date}) that brings {share:.0%} of the code: the order the "
                "finished files were committed in, not the order they were built")
    return ""


def progression_finding(commits: list[Commit], shallow: bool = False,
                        read: Reader | None = None, replayed: Collection[str] = (),
                        burst: list[Commit] | None = None, share: float = 0.0) -> Finding:
    """Finding ``git.progression``: setup, then tools, then orchestration, in distinct
    commits, for a log given oldest first (`read` reads a file at a commit; `replayed`: the
    commits of a replayed history, when it is one; `burst`: the run of commits minutes
    apart that brings most of the code, when there is one, and the `share` it brings)."""
    firsts = stage_firsts(commits, read)
    core = {stage: firsts[stage] for stage in CORE if stage in firsts}
    # The rubric's story: environment setup, then tool engineering, then orchestration,
    # in distinct commits; judges and synthesis are reported but not required in order.
    # The code stages (all but setup) start in two commits at least: a setup commit (a
    # .gitignore, a pyproject) before one commit that starts every code stage is no story.
    code = {stage: first for stage, first in firsts.items() if stage != "setup"}
    staged = (len(core) == 3 and core["setup"] <= min(core["tools"], core["graph"])
              and (core["tools"] <= core["graph"] or _one_sitting(commits, core))
              and len(set(core.values())) >= 2 and len(set(code.values())) >= 2
              and len(commits) > 3)
    unbuilt = _committed_not_built(commits[core["tools"]], commits[core["graph"]], replayed,
                                   burst or [], share) if staged else ""
    staged = staged and not unbuilt
    order = sorted(firsts, key=lambda s: (firsts[s], STAGE_ORDER[s]))
    quoted = [f"{stage}: {commits[firsts[stage]].quote()}" for stage in order]
    how = "first commit with working code, not stubs" if read else "first commit touching them"
    rationale = (f"Stages start ({how}; scaffold commits count as setup) in the order "
                 f"{' -> '.join(order) or '(none)'}; "
                 f"{_inversions(firsts)} out-of-order pair(s)"
                 + ("." if staged else
                    f". No progression: {unbuilt or _why_not(commits, core, code)}."))
    if shallow and not staged:
        rationale += " The history is shallow: earlier stages may lie beyond its boundary."
    return Finding(
        facet="git.progression",
        goal="History progresses from setup to tools to graph orchestration",
        # A shallow history that does not show the stages says nothing either way.
        found=staged, pattern="neutral" if shallow and not staged else "success",
        location=f"commit {commits[firsts[order[0]]].sha[:12]}" if order else "git log",
        content="\n".join(quoted) or None, rationale=rationale, confidence=0.75,
        data={"first_commit_per_stage": {s: commits[firsts[s]].sha for s in order},
              "order": order, "distinct_commits": len(set(firsts.values())),
              "inversions": _inversions(firsts)})
