"""What `audit run` writes and gates beyond the report folder: `--sarif FILE`, `--format`
and `--baseline FILE` (checked before the audit starts, applied after it ends)."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from automaton_auditor.cli.errors import fail
from automaton_auditor.exits import ExitCode
from automaton_auditor.safefile import kind_of, write_atomic

if TYPE_CHECKING:
    from automaton_auditor.service import Outcome
    from automaton_auditor.state import AuditReport

OutputFormat = Literal["text", "json", "sarif"]
FORMATS: tuple[OutputFormat, ...] = ("text", "json", "sarif")


def check_format(value: str | None, json_output: bool) -> OutputFormat:
    """The stdout format: `--format`, or json for `--json`; a bad one is a usage error."""
    chosen = value or ("json" if json_output else "text")
    if chosen not in FORMATS or (json_output and chosen != "json"):
        why = ("--json and --format disagree" if chosen in FORMATS
               else f"unknown --format {chosen!r} (choose text, json or sarif)")
        raise fail(why, ExitCode.INPUT)
    return chosen


def check_sarif_path(path: Path | None) -> None:
    """Refuse a `--sarif` path that cannot be written, before any work."""
    if path is None:
        return
    try:
        info: os.stat_result | None = path.stat()
    except FileNotFoundError:
        info = None  # not there yet (or a symlink to a file not there yet): it is created
    except OSError as exc:  # a symlink loop, a file where a folder should be, a long name
        raise fail(f"--sarif {path}: {_unreachable(path, exc)}", ExitCode.INPUT) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise fail(f"--sarif {path}: is a folder, not a file", ExitCode.INPUT)
    kind = kind_of(info.st_mode) if info is not None else ""
    if kind:  # a FIFO or a device is no place for a report
        raise fail(f"--sarif {path}: is {kind}, not a regular file", ExitCode.INPUT)
    try:  # where a symlink points: the file written is the one it names
        Path(os.path.realpath(path)).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(f"--sarif {path}: cannot create its folder ({exc.strerror})",
                   ExitCode.INPUT) from None


def check_output_dir(path: Path) -> None:
    """Refuse an output folder that cannot hold reports (a file, or a file on its way, a
    symlink loop or a symlink to nothing on its way, a name too long, or a folder this user
    cannot write), before any work: otherwise the whole audit would run and then fail to
    write its report."""
    for place in (path, *path.parents):
        try:
            os.lstat(place)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                continue  # not there yet, or beyond a file or a broken link: found further up
            raise fail(f"--output-dir {path}: {_unreachable(place, exc)}",
                       ExitCode.INPUT) from None
        try:
            info = os.stat(place)  # what a symlink there leads to
        except OSError as exc:
            raise fail(f"--output-dir {path}: {_unreachable(place, exc, path)}",
                       ExitCode.INPUT) from None
        if not stat.S_ISDIR(info.st_mode):
            where = "is a file" if place == path else f"{place} is a file"
            raise fail(f"--output-dir {path}: {where}, not a folder", ExitCode.INPUT)
        if not os.access(place, os.W_OK | os.X_OK):
            raise fail(f"--output-dir {path}: {place} is not writable", ExitCode.INPUT)
        _creatable(path, place)
        return


def _creatable(path: Path, place: Path) -> None:
    """Refuse the folders `path` adds below `place` (the existing folder it starts from)
    when one's name is longer than that file system takes: mkdir would fail only at the
    end of the audit, and lstat says nothing of a name under a folder not there yet."""
    try:
        limit = os.pathconf(place, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255  # the usual limit, where the file system does not say
    for part in path.relative_to(place).parts:
        if len(os.fsencode(part)) > limit:
            raise fail(f"--output-dir {path}: cannot be created (a folder name is longer "
                       f"than {limit} bytes)", ExitCode.INPUT)


def _unreachable(place: Path, exc: OSError, named: Path | None = None) -> str:
    """Why `place` cannot be followed, for an error line about `named` (itself if None)."""
    where = "" if named in (None, place) else f"{place} "
    if exc.errno == errno.ELOOP:  # the loop may be a folder on the way
        return f"{where}{'is' if os.path.islink(place) else 'runs into'} a symlink loop"
    if exc.errno == errno.ENOENT and os.path.islink(place):
        return f"{where}is a dangling symlink (to {os.readlink(place)}, which does not exist)"
    return f"{where}cannot be used ({exc.strerror})".lstrip()


def load_baseline(path: Path | None) -> AuditReport | None:
    """The `--baseline` report, read before the audit (a bad file is exit 2)."""
    if path is None:
        return None
    from automaton_auditor.cli.diff import load_audit

    return load_audit(str(path))


def write_sarif(outcome: Outcome, path: Path | None) -> None:
    """Write the run's SARIF to `path` (nothing for a run refused as bad input)."""
    from automaton_auditor.output.document import sarif_json
    from automaton_auditor.state import final_report_of

    report = final_report_of(outcome.final)
    if path is None or report is None or outcome.code == ExitCode.INPUT:
        return
    try:  # renamed into place: a FIFO put there since the check is replaced, never opened
        write_atomic({path: sarif_json(report)})
    except OSError as exc:
        raise fail(f"--sarif {path}: cannot write ({exc.strerror})", ExitCode.FAILED) from None


def apply_baseline(outcome: Outcome, baseline: AuditReport | None, name: str) -> Outcome:
    """A finished run that regressed against the baseline exits 1, saying why in one line."""
    from automaton_auditor.output.diff import diff_reports
    from automaton_auditor.state import final_report_of

    report = final_report_of(outcome.final)
    if baseline is None or report is None or outcome.code != ExitCode.OK:
        return outcome
    result = diff_reports(baseline, report)
    if not result.regression:
        return outcome
    written = (outcome.final.get("report_files") or {}).get("json", "<report.json>")
    return replace(outcome, code=ExitCode.FAIL_UNDER, message=(
        f"regression against the baseline {name}: {'; '.join(result.reasons)} "
        f"(details: audit diff {name} {written})"))
