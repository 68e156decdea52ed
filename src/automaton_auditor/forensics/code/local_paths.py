"""A local path used in place of a clone: the clone function, or a function that calls it,
skips the clone and takes the path itself as the repository.

``if Path(url).exists(): return Path(url)`` before ``git clone url tmp``, or ``if
os.path.isdir(url): path = url`` with the clone in the ``else``: given a directory (or a
``file://`` URL), the tool analyses that directory in place, not a copy in a temporary
directory. The branch runs no clone and writes nothing, so it is no clone into the working
directory (the rubric's failure); it is said, with its lines, as information
(``safety.local_path``, neutral).

A branch counts when an ``if`` tests that a value built from the clone's URL exists
(``.exists()``, ``.is_dir()``, ``os.path.exists``/``isdir``, or a local bound to such a test)
and either returns a path built from the URL before the clone call, or holds the clone call
in its ``else`` and takes such a path (returns it, or binds a name to it) in its body. The URL
is GitPython's ``clone_from`` first argument, or the first item of the git command list after
``clone`` that is neither a literal nor an option's value (``--depth``, ``str(depth)``); in a
caller, the argument it passes for that parameter.
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.common import JSON, dotted, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.facts import call_finding
from automaton_auditor.forensics.code.source import line_at, parse_file
from automaton_auditor.state import Finding

EXISTS = frozenset({"exists", "isdir", "is_dir"})
# git clone options that take the next item as their value
VALUED = frozenset({"--depth", "-b", "--branch", "-o", "--origin", "-c", "--config",
                    "--filter", "--reference", "--template", "-u", "--upload-pack", "-j",
                    "--jobs", "--shallow-since", "--shallow-exclude", "--separate-git-dir"})


def local_path_finding(clones: list[tuple[str, JSON]], repo: Path | None,
                       graph: CallGraph) -> Finding:
    """``safety.local_path``: the branches of the clone functions, or of the functions that
    call them, that use a local path in place of a clone (see the module docstring),
    quoted."""
    found: list[tuple[str, JSON]] = []
    for path, call in clones:
        for where, func, line, names in _places(repo, graph, path, call):
            found += [(where, {"line": n, "func": call["func"], "snippet": quote})
                      for n, quote in _branches(func, line, names, repo, where)]
    found = sorted({(p, c["line"]): (p, c) for p, c in found}.values(),
                   key=lambda pc: (pc[0], pc[1]["line"]))
    listed = ", ".join(f"{p}:{c['line']}" for p, c in found[:4])
    return call_finding(
        "safety.local_path", "A local path is used in place of a clone", bool(found),
        "neutral", found,
        (f"For a local path the code skips the clone and uses the path itself as the "
         f"repository ({listed}): that directory is read in place, not copied into a "
         "temporary directory. The branch runs no clone and writes nothing, so it is no "
         "clone into the working directory." if found else
         "No code uses a local path in place of a clone."), confidence=0.7)


Place = tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, int, set[str]]


def _places(repo: Path | None, graph: CallGraph, path: str, call: JSON) -> list[Place]:
    """(path, function, line of the call, names of the URL there) for the clone call and
    for each call of its function that hands it the URL."""
    line = int(call["line"])
    func = _around(repo, path, line)
    if func is None:
        return []
    names = _url_names(func, line)
    out: list[Place] = [(path, func, line, names)]
    params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    # the URL's position among the arguments a caller passes (``self`` is not passed)
    index = next((i for i, p in enumerate(params) if p in names), -1) - (
        1 if params[:1] in (["self"], ["cls"]) else 0)
    for caller, site in graph.callers((path, str(call["func"]))) if index >= 0 else []:
        at = int(graph.sites(caller)[site]["line"])
        outer = _around(repo, caller[0], at)
        calls = [n for n in ast.walk(outer) if isinstance(n, ast.Call) and n.lineno == at
                 and index < len(n.args)] if outer is not None else []
        if outer is not None and calls:
            out.append((caller[0], outer, at, _names(calls[0].args[index])))
    return out


def _around(repo: Path | None, path: str, line: int
            ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function of `path` around `line`."""
    tree = parse_file(str(repo / path)) if repo is not None else None
    spans = [f for _q, f in function_defs(tree) if f.lineno <= line <= (f.end_lineno or 0)] \
        if tree is not None else []
    return max(spans, key=lambda f: f.lineno) if spans else None


def _branches(func: ast.AST, line: int, names: set[str], repo: Path | None, path: str
              ) -> list[tuple[int, str]]:
    """(line, quoted test and use) of each branch of `func` that, when a value built from
    the URL (`names`) is an existing path, returns it before the call at `line`, or takes
    it as the repository in the ``if`` whose ``else`` holds that call."""
    names = _from_url(func, names)
    flags = {t.id: n.lineno for n in ast.walk(func) if isinstance(n, ast.Assign)
             and _tests_exists(n.value, names, set()) for t in n.targets
             if isinstance(t, ast.Name)}  # ``is_local = os.path.isdir(url)``
    out: list[tuple[int, str]] = []
    for node in ast.walk(func):
        if not isinstance(node, ast.If) or node.lineno >= line or not _tests_exists(
                node.test, names, set(flags)) or any(  # ``if not exists(...)``: not taken
                isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)
                for n in ast.walk(node.test)):
            continue
        bound = [flags[n.id] for n in ast.walk(node.test) if isinstance(n, ast.Name)
                 and n.id in flags and not _tests_exists(node.test, names, set())][:1]
        around = node.lineno <= line <= (node.end_lineno or 0)
        in_else = around and any(s.lineno <= line <= (s.end_lineno or 0) for s in node.orelse)
        used = [n for n in own_nodes(node.body) if (
            isinstance(n, ast.Return) and n.value is not None and _path_value(n.value, names))
            or (in_else and isinstance(n, ast.Assign) and _path_value(n.value, names))]
        if used and (in_else or not around):
            shown = (*bound, node.lineno, used[0].lineno)  # the flag's binding, if, use
            out.append((shown[0], " ... ".join(line_at(repo, path, n).split(": ", 1)[-1]
                                               for n in shown)))
    return out


def _url_names(func: ast.AST, line: int) -> set[str]:
    """Names the clone call at `line` takes its URL from (see the module docstring)."""
    lists = {t.id: n.value for n in ast.walk(func) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.List)}
    for call in (n for n in ast.walk(func) if isinstance(n, ast.Call) and n.lineno == line):
        if (dotted(call.func) or "").endswith("clone_from") and call.args:
            return _names(call.args[0])
        first = call.args[0] if call.args else None
        seq = lists.get(first.id) if isinstance(first, ast.Name) else first
        items = seq.elts if isinstance(seq, ast.List) else []
        start = next((i + 1 for i, e in enumerate(items) if isinstance(e, ast.Constant)
                      and e.value == "clone"), len(items))
        for i in range(start, len(items)):
            before = items[i - 1]
            if not isinstance(items[i], ast.Constant) and not (
                    isinstance(before, ast.Constant) and before.value in VALUED):
                return _names(items[i])
    return set()


def _from_url(func: ast.AST, names: set[str]) -> set[str]:
    """`names` and the locals bound to an expression of them (``p = Path(url)``)."""
    binds = [(t.id, n.value) for n in ast.walk(func) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)]
    for _ in range(3):
        more = {t for t, value in binds if _reads(value, names)} - names
        if not more:
            break
        names = names | more
    return names


def _tests_exists(test: ast.expr, names: set[str], flags: set[str]) -> bool:
    """The test calls an existence check on a value built from `names`, or reads a local
    bound to one (`flags`)."""
    return any((isinstance(n, ast.Call) and (dotted(n.func) or "").rsplit(".", 1)[-1] in EXISTS
                and _reads(n, names)) or (isinstance(n, ast.Name) and n.id in flags)
               for n in ast.walk(test))


def _path_value(value: ast.expr, names: set[str]) -> bool:
    """A returned path built from `names` (``local``, ``Path(url)``, the first item of a
    returned tuple): not a message that quotes it (``f"no such path: {url}"``)."""
    if isinstance(value, ast.Tuple) and value.elts:
        value = value.elts[0]
    if isinstance(value, ast.Name):
        return value.id in names
    return isinstance(value, ast.Call) and _reads(value, names) and not any(
        isinstance(n, ast.JoinedStr) for n in ast.walk(value))


def _reads(node: ast.AST, names: set[str]) -> bool:
    return bool(_names(node) & names)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
