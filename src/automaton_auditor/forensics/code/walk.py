"""Per-file AST facts: one parse, one iterative walk, a JSON-serialisable result.

The result depends only on the file's bytes and path, so it is cached by git blob id.
The walk uses an explicit stack (``ast.NodeVisitor`` hits RecursionError on deeply nested
real files). Only code counts: docstrings and comments never produce a fact.
"""

from __future__ import annotations

import ast
import gc
import re
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.auth import AUTH, auth_tests
from automaton_auditor.forensics.code.calls import JUDGE_KEYS, CallCollector
from automaton_auditor.forensics.code.common import JSON, dotted, resolve, str_value
from automaton_auditor.forensics.code.deadlines import WAITED, wait_bounded
from automaton_auditor.forensics.code.dispatch import module_tables
from automaton_auditor.forensics.code.failures import error_checks
from automaton_auditor.forensics.code.interp import Interp, default_flags
from automaton_auditor.forensics.code.lambdas import picked_lambdas
from automaton_auditor.forensics.code.lifetime import gone_on_return, kept_alive, released
from automaton_auditor.forensics.code.liveness import name_references
from automaton_auditor.forensics.code.parsers import schema_parses
from automaton_auditor.safefile import read_bounded

FACTS_VERSION = 147
MAX_FILE_BYTES = 1_000_000
# A file containing none of these byte strings is not parsed: it cannot hold a fact we
# report. Plain substring tests: a regex alternation is five times slower on big trees.
TRIGGERS: tuple[bytes, ...] = (
    b"StateGraph", b"add_node", b"add_edge", b"add_conditional", b"add_sequence",
    b"set_entry_point", b"BaseModel", b"TypedDict", b"popen", b"subprocess",
    b"shell=", b"shell =", b"tempfile", b"mkdtemp", b"clone",
    b"structured_output", b"bind_tools", b"Send(", b"Command(", b"rosecutor", b"efense",
    b"efence", b"echLead", b"echlead", b"ech_lead", b"ech_Lead", b"retry",
    b"Retry", b"retries", b"backoff", b"ustice", b"hief", b"ynthes", b"ersona", b"udge",
    b"OutputParser", b"ToolsParser", b"iter_commits",
    b"uthenticat", b"ermission denied")  # a helper telling git's auth failures apart


# ``eval(``/``exec(``/``system(`` also end many method names (``_eval(``, ``solve_system(``,
# ``def eval(cls)``):
# confirmed by a regex only when the cheap test hits.
CALL_NEEDLES = (b"eval(", b"exec(", b"system(")
BARE_CALL = re.compile(rb"(?<![\w.])(?<!def )(?:eval|exec|system)\(|os\.system\(")


# An attempt counter (a retry loop) rather than the word in prose: ``for attempt in``,
# ``attempts = 3``, ``attempt += 1``.
ATTEMPT = re.compile(rb"\bfor\s+_?attempts?\w*\s+in\b|\b\w*attempts?\w*\s*(\+=|=[^=])")


def repo_bytes(repo: Path, path: str) -> bytes | None:
    """A repository file's bytes, through the one reader of a repository's files (a regular
    file inside it, at most `MAX_FILE_BYTES`); None when absent, unreadable or refused."""
    try:
        return read_bounded(repo / path, MAX_FILE_BYTES, root=repo)
    except (OSError, ValueError):  # ValueError: refused (UnsafeFile)
        return None


def has_trigger(data: bytes) -> bool:
    """True when the file mentions anything a fact could rest on."""
    if any(needle in data for needle in TRIGGERS):
        return True
    if any(n in data for n in CALL_NEEDLES) and BARE_CALL.search(data) is not None:
        return True
    return b"attempt" in data and ATTEMPT.search(data) is not None


def extract(path: str, data: bytes, force: bool = False) -> JSON:
    """All facts of one Python file (or ``{"skipped": reason}``); `force` parses even a
    file without trigger bytes (a module of constants the graph code imports)."""
    if len(data) > MAX_FILE_BYTES:
        return {"error": f"larger than {MAX_FILE_BYTES} bytes, not parsed"}
    if not force and not has_trigger(data):
        return {"skipped": "no trigger"}
    try:
        text = data.decode("utf-8-sig")  # a BOM is legal in source files
    except UnicodeDecodeError:
        return {"error": "not valid UTF-8"}
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        return {"error": f"syntax error line {exc.lineno}: {exc.msg}"}
    except (ValueError, RecursionError, MemoryError) as exc:
        return {"error": f"unparsable: {type(exc).__name__}"}
    try:
        return _facts(path, text, tree)
    except RecursionError:  # parses, but nests deeper than the walk's readers recurse
        return {"error": "nested deeper than the analysis follows, not analysed"}


def _facts(path: str, text: str, tree: ast.Module) -> JSON:
    lines = text.splitlines()
    imports = collect_imports(tree)
    consts = module_consts(tree)
    collector = CallCollector(path, lines, imports, consts)
    # a loop over a module-level table of rules calls what the table holds (`dispatch`)
    collector.flow.tables = collector.logic.tables = module_tables(tree)
    collector.lambdas = picked_lambdas(tree) if "lambda" in text else {}
    collector.walk(tree)
    if "subprocess" in text or "clone_from" in text:
        seen, dropped = error_checks(tree, imports)
        for call in collector.calls:
            if call["kind"] in ("process", "clone"):
                # the line that shows the call's failure is seen (0: it passes unnoticed)
                call["checked"] = seen.get(call["line"], 0)
                if call["line"] in dropped:  # the except that swallows its error
                    call["swallowed"] = dropped[call["line"]]
    bounded = wait_bounded(tree, imports) if "wait_for" in text else []
    for call in collector.calls:
        if call["kind"] in ("process", "clone") and call["line"] in bounded:
            call["timeout"] = call.get("timeout") or WAITED  # ``asyncio.wait_for(...)``
    facts: JSON = {
        "imports": imports,
        "consts": consts,
        "classes": collector.classes,
        "functions": collector.functions,
        # a schema parser applied to a reply (`parsers`); the walk only runs when one is named
        "calls": collector.calls + (schema_parses(tree, imports, lines)
                                    if "Parser" in text else []),
        "strings": collector.strings,
        "objects": module_objects(tree),
        "applied": module_applied(tree, imports),
        "judge_values": sorted(collector.judge_values | _literal_judges(collector.classes)),
        "refs": _references(tree),
    }
    if bounded:
        facts["wait_bounded"] = bounded
    if "TemporaryDirectory" in text:
        facts["temp_gone"] = gone_on_return(tree, imports)
        facts["temp_kept"] = kept_alive(tree, imports)
        facts["temp_released"] = released(tree)
    if "clone" in text or AUTH.search(text):  # a helper the clone hands its failure to
        facts["auth_tests"], facts["error_reports"], facts["auth_blind"] = auth_tests(
            tree, consts, imports)
    if "add_node" in text or "add_edge" in text or "StateGraph" in text:
        facts.update(graph_ops(path, lines, tree, imports, consts))
    return facts


def _references(tree: ast.Module) -> dict[str, list[str]]:
    """Names each function reads, so what the graph runs can be followed (`liveness`); none
    for a file nested too deep to walk recursively (its functions are then followed only
    through their calls)."""
    try:
        return {q: sorted(n) for q, n in sorted(name_references(tree).items())}
    except RecursionError:
        return {}


def _literal_judges(classes: list[JSON]) -> set[str]:
    """Values of ``judge: Literal["Prosecutor", ...]`` fields of the file's classes."""
    return {value for cls in classes for field in cls["fields"]
            if field["name"] in JUDGE_KEYS and "Literal[" in field["annotation"]
            for value in re.findall(r"[\"']([^\"']{1,40})[\"']", field["annotation"])}


def collect_imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> qualified name for every import in the file (any depth)."""
    imports: dict[str, str] = {}
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                imports[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = f"{module}.{alias.name}"
        elif isinstance(node, ast.Module | ast.If | ast.Try | ast.FunctionDef |
                        ast.AsyncFunctionDef | ast.ClassDef | ast.With):
            stack.extend(ast.iter_child_nodes(node))
    return imports


def _const_value(node: ast.AST) -> Any:
    text = str_value(node) if isinstance(node, ast.Constant) else None
    if text is not None:
        return text
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        values = [_const_value(e) for e in node.elts]
        return values if all(isinstance(v, str) for v in values) else None
    return None


def module_objects(tree: ast.Module) -> dict[str, str]:
    """Module-level ``name = Callee(...)`` (``judge = ChiefJustice()``): name -> callee."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            callee = dotted(node.value.func)
            for target in node.targets:
                if isinstance(target, ast.Name) and callee:
                    found[target.id] = callee
    return found


def module_applied(tree: ast.Module, imports: dict[str, str]) -> dict[str, JSON]:
    """Module-level ``name = deco(fn)`` / ``name = deco(arg)(fn)`` (a decorator applied by
    hand, ``timed = timeout_wrapper(900)(node)``): name -> ``{"fn": fn as written,
    "decos": [{"name": deco through the imports, "called": deco(arg) is the decorator}]}``,
    outermost first."""
    found: dict[str, JSON] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                isinstance(node.targets[0], ast.Name)):
            continue
        value, decos = node.value, []
        while isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
            func = value.func
            called = isinstance(func, ast.Call)
            name = dotted(func.func if isinstance(func, ast.Call) else func)
            if name is None:
                break
            decos.append({"name": resolve(name, imports) or name, "called": called})
            value = value.args[0]
        fn = dotted(value)
        if decos and fn is not None:
            found[node.targets[0].id] = {"fn": fn, "decos": decos}
    return found


def module_consts(tree: ast.Module) -> dict[str, Any]:
    """Module and class level string constants (``REPO = "repo"``, ``Nodes.REPO``)."""
    consts: dict[str, Any] = {}
    for node in tree.body:
        bodies = [(node, "")]
        if isinstance(node, ast.ClassDef):
            bodies = [(child, f"{node.name}.") for child in node.body]
        for stmt, prefix in bodies:
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, _const_value(stmt.value)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], _const_value(stmt.value)
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    consts[prefix + target.id] = value
    return consts


def graph_ops(path: str, lines: list[str], tree: ast.Module, imports: dict[str, str],
              consts: dict[str, Any]) -> JSON:
    """Builders and builder method calls, in every scope of the file."""
    has_langgraph = any(v.startswith("langgraph") for v in imports.values())
    interp = Interp(path, lines, imports, has_langgraph, consts)
    interp.run_scope("<module>", tree.body, {})
    stack: list[tuple[ast.AST, str]] = [(n, "") for n in tree.body]
    while stack:
        node, prefix = stack.pop()
        if isinstance(node, ast.ClassDef):
            stack.extend((child, f"{prefix}{node.name}.") for child in node.body)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scope = f"{prefix}{node.name}"
            interp.run_scope(scope, node.body, default_flags(node))
            stack.extend((child, f"{scope}.") for child in node.body
                         if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))
    return {"builders": interp.builders, "ops": interp.ops}


def read_facts(repo: Path, path: str, force: bool = False) -> JSON:
    """Facts of one file of the work tree (never following a symlink)."""
    target = repo / path
    try:
        if target.is_symlink() or not target.is_file():
            return {"error": "not a regular file"}
        if target.stat().st_size > MAX_FILE_BYTES:
            return {"error": f"larger than {MAX_FILE_BYTES} bytes, not parsed"}
        return extract(path, target.read_bytes(), force)
    except OSError as exc:
        return {"error": f"unreadable: {exc.strerror}"}


def parse_chunk(repo: str, paths: list[str]) -> dict[str, JSON]:
    """Facts for several files; runs in worker processes, so it imports only the stdlib."""
    enabled = gc.isenabled()
    gc.disable()  # parsing allocates millions of small objects; cycle GC only slows it down
    try:
        return {path: read_facts(Path(repo), path) for path in paths}
    finally:
        if enabled:
            gc.enable()
