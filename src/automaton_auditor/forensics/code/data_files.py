"""A repository's JSON and YAML data files, read as data (never executed), and their
strings as text that remembers the line it comes from: a rubric whose per-persona
instructions the judges put in their prompts is prompt text the auditor can follow."""

from __future__ import annotations

import bisect
import json
import re
from pathlib import Path
from typing import Any

from automaton_auditor.safefile import read_bounded

DATA = (".json", ".yaml", ".yml")
MAX_DATA_BYTES = 200_000
MAX_DEPTH = 12  # a data file's nesting read, no deeper
MAX_STRINGS = 2_000  # strings placed on their lines per file (each a bounded search)


def read_text(repo: Path, rel: str, limit: int = MAX_DATA_BYTES) -> str | None:
    """The repository's own regular file `rel` as text (never a link out of it, read
    bounded); None when it cannot be read."""
    try:
        return read_bounded(repo / rel, limit, root=repo).decode("utf-8-sig", "replace")
    except (OSError, ValueError):
        return None


def load_data(path: str, text: str) -> Any:
    """A repository's JSON or YAML file as data; None when it cannot be read as such. YAML
    aliases are refused: a few hundred bytes of nested aliases stand for billions of
    values, which every walk over the data would visit (or copy into one text)."""
    import yaml  # type: ignore[import-untyped]

    class NoAliases(yaml.SafeLoader):  # type: ignore[misc]
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("aliases are not read")
            return super().compose_node(parent, index)

    try:
        if path.endswith(".json"):
            return json.loads(text)
        return yaml.load(text, Loader=NoAliases)  # noqa: S506 - a SafeLoader
    except (ValueError, RecursionError, yaml.YAMLError):  # hostile nesting included
        return None


def line_of(raw: str, text: str, is_json: bool, cursor: int,
            newlines: list[int] | None = None) -> tuple[int, int]:
    """The line a string value starts on in the raw file (searched from `cursor` on, the
    order the values are read in), and the cursor after it; line 1 when it is not found.
    `newlines` (the offsets of the file's line ends) makes the count a binary search."""
    first = text.split("\n", 1)[0]
    needle = json.dumps(first)[1:41] if is_json else first[:40]
    index = raw.find(needle, cursor)
    index = index if index >= 0 else raw.find(needle)
    if index < 0:
        return 1, cursor
    before = bisect.bisect_left(newlines, index) if newlines is not None else \
        raw.count("\n", 0, index)
    return before + 1, index + 1


def with_lines(rel: str, raw: str, data: Any, text: Any) -> Any:
    """`data` with each string replaced by ``text(string, "rel:line")`` (the first
    `MAX_STRINGS` of them; the rest, numbers and booleans become None); dict keys stay."""
    newlines = [m.start() for m in re.finditer("\n", raw)]
    state = {"cursor": 0, "left": MAX_STRINGS}

    def walk(value: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            return None
        if isinstance(value, dict):
            return {str(k): walk(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, depth + 1) for v in value]
        if not isinstance(value, str) or state["left"] <= 0:
            return None
        state["left"] -= 1
        line, state["cursor"] = line_of(raw, value, rel.endswith(".json"), state["cursor"],
                                        newlines)
        return text(value, f"{rel}:{line}")

    return walk(data, 0)
