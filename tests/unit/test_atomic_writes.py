"""Report files are written whole or not at all (`safefile.write_atomic`): a write that fails
(a full disk, a file size limit) leaves no truncated report.md beside "no report written",
and an earlier report where it was."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from automaton_auditor.output.files import write_report_files
from automaton_auditor.safefile import write_atomic
from tests.unit.output_helpers import criterion, report, unsafe_evidence

# Writes the report given as JSON (argv[1]) under argv[2], in a child whose files may not
# grow past LIMIT bytes: a real failing write() (EFBIG) where the disk would say ENOSPC.
LIMIT = 2048
CHILD = """
import sys
from pathlib import Path
from automaton_auditor.output.files import write_report_files
from automaton_auditor.state import AuditReport

audit = AuditReport.model_validate_json(Path(sys.argv[1]).read_text(encoding="utf-8"))
try:
    write_report_files(audit, Path(sys.argv[2]), {"run": "limited"})
except OSError as exc:
    print(exc.errno)
"""


def _limited() -> None:  # in the child, before exec: past the limit, write() fails
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _write_limited(tmp_path: Path, out: Path) -> str:
    evidence = unsafe_evidence()
    audit = report([criterion("safe_tool_engineering", 2, evidence)], evidence,
                   executive_summary="x" * (4 * LIMIT))
    source = tmp_path / "audit.json"
    source.write_text(audit.model_dump_json(), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", CHILD, str(source), str(out)],
                          capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parents[2], preexec_fn=_limited, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_failed_write_leaves_no_truncated_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _write_limited(tmp_path, out) == str(errno.EFBIG)
    left = [p for p in out.rglob("*") if p.is_file()]
    assert left == [], f"a failed write left {[(p.name, p.stat().st_size) for p in left]}"


def test_a_failed_write_keeps_the_earlier_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    evidence = unsafe_evidence()
    earlier = write_report_files(report([criterion("safe_tool_engineering", 3, evidence)],
                                        evidence), out, {"run": "earlier"})
    before = {kind: Path(path).read_bytes() for kind, path in earlier.items()}
    assert _write_limited(tmp_path, out) == str(errno.EFBIG)
    assert {kind: Path(path).read_bytes() for kind, path in earlier.items()} == before
    assert sorted(p.name for p in Path(earlier["markdown"]).parent.iterdir()) == \
        sorted(Path(p).name for p in earlier.values())  # no temporary left beside them


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_full_disk_writes_none_of_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              failing: str) -> None:
    """The disk may say it is full only when the data is flushed, or when the rename needs
    a new folder block: either way, no file is replaced and no temporary is left."""
    (tmp_path / "a.md").write_text("earlier\n", encoding="utf-8")

    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, failing, full)
    with pytest.raises(OSError, match="No space left"):
        write_atomic({tmp_path / "a.md": "new\n", tmp_path / "b.json": "{}\n"})
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "earlier\n"


def test_a_symlinked_file_is_written_where_it_points(tmp_path: Path) -> None:
    """As `open(path, "w")` did: the file the link names is replaced, the link kept."""
    (tmp_path / "real.sarif").write_text("old", encoding="utf-8")
    (tmp_path / "link.sarif").symlink_to("real.sarif")
    write_atomic({tmp_path / "link.sarif": "new"})
    assert (tmp_path / "link.sarif").is_symlink()
    assert (tmp_path / "real.sarif").read_text(encoding="utf-8") == "new"
