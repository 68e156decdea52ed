"""The values `prompt_eval` reads code into: text that remembers the line of each piece
(`Txt`), repository functions, classes and instances, and the parsed files (`Program`); and
what string methods, chat messages and templates do to text.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Any, NamedTuple

from automaton_auditor.forensics.code.common import dotted, parse_module
from automaton_auditor.forensics.code.data_files import (
    DATA,
    load_data,
    read_text,
    with_lines,
)
from automaton_auditor.forensics.code.resolve import module_name
from automaton_auditor.forensics.code.walk import MAX_FILE_BYTES, collect_imports
from automaton_auditor.forensics.tails import Tails
from automaton_auditor.safefile import read_bounded

Part = tuple[str, str]  # a piece of text and the ``path:line`` it comes from
# ``chat``: a provider wrapper's ``llm.chat(messages)`` (and ``ollama.chat``) sends them
INVOKES = {"invoke", "ainvoke", "stream", "astream", "batch", "abatch", "predict",
           "apredict", "generate", "agenerate", "run", "arun", "create", "call_llm", "chat"}
# Run options of a model call, not what the model reads: ``invoke(prompt, config={"metadata":
# {"philosophy": PROSECUTOR_PROMPT if ... else ...}})`` hands the model only `prompt`.
RUN_OPTIONS = frozenset({"config", "stop", "callbacks", "tags", "metadata", "run_name",
                         "run_id", "timeout"})
ROLES = {"system", "human", "user", "assistant", "ai"}
# a role as LangChain's message classes and OpenAI's dicts say it, by one name
ROLE_NAMES = {"system": "system", "human": "human", "user": "human", "ai": "ai",
              "assistant": "ai"}


@dataclass(frozen=True)
class Txt:
    """Text whose pieces carry the line they come from."""

    parts: tuple[Part, ...]
    # where each chat message (or prompt variable) starts, as an index into `parts`, with
    # its role ("system", "human", "ai"; "" when not said): set by `flatten` when it joins a
    # model call's messages; text built any other way is one message of no known role
    breaks: tuple[tuple[int, str], ...] = ()

    def text(self) -> str:
        """The text itself."""
        return "".join(p[0] for p in self.parts)

    def messages(self) -> list[tuple[str, tuple[Part, ...]]]:
        """Each message the text was joined from, in order: its role and its parts."""
        starts = {0: "", **{at: role for at, role in self.breaks if at < len(self.parts)}}
        cuts = sorted(starts)
        return [(starts[a], self.parts[a:b]) for a, b in pairwise([*cuts, len(self.parts)])
                if a < b]


class Step(NamedTuple):
    """One function on the way to a model call, and the call it makes next (None: the next
    function was entered otherwise than by a call read here, such as a closure)."""

    path: str
    fn: ast.FunctionDef | ast.AsyncFunctionDef | None  # None: module-level code
    call: ast.Call | None


@dataclass
class Frame:
    """Where an expression is read: its file, the instance ``self`` is, its class."""

    path: str
    self_: Inst | None = None
    owner: str = ""
    depth: int = 0
    returns: list[Any] = field(default_factory=list)
    uncertain: int = 0  # inside a branch, loop or ``try`` whose path is not known
    stopped: bool = False  # a ``return`` on the one known path was read


def as_message(text: Txt, role: str) -> Txt:
    """`text` as one chat message of `role` (``SystemMessage(content=...)``)."""
    return replace(text, breaks=((0, ROLE_NAMES.get(role, "")),)) \
        if len(text.messages()) <= 1 else text


@dataclass
class Inst:
    """An instance of a repository class (``self`` inside its methods)."""

    cls: str  # ``path::Name``
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fn:
    """A repository function, with the values its closure sees."""

    path: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    owner: str = ""  # ``path::Class`` for a method


@dataclass(frozen=True)
class RepoPath:
    """A path inside the repository (relative to its root): ``Path(__file__).parent /
    "prompts" / "x.txt"``; reading it gives the file's text."""

    rel: str

    def join(self, *parts: Any) -> RepoPath | None:
        """The path joined with text parts (None when a part is not known text)."""
        if not all(isinstance(p, Txt) for p in parts):
            return None
        return repo_path("/".join([*([self.rel] if self.rel else []), *(p.text() for p in parts)]))

    def attr(self, name: str) -> RepoPath | list[RepoPath] | None:
        """``.parent`` and ``.parents`` (``.resolve()``/``.absolute()`` as methods:
        `path_method`); a parent above the repository's root is left out."""
        if name == "parents":
            up: list[RepoPath] = []
            rel = self.rel
            while rel:
                rel = posixpath.dirname(rel)
                up.append(RepoPath(rel))
            return up
        return repo_path(posixpath.dirname(self.rel)) if name == "parent" else None


def repo_path(text: str) -> RepoPath | None:
    """A repository-relative path, None when it is absolute or leaves the repository."""
    norm = posixpath.normpath(text) if text else "."
    if norm.startswith(("/", "../")) or norm == "..":
        return None
    return RepoPath("" if norm == "." else norm)


def path_method(path: RepoPath, method: str, args: list[Any], program: Program) -> Any:
    """What a path method gives: the same path, a joined one, or the file's text."""
    if method in ("resolve", "absolute", "expanduser", "open"):
        return path  # an opened file stands for its path: ``json.load(f)`` reads it
    if method == "joinpath":
        return path.join(*args)
    return program.text_file(path.rel) if method in ("read_text", "read") else None


@dataclass
class Module:
    """One parsed Python file: its imports, top-level names and classes."""

    path: str
    imports: dict[str, str]
    names: dict[str, ast.AST]  # functions, classes and module-level assignments
    # module-level expression statements (``graph.add_node("p", lambda s: judge(s, "P"))``)
    exprs: tuple[ast.expr, ...] = ()


def is_super(node: ast.expr) -> bool:
    """``super()`` or ``super(Class, self)``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "super"


def is_static(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A ``@staticmethod``: called on an instance, it is handed no ``self``."""
    return any(dotted(d) == "staticmethod" for d in node.decorator_list)


def concat(*values: Any) -> Txt | None:
    """The concatenation of the text values (unknown values add nothing)."""
    parts = [p for v in values if isinstance(v, Txt) for p in v.parts]
    known = any(isinstance(v, Txt) for v in values)
    return Txt(tuple(parts)) if known else None


def lit(text: str, path: str, node: ast.AST) -> Txt:
    return Txt(((text, f"{path}:{getattr(node, 'lineno', 1)}"),))


class Program:
    """The repository's Python files, parsed when first needed."""

    def __init__(self, repo: Path, paths: list[str]) -> None:
        self.repo = repo
        self.paths = sorted(paths)
        self.by_module = {module_name(p): p for p in self.paths}
        self._tails = Tails(((p, m) for m, p in self.by_module.items()), ".")
        self._modules: dict[str, Module | None] = {}
        self._data: dict[str, Any] = {}

    def module(self, path: str) -> Module | None:
        """The parsed file (None when unreadable or not Python)."""
        if path not in self._modules:
            self._modules[path] = self._parse(path)
        return self._modules[path]

    def _parse(self, path: str) -> Module | None:
        try:  # the one reader of a repository's files: regular, inside, bounded
            data = read_bounded(self.repo / path, MAX_FILE_BYTES, root=self.repo)
        except (OSError, ValueError):
            return None
        tree = parse_module(data.decode("utf-8-sig", errors="replace"))
        if tree is None:
            return None
        names: dict[str, ast.AST] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target_node in targets:
                    if isinstance(target_node, ast.Name):
                        names[target_node.id] = stmt.value
        exprs = tuple(stmt.value for stmt in tree.body if isinstance(stmt, ast.Expr))
        return Module(path, collect_imports(tree), names, exprs)

    def text_file(self, rel: str) -> Txt | None:
        """A repository file's text, each line a piece that remembers its line (a prompt
        the code reads from a file); None when unreadable."""
        try:
            data = read_bounded(self.repo / rel, MAX_FILE_BYTES, root=self.repo)
        except (OSError, ValueError):
            return None
        lines = data.decode("utf-8-sig", errors="replace").splitlines(keepends=True)
        return Txt(tuple((line, f"{rel}:{n}") for n, line in enumerate(lines, 1)))

    def data_file(self, source: Any) -> Any:
        """The data a JSON or YAML file holds (``json.load(f)``, ``yaml.safe_load(text)``),
        each string a `Txt` that remembers its line: `source` is the file's path or its whole
        text (`text_file`). None when that is not a repository data file."""
        rel = source.rel if isinstance(source, RepoPath) else None
        if isinstance(source, Txt) and source.parts:
            files = {origin.rpartition(":")[0] for _, origin in source.parts}
            rel = files.pop() if len(files) == 1 else None
        if rel is None or not rel.lower().endswith(DATA):
            return None
        if rel not in self._data:
            raw = read_text(self.repo, rel) or ""
            data = load_data(rel, raw) if raw else None
            self._data[rel] = with_lines(rel, raw, data, lambda s, at: Txt(((s, at),))) \
                if data is not None else None
        return self._data[rel]

    def file_of(self, module: str, path: str) -> str | None:
        """The repository file a (possibly relative) module name stands for."""
        if module.startswith("."):
            base = path.rsplit("/", 1)[0].replace("/", ".") if "/" in path else ""
            module = f"{base}.{module.lstrip('.')}" if base else module.lstrip(".")
        if module in self.by_module:
            return self.by_module[module]
        found = self._tails.longer(module)  # indexed: a scan per look-up is quadratic
        return found[0] if len(found) == 1 else None

    def lookup(self, path: str, name: str, depth: int = 0) -> tuple[str, ast.AST] | None:
        """Where a top-level name of `path` is defined (following ``from x import y``)."""
        mod = self.module(path)
        if mod is None or depth > 4:
            return None
        if name in mod.names:
            return path, mod.names[name]
        full = mod.imports.get(name)
        if full is None or "." not in full:
            return None
        source, _, attr = full.rpartition(".")
        other = self.file_of(source, path)
        return self.lookup(other, attr, depth + 1) if other else None

    def classes(self, key: str) -> list[tuple[str, ast.ClassDef]]:
        """A class and its repository bases, in method-resolution order (depth first)."""
        order: list[tuple[str, ast.ClassDef]] = []
        todo = [key]
        while todo and len(order) < 12:
            path, _, name = todo.pop(0).partition("::")
            found = self.lookup(path, name)
            if found is None or not isinstance(found[1], ast.ClassDef):
                continue
            order.append((found[0], found[1]))
            todo += [f"{found[0]}::{dotted(b)}" for b in found[1].bases if dotted(b)]
        return order


def item(container: Any, key: Any) -> Any:
    """``container[key]`` for a dict read with a known text key or a list with an index."""
    if isinstance(container, dict) and isinstance(key, Txt):
        return container.get(key.text())
    return None


def flatten(values: list[Any]) -> Txt | None:
    """The text in chat messages, ``(role, text)`` pairs, lists and dicts of variables; each
    value starts a message (`Txt.breaks`), with the role a pair gives it."""
    parts: list[Part] = []
    breaks: list[tuple[int, str]] = []
    known = False
    for value in values:
        role = ""
        if isinstance(value, list | tuple) and len(value) == 2 and isinstance(value[0], Txt) \
                and value[0].text().lower() in ROLES:
            role = ROLE_NAMES[value[0].text().lower()]
            value = value[1]
        if isinstance(value, dict) and isinstance(value.get("role"), Txt) and "content" in value:
            role = ROLE_NAMES.get(value["role"].text().lower(), "")  # OpenAI's message dicts
            value = [value["content"]]
        elif isinstance(value, dict):
            value = list(value.values())
        inner = flatten(list(value)) if isinstance(value, list | tuple) else value
        if isinstance(inner, Txt):
            known = True
            breaks += [(len(parts) + at, said or role) for at, said in inner.breaks] \
                if inner.breaks else [(len(parts), role)]
            parts += inner.parts
    return Txt(tuple(parts), tuple(breaks)) if known else None


def list_method(items: list[Any] | None, method: str, args: list[Any]) -> Any:
    """``list(messages)``, ``messages.copy()``, ``messages.append(m)`` and ``.extend``: a
    list of chat messages built up before the model call."""
    if items is None:  # ``list(x)`` / ``tuple(x)``
        return list(args[0])
    if method == "copy":
        return list(items)
    if method == "append" and args:
        items.append(args[0])
    elif method == "extend" and args and isinstance(args[0], list):
        items.extend(args[0])
    return None


def string_method(text: Txt, method: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``template.format(...)``, ``sep.join([...])`` and methods that keep the text."""
    if method == "format":
        return fill(text, args, kwargs)
    if method == "join" and args and isinstance(args[0], list):
        pieces: list[Any] = []
        for index, value in enumerate(args[0]):
            pieces += [text, value] if index else [value]
        return concat(*pieces)
    if method in ("strip", "lstrip", "rstrip", "lower", "upper", "title", "replace"):
        return text
    return None


def fill(template: Txt, args: list[Any], kwargs: dict[str, Any]) -> Txt:
    """``str.format``: every ``{name}`` or ``{}`` field replaced by the value given for it
    (unknown values add nothing); ``{{``/``}}`` stay single braces."""
    parts: list[Part] = []
    position = 0
    for text, where in template.parts:
        cursor = 0
        for match in re.finditer(r"\{\{|\}\}|\{([^{}]*)\}", text):
            parts.append((text[cursor:match.start()], where))
            cursor = match.end()
            if match.group(0) in ("{{", "}}"):
                parts.append((match.group(0)[0], where))
                continue
            name = match.group(1).split(":")[0].split("!")[0]
            value = kwargs.get(name) if name and not name.isdigit() else (
                args[int(name)] if name.isdigit() and int(name) < len(args) else
                args[position] if not name and position < len(args) else None)
            position += 0 if name else 1
            if isinstance(value, Txt):
                parts += value.parts
        parts.append((text[cursor:], where))
    return Txt(tuple(p for p in parts if p[0]))
