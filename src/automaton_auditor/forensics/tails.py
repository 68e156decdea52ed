"""Names indexed by their trailing parts, so "which names end with this one" is a lookup.

Cited paths are matched against a commit's files by their tail (`nodes/judges.py` names
`src/nodes/judges.py`), and module names against the repository's modules the same way
(`pkg.mod` is `src.pkg.mod`). Scanning every name for every query is quadratic, and both
sides grow with hostile input (a report citing 100,000 paths, a repository of 12,000
modules). `Tails` is a trie of the names' parts read from the end: a query walks its own
parts once, whatever the number of names. Each name is stored once per part (references,
not copies of its suffixes), so memory stays linear in the names' total length.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence


class _Node:
    __slots__ = ("children", "ends", "longer")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.ends: list[str] = []  # values whose name is exactly the parts walked so far
        self.longer: list[str] = []  # values whose name has more parts before these


class Tails:
    """Values indexed by the `sep`-separated parts of their names, read from the end.

    `exact(n)` lists the values whose name is `n`; `longer(n)` those whose name ends with
    `sep + n` (the same answers as scanning with ``==`` and ``endswith``), each in the
    order the pairs were given."""

    def __init__(self, pairs: Iterable[tuple[str, str]], sep: str) -> None:
        self.sep = sep
        self._root = _Node()
        for value, name in pairs:
            node = self._root
            parts = name.split(sep)
            for depth, part in enumerate(reversed(parts), 1):
                node = node.children.setdefault(part, _Node())
                (node.ends if depth == len(parts) else node.longer).append(value)

    def _walk(self, name: str) -> Iterator[_Node]:
        """The nodes for the last 1, 2, ... parts of `name`, as far as any name goes."""
        node = self._root
        for part in reversed(name.split(self.sep)):
            child = node.children.get(part)
            if child is None:
                return
            node = child
            yield node

    def _node(self, name: str) -> _Node | None:
        wanted = name.count(self.sep) + 1
        for depth, node in enumerate(self._walk(name), 1):
            if depth == wanted:
                return node
        return None

    # Both return the index's own list (no copy: a copy per query would be quadratic
    # again); callers only read it.
    def exact(self, name: str) -> Sequence[str]:
        """Values whose name is `name`."""
        node = self._node(name)
        return node.ends if node else ()

    def longer(self, name: str) -> Sequence[str]:
        """Values whose name ends with `sep + name` (a proper tail of theirs)."""
        node = self._node(name)
        return node.longer if node else ()

    def named_tails(self, name: str) -> Iterator[int]:
        """How many trailing parts of `name` form a whole name of the index: for `a/b/c`
        holding `b/c` and `c`, yields 1 and 2 (shortest first)."""
        for depth, node in enumerate(self._walk(name), 1):
            if node.ends:
                yield depth
