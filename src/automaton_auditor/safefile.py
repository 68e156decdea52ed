"""Reading a file the auditor did not create, as hostile input: opened without blocking (a
FIFO never hangs the run), refused unless it is a regular file (no FIFO, device, socket or
directory), and read up to a byte cap (``/dev/zero`` or a huge file never fills memory).

Two strengths, one reader (`read_bounded`):

- a path the user named (a rubric, a config file): symlinks are followed, the file opened
  must be regular;
- a file inside an audited repository (``root`` given, `open_regular`): ``lstat`` first, so
  a FIFO, a device, a socket or a symlink is refused without being opened; the real path
  must lie inside ``root``; ``O_NOFOLLOW`` and an ``fstat`` of the open file close the race.

And writing the files the auditor produces (`write_atomic`): whole or not at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_KINDS = ((stat.S_ISLNK, "a symlink"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))
# Lists and objects in a hostile JSON or TOML file (a rubric, a report.json, a config): far
# beyond any real one (a report.json nests 7 deep), and well short of the decoders' recursion.
MAX_NESTING = 32
# Never block on a FIFO, never take a terminal, never leak the descriptor into a child.
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class UnsafeFile(ValueError):
    """A file that was not read; the message is one line naming the file and the rule."""


def refused(path: Path | str, rule: str) -> UnsafeFile:
    """The error for a repository file refused by `rule` ("<path>: <rule>")."""
    return UnsafeFile(f"{path}: {rule}")


def kind_of(mode: int) -> str:
    """'a FIFO', 'a device', ... for a non-regular file mode ('' for a regular file)."""
    return next((name for test, name in _KINDS if test(mode)), "" if stat.S_ISREG(mode)
                else "not a regular file")


def inside(path: Path, root: Path) -> bool:
    """Whether the real location of `path` (symlinks resolved) is `root` or under it."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip("/") + "/")


def open_regular(path: Path, root: Path) -> int:
    """A read-only descriptor on `path`, a regular file of a repository whose real location
    is inside `root`; raises `UnsafeFile` (FileNotFoundError when it does not exist)."""
    info = os.lstat(path)
    kind = kind_of(info.st_mode)
    if kind:
        raise refused(path, f"refused, {kind} is never opened")
    if not inside(path, root):
        raise refused(path, "refused, it lies outside the target")
    fd = os.open(path, _FLAGS | getattr(os, "O_NOFOLLOW", 0))
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino) or \
            not stat.S_ISREG(opened.st_mode):
        os.close(fd)
        raise refused(path, "refused, it changed while being opened")
    return fd


def _open_named(path: Path, what: str) -> int:
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise UnsafeFile(f"{what} not found: {path}") from None
    except OSError as exc:
        raise UnsafeFile(f"cannot read {what} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeFile(f"{what} is not a regular file: {path}")
    return fd


def write_atomic(files: Mapping[Path, str]) -> None:
    """Write each file's text (UTF-8, no newline translation) whole or not at all: every
    text goes to a temporary file in its file's folder, flushed to disk, and only once all
    are written are they renamed into place. A failed write (a full disk) raises and leaves
    no truncated file, and the earlier files at those paths untouched. A symlink at a path
    is followed (the file it names is replaced), as opening it for writing would."""
    staged: list[tuple[str, str]] = []  # (temporary, final path), not renamed yet
    try:
        for path, text in files.items():
            real = os.path.realpath(path)
            staged.append((_stage(real, text.encode("utf-8")), real))
        while staged:
            os.replace(*staged[0])
            staged.pop(0)
    except BaseException:
        for temporary, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise


def replace_bytes(path: Path, data: bytes) -> None:
    """Write `data` to a new file beside `path`, then rename it onto `path`: whatever had
    that name (a symlink, a FIFO someone planted) is replaced, never followed or opened."""
    temporary = _stage(str(path), data)
    try:
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _stage(real: str, data: bytes) -> str:
    """`data` in a new temporary file beside `real`; its name."""
    folder, name = os.path.split(real)
    temporary = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
    # O_EXCL: never a file someone put there; 0o666 under the umask, as open() would make
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())  # a full disk may only say so here, never after the rename
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary


def read_bounded(path: Path, max_bytes: int, what: str = "file",
                 root: Path | None = None) -> bytes:
    """At most `max_bytes` of the regular file `path`; `UnsafeFile` when it holds more.

    Without `root` (a path the user named, called `what` in messages): a missing, special
    or unreadable file raises `UnsafeFile`. With `root` (a file of an audited repository):
    `open_regular`'s rules, and a missing file raises FileNotFoundError (there, absence is
    an answer: no packed refs, no alternates)."""
    fd = open_regular(path, root) if root is not None else _open_named(path, what)
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise UnsafeFile(f"cannot read {what} {path}: {exc.strerror}") from None
    if len(data) <= max_bytes:
        return data
    if root is not None:
        raise refused(path, f"refused, larger than {max_bytes} bytes")
    raise UnsafeFile(f"{what} is larger than {max_bytes:,} bytes: {path}")


def is_regular(path: Path) -> bool:
    """Whether `path` is a regular file (symlinks followed; False when absent)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def read_bounded_text(path: Path, max_bytes: int, what: str = "file") -> str:
    """`read_bounded`, decoded as UTF-8 (a BOM is dropped); `UnsafeFile` when it is not."""
    try:
        return read_bounded(path, max_bytes, what).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnsafeFile(f"{what} is not UTF-8 text: {path}") from None


def json_path(loc: tuple[int | str, ...]) -> str:
    """``$.a[0].b`` for the location ``("a", 0, "b")``; a key that cannot be printed as UTF-8
    (a lone surrogate) is shown escaped."""
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else \
            "." + part.encode("utf-8", "backslashreplace").decode("utf-8")
    return path


# Where an item sits, as a chain (parent's chain, key): one pair per item, not a copied
# tuple per item, so walking a 20 MB report.json stays cheap; unrolled only for a message.
_Chain = tuple[Any, int | str] | None


def _unroll(chain: _Chain) -> tuple[int | str, ...]:
    parts: list[int | str] = []
    while chain is not None:
        chain, key = chain
        parts.append(key)
    return tuple(reversed(parts))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_problem(data: Any, max_nesting: int = MAX_NESTING) -> str | None:
    """Why data decoded from a hostile JSON (or TOML) file cannot be used, as
    ``"<JSON path>: <rule>"``, or None: lists and objects nested deeper than `max_nesting`,
    or a string or key holding a lone surrogate (``"\\ud800"`` is valid JSON, yet no UTF-8
    report, checkpoint or terminal can carry it: refused here, not when the report is written).
    Iterative: no recursion to exhaust."""
    stack: list[tuple[Any, int, _Chain]] = [(data, 1, None)]
    while stack:
        item, level, chain = stack.pop()
        if isinstance(item, str):
            if not _encodable(item):
                return f"{json_path(_unroll(chain))}: lone surrogate"
            continue
        if not isinstance(item, dict | list):
            continue
        if level > max_nesting:  # the path of a 10,000-deep list says nothing: "$"
            return f"$: nested deeper than {max_nesting} levels"
        if isinstance(item, list):
            stack.extend((v, level + 1, (chain, i)) for i, v in enumerate(item))
            continue
        for key, value in item.items():
            if isinstance(key, str) and not _encodable(key):
                return f"{json_path(_unroll((chain, key)))}: lone surrogate in a key"
            stack.append((value, level + 1, (chain, key)))
    return None


class UnsafeJson(ValueError):
    """JSON that parses but breaks a `json_problem` rule; the message is
    ``"<JSON path>: <rule>"``."""


def loads_untrusted(text: str, **options: Any) -> Any:
    """``json.loads`` of hostile text (`options` are passed on), then `json_problem`'s rules:
    `UnsafeJson` when one is broken, also when the decoder runs out of stack on nesting too
    deep for it; ``json.JSONDecodeError`` when it is not JSON."""
    try:
        data = json.loads(text, **options)
    except RecursionError:
        raise UnsafeJson(f"$: nested deeper than {MAX_NESTING} levels") from None
    problem = json_problem(data)
    if problem:
        raise UnsafeJson(problem)
    return data
