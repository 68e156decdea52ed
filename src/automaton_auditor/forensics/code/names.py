"""The names the repository's Python code uses, for reading the report's statements about
what its code calls (`forensics.contradictions`).

Two views: every identifier-like word of every tracked Python file (a regex over the bytes,
comments and strings included, so "X appears nowhere in the code" is a safe statement), and,
for the audited files, the module-qualified names each one uses with imports resolved
(``from tempfile import mkdtemp; mkdtemp()`` uses ``tempfile.mkdtemp``) and the line of its
first use. Files are parsed, never imported or run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from automaton_auditor.forensics.code.analyze import python_files
from automaton_auditor.forensics.code.walk import MAX_FILE_BYTES, collect_imports
from automaton_auditor.safefile import read_bounded
from automaton_auditor.state import CodeNames

MAX_FILES = 3000  # a repository this large is scanned in part: fewer names, fewer contradictions
MAX_NAMES = 400  # module-qualified names kept per file
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def _read(repo: Path, path: str) -> bytes | None:
    try:  # the repository's one reader: a regular file inside it, bounded
        return read_bounded(repo / path, MAX_FILE_BYTES, root=repo)
    except (OSError, ValueError):  # unreadable, or refused (UnsafeFile)
        return None


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
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
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
    """The identifiers of every tracked Python file (and notebook) and the module-qualified
    names each audited file uses (`python_files`), read from the work tree at `repo`."""
    words: set[str] = set()
    modules: dict[str, dict[str, str]] = {}
    audited = set(python_files(files))
    # notebooks hold Python too: a class they name is named by the code
    for path in sorted(f for f in files if f.endswith((".py", ".ipynb")))[:MAX_FILES]:
        data = _read(repo, path)
        if data is None:
            continue
        words.update(w.decode("ascii") for w in _WORD.findall(data))
        if path in audited:
            names = module_names(data.decode("utf-8-sig", "replace"))
            if names:
                modules[path] = names
    return CodeNames(identifiers=sorted(words), modules=modules)
