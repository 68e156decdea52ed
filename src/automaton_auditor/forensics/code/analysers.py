"""Well-kept static analysers run on the audited checkout, which they read and never run.

ruff is a single binary in the default install. It runs pyflakes' rules (undefined names,
names used before assignment, redefinitions, unused imports) and bandit's security checks as
its ``S`` rules (shell injection, eval/exec, hard-coded temp files, unsafe deserialisation).
It runs hardened like the git runner: ``--isolated`` (no configuration file of the audited
repository is read, so its pyproject cannot change the rules or point elsewhere),
``--no-cache``, explicit file paths, a scrubbed environment with a throwaway HOME, a timeout,
a cap on the output size, contained like every child process (`automaton_auditor.containment`:
its own session, killed on timeout, on exit and if the audit dies).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.containment import Bounds, Closed, Contained, scratch_dir, spawn
from automaton_auditor.forensics.code.common import JSON

RULES = ("F821", "F822", "F823", "F811", "F401", "F841", "F632", "F704", "F706",
         "S102", "S108", "S301", "S307", "S506", "S602", "S604", "S605", "S609")
TIMEOUT_S = 60.0
MAX_OUTPUT = 8_000_000
MAX_FILES = 2000
_PASS_ENV = ("PATH", "SYSTEMROOT", "TZ")


class Analysis(NamedTuple):
    """The diagnostics of one analyser run, or why there are none."""

    tool: str
    ran: bool
    status: str  # "ok" or why not: not installed, timeout, output too large, error
    diagnostics: list[JSON]


def ruff_binary() -> str | None:
    """The ruff executable installed with the auditor (or on PATH), or None."""
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

        found = str(find_ruff_bin())
        if Path(found).is_file():
            return found
    except (ImportError, FileNotFoundError, OSError):
        pass
    return shutil.which("ruff")


def run_ruff(repo: Path, paths: list[str], timeout_s: float = TIMEOUT_S) -> Analysis:
    """ruff's pyflakes and security rules on `paths` (relative to `repo`)."""
    binary = ruff_binary()
    if binary is None:
        return Analysis("ruff", False, "not installed", [])
    files = [p for p in paths[:MAX_FILES] if _regular(repo / p)]
    if not files:
        return Analysis("ruff", True, "ok", [])
    command = [binary, "check", "--isolated", "--no-cache", "--exit-zero",
               "--output-format", "json", "--select", ",".join(RULES), "--", *files]
    output, status = _run(command, repo, timeout_s)
    if output is None:
        return Analysis("ruff", False, status, [])
    try:
        data = json.loads(output or b"[]")
    except ValueError:
        return Analysis("ruff", False, "unreadable output", [])
    diagnostics = [_diagnostic(repo, d) for d in data if isinstance(d, dict)]
    return Analysis("ruff", True, "ok", sorted(
        (d for d in diagnostics if d["path"]), key=lambda d: (d["path"], d["line"], d["code"])))


def diagnostic_name(diagnostic: JSON) -> str:
    """The name a diagnostic is about (ruff quotes it in backticks), else its message."""
    message = str(diagnostic["message"])
    return message.split("`")[1] if message.count("`") >= 2 else message


def _regular(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False


def _diagnostic(repo: Path, item: JSON) -> JSON:
    filename = str(item.get("filename") or "")
    try:
        path = Path(filename).resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        path = ""  # never report a file outside the checkout
    location = item.get("location") or {}
    return {"path": path, "line": int(location.get("row") or 1),
            "code": str(item.get("code") or "syntax"), "message": str(item.get("message") or "")}


def _run(command: list[str], cwd: Path, timeout_s: float) -> tuple[bytes | None, str]:
    """Run `command` contained (its own session, killed on timeout, on exit and if the
    audit dies); (stdout, "ok") or (None, why it failed)."""
    with scratch_dir("auditor-analyser-") as home, \
            tempfile.TemporaryFile(dir=home) as out:
        env = {key: os.environ[key] for key in _PASS_ENV if key in os.environ}
        env.setdefault("PATH", "/usr/bin:/bin")
        env.update({"HOME": home, "XDG_CONFIG_HOME": home, "XDG_CACHE_HOME": home,
                    "LC_ALL": "C", "NO_COLOR": "1"})
        try:
            child = spawn(command, bounds=Bounds(timeout_s=timeout_s, max_procs=8), env=env,
                          cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                          stderr=subprocess.DEVNULL)
        except (OSError, Closed) as exc:
            return None, f"could not start: {exc}"
        with child:
            status = _wait(child, out.fileno())
        if status != "ok":
            return None, status
        out.seek(0)
        return out.read(MAX_OUTPUT + 1), "ok"


def _wait(child: Contained, fileno: int) -> str:
    while child.popen.poll() is None:
        if child.breach:
            return child.breach
        if os.fstat(fileno).st_size > MAX_OUTPUT:
            return "output too large"  # leaving the ``with`` kills the session
        time.sleep(0.02)
    if child.breach:
        return child.breach
    if os.fstat(fileno).st_size > MAX_OUTPUT:
        return "output too large"
    code = child.popen.returncode
    return "ok" if code == 0 else f"exit status {code}"
