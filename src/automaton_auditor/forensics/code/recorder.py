"""What the call classifier needs from the walk that feeds it: where a node sits (`Ctx`) and
a recorder of call facts (`CallRecorder`, implemented by `calls.CallCollector`). Kept apart so
the classifier and the walk do not import each other."""

from __future__ import annotations

import ast
from typing import Any, NamedTuple, Protocol


class Ctx(NamedTuple):
    """Where a node sits: enclosing function and class, and the guards around it."""

    func: str = ""
    cls: str = ""
    in_try: bool = False
    in_attempt_loop: bool = False  # a loop that repeats one action (see calls.py)
    tempdir: bool = False


class CallRecorder(Protocol):
    """The walk's side of call classification."""

    imports: dict[str, str]

    def add(self, kind: str, node: ast.AST, ctx: Ctx, **extra: Any) -> None:
        """Record one call fact."""

    def defaults(self, func: str) -> dict[str, str]:
        """Parameter defaults of function `func` (``schema=JudicialOpinion``)."""

    def int_defaults(self, func: str) -> dict[str, int]:
        """Parameters of function `func` whose default is an int literal (``depth=1``)."""

    def note(self, func: str, key: str, value: Any) -> None:
        """Append `value` to the list `key` (``sends``, ``gotos``) of function `func`."""

    def shell(self, node: ast.Call) -> bool:
        """True for ``shell=True``."""

    def is_send(self, node: ast.Call) -> bool:
        """True when the call constructs LangGraph's ``Send``."""

    def bound(self, name: str, ctx: Ctx, before: ast.expr | None = None) -> ast.expr | None:
        """The value last assigned to the local `name` before this point (None: unknown), or
        the one assigned before the value `before`."""

    def first_arg(self, node: ast.Call, ctx: Ctx) -> ast.expr | None:
        """The command argument of a process call."""

    def literal(self, node: ast.expr | None, ctx: Ctx | None = None, depth: int = 0) -> bool:
        """True when the argument carries no data."""
