"""Writes of text to files, read from the code: where a file is opened for writing in text
mode (``open(path, "w")`` whose handle is written to, ``Path.open("a")``, ``Path.write_text``),
the paths each may name (`output_paths`), whether one ends in ``.md``, and whether the text
written is read out of a result by key (``out.get("final_report_markdown")``). Files are parsed,
never imported or run. Read by `report_file` (the Markdown report the rubric asks for).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from automaton_auditor.forensics.code.common import dotted, function_defs
from automaton_auditor.forensics.code.exprs import own_nodes, walk_expr
from automaton_auditor.forensics.code.output_paths import FIELD, assigned_once, path_texts

OPENERS = frozenset({"open", "io.open", "codecs.open", "aiofiles.open"})
WRITE_MODES = re.compile(r"[wax]")
MARKDOWN_EXT = (".md", ".markdown")
NAME_DEPTH = 4  # names followed to their value in a path expression
MAX_WRITES = 20


class Write:
    """One write of text to a file: where, the function holding it, the paths it may name."""

    def __init__(self, path: str, line: int, func: str, targets: list[str],
                 markdown_path: bool, from_result: bool) -> None:
        self.path, self.line, self.func, self.targets = path, line, func, targets
        self.markdown_path = markdown_path  # a path it may write ends in ``.md``
        # a path with another extension (``run.log``, ``report.json``) is no Markdown file
        self.other_ext = not markdown_path and any("." in t.rsplit("/", 1)[-1]
                                                   for t in targets)
        # the text is read out of a result (``state["report_md"]``, ``out.get("report")``):
        # what the graph's synthesis returns
        self.from_result = from_result and not self.other_ext


def _mode(call: ast.Call, index: int) -> str:
    """The mode an ``open`` call passes (positional `index` or ``mode=``), "r" when none."""
    mode = next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None and len(call.args) > index:
        mode = call.args[index]
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else \
        "r" if mode is None else "w"  # a mode known only at run time may write


def _writes_text(mode: str) -> bool:
    """A mode that writes text (a Markdown report is text: ``"wb"`` writes an image)."""
    return bool(WRITE_MODES.search(mode)) and "b" not in mode


def _opened(node: ast.expr) -> ast.expr | None:
    """The path a call opens for writing text (``open(p, "w")``, ``p.open("a")``), else
    None."""
    if not isinstance(node, ast.Call):
        return None
    name = dotted(node.func) or ""
    if name in OPENERS and node.args and _writes_text(_mode(node, 1)):
        return node.args[0]
    if isinstance(node.func, ast.Attribute) and node.func.attr == "open" \
            and name not in OPENERS and _writes_text(_mode(node, 0)):
        return node.func.value
    return None


def _handles(nodes: list[ast.AST]
             ) -> Iterator[tuple[ast.With | ast.AsyncWith, ast.expr, ast.expr | None]]:
    """Each ``with`` item of a block's `nodes` that opens a file for writing, with the path
    it opens and the first text written, when its handle is written to in the block."""
    for node in nodes:
        if not isinstance(node, ast.With | ast.AsyncWith):
            continue
        for item in node.items:
            target = _opened(item.context_expr)
            handle = item.optional_vars
            if target is None or not isinstance(handle, ast.Name):
                continue
            written = [n for n in own_nodes(node.body) if isinstance(n, ast.Call)
                       and isinstance(n.func, ast.Attribute)
                       and n.func.attr in ("write", "writelines")
                       and isinstance(n.func.value, ast.Name) and n.func.value.id == handle.id]
            if written:
                yield node, target, written[0].args[0] if written[0].args else None


def _targets(body: list[ast.stmt]) -> Iterator[tuple[int, ast.expr, ast.expr | None]]:
    """Each write of text to a file in a block: its line, the path and the text it writes."""
    nodes = own_nodes(body)
    for block, target, text in _handles(nodes):
        yield block.lineno, target, text
    for node in nodes:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        text = node.args[0] if node.args else None
        if node.func.attr == "write_text":
            yield node.lineno, node.func.value, text
        elif node.func.attr == "write" and (opened := _opened(node.func.value)) is not None:
            yield node.lineno, opened, text  # ``open(p, "w").write(text)``


def _read_out(value: ast.expr | None, env: dict[str, ast.expr], depth: int = 0) -> bool:
    """Whether a text (its names followed to their one value) is read out of a result by a
    literal key: ``final_state["markdown_report"]``, ``out.get("final_report_md")``."""
    for node in walk_expr(value) if value is not None else []:
        if isinstance(node, ast.Name) and node.id in env and depth < NAME_DEPTH:
            if _read_out(env[node.id], env, depth + 1):
                return True
        elif _keyed(node):
            return True
    return False


def _keyed(node: ast.AST) -> bool:
    """``x["key"]`` or ``x.get("key")``: a value read by a literal key."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "get" and bool(node.args) \
        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)


def _markdown_path(target: ast.expr, env: dict[str, ast.expr], depth: int = 0) -> bool:
    """Whether the path expression (its names followed to the one value each is given, a few
    deep) holds a text ending in ``.md``: ``out_dir / f"audit_{stamp}.md"``,
    ``path.with_suffix(".md")``."""
    for node in walk_expr(target):
        if isinstance(node, ast.Name) and node.id in env and depth < NAME_DEPTH:
            if _markdown_path(env[node.id], env, depth + 1):
                return True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.strip().lower().endswith(MARKDOWN_EXT):
            return True
    return False


def _defaults(scope: ast.AST) -> dict[str, ast.expr]:
    """A function's parameters with their default values (``filename="report.md"``)."""
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return {}
    args = scope.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults,
                  strict=True),
             *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
               if d is not None)]
    return {arg.arg: value for arg, value in pairs}


def _last_bindings(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """Each name a block assigns, with the first value given to it that is read by a key
    (else its first value): a text that may come out of a result."""
    found: dict[str, ast.expr] = {}
    for node in own_nodes(body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name not in found or (any(_keyed(n) for n in walk_expr(node.value))
                                     and not any(_keyed(n) for n in walk_expr(found[name]))):
                found[name] = node.value
    return found


def file_writes(tree: ast.Module, path: str) -> list[Write]:
    """Every write of text to a file in a module, by function (``""``: module level)."""
    envs = assigned_once(tree)
    scopes: list[tuple[str, ast.AST]] = [("", tree), *function_defs(tree)]
    found: list[Write] = []
    for qual, scope in scopes:
        env = {**envs.get(tree, {}), **_defaults(scope), **envs.get(scope, {})}
        body = getattr(scope, "body", [])
        for line, target, text in _targets(body):
            # a text may hold any value it is given (``md = out.get(...)``, then a fallback)
            bound = {**env, **_last_bindings(body)}
            found.append(Write(path, line, qual, path_texts(target, env) or [FIELD],
                               _markdown_path(target, env), _read_out(text, bound)))
    return sorted(found, key=lambda w: w.line)[:MAX_WRITES]
