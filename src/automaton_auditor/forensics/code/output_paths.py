"""The paths the code builds at run time for the files it writes (`forensics.code.names`):
``repo_root / "audit" / f"report_{timestamp}.md"``, ``os.path.join("out", f"run_{id}.json")``,
``"logs/trace_%s.jsonl" % run``. Each becomes a template whose run-time parts are `FIELD`
(``*/audit/report_*.md``), so a report that cites one run's output
(`audit/report_2026-02-27_22-11-15.md`) can be told from one that invents a source file: the
file is a run artefact, absent from the commit because runs are not committed, not a
hallucinated path. Files are parsed, never imported or run.
"""

from __future__ import annotations

import ast
import re

from automaton_auditor.forensics.code.common import dotted

FIELD = "*"  # a part of the path known only at run time (a timestamp, a run id, a root)
MAX_TEMPLATES = 200  # per repository: a generator of paths is no auditor's report writer
_DEPTH = 4  # names followed through assignments, at most
_CHOICES = 8  # paths one expression can build (a branch per folder), at most
# What a run writes (a report, a log, data); a run that makes source files is no run output.
_OUTPUT_EXT = frozenset({"md", "markdown", "json", "jsonl", "txt", "log", "pdf", "html", "csv",
                         "yaml", "yml", "png", "svg", "mmd"})
_JOINS = frozenset({"os.path.join", "path.join", "posixpath.join", "Path", "pathlib.Path",
                    "PurePath", "pathlib.PurePath"})
_PERCENT = re.compile(r"%(?:\([\w]+\))?[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]")
_BRACES = re.compile(r"\{[^{}]*\}")
_PATHLIKE = re.compile(r"[\w.*-][\w.*/-]*")


def assigned_once(tree: ast.Module) -> dict[ast.AST, dict[str, ast.expr]]:
    """For the module and each function: the names it assigns exactly once, with the value
    (a name bound twice may hold either, so it is not followed)."""
    out: dict[ast.AST, dict[str, ast.expr]] = {}
    for scope in [tree, *(n for n in ast.walk(tree)
                          if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]:
        seen: dict[str, list[ast.expr]] = {}
        body = scope.body
        todo: list[ast.AST] = list(body)
        while todo:
            node = todo.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue  # its own scope
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                seen.setdefault(node.targets[0].id, []).append(node.value)
            todo.extend(ast.iter_child_nodes(node))
        out[scope] = {name: values[0] for name, values in seen.items() if len(values) == 1}
    return out


def path_texts(node: ast.expr, env: dict[str, ast.expr], depth: int = 0) -> list[str] | None:
    """The paths an expression can build, each run-time part as `FIELD` (both branches of
    ``a if c else b``); None when it is no string or path expression (a bare name or a call
    alone says nothing)."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return _product([[v.value] if isinstance(v, ast.Constant) and isinstance(v.value, str)
                         else _part(v.value, env, depth) if isinstance(v, ast.FormattedValue)
                         else [FIELD] for v in node.values])
    if isinstance(node, ast.IfExp):
        body, other = path_texts(node.body, env, depth), path_texts(node.orelse, env, depth)
        return None if body is None or other is None else [*body, *other][:_CHOICES]
    if isinstance(node, ast.BinOp):
        return _binop(node, env, depth)
    if isinstance(node, ast.Call):
        return _call(node, env, depth)
    return None


def _product(parts: list[list[str]], sep: str = "") -> list[str]:
    """Every way of joining one choice per part, at most `_CHOICES`."""
    out = [""]
    for i, choices in enumerate(parts):
        out = [f"{head}{sep if i else ''}{c}" for head in out for c in choices][:_CHOICES]
    return out


def _part(node: ast.expr, env: dict[str, ast.expr], depth: int,
          texts: list[str] | None = None) -> list[str]:
    """A piece of a path: its texts (`texts` when already read: each side is read once, or
    a long sum would be read exponentially often), a name followed to its one value, else
    `FIELD`."""
    if texts is not None:
        return texts
    if isinstance(node, ast.Name) and node.id in env and depth < _DEPTH:
        return path_texts(env[node.id], env, depth + 1) or [FIELD]
    return [FIELD] if isinstance(node, ast.Name) else path_texts(node, env, depth) or [FIELD]


def _binop(node: ast.BinOp, env: dict[str, ast.expr], depth: int) -> list[str] | None:
    left, right = path_texts(node.left, env, depth), path_texts(node.right, env, depth)
    if isinstance(node.op, ast.Div | ast.Add) and (left is not None or right is not None):
        sep = "/" if isinstance(node.op, ast.Div) else ""
        return _product([_part(node.left, env, depth, left),
                         _part(node.right, env, depth, right)], sep)
    if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
            and isinstance(node.left.value, str):
        return [_PERCENT.sub(FIELD, node.left.value)]
    return None


def _call(node: ast.Call, env: dict[str, ast.expr], depth: int) -> list[str] | None:
    name = dotted(node.func) or ""
    method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    if name in _JOINS or method == "joinpath":
        head = [node.func.value] if method == "joinpath" and isinstance(
            node.func, ast.Attribute) else []
        parts = [*head, *node.args]
        read = [path_texts(p, env, depth) for p in parts]
        if all(texts is None for texts in read):
            return None
        return _product([_part(p, env, depth, texts) for p, texts in zip(parts, read,
                                                                         strict=True)], "/")
    if method == "format" and isinstance(node.func, ast.Attribute) and isinstance(
            node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
        return [_BRACES.sub(FIELD, node.func.value.value)]
    if method == "strftime" and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return [_PERCENT.sub(FIELD, node.args[0].value)]
    return None


def _template(text: str) -> str | None:
    """The path as a template when it names a run's output file: literal folders, a file
    name with a run-time part and a literal stem beside it, an output extension. A leading
    run-time part (a root folder) becomes ``*/``; an absolute path is outside the
    repository."""
    path = re.sub(r"/{2,}", "/", text.replace("\\", "/"))
    path = re.sub(rf"\{FIELD}+", FIELD, path)
    if not _PATHLIKE.fullmatch(path) or len(path) > 200:
        return None  # absolute (outside the repository), or a message around a path
    while path.startswith("./"):
        path = path[2:]
    root = path.startswith(FIELD + "/")
    folders, _, name = (path[2:] if root else path).rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not (folders and dot and ext.lower() in _OUTPUT_EXT and FIELD not in ext):
        return None
    if not all(part and FIELD not in part for part in folders.split("/")):
        return None  # a folder known only at run time would match any folder
    if FIELD not in stem or not stem.replace(FIELD, "").strip("_-. "):
        return None  # a fixed name is a committed file or not; a bare field names anything
    return path


def output_templates(tree: ast.Module, path: str, lines: list[str]) -> dict[str, str]:
    """Templates of the output paths a module builds (`FIELD` for run-time parts), each with
    where it is built ("path:line: source")."""
    out: dict[str, str] = {}
    for scope, env in assigned_once(tree).items():
        for node in _own_nodes(scope):
            if not isinstance(node, ast.BinOp | ast.Call | ast.JoinedStr):
                continue
            for text in path_texts(node, env) or []:
                template = _template(text)
                if template and template not in out and len(out) < MAX_TEMPLATES:
                    line = getattr(node, "lineno", 0)
                    source = lines[line - 1].strip()[:160] if 0 < line <= len(lines) else ""
                    out[template] = f"{path}:{line}: {source}"
    return out


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a scope, not of the functions it defines (they are scopes of their own)."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = list(getattr(scope, "body", []))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def template_pattern(template: str) -> re.Pattern[str]:
    """A regex for the paths a template names: a leading ``*/`` any folders (or none), any
    other `FIELD` one path segment's worth of text."""
    root = template.startswith(FIELD + "/")
    body = template[2:] if root else template
    regex = "[^/]+".join(re.escape(piece) for piece in body.split(FIELD))
    return re.compile(("(?:.+/)?" if root else "") + regex)


def run_output(path: str, templates: dict[str, str]) -> str | None:
    """The template (and where the code builds it) naming `path` as a run output, if any."""
    for template, where in templates.items():
        if template_pattern(template).fullmatch(path):
            return f"{template} ({where})"
    return None
