"""A clone function that, for a local path, skips the clone and hands back the path itself.

``if Path(url).exists(): return Path(url)`` before ``git clone url tmp``: given a directory
(or a ``file://`` URL), the tool analyses that directory in place, not a copy in a temporary
directory. The branch runs no clone and writes nothing, so it is no clone into the working
directory (the rubric's failure); it is said, with its lines, as information
(``safety.local_path``, neutral).

A branch counts when, before the clone call and outside the ``if`` that holds it, an
``if`` tests that a value built from the clone's URL exists (``.exists()``, ``.is_dir()``,
``os.path.exists``/``isdir``) and its body returns a value built from the URL. The URL is
GitPython's ``clone_from`` first argument, or the first item of the git command list after
``clone`` that is neither a literal nor an option's value (``--depth``, ``str(depth)``).
"""

from __future__ import annotations

import ast
from pathlib import Path

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


def local_path_finding(clones: list[tuple[str, JSON]], repo: Path | None) -> Finding:
    """``safety.local_path``: the branches of the clone functions that hand back a local path
    in place of a clone (see the module docstring), quoted."""
    found: list[tuple[str, JSON]] = []
    for path, call in clones:
        tree = parse_file(str(repo / path)) if repo is not None else None
        found += [(path, {"line": n, "func": call["func"], "snippet": quote})
                  for n, quote in sorted(_branches(tree, int(call["line"]), repo, path)
                                         if tree is not None else [])]
    where = ", ".join(f"{p}:{c['line']}" for p, c in found[:4])
    return call_finding(
        "safety.local_path", "The clone function uses a local path in place of a clone",
        bool(found), "neutral", found,
        (f"For a local path the clone function skips the clone and hands back the path "
         f"itself as the repository ({where}): that directory is read in place, not copied "
         "into a temporary directory. The branch runs no clone and writes nothing, so it is "
         "no clone into the working directory." if found else
         "No clone function hands back a local path in place of a clone."), confidence=0.7)


def _branches(tree: ast.Module, line: int, repo: Path | None, path: str
              ) -> list[tuple[int, str]]:
    """(line, quoted test and return) of each branch of the function around the clone call
    at `line` that returns a value built from the URL when it names an existing path."""
    spans = [f for _q, f in function_defs(tree) if f.lineno <= line <= (f.end_lineno or 0)]
    if not spans:
        return []
    func = max(spans, key=lambda f: f.lineno)
    names = _from_url(func, _url_names(func, line))
    out: list[tuple[int, str]] = []
    for node in ast.walk(func):
        if not isinstance(node, ast.If) or node.lineno >= line or \
                node.lineno <= line <= (node.end_lineno or 0) or not _tests_exists(node.test,
                                                                                  names):
            continue
        back = [r for r in own_nodes(node.body) if isinstance(r, ast.Return)
                and r.value is not None and _path_value(r.value, names)]
        if back:
            out.append((node.lineno, " ... ".join(line_at(repo, path, n).split(": ", 1)[-1]
                                                  for n in (node.lineno, back[0].lineno))))
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


def _tests_exists(test: ast.expr, names: set[str]) -> bool:
    """The test calls an existence check on a value built from `names`."""
    return any(isinstance(n, ast.Call) and (dotted(n.func) or "").rsplit(".", 1)[-1] in EXISTS
               and _reads(n, names) for n in ast.walk(test))


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
