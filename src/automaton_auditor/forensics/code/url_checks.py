"""Tests of the repository URL that a clone function makes before it clones.

Only a test of the value the clone is given counts: the names in the clone call's arguments
(and, through the function's assignments, what they were built from: ``cmd = ["git",
"clone", url, dest]``) tested on a line before the clone by a pattern match (``re.match(p,
url)``, ``PATTERN.fullmatch(url)``), a parse of the URL (``urlparse(url)``), a prefix test
(``url.startswith("https://")``), a membership test (``host in ALLOWED``, ``"github.com" in
url``) or a call of a checker with the URL (``validate_url(url)``, or a function of the
same file whose body makes such a test of it). A word in the function
(``repo.head.is_valid()`` after the clone, a docstring saying "valid URL") checks nothing.

A test validates the URL only when a bad URL cannot pass it to the clone: a branch of the
``if`` it decides raises, returns, exits or leaves the loop, or the clone sits inside that
``if`` (an ``assert``, a ``while`` or a comprehension filter lets only passing values on; a
checker called on its own is taken to raise). A test whose branches both reach the clone
(one only rewrites the URL: ``if token and url.startswith("https://"): url = ...``)
validates nothing.

`validators`: functions named like a URL validator (``validate_url``, ``sanitize_repo``) that
make such a test of one of their parameters. A function named so that only truncates or
strips its input (a log callback's ``_sanitize_inputs``, ``url.replace(";", "")``) validates
nothing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from automaton_auditor.forensics.code.common import EXIT_CALLS, JSON, dotted, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes
from automaton_auditor.forensics.code.source import line_at, parse_file

TESTS = frozenset({"urlparse", "urlsplit", "match", "fullmatch", "search", "startswith"})
OWNERS = frozenset({"self", "cls"})  # the object, not a value the clone is given
CHECKER = re.compile(r"valid|saniti[sz]e|verify|check", re.I)
VALIDATOR = re.compile(r"valid\w*(url|repo|target)|(url|repo|target)\w*valid|saniti[sz]e",
                       re.I)


def url_tests(clones: list[tuple[str, JSON]], repo: Path | None
              ) -> tuple[list[tuple[str, JSON]], list[tuple[str, JSON]]]:
    """(path, {line, func, snippet}) of each test of a clone's URL made before the clone in
    the clone's function (or its class's constructor) that keeps a bad URL from the clone,
    first test per clone call; and, for the clone calls without one, the first test of the
    URL whose branches all reach the clone (not counted: see the module docstring)."""
    found: list[tuple[str, JSON]] = []
    passing: list[tuple[str, JSON]] = []
    for path, call in clones:
        gate, other = _first_test(repo, path, int(call["line"])) if repo is not None else (0, 0)
        for line, into in ((gate, found), (other if not gate else 0, passing)):
            if line:
                code = line_at(repo, path, line).split(": ", 1)[-1]
                into.append((path, {"line": line, "func": call["func"], "snippet": code}))
    return found, passing


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


def value_tests(func: ast.FunctionDef | ast.AsyncFunctionDef, given: set[str],
                tree: ast.Module) -> list[tuple[ast.expr, list[ast.AST]]]:
    """Each test `url_tests` counts that `func` makes of a name of `given` (a checker of
    `tree`, the function's module, included), with the statements or expressions whose
    test it decides (an ``if``, ``assert`` ...: none for a checker called on its own)."""
    helpers = {n.name: n for _q, n in function_defs(tree)}
    guards = _guards(func)
    return [(n, guards.get(id(n), [])) for n in ast.walk(func) if isinstance(n, ast.expr)
            and (_tests(n, given, set(guards)) or _helper_tests(n, given, helpers))]


def test_kind(node: ast.expr) -> str:
    """What a test of the URL is: "prefix" (``startswith``), "pattern" (a regular
    expression), "parse" (``urlparse``), "membership" (``in``) or "checker" (a function
    that checks it)."""
    if isinstance(node, ast.Compare):
        return "membership"
    tail = (dotted(node.func) or "").rsplit(".", 1)[-1] if isinstance(node, ast.Call) else ""
    return {"startswith": "prefix", "urlparse": "parse", "urlsplit": "parse"}.get(
        tail, "pattern" if tail in TESTS else "checker")


def _first_test(repo: Path, path: str, line: int) -> tuple[int, int]:
    """The first line of the function around the clone call at `line` of `path` that tests
    a value the clone is given before that call and keeps a bad one from it (`_gates`), and
    the first that tests it without (its branches all reach the clone); 0 for none."""
    tree = parse_file(str(repo / path))
    found = _clone_tests(tree, line) if tree is not None else None
    if found is None:
        return 0, 0
    func, given, tests, gates = found
    helpers = {n.name: n for _q, n in function_defs(tree)} if tree else {}
    return (min((n.lineno for n in gates), default=0)
            or _constructor_test(tree, func, given, helpers),
            min((n.lineno for n in tests), default=0))


def _clone_tests(tree: ast.Module, line: int) -> tuple[
        ast.FunctionDef | ast.AsyncFunctionDef, set[str], list[ast.expr], list[ast.expr]] | None:
    """The innermost function around the clone call at `line`, the names the clone is given
    (`_given`), the tests of them before the call, and those of the tests that keep a bad
    value from the clone (`_gates`); None outside a function."""
    spans = [n for _q, n in function_defs(tree) if n.lineno <= line <= (n.end_lineno or 0)]
    if not spans:
        return None
    func = max(spans, key=lambda n: n.lineno)  # the innermost function
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call) and n.lineno == line]
    given = _given(func, {name for c in calls for a in _url_args(c) for name in _names(a)})
    guards = _guards(func)
    tests = [n for n, _g in value_tests(func, given, tree) if n.lineno < line]
    return func, given, tests, [n for n in tests if _gates(n, guards, line)]


def dash_passes(repo: Path | None, path: str, line: int) -> bool:
    """True when the clone call at `line` hands git a command list that carries the URL
    with no ``--`` before it (git reads a URL beginning with '-' as an option) and every
    test of the URL before it that keeps a bad value out is a search for forbidden
    substrings (``".." in url or ";" in url``) none of which is a '-': a value such as
    ``--upload-pack=...`` passes them all. A prefix test, a parse, a pattern or a checker
    function is taken to keep such a value out (not claimed)."""
    tree = parse_file(str(repo / path)) if repo is not None else None
    found = _clone_tests(tree, line) if tree is not None else None
    if found is None:
        return False
    func, given, _tests_seen, gates = found
    if not gates or not _bare_argv(func, line):
        return False
    guards = _guards(func)
    return all(_forbidden(g, given) or _leaves_on_prefix(g, guards.get(id(g), []), line)
               for g in gates)


def _bare_argv(func: ast.AST, line: int) -> bool:
    """The call at `line` is handed a literal command list (``["git", "clone", url, dest]``,
    directly or through a local bound to one) with no ``--`` among its items: git reads
    every item before the URL, and the URL itself, as an option when it begins with '-'."""
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call) and n.lineno == line]
    lists = {t.id: n.value for n in ast.walk(func) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.List)}
    for call in calls:
        first = call.args[0] if call.args else None
        seq = lists.get(first.id) if isinstance(first, ast.Name) else first
        if isinstance(seq, ast.List) and any(isinstance(i, ast.Constant) and i.value == "git"
                                             for i in seq.elts):
            return not any(isinstance(i, ast.Constant) and i.value == "--" for i in seq.elts)
    return False


def _leaves_on_prefix(node: ast.expr, guards: list[ast.AST], line: int) -> bool:
    """A prefix test (``url.startswith("file://")``) that is the test of an ``if``, or one
    operand of its ``or``, whose body leaves with the clone after it: it turns away the
    values that have the prefix and lets every other value (one beginning with '-') on."""
    if not (isinstance(node, ast.Call) and (dotted(node.func) or "").endswith(".startswith")
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                    and not a.value.startswith("-") for a in node.args)):
        return False
    return bool(guards) and all(
        isinstance(g, ast.If) and not g.lineno <= line <= (g.end_lineno or 0)
        and (g.test is node or (isinstance(g.test, ast.BoolOp) and isinstance(g.test.op, ast.Or)
                                and any(v is node for v in g.test.values)))
        and any(_leaves(n) for n in own_nodes(g.body)) for g in guards)


def _forbidden(node: ast.expr, given: set[str]) -> bool:
    """A test that only searches the URL for literal substrings, none of them a '-'
    (``";" in url``, ``any(c in url for c in BAD)`` is not taken: its items are unseen)."""
    parts = node.values if isinstance(node, ast.BoolOp) else [node]
    return all(isinstance(p, ast.Compare) and len(p.ops) == 1
               and isinstance(p.ops[0], ast.In | ast.NotIn)
               and isinstance(p.left, ast.Constant) and isinstance(p.left.value, str)
               and not p.left.value.startswith("-")
               and bool(_names(p.comparators[0]) & given) for p in parts)


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
    guards = _guards(init)
    tests = [n.lineno for n in ast.walk(init) if isinstance(n, ast.expr)
             and (_tests(n, stored, set(guards)) or _helper_tests(n, stored, helpers))
             and _gates(n, guards, 0)]
    return min(tests, default=0)


def _decided(func: ast.AST) -> set[int]:
    """Ids of the nodes whose value decides something: inside the test of an ``if``,
    ``while``, ``assert``, conditional expression or comprehension filter, or a returned
    comparison; and the calls whose result is bound to a name read there (``m =
    PATTERN.match(url); if not m: ...``). ``urlparse(url).path`` used for a name decides
    nothing."""
    return set(_guards(func))


def _guards(func: ast.AST) -> dict[int, list[ast.AST]]:
    """`_decided`'s nodes -> the statements or expressions whose test they decide (the
    ``if``, ``while``, ``assert``, conditional expression, comprehension or ``return``)."""
    tests: list[tuple[ast.AST, ast.AST]] = []  # (guard, its test)
    for node in ast.walk(func):
        if isinstance(node, ast.If | ast.While | ast.Assert | ast.IfExp):
            tests.append((node, node.test))
        elif isinstance(node, ast.comprehension):
            tests += [(node, t) for t in node.ifs]
        elif isinstance(node, ast.Return) and isinstance(
                node.value, ast.Compare | ast.BoolOp | ast.UnaryOp):
            tests.append((node, node.value))
    out: dict[int, list[ast.AST]] = {}
    for guard, test in tests:
        for n in ast.walk(test):
            out.setdefault(id(n), []).append(guard)
    for n in ast.walk(func):
        if isinstance(n, ast.Assign):  # ``m = PATTERN.match(url)``, ``url, err = check(url)``
            names = {t.id for target in n.targets for t in (
                target.elts if isinstance(target, ast.Tuple | ast.List) else [target])
                if isinstance(t, ast.Name)}
            for guard, test in tests:
                if any(isinstance(r, ast.Name) and r.id in names for r in ast.walk(test)):
                    out.setdefault(id(n.value), []).append(guard)
    return out


def _stops(guard: ast.AST, line: int) -> bool:
    """A branch of `guard` keeps the URL from the clone at `line` (0: a clone elsewhere):
    one of its branches raises, returns, exits or leaves the loop, or the clone sits inside
    it (only the passing branch clones); a loop, assertion or comprehension filter lets
    only passing values on. An ``if`` whose branches both reach the clone (one only
    rewrites the URL: ``if token and url.startswith("https://"): url = with_token(url)``)
    validates nothing."""
    if isinstance(guard, ast.If | ast.IfExp):
        inside = guard.lineno <= line <= (guard.end_lineno or 0)
        branches = [guard.body, guard.orelse] if isinstance(guard, ast.If) else []
        return inside or any(_leaves(n) for b in branches for n in own_nodes(b))
    return True


def _leaves(node: ast.AST) -> bool:
    """`node` leaves the block: a raise, return, ``continue``, ``break`` or an exit."""
    if isinstance(node, ast.Call):
        return (dotted(node.func) or "").rsplit(".", 1)[-1] in EXIT_CALLS
    return isinstance(node, ast.Raise | ast.Return | ast.Continue | ast.Break)


def _gates(node: ast.AST, guards: dict[int, list[ast.AST]], line: int) -> bool:
    """A test node of the clone's function keeps a bad URL from the clone at `line`: a
    guard it decides stops (`_stops`); a checker called on its own (``validate_url(url)``)
    is taken to raise."""
    found = guards.get(id(node))
    if not found:
        return isinstance(node, ast.Call)
    return any(_stops(g, line) for g in found)


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
