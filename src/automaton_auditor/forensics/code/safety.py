"""Safety findings, confirmed only by code: shell calls, eval/exec, the clone sandbox,
timeouts and error handling around subprocess calls."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from automaton_auditor.forensics.code.blocked import Undefined, failing_read
from automaton_auditor.forensics.code.branch_reach import untaken
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.cleanup_paths import Leak, error_leaks, leak_text
from automaton_auditor.forensics.code.clone_input import clone_input_findings
from automaton_auditor.forensics.code.common import JSON, split_loc
from automaton_auditor.forensics.code.deadlines import WAITED, caller_bounded
from automaton_auditor.forensics.code.facts import call_finding, calls_of, dangerous_calls
from automaton_auditor.forensics.code.lifetime import by_made
from automaton_auditor.forensics.code.process_errors import errors_finding, through_wrappers
from automaton_auditor.forensics.code.sandbox import (
    KEPT_ALIVE,
    Clone,
    clones,
    held,
    library_clone,
    removal_sites,
    removals,
    state_reads,
    whole_paths,
)
from automaton_auditor.forensics.code.shallow import shallow_history
from automaton_auditor.forensics.code.source import function_source, line_at
from automaton_auditor.forensics.code.temp_paths import fixed_temp_line, temp_root_finding
from automaton_auditor.forensics.code.timeout_escape import timeout_finding
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.forensics.code.unnamed import named_nowhere
from automaton_auditor.state import Finding
from automaton_auditor.text import clip

WITH = re.compile(r"^[^:]+:\d+: (?:async )?with .*TemporaryDirectory\(")  # a quoted line


def safety_findings(facts: dict[str, JSON], repo: Path | None = None,
                    graph: CallGraph | None = None, nodes: frozenset[Key] = frozenset(),
                    undefined: Undefined | None = None,
                    runs: Callable[[str, str], bool] | None = None,
                    main: Topology | None = None) -> list[Finding]:
    """All ``safety.*`` findings (`repo` lets function bodies be read for the clone
    function's error and input handling; `graph` is the repository's call graph; `nodes`
    the functions the main graph runs as nodes; `undefined` the reads that raise NameError;
    `runs` whether a function may run, by the graph or its entry points: `liveness
    .code_runs`, None when unknown; `main` the main graph, whose earlier nodes may check
    the URL)."""
    processes = calls_of(facts, "process")
    os_calls = [(p, c) for p, c in processes if c["name"].startswith("os.")]
    # a shell that is not os.system's: subprocess's shell=True, asyncio.create_subprocess_shell
    shell = [(p, c) for p, c in processes if c["shell"] and not c["name"].startswith("os.")]
    out = [
        dangerous_calls("safety.os_system", "os.system / os.popen call", os_calls,
                   "os.system/os.popen call(s)"),
        dangerous_calls("safety.shell_true", "subprocess call through a shell", shell,
                   "subprocess call(s) through a shell (shell=True, create_subprocess_shell)"),
        dangerous_calls("safety.eval_exec", "eval / exec call", calls_of(facts, "eval_exec"),
                   "eval/exec call(s)"),
    ]
    out += _clone_findings(facts, processes, repo, graph or CallGraph(facts), (nodes, main),
                           undefined or {}, runs)
    return out


def _clone_findings(facts: dict[str, JSON], processes: list[tuple[str, JSON]],
                    repo: Path | None, graph: CallGraph,
                    run: tuple[frozenset[Key], Topology | None],
                    undefined: Undefined, runs: Callable[[str, str], bool] | None
                    ) -> list[Finding]:
    nodes, main = run  # the functions the main graph runs as nodes, and that graph
    every_clone = clones(facts, repo, graph)
    # beside a clone the code runs, a clone in a function nothing names, in a branch no
    # caller takes, or in code neither the graph nor its entry points reach (`runs`), is an
    # alternative that never runs: neither sandboxed nor unsafe (alone, it is the tool, said
    # to be in code nothing runs)
    dead = named_nowhere(facts, {(c.path, c.call["func"]) for c in every_clone}, repo)
    alive = [c for c in every_clone if (c.path, c.call["func"]) not in dead and not untaken(
        graph, repo, (c.path, c.call["func"]), int(c.call["line"]))]
    live = runs or (lambda _path, _func: True)
    found = [c for c in alive if live(c.path, c.call["func"])] or alive or every_clone
    never_run = [c for c in every_clone if c not in found]
    idle = sorted({c.path for c in found if not live(c.path, c.call["func"])})
    every = [(c.path, c.call) for c in found]
    # ``Repo.clone_from`` with ``Repo`` never imported raises NameError: it clones nowhere
    raising = [(c, name) for c in found
               if (name := failing_read(c.path, int(c.call["line"]), undefined))]
    proved = [c for c in found if c.proof and all(c != r for r, _ in raising)]
    temps = calls_of(facts, "tempdir")
    # a helper returning the process call's result leaves the check to its callers
    sub = through_wrappers([(p, c) for p, c in processes if c["name"].startswith("subprocess.")],
                           graph, repo)
    sub = [(p, c) for p, c in sub if live(p, c["func"])] or sub  # code that runs, if any
    # GitPython's Repo.clone_from runs git without a subprocess call of the repository's
    # own: its failure is seen by an ``except`` around it
    library = [(p, c) for p, c in every if library_clone(c)]
    cleanup = _cleanup_findings(facts, proved, graph, repo)
    # a clone whose every temp dir is deleted as its function returns the path
    # (``safety.clone_deleted_early``) is still isolated from the working tree, but gone
    # before the caller uses it: said here, and charged as a directory not cleaned up on
    # every path (`safety.clone_cleanup`, which keeps the tools from full marks)
    gone = by_made(facts, "temp_gone")
    lost = [c for c in proved if c.temps and all(split_loc(t[2:]) in gone for t in c.temps)]
    return [
        _clone_function(facts, every, repo, idle),
        *_sandbox_findings(facts, found, proved, temps, (never_run, raising), repo, lost),
        *cleanup,
        errors_finding(sub + library, repo, frozenset((p, int(c["line"])) for p, c in every)),
        _timeouts_finding([(p, {**c, "timeout": WAITED}) if caller_bounded(facts, graph, p, c)
                           else (p, c) for p, c in every], sub),
        # on a call graph of its own: filling `graph`'s memos here may change what the
        # later traces resolve
        timeout_finding(every, CallGraph(facts), repo, nodes),
        *clone_input_findings(facts, every, repo, graph, live, main),
        shallow_history(facts, found, graph, repo),
    ]


def _timeouts_finding(clones: list[tuple[str, JSON]],
                      sub: list[tuple[str, JSON]]) -> Finding:
    """``safety.timeouts``: with a clone, whether every call that clones is bounded in time
    (``timeout=`` on it or on the process call of the wrapper it goes through, GitPython's
    ``kill_after_timeout=``, git's low-speed limit in its ``env``: `classify`; an
    ``asyncio.wait_for`` with a timeout around it or its function: `deadlines`); a
    ``timeout=`` on another subprocess call (``git log``) does not bound the clone. Without a
    clone, the subprocess calls that pass ``timeout=``."""
    timed_sub = [(p, c) for p, c in sub if c["timeout"]]
    if not clones:
        return call_finding(
            "safety.timeouts", "Subprocess calls set a timeout", bool(timed_sub), "success",
            timed_sub or sub, f"{len(timed_sub)} of {len(sub)} subprocess call(s) pass "
            "timeout=.", confidence=0.8, timed=len(timed_sub), total=len(sub))
    timed = [(p, c) for p, c in clones if c.get("timeout")]
    waited = [(p, c) for p, c in timed if c["timeout"] == WAITED]
    bare = [(p, c) for p, c in clones if not c.get("timeout")]
    cloning = {(p, c["line"]) for p, c in clones}
    others = [f"{p}:{c['line']}" for p, c in timed_sub if (p, c["line"]) not in cloning]
    aside = (f" Not the clone: {len(others)} other subprocess call(s) pass timeout= "
             f"({', '.join(others[:3])}), which bounds only those calls." if bare and others
             else "")
    return call_finding(
        "safety.timeouts", "The clone sets a timeout", not bare, "success",
        bare or timed, f"{len(timed)} of {len(clones)} clone call(s) set a timeout on the "
        "call that clones (timeout=, GitPython's kill_after_timeout=, or git's low-speed "
        "limit in its env)." + (f" {len(waited)} of them awaited through asyncio.wait_for "
                                "with a timeout." if waited else "") + aside,
        confidence=0.8, timed=len(timed), total=len(clones), other_timed=others[:20])


def _sandbox_findings(facts: dict[str, JSON], found: list[Clone], proved: list[Clone],
                      temps: list[tuple[str, JSON]],
                      unrun: tuple[list[Clone], list[tuple[Clone, str]]],
                      repo: Path | None, lost: list[Clone]) -> list[Finding]:
    """``safety.clone_sandbox``: quoted from the lines that carry the temp dir to the clone;
    clones in functions nothing names (`unrun`'s first list) are listed, not counted, and
    clones that raise NameError (its second: the undefined name) are sandboxed nowhere. With it
    ``safety.clone_temp_root`` (`temp_paths`): a clone at a fixed path under the system temp
    folder is weak, not the rubric's clone into the working directory, so an unsandboxed
    clone that all goes there is no strong charge."""
    never_run, raising = unrun
    items = [(c.path, c.call) for c in (proved or found)]
    dead = [f"{c.path}:{c.call['line']}" for c in never_run]
    aside = (f" Not counted: {len(dead)} clone call(s) in functions nothing in the repository "
             "names, in branches no caller takes or in code neither the graph nor its entry "
             f"points reach, which never run ({', '.join(dead[:3])})." if dead else "")
    fixed = [(c.path, {**c.call, "root": n}) for c in found if not c.proof and (
        n := fixed_temp_line(repo, c.path, int(c.call["line"]),
                             facts[c.path].get("imports") or {}))]
    aside += "".join(f" The clone at {c.path}:{c.call['line']} raises NameError: `{name}` is "
                     "never defined or imported there, so it clones nothing."
                     for c, name in raising[:3])
    early = [f"{c.path}:{c.call['line']}" for c in lost]
    aside += (f" Deleted before use: {len(early)} of them write into a TemporaryDirectory "
              f"deleted as its function returns the path (safety.clone_deleted_early: "
              f"{', '.join(early[:3])})." if early else "")
    weak = bool(fixed) and len(fixed) + len(proved) == len(found)
    finding = call_finding(
        "safety.clone_sandbox", "Clone runs inside a temporary directory",
        bool(proved) and len(proved) == len(found), "success", items,
        ("No clone runs, so none is sandboxed." if found and len(raising) == len(found) else
         f"{len(proved)} of {len(found)} clone call(s) write into a fresh temporary "
         "directory (followed through locals, helpers and callers)." if found
         else "No clone call found, so no sandboxed clone.") + aside
        + (f" The other {len(fixed)} write into a fixed path under the system temp folder "
           "(safety.clone_temp_root), not the working directory." if weak else ""),
        confidence=0.6 if weak else 0.9,
        tempdir_calls=[f"{p}:{c['line']}" for p, c in temps[:50]],
        unproved=[f"{c.path}:{c.call['line']}" for c in found if not c.proof][:50],
        never_run=dead[:50])
    if proved:
        quote = "\n".join(line for c in proved[:5] for line in c.proof)
        finding = finding.model_copy(update={"content": clip(quote, 4000)})
    return [finding, temp_root_finding(fixed, bool(proved), repo)]


def _cleanup_findings(facts: dict[str, JSON], proved: list[Clone], graph: CallGraph,
                      repo: Path | None) -> list[Finding]:
    """``safety.clone_cleanup`` (an extra of the tools, no full marks without it): whether
    each sandboxed clone's temp dir is removed after use, by ``TemporaryDirectory`` or by a
    call whose argument is that directory itself (``shutil.rmtree``, ``.cleanup()``) outside an
    ``except`` handler, for every place the directory may be made. A removal of a path
    inside it (`whole_paths`), or one made only in an ``except`` handler or a failure branch
    that leaves the function (when the clone or the work failed: `flow`), leaves it behind
    after a successful run: listed, not counted. The report's claims of a cleanup are read
    against it (`forensics.behaviour_claims`). With it ``safety.clone_deleted_early``: a
    ``TemporaryDirectory`` whose path its function returns is removed as it returns
    (`lifetime`), before the caller uses the clone."""
    kept: list[str] = []
    removed: list[str] = []
    early: list[str] = []
    partial: list[tuple[str, str]] = []  # (quoted removal, what it misses)
    leaks: list[Leak] = []  # removed only when no error occurs (`cleanup_paths`)
    gone, alive = by_made(facts, "temp_gone"), by_made(facts, "temp_kept")
    every_site = removal_sites(graph) if proved else []
    # a removal in a method nothing names never runs (a ``cleanup()`` no code calls); a
    # function nothing names may be the entry point of the tool (a script's ``main``)
    idle = named_nowhere(facts, {r.key for r in every_site if "." in r.key[1]}, repo) - {
        (c.path, str(c.call["func"])) for c in proved}
    sites = [r for r in every_site if r.key not in idle]
    whole = whole_paths(graph) if sites else graph
    for clone in proved:
        lost = [m for m in map(split_loc, (t[2:] for t in clone.temps)) if m in gone]
        # each made line, then the line returning its path
        early += [line for p, n in lost
                  for line in (line_at(repo, p, n), line_at(repo, p, int(gone[p, n]["ret"])))]
        if clone.call.get("tempdir") and not lost:  # inside ``with TemporaryDirectory()``
            removed.append(clone.proof[0])
        for temp in clone.temps:
            if split_loc(temp[2:]) in lost:
                continue
            made = line_at(repo, *split_loc(temp[2:]))
            itself = removals(whole, {temp}, sites)
            after = [line_at(repo, p, n) for p, n, failing in itself if not failing]
            stored = alive.get(split_loc(temp[2:]))  # the object outlives its function
            taken, held_back = held(facts, graph, repo, split_loc(temp[2:]), stored)
            if ("TemporaryDirectory" in made and not stored) or after or taken:
                # a ``with TemporaryDirectory()`` removes it as the block ends: that line
                removed += [made] if WITH.search(made) and not stored else after or taken or [made]
                if after and "TemporaryDirectory" not in made:
                    leaks += error_leaks(repo, graph, itself)
                continue
            kept.append(made)
            partial += held_back
            partial += [(line_at(repo, p, n), "removes only a path inside it" if
                         (p, n, failing) not in itself else
                         "removes it only in an except handler or a failure branch (when "
                         "something failed)")
                        for p, n, failing in removals(graph, {temp}, sites)]
            partial += [(line_at(repo, r.key[0], r.line), f"is in {r.key[1]}, which no code "
                         "calls") for r in every_site if r.key in idle
                        and removals(graph, {temp}, [r])]
    if kept:  # a removal of a path read back from the state may be of this directory
        partial += [(line_at(repo, p, n), f"removes a path read from its state ('{k}'), not "
                     "traced to this directory") for p, n, k in state_reads(graph, sites)]
    return [_cleanup(proved, (kept, leaks), removed, early, partial), _deleted_early(early)]


def _places(lines: list[str]) -> list[str]:
    return sorted({k.split(": ", 1)[0] for k in lines})


def _kept_text(kept: list[str], partial: list[tuple[str, str]]) -> str:
    """Why a sandboxed clone's temp dir stays: nothing removes it, or only a path inside it
    or only a failure is removed (each removal named with what it removes)."""
    made = ", ".join(_places(kept)[:3])
    if not partial:
        return f"Never removed: no call anywhere removes the temporary directory made at {made}."
    which = "; ".join(f"{place} {what}" for place, what in
                      dict.fromkeys((q.split(": ", 1)[0], w) for q, w in partial))
    state = any("state" in w for _q, w in partial)
    return (f"Not {'shown ' if state else ''}removed after a successful run: no call removes "
            f"the temporary directory "
            f"made at {made} itself outside an except handler{'' if state else ', so it stays'};"
            f" {which}.")


def _cleanup(proved: list[Clone], left: tuple[list[str], list[Leak]], removed: list[str],
             early: list[str], partial: list[tuple[str, str]]) -> Finding:
    """``safety.clone_cleanup`` from the quoted lines of each kind of temp dir; `left`: the
    temp dirs nothing removes after a successful run, and the removals an error skips."""
    kept, leaks = left
    on_error = [q for k in leaks for q in (k.removal, k.raiser, *k.handler)]
    shown = early or [*kept, *(q for q, _w in partial)] or on_error or removed
    return Finding(
        facet="safety.clone_cleanup", goal="The clone's temporary directory is removed after "
        "use", found=bool(removed) and not kept and not early and not leaks,
        # weighed only where there is a sandboxed clone to clean up (judging.extras: a
        # directory left behind keeps the tools from full marks)
        pattern="success" if proved else "neutral",
        location=(shown or ["."])[0].split(": ", 1)[0],
        content=clip("\n".join(dict.fromkeys(shown)), 4000) or None,
        confidence=0.7,
        rationale=("No sandboxed clone." if not proved else
                   f"Removed before use: the temporary directory made at "
                   f"{', '.join(_places(early[::2])[:3])} is deleted as its function "
                   f"returns the path ({', '.join(_places(early[1::2])[:3])}), so the clone "
                   "is gone before the caller uses it." if early else
                   _kept_text(kept, partial) if kept else leak_text(leaks) if leaks else
                   "Every sandboxed clone's temporary directory is removed."),
        data={"kept": _places(kept)[:20], "removed": _places(removed)[:20],
              "early": _places(early)[:20],
              "partial": _places([q for q, _w in partial])[:20],
              "alive": _places([q for q, w in partial if w == KEPT_ALIVE])[:20],
              "through_state": any("state" in w for _q, w in partial),
              "on_error": _places([k.removal for k in leaks])[:20]})


def _deleted_early(early: list[str]) -> Finding:
    """``safety.clone_deleted_early``: a defect of the sandbox, not a security flaw (so it is
    never charged as the rubric's failure pattern: confidence below the Prosecutor's)."""
    return Finding(
        facet="safety.clone_deleted_early", goal="The clone's temporary directory is deleted "
        "before the clone is used", found=bool(early), pattern="failure",
        location=(early or ["."])[0].split(": ", 1)[0],
        content=clip("\n".join(dict.fromkeys(early)), 4000) or None, confidence=0.6,
        rationale=(f"The clone's directory is a TemporaryDirectory (made at "
                   f"{', '.join(_places(early[::2])[:3])}) whose path its function returns "
                   f"({', '.join(_places(early[1::2])[:3])}); it is removed as the function "
                   "returns, so the caller reads a directory that no longer exists."
                   if early else
                   "No clone directory is returned after its TemporaryDirectory is removed."),
        data={"early": _places(early)[:20]})


def _clone_function(facts: dict[str, JSON], clones: list[tuple[str, JSON]],
                    repo: Path | None, idle: list[str]) -> Finding:
    """The function that runs the clone, quoted whole (the rubric asks for it); `idle`: the
    files of the clones neither the graph nor its entry points reach, when no other clones."""
    names = ", ".join(sorted({c["func"] or "<module>" for _p, c in clones})) or "no function"
    finding = call_finding("safety.clone", "Function that executes the repository clone",
                           bool(clones), "neutral", clones,
                           f"{len(clones)} clone call(s) in {names}" + (
                               f", in code nothing runs: {', '.join(idle[:3])}" if idle
                               else "") + ".",
                           functions=sorted({f"{p}:{c['func']}" for p, c in clones}))
    if not clones or repo is None:
        return finding
    path, call = clones[0]
    info = (facts[path].get("functions") or {}).get(call["func"])
    if not info:
        return finding
    source = function_source(repo, path, info["line"], info["end"])
    return finding.model_copy(update={"content": source, "location": f"{path}:{info['line']}"})
