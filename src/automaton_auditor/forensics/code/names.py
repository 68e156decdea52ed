"""The names the repository's Python code uses, for reading the report's statements about
what its code calls (`forensics.contradictions`).

Two views: every identifier-like word of every tracked Python file (a regex over the bytes,
comments and strings included, so "X appears nowhere in the code" is a safe statement), and,
for the audited files, the module-qualified names each one uses with imports resolved
(``from tempfile import mkdtemp; mkdtemp()`` uses ``tempfile.mkdtemp``) and the line of its
first use; and the text of the audited files' strings and of the prompt files, normalised, so
a quote the report gives of a persona's prompt can be looked up. Files are parsed, never
imported or run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from automaton_auditor.forensics.code.analyze import MAX_PYTHON_FILES, python_files
from automaton_auditor.forensics.code.common import parse_module
from automaton_auditor.forensics.code.output_paths import MAX_TEMPLATES, output_templates
from automaton_auditor.forensics.code.personas import is_prompt_file
from automaton_auditor.forensics.code.walk import collect_imports, repo_bytes
from automaton_auditor.state import CodeNames

# the code analysis's own cap: a repository this large is scanned in part (fewer names, fewer
# contradictions), and the analysis already warns so
MAX_FILES = MAX_PYTHON_FILES
MAX_NAMES = 400  # module-qualified names kept per file
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
MAX_STRING_CHARS = 4_000_000  # more string text than this: no quote is looked up
FIELD = "\u00a7"  # a part of a string only known at run time (a template's field)
# Names of retries in any form (a RetryPolicy on a node, a max_attempts setting, tenacity)
RETRY_NAME = re.compile(r"retr(?:y|ies)|attempt|backoff|tenacity", re.IGNORECASE)


def _dotted(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def module_names(text: str) -> dict[str, str]:
    """The module-qualified names a file's code uses (imports resolved), each with its first
    use as "line: source text"; an empty map for a file that does not parse."""
    tree = parse_module(text)
    return _used(tree, text) if tree is not None else {}


def normalised(text: str) -> str:
    """Text as lower-case words joined by one space, a template's field (``{name}``, ``%s``)
    as `FIELD`: how a quote and the code's strings are compared."""
    text = re.sub(r"\{[^{}\s]*\}|%(?:\([a-z_]+\))?[sdr]", f" {FIELD} ", text)
    return " ".join(re.findall(rf"[a-z0-9]+|{FIELD}", text.lower()))


def _joined(node: ast.expr) -> str | None:
    """The text of a string expression: a constant, an f-string or a sum of strings, each
    part computed at run time as `FIELD`."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str)
                       else f" {FIELD} " for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _joined(node.left), _joined(node.right)
        if left is None and right is None:
            return None
        return f"{left if left is not None else FIELD} {right if right is not None else FIELD}"
    return None


def string_texts(tree: ast.Module) -> set[str]:
    """The normalised text of every string expression in a module (a sum or an f-string read
    whole, not part by part), when it holds at least two words."""
    out: set[str] = set()
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        text = _joined(node) if isinstance(node, ast.expr) else None
        if text is None:
            todo.extend(ast.iter_child_nodes(node))
        elif len((words := normalised(text)).split()) >= 2:
            out.add(words)
    return out


def _read_tree(tree: ast.Module, text: str, path: str
               ) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """A parsed file's qualified names, output-path templates and string texts."""
    return (_used(tree, text), output_templates(tree, path, text.splitlines()),
            string_texts(tree))


def _used(tree: ast.Module, text: str) -> dict[str, str]:
    imports = collect_imports(tree)
    lines = text.splitlines()
    used: dict[str, tuple[int, str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute | ast.Name) or isinstance(node.ctx, ast.Store):
            continue
        parts = _dotted(node)
        if not parts or parts[0] not in imports or imports[parts[0]].startswith("."):
            continue
        name = ".".join([imports[parts[0]], *parts[1:]])
        line = getattr(node, "lineno", 0)
        if "." in name and (name not in used or line < used[name][0]):
            used[name] = (line, lines[line - 1].strip()[:160] if 0 < line <= len(lines) else "")
    first = sorted(used.items(), key=lambda item: (item[1][0], item[0]))[:MAX_NAMES]
    return {name: f"{line}: {source}" for name, (line, source) in sorted(first)}


def code_names(repo: Path, files: list[str]) -> CodeNames:
    """The identifiers of every tracked Python file (and notebook), the module-qualified
    names each audited file uses (`python_files`) and the text of their strings and of the
    prompt files (`personas.is_prompt_file`), read from the work tree at `repo`."""
    words: set[str] = set()
    modules: dict[str, dict[str, str]] = {}
    strings: set[str] = set()
    empty: list[str] = []
    outputs: dict[str, str] = {}
    retry: set[str] = set()
    audited = set(python_files(files))
    # notebooks hold Python too: a class they name is named by the code
    for path in sorted(f for f in files if f.endswith((".py", ".ipynb")))[:MAX_FILES]:
        data = repo_bytes(repo, path)
        if data is None:
            continue
        own = {w.decode("ascii") for w in _WORD.findall(data)}
        words |= own
        if path not in audited:
            continue
        text = data.decode("utf-8-sig", "replace")
        tree = parse_module(text)
        try:
            names, found, texts = _read_tree(tree, text, path) if tree else ({}, {}, set())
        except RecursionError:  # nested deeper than the readers recurse: read as unparsed
            tree, names, found, texts = None, {}, {}, set()
        # what the code names, not its comments ("# 1. Attempt structured output")
        retry |= {w for w in (code_identifiers(tree) if tree is not None else own)
                  if RETRY_NAME.search(w)}
        if tree is not None and holds_no_code(tree) and not path.endswith("__init__.py"):
            empty.append(path)
        if names:
            modules[path] = names
        strings |= texts
        outputs |= {k: v for k, v in found.items() if k not in outputs}
    for path in [f for f in files if is_prompt_file(f)][:MAX_FILES]:
        data = repo_bytes(repo, path)
        strings |= {normalised(data.decode("utf-8", "replace"))} if data else set()
    python = [f for f in files if f.endswith((".py", ".ipynb"))]
    kept = sum(len(s) for s in strings) <= MAX_STRING_CHARS and len(python) <= MAX_FILES
    return CodeNames(identifiers=sorted(words), modules=modules, retry_names=sorted(retry),
                     strings=sorted(strings) if kept else None, empty=empty,
                     outputs=dict(list(outputs.items())[:MAX_TEMPLATES]))


def code_identifiers(tree: ast.AST) -> set[str]:
    """The names the code itself writes: variables, attributes, definitions, parameters,
    keywords and imports (no comment, no string)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            found.add(node.arg)
        elif isinstance(node, ast.alias):
            found.update(node.name.split(".") + ([node.asname] if node.asname else []))
    return found


def holds_no_code(tree: ast.Module) -> bool:
    """True for a module with no statement but a docstring, ``pass`` or ``...``."""
    return all(isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(
        stmt.value, ast.Constant) and isinstance(stmt.value.value, str | type(Ellipsis)))
        for stmt in tree.body)
