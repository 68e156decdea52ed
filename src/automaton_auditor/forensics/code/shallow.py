"""A shallow clone whose history the code then reads: ``git clone --depth 1 url tmp`` and
a ``git log`` (``rev-list``, ``shortlog``, GitPython's ``iter_commits``: `classify`) run in
that clone's directory, followed through locals, helpers and callers as the clone's temp
dir is (`sandbox.prove`). The history read sees one commit, or at most N (``--depth 50``:
a longer history is cut, a shorter one whole). Context, not a flaw the tools' rubric names:
the clone is as safe; the git forensics built on it see only the last commits. A shallow
clone whose history nothing reads is no such case."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.classify import HISTORY_COMMANDS
from automaton_auditor.forensics.code.common import JSON, split_loc
from automaton_auditor.forensics.code.facts import calls_of
from automaton_auditor.forensics.code.sandbox import Clone, command_params, prove, site_at
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.state import Finding
from automaton_auditor.text import clip


def _reads(facts: dict[str, JSON], graph: CallGraph) -> list[tuple[Key, int, int]]:
    """(function, call site index, line of the history command word) of every call that
    reads a git history: a ``git log`` process call, or GitPython's ``iter_commits``."""
    reads = [(p, c, c["name"].rsplit(".", 1)[-1], int(c["history"]))
             for p, c in calls_of(facts, "process") if c.get("history")]
    reads += [(p, c, "", int(c["line"])) for p, c in calls_of(facts, "history")]
    found = []
    for path, call, tail, line in reads:
        key = (path, call["func"])
        index = site_at(graph, key, call["line"], tail)  # else the outermost call there
        if index is not None:
            found.append((key, index, line))
    return found + _wrapper_reads(facts, graph)


def _wrapper_reads(facts: dict[str, JSON], graph: CallGraph) -> list[tuple[Key, int, int]]:
    """(caller, call site index, its line) of every call handing a ``git log`` to a
    process-running wrapper: ``run_git(["log", "--oneline"], cwd=path)`` where the wrapper
    runs ``["git"] + args``. The words come from what the caller passes; ``git`` from it
    or from the command the wrapper builds around that parameter."""
    found = []
    for key, params in sorted(command_params(graph, facts).items()):
        for param in sorted(params):
            for caller, index in graph.callers(key):
                words = _words(graph.sources(caller, graph.argument(caller, index, key, param)
                                             or []))
                if words & HISTORY_COMMANDS and ("git" in words or _adds_git(graph, key, param)):
                    found.append((caller, index, int(graph.sites(caller)[index]["line"])))
    return sorted(set(found))


def _adds_git(graph: CallGraph, key: Key, param: str) -> bool:
    """True when function `key` passes on a value built from `param` together with the
    literal word ``git`` (``command = ["git"] + git_args; run(command)``)."""
    for site in graph.sites(key):
        for group in [*(site.get("args") or []), *(site.get("kw") or {}).values()]:
            sources = graph.sources(key, group)
            if f"p:{param}" in sources and "git" in _words(sources):
                return True
    return False


def _words(sources: frozenset[str]) -> set[str]:
    return {w for s in sources if s.startswith("s:") for w in s[2:].split()}


def shallow_history(facts: dict[str, JSON], clones: list[Clone], graph: CallGraph,
                    repo: Path | None) -> Finding:
    """``safety.shallow_history`` (context): each clone with ``--depth N`` whose directory
    a history read runs in, quoting the clone, the lines carrying its directory and the
    read."""
    shallow = [c for c in clones if isinstance(c.call.get("depth"), int) and c.temps
               and not _depth_passed(graph, c)]
    quotes: list[str] = []
    seen: list[str] = []
    reads = _reads(facts, graph) if shallow else []
    for key, index, line in reads:
        site = graph.sites(key)[index]
        atoms = [a for group in [*(site.get("args") or []), *(site.get("kw") or {}).values(),
                                 site.get("recv") or []] for a in group]
        proof = prove(graph, repo, key, atoms)
        read_at = f"{key[0]}:{line}"
        for clone in shallow:
            if set(proof.temps) & set(clone.temps):
                depth_at = f"{clone.path}:{clone.call.get('depth_line') or clone.call['line']}"
                made = [t[2:] for t in sorted(set(proof.temps) & set(clone.temps))]
                carried = [_at(q) for q in proof.lines if _at(q) not in (*made, read_at)]
                seen.append(
                    f"the clone is shallow (--depth {clone.call['depth']} at {depth_at}) and "
                    f"a git history read runs in its directory at {read_at} (the directory "
                    f"made at {', '.join(made[:2])}" +
                    (f", its path carried through {', '.join(carried[:3])}" if carried
                     else "") + "): the history read has " + _commits(clone.call["depth"]))
                quotes += [line_at(repo, *split_loc(depth_at)), *proof.lines,
                           line_at(repo, *split_loc(read_at))]
    return Finding(
        facet="safety.shallow_history", goal="A shallow clone's git history is read",
        found=bool(seen), pattern="neutral", confidence=0.7,
        location=_at(quotes[0]) if quotes else ".",
        content=clip("\n".join(dict.fromkeys(quotes)), 4000) or None,
        rationale=("; ".join(s[0].upper() + s[1:] for s in seen[:3]) + "." if seen else
                   _untraced(shallow, reads) if reads else
                   "No history read runs in a shallow clone's directory."),
        # context, never a limitation of the tools' criterion (it would hold back full marks)
        data={"reads": seen[:20], **({"untraced": True, "established": False}
                                     if reads and not seen else {})})


def _untraced(shallow: list[Clone], reads: list[tuple[Key, int, int]]) -> str:
    """A shallow clone and a history read are both in the code, but the read's directory
    was not traced to the clone's (a path handed through the graph's state, or yielded by
    a context manager): neither is said."""
    clone = shallow[0]
    at = f"{clone.path}:{clone.call.get('depth_line') or clone.call['line']}"
    read = ", ".join(f"{key[0]}:{line}" for key, _i, line in reads[:3])
    return (f"Not established: the code makes a shallow clone (--depth {clone.call['depth']} "
            f"at {at}) and reads a git history ({read}), but the read's directory was not "
            "traced to the clone's; if it is that clone, the history read has "
            + _commits(int(clone.call["depth"])) + ".")


def _commits(depth: int) -> str:
    return "one commit" if depth <= 1 else \
        f"at most the last {depth} commits (a longer history is cut)"


def _depth_passed(graph: CallGraph, clone: Clone) -> bool:
    """Whether a caller of the cloning function passes the parameter whose default gave
    the clone its depth (``clone_repo(url, depth=0)``): its depth is then not known."""
    param, key = clone.call.get("depth_param"), (clone.path, str(clone.call["func"]))
    return bool(param) and any(graph.argument(caller, index, key, str(param)) is not None
                               for caller, index in graph.callers(key))


def _at(quote: str) -> str:
    return quote.split(": ", 1)[0]
