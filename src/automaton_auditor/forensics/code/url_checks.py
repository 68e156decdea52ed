"""Tests of the repository URL that a clone function makes before it clones.

Only a test of the value the clone is given counts: the names in the clone call's arguments
(and, through the function's assignments, what they were built from: ``cmd = ["git",
"clone", url, dest]``) tested on a line before the clone by a pattern match (``re.match(p,
url)``, ``PATTERN.fullmatch(url)``), a parse of the URL (``urlparse(url)``), a prefix test
(``url.startswith("https://")``), a membership test (``host in ALLOWED``, ``"github.com" in
url``) or a call of a checker with the URL (``validate_url(url)``, or a function of the
same file whose body makes such a test of it). A word in the function
(``repo.head.is_valid()`` after the clone, a docstring saying "valid URL") checks nothing.

`validators`: functions named like a URL validator (``validate_url``, ``sanitize_repo``) that
make such a test of one of their parameters. A function named so that only truncates or
strips its input (a log callback's ``_sanitize_inputs``, ``url.replace(";", "")``) validates
nothing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON, dotted, function_defs
from automaton_auditor.forensics.code.source import line_at, parse_file

TESTS = frozenset({"urlparse", "urlsplit", "match", "fullmatch", "search", "startswith"})
OWNERS = frozenset({"self", "cls"})  # the object, not a value the clone is given
CHECKER = re.compile(r"valid|saniti[sz]e|verify|check", re.I)
VALIDATOR = re.compile(r"valid\w*(url|repo|target)|(url|repo|target)\w*valid|saniti[sz]e",
                       re.I)


def url_tests(clones: list[tuple[str, JSON]], repo: Path | None) -> list[tuple[str, JSON]]:
    """(path, {line, func, snippet}) of each test of a clone's URL made before the clone in
    the clone's function (or its class's constructor), first test per clone call."""
    found: list[tuple[str, JSON]] = []
    for path, call in clones:
        line = _first_test(repo, path, int(call["line"])) if repo is not None else 0
        if line:
            code = line_at(repo, path, line).split(": ", 1)[-1]
            found.append((path, {"line": line, "func": call["func"], "snippet": code}))
    return found


def validators(facts: dict[str, JSON], repo: Path | None) -> list[str]:
    """``path:line`` of the functions named like a URL validator whose body tests one of
    their parameters (see the module docstring)."""
    found: list[str] = []
    for path in sorted(facts) if repo is not None else []:
        named = {q for q in facts[path].get("functions") or {}
                 if VALIDATOR.search(q.rsplit(".", 1)[-1])}
        tree = parse_file(str(repo / path)) if named and repo is not None else None
        for qual, fn in function_defs(tree) if tree is not None else ():
            params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args,
                                      *fn.args.kwonlyargs]} - OWNERS
            decided = _decided(fn)
            if qual in named and any(_tests(n, params, decided) for n in ast.walk(fn)):
                found.append(f"{path}:{fn.lineno}")
    return sorted(found)


def _first_test(repo: Path, path: str, line: int) -> int:
    """The first line of the function around the clone call at `line` of `path` that tests
    a value the clone is given, before that call; 0 when there is none."""
    tree = parse_file(str(repo / path))
    spans = [n for _q, n in function_defs(tree)
             if n.lineno <= line <= (n.end_lineno or 0)] if tree else []
    if not spans:
        return 0
    func = max(spans, key=lambda n: n.lineno)  # the innermost function
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call) and n.lineno == line]
    given = _given(func, {name for c in calls for a in _url_args(c) for name in _names(a)})
    helpers = {n.name: n for _q, n in function_defs(tree)} if tree else {}
    decided = _decided(func)
    tests = [n.lineno for n in ast.walk(func) if isinstance(n, ast.expr) and n.lineno < line
             and (_tests(n, given, decided) or _helper_tests(n, given, helpers))]
    return min(tests, default=0) or _constructor_test(tree, func, given, helpers)


def _constructor_test(tree: ast.AST | None, method: ast.AST, given: set[str],
                      helpers: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> int:
    """A clone of ``self.repo_url`` in a method: the first test the class's ``__init__``
    makes of the value it stores there (``if not is_safe_url(repo_url): raise``), which
    runs before any method can clone; 0 when there is none."""
    owner = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
                  and method in c.body), None) if tree is not None else None
    init = next((f for f in owner.body if isinstance(f, ast.FunctionDef)
                 and f.name == "__init__"), None) if owner is not None else None
    attrs = {g for g in given if g.startswith("self.")}
    if init is None or not attrs:
        return 0
    stored = _given(init, attrs)
    decided = _decided(init)
    tests = [n.lineno for n in ast.walk(init) if isinstance(n, ast.expr)
             and (_tests(n, stored, decided) or _helper_tests(n, stored, helpers))]
    return min(tests, default=0)


def _decided(func: ast.AST) -> set[int]:
    """Ids of the nodes whose value decides something: inside the test of an ``if``,
    ``while``, ``assert``, conditional expression or comprehension filter, or a returned
    comparison; and the calls whose result is bound to a name read there (``m =
    PATTERN.match(url); if not m: ...``). ``urlparse(url).path`` used for a name decides
    nothing."""
    tests: list[ast.AST] = []
    for node in ast.walk(func):
        if isinstance(node, ast.If | ast.While | ast.Assert | ast.IfExp):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests += node.ifs
        elif isinstance(node, ast.Return) and isinstance(
                node.value, ast.Compare | ast.BoolOp | ast.UnaryOp):
            tests.append(node.value)
    inside = {id(n) for t in tests for n in ast.walk(t)}
    read = {n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name)}
    inside |= {id(n.value) for n in ast.walk(func) if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id in read for t in n.targets)}
    return inside


def _helper_tests(node: ast.expr, given: set[str],
                  helpers: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> bool:
    """A call of a function of the same file with the URL whose own body tests that
    parameter (``def _is_repository_url(value): ... urlparse(value) ...``)."""
    if not isinstance(node, ast.Call):
        return False
    helper = helpers.get((dotted(node.func) or "").rsplit(".", 1)[-1])
    if helper is None:
        return False
    params = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]
              if a.arg not in OWNERS]
    passed = {params[i] for i, a in enumerate(node.args) if i < len(params)
              and _names(a) & given}
    passed |= {k.arg for k in node.keywords if k.arg and _names(k.value) & given}
    decided = _decided(helper)
    return bool(passed) and any(_tests(n, passed, decided) for n in ast.walk(helper))


def _url_args(call: ast.Call) -> list[ast.expr]:
    """The arguments that may carry the URL: GitPython's ``clone_from(url, to_path)`` says
    which one; a command list holds it among others."""
    if (dotted(call.func) or "").endswith("clone_from"):
        return [*call.args[:1], *(k.value for k in call.keywords if k.arg == "url")]
    return [*call.args, *(k.value for k in call.keywords)]


def _names(node: ast.AST) -> set[str]:
    """Dotted names read in `node` (``url``, ``self.repo_url``)."""
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name | ast.Attribute) and (name := dotted(sub)):
            out.add(name)
    return out - OWNERS


def _given(func: ast.AST, names: set[str]) -> set[str]:
    """`names` and the names they were built from by the function's assignments."""
    # ``cmd: list[str] = [...]`` and ``cmd += [url, tmp]`` build the command too
    binds = [(t, n.value) for n in ast.walk(func) if isinstance(n, ast.Assign)
             for t in n.targets] + [(n.target, n.value) for n in ast.walk(func) if isinstance(
                 n, ast.AugAssign | ast.AnnAssign) and n.value is not None]
    for _ in range(3):  # a few steps: ``url = repo_url.strip(); cmd = [..., url]``
        more = {name for t, value in binds if (dotted(t) or "") in names
                for name in _names(value)} - names
        if not more:
            break
        names = names | more
    return names


def _tests(node: ast.AST, given: set[str], decided: set[int]) -> bool:
    """True when `node` tests a name of `given` (`url_tests`' kinds of test; a pattern
    match, parse or prefix test only where its result decides something: `_decided`)."""
    if isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn)
                                             for op in node.ops):
        return bool(_names(node) & given)
    if not isinstance(node, ast.Call):
        return False
    name = dotted(node.func) or ""
    tail = name.rsplit(".", 1)[-1]
    args = {n for a in [*node.args, *(k.value for k in node.keywords)] for n in _names(a)}
    receiver = name.rsplit(".", 1)[0] if "." in name else ""
    if tail in TESTS:
        return id(node) in decided and (
            bool(args & given) or (tail == "startswith" and receiver in given))
    return bool(CHECKER.search(tail)) and bool(args & given)
