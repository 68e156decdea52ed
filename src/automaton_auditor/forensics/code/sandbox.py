"""Clones followed through the call graph: which calls run ``git clone`` (directly, through
GitPython, or through a project wrapper such as ``run_command(["git", "clone", url, dest])``)
and whether the destination is a fresh temporary directory, proved by the lines that make
the temp dir and carry it to the clone (returned by a helper, passed as an argument, kept on
``self``). A helper's name never counts; only where the value comes from."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from automaton_auditor.forensics.code.branch_reach import untaken
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, split_loc
from automaton_auditor.forensics.code.facts import calls_of
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.unnamed import named_nowhere

COMMAND_KEYWORDS = ("args", "cmd", "command")
DEST_KEYWORDS = ("to_path", "cwd", "dest", "path", "target", "directory")
MAX_CALLER_DEPTH = 3


class Clone(NamedTuple):
    """One clone call and what the flow proves about its destination."""

    path: str
    call: JSON  # a ``clone`` call fact (line, func, snippet, how, timeout, in_try ...)
    proof: list[str]  # quoted lines: temp dir made ... carried ... clone; [] = not proved
    temps: tuple[str, ...] = ()  # where the temp dir is made (``t:path:line`` sources)


class Proof(NamedTuple):
    """The quoted lines carrying a temp dir to a value, and where the temp dirs it may be are
    made (also those callers pass in: ``clone(url, dest=None)`` called with a
    ``TemporaryDirectory``)."""

    lines: list[str]
    temps: tuple[str, ...] = ()


def site_at(graph: CallGraph, key: Key, line: int, tail: str = "") -> int | None:
    """Index of the call site of `key` at `line` (whose name ends with `tail`, if given)."""
    hits = [i for i, s in enumerate(graph.sites(key)) if s["line"] == line]
    named = [i for i in hits if tail and str(graph.sites(key)[i]["name"]).endswith(tail)]
    chosen = named or hits
    # arguments are recorded before the call that takes them: the outermost call is last
    return chosen[-1] if chosen else None


def _payload(site: JSON, keywords: tuple[str, ...], skip_first: bool = False) -> list[str]:
    args = site.get("args") or []
    atoms = [a for group in (args[1:] if skip_first else args) for a in group]
    for name, group in sorted((site.get("kw") or {}).items()):
        if name in keywords:
            atoms += group
    return atoms


def command_params(graph: CallGraph, facts: dict[str, JSON]) -> dict[Key, dict[str, JSON]]:
    """Functions whose parameter becomes (part of) a process command: ``def run(cmd):
    subprocess.run(cmd)``, and wrappers of those wrappers. Maps key -> {param: process}."""
    sinks: dict[Key, dict[str, JSON]] = {}
    for path, call in calls_of(facts, "process"):
        key = (path, call["func"])
        index = site_at(graph, key, call["line"], call["name"].rsplit(".", 1)[-1])
        if index is None:
            continue
        site = graph.sites(key)[index]
        command = (site.get("args") or [[]])[0] if site.get("args") else _payload(
            {"kw": site.get("kw")}, COMMAND_KEYWORDS)
        for source in sorted(graph.sources(key, command)):
            if source.startswith("p:"):
                sinks.setdefault(key, {}).setdefault(source[2:], {**call, "path": path})
    return wrappers_of(graph, sinks)


def wrappers_of(graph: CallGraph, sinks: dict[Key, dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """`sinks` (function -> {parameter: what it reaches}) grown with the callers that pass
    their own parameter in for one, a few callers up: wrappers, and wrappers of those."""
    for _round in range(MAX_CALLER_DEPTH):
        grown = False
        for key, params in sorted(sinks.items()):
            for param, reached in sorted(params.items()):
                for caller, index in graph.callers(key):
                    bound = graph.argument(caller, index, key, param) or []
                    for source in sorted(graph.sources(caller, bound)):
                        if source.startswith("p:") and source[2:] not in sinks.get(caller, {}):
                            sinks.setdefault(caller, {})[source[2:]] = reached
                            grown = True
        if not grown:
            break
    return sinks


def _is_git_clone(sources: frozenset[str]) -> bool:
    words = {w for s in sources if s.startswith("s:") for w in s[2:].split()}
    return "clone" in words and any(w == "git" or w.endswith("/git") for w in words)


def wrapper_clones(graph: CallGraph, facts: dict[str, JSON],
                   repo: Path | None) -> list[tuple[str, JSON]]:
    """Calls that hand a ``git clone`` command to a process-running wrapper."""
    found: dict[tuple[str, int], JSON] = {}
    sinks = command_params(graph, facts)
    for key, params in sorted(sinks.items()):
        for param, process in sorted(params.items()):
            for caller, index in graph.callers(key):
                bound = graph.argument(caller, index, key, param)
                if not bound or not _is_git_clone(graph.sources(caller, bound)):
                    continue
                line = graph.sites(caller)[index]["line"]
                found.setdefault((caller[0], line), {
                    "kind": "clone", "line": line, "func": caller[1],
                    "snippet": line_at(repo, caller[0], line).split(": ", 1)[-1],
                    "how": f"{graph.sites(caller)[index]['name']} -> {process['name']} "
                           f"({process['path']}:{process['line']})",
                    "tempdir": False, "in_try": process.get("in_try", False),
                    "timeout": process.get("timeout", False), "site": index,
                    **_wrapper_depth(graph, caller, graph.sources(caller, bound))})
    return [(path, call) for (path, _line), call in sorted(found.items())]


def _wrapper_depth(graph: CallGraph, caller: Key, sources: frozenset[str]) -> dict[str, Any]:
    """The ``--depth`` of a clone command handed to a wrapper, from what builds it (order is
    not kept there): one number word beside ``--depth``, else the one parameter of the
    caller with an int default (``def clone(url, depth=1)``: ``"--depth", str(depth)``)."""
    if "s:--depth" not in sources:
        return {}
    numbers = [int(s[2:]) for s in sources if s[2:].isdigit() and s.startswith("s:")]
    if numbers:
        return {"depth": numbers[0]} if len(numbers) == 1 and numbers[0] > 0 else {}
    defaults = graph.functions[caller].get("int_defaults") or {}
    named = [p[2:] for p in sources if p.startswith("p:") and defaults.get(p[2:], 0) > 0]
    return {"depth": defaults[named[0]], "depth_param": named[0]} if len(named) == 1 else {}


def library_clone(call: JSON) -> bool:
    """A clone fact of GitPython's ``Repo.clone_from``: git run by a library, not by a
    subprocess call of the repository's own."""
    return str(call.get("how", "")).startswith("GitPython")


def _destination(graph: CallGraph, key: Key, call: JSON) -> list[str]:
    index = call.get("site")
    if index is None:
        how = str(call.get("how", ""))
        tail = "clone_from" if library_clone(call) else how.rsplit(".", 1)[-1]
        index = site_at(graph, key, call["line"], tail)
    if index is None:
        return []
    site = graph.sites(key)[index]
    if library_clone(call):
        return _payload(site, DEST_KEYWORDS, skip_first=True)
    return _payload(site, (*COMMAND_KEYWORDS, *DEST_KEYWORDS))


def prove(graph: CallGraph, repo: Path | None, key: Key, atoms: list[str],
          depth: int = 0) -> Proof:
    """Quoted lines proving that `atoms` of `key` hold a temp dir (none when they do not):
    directly, or through every caller that passes it in (up to a few callers up)."""
    sources = graph.sources(key, atoms)
    # a temp dir made in a branch no caller takes (``if dest is None: dest = mkdtemp()``
    # while every caller passes a directory) is none of the clone's
    temps = sorted(s for s in sources if s.startswith("t:") and _made(graph, repo, s))
    params = sorted(s[2:] for s in sources if s.startswith("p:"))
    if temps:
        # a temp source is written "t:path:line"
        passed = {s for caller, index in graph.callers(key) for param in params
                  for s in graph.sources(caller, graph.argument(caller, index, key, param) or [])
                  if s.startswith("t:") and _made(graph, repo, s)}
        return Proof([line_at(repo, *split_loc(t[2:])) for t in temps[:3]],
                     tuple(sorted({*temps, *passed})))
    if not params or depth >= MAX_CALLER_DEPTH:
        return Proof([])
    for caller, index in graph.callers(key):
        for param in params:
            bound = graph.argument(caller, index, key, param)
            proof = prove(graph, repo, caller, bound, depth + 1) if bound else Proof([])
            if proof.lines:
                line = graph.sites(caller)[index]["line"]
                return Proof([*proof.lines, line_at(repo, caller[0], line)], proof.temps)
    return Proof([])


def _made(graph: CallGraph, repo: Path | None, temp: str) -> bool:
    """The temp dir source ``t:path:line`` is made on a path some caller takes."""
    path, line = split_loc(temp[2:])
    key = graph.function_at(path, line)
    return key is None or not untaken(graph, repo, key, line)


REMOVERS = {"rmtree", "rmdir", "removedirs", "remove", "unlink", "cleanup"}
JOINERS = {"join", "Path", "PurePath", "PosixPath", "WindowsPath"}  # with 2 parts: a path inside


def _removed_arg(site: JSON) -> list[str]:
    """What a removal call removes: its first argument, or, when it has none, the object it
    is called on (``x.cleanup()``, ``path.unlink()``). A value called with an argument
    removes that argument, not itself: ``dirs.remove(".git")`` takes an item out of a list
    built from a walk of the clone, and leaves the clone where it is."""
    if str(site.get("name") or "").rsplit(".", 1)[-1] not in REMOVERS:
        return []
    first = (site.get("args") or [])[:1]
    return list(first[0]) if first else list(site.get("recv") or [])


def remover_params(graph: CallGraph) -> dict[Key, dict[str, Any]]:
    """Functions whose parameter ends in a removal call (``def cleanup(path):
    shutil.rmtree(path)``), and wrappers of those (`wrappers_of`)."""
    sinks: dict[Key, dict[str, Any]] = {}
    for key in graph.functions:
        for site in graph.sites(key):
            for source in graph.sources(key, _removed_arg(site)):
                if source.startswith("p:"):
                    sinks.setdefault(key, {})[source[2:]] = True
    return wrappers_of(graph, sinks)


def removal_sites(graph: CallGraph) -> list[Removal]:
    """Every call that may remove a directory, with what it removes: a removal call
    (``shutil.rmtree(tmp)``, ``holder.cleanup()``), a call of a function that removes its
    argument, or such a function handed on with its argument (``tasks.add_task(cleanup,
    tmp)``, ``atexit.register(cleanup, tmp)``)."""
    sinks = remover_params(graph)
    found = []
    for key in graph.functions:
        for index, site in enumerate(graph.sites(key)):
            target = graph.resolve(key, site)
            callee = graph.function_key(target) if target is not None else None
            bound = [a for p in sorted(sinks.get(callee, set()))
                     for a in graph.argument(key, index, callee, p) or []] if callee else []
            passed = _flat(site)
            handed = any(graph.function_key(t) in sinks for a in passed
                         if a[:2] == "v:" and (t := graph.resolve(key, {"name": a[2:]})))
            atoms = _removed_arg(site) + bound + (passed if handed else [])
            if atoms:
                found.append(Removal(key, int(site["line"]), atoms, bool(site.get("handler"))))
    return found


class Removal(NamedTuple):
    """A call that may remove a directory (`removal_sites`)."""

    key: Key
    line: int
    atoms: list[str]  # what it removes
    failing: bool  # in an ``except`` handler or a failure branch: runs only on a failure


def removals(graph: CallGraph, temps: set[str],
             sites: list[Removal]) -> list[tuple[str, int, bool]]:
    """(path, line, failing) of the `removal_sites` that remove a directory made at
    `temps` (pass `whole_paths` of the graph to leave out those removing a path inside it)."""
    return sorted({(r.key[0], r.line, r.failing) for r in sites
                   if graph.sources(r.key, r.atoms) & temps})


def state_reads(graph: CallGraph, sites: list[Removal]) -> list[tuple[str, int, str]]:
    """(path, line, key) of the removals outside ``except`` handlers of a path read from a
    parameter's key (``shutil.rmtree(state.get("K"))``): a directory handed on through the
    graph's state, which `sources` does not follow back to where it was made."""
    found = set()
    for r in sites:
        sources = graph.sources(r.key, r.atoms)
        said = {x[2:] for x in sources if x[:2] == "s:"}
        read = sorted({k["key"] for k in graph.flow(r.key).get("keys") or []
                       if k["op"] != "set" and k["key"] in said})
        if not r.failing and read and any(x[:2] == "p:" for x in sources):
            found.add((r.key[0], r.line, read[0]))
    return sorted(found)


def whole_paths(graph: CallGraph) -> CallGraph:
    """The call graph with every library path join cut off from what it joins: its
    `sources` reach a temp dir only through values that are the directory itself
    (``Path(tmp)``, ``str(tmp)``), never through a path inside it (``Path(tmp) / "repo"``,
    ``os.path.join(tmp, "repo")``), whose removal leaves the directory behind."""
    facts: dict[str, JSON] = {}
    for path, info in graph.facts.items():
        functions = info.get("functions") or {}
        cut: dict[str, JSON] = {}
        for qual, function in functions.items():
            sites = (function.get("flow") or {}).get("calls") or []
            joins = [_joins(graph, (path, qual), site) for site in sites]
            if any(joins):
                calls = [{**s, "args": [], "kw": {}, "recv": []} if j else s
                         for s, j in zip(sites, joins, strict=True)]
                cut[qual] = {**function, "flow": {**function["flow"], "calls": calls}}
        facts[path] = {**info, "functions": {**functions, **cut}} if cut else info
    return CallGraph(facts)


def _joins(graph: CallGraph, key: Key, site: JSON) -> bool:
    """A library call (or ``/``) whose value is a path inside its first argument."""
    tail = str(site.get("name") or "").rsplit(".", 1)[-1]
    parts = len(site.get("args") or []) + len(site.get("recv") or [])
    return graph.resolve(key, site) is None and (
        tail in ("/", "joinpath") or (tail in JOINERS and parts >= 2))


def _flat(site: JSON) -> list[str]:
    """Every atom a call passes, positional and keyword."""
    return _payload(site, tuple(site.get("kw") or ()))


def clones(facts: dict[str, JSON], repo: Path | None, graph: CallGraph) -> list[Clone]:
    """Every clone, direct or through a wrapper, with its sandbox proof."""
    direct = calls_of(facts, "clone")
    seen = {(p, c["line"]) for p, c in direct}
    every = [*direct, *[(p, c) for p, c in wrapper_clones(graph, facts, repo)
                        if (p, c["line"]) not in seen]]
    out = []
    for path, call in sorted(every, key=lambda pc: (pc[0], pc[1]["line"])):
        key = (path, call["func"])
        proof = prove(graph, repo, key, _destination(graph, key, call))
        lines = proof.lines
        if not lines and call.get("tempdir"):
            lines = [f"{path}:{call['line']}: (inside ``with tempfile.TemporaryDirectory()``)"]
        clone_line = line_at(repo, path, call["line"])
        out.append(Clone(path, call, [*lines, clone_line] if lines else [], proof.temps))
    return out


KEPT_ALIVE = ("keeps the TemporaryDirectory object in a module-level container or name, so "
              "it is removed only when something takes it out and cleans it up, or at "
              "interpreter exit")
IDLE_RELEASE = "cleans it up in a function that no code runs, or only a model's tool (@tool)"


def held(facts: dict[str, JSON], graph: CallGraph, repo: Path | None, made: tuple[str, int],
         stored: JSON | None) -> tuple[list[str], list[tuple[str, str]]]:
    """For the ``TemporaryDirectory`` made at `made` when it is kept alive in a module-level
    container (`stored`, its ``temp_kept`` fact: `lifetime.kept_alive`): the quoted
    ``.cleanup()`` calls of that container's objects (``temp_released``) that run
    (`_runs`), and each line that keeps it or cleans it up where that does not run, quoted
    with what it does."""
    if not stored:
        return [], []
    runs: list[str] = []
    idle: list[tuple[str, str]] = [(line_at(repo, made[0], int(stored["kept"])), KEPT_ALIVE)]
    for release in facts.get(made[0], {}).get("temp_released") or []:
        if release["container"] == stored.get("container"):
            quote = line_at(repo, made[0], int(release["line"]))
            if _runs(facts, graph, repo, (made[0], release["func"])):
                runs.append(quote)
            else:
                idle.append((quote, IDLE_RELEASE))
    return runs, idle


def _runs(facts: dict[str, JSON], graph: CallGraph, repo: Path | None, key: Key,
          depth: int = 0) -> bool:
    """True when some function calls `key` outside an ``except`` handler and itself runs:
    it is no model's tool (``@tool`` runs only if a model asks for it) and either a running
    function calls it, a few callers up, or nothing calls it but something names it (a
    graph node, a callback: `named_nowhere`)."""
    for caller, index in graph.callers(key):
        decorators = (graph.functions.get(caller) or {}).get("decorators") or []
        if caller == key or graph.sites(caller)[index].get("handler") or any(
                str(d).rsplit(".", 1)[-1].split("(")[0] == "tool" for d in decorators):
            continue
        if not graph.callers(caller):
            if not named_nowhere(facts, [caller], repo):
                return True
        elif depth < MAX_CALLER_DEPTH and _runs(facts, graph, repo, caller, depth + 1):
            return True
    return False
