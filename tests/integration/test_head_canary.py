"""A hostile local HEAD never leaks: a `.git/HEAD` naming a file outside refs/, or a `.git`
file pointing outside the target, is never read, so a canary planted there reaches neither
the LangSmith trace (a sink on 127.0.0.1 records what is sent), nor the report, nor the
manifest."""

from __future__ import annotations

import gzip
import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest


class Sink(BaseHTTPRequestHandler):
    """Answers every LangSmith call with an empty JSON object and keeps the bodies."""

    bodies: ClassVar[list[bytes]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "zstd":
            import zstandard

            body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
        self.bodies.append(self.path.encode() + b"\n" + body)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PATCH = do_PUT = _answer

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def sink() -> Iterator[tuple[str, list[bytes]]]:
    bodies: ClassVar[list[bytes]] = []
    handler = type("RecordingSink", (Sink,), {"bodies": bodies})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("hostile", ["ref_outside_refs", "gitdir_outside"])
def test_a_hostile_head_never_reaches_the_trace_or_the_report(
        hostile: str, auditee_repo: Path, report_pdf: Path, tmp_path: Path,
        sink: tuple[str, list[bytes]]) -> None:
    canary = secrets.token_hex(20)  # 40 hex digits: it would pass for a commit if read
    if hostile == "ref_outside_refs":
        planted = tmp_path / "secret.txt"
        planted.write_text(canary + "\n")
        (auditee_repo / ".git" / "HEAD").write_text(
            "ref: refs/" + "../" * 40 + str(planted).lstrip("/") + "\n")
    else:
        elsewhere = tmp_path / "elsewhere"
        (auditee_repo / ".git").rename(elsewhere)
        (elsewhere / "HEAD").write_text(canary + "\n")
        (auditee_repo / ".git").write_text(f"gitdir: {elsewhere}\n")
    endpoint, bodies = sink
    out = tmp_path / "out"
    env = {**os.environ, "LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": endpoint,
           "LANGSMITH_API_KEY": "x", "LANGSMITH_PROJECT": "canary"}
    result = subprocess.run([sys.executable, "-m", "automaton_auditor", str(auditee_repo),
                             str(report_pdf), "--no-cache", "-q", "--output-dir", str(out)],
                            env=env, capture_output=True, text=True, timeout=300,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 3, result.stderr  # the repository cannot be read safely
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "refused" in errors[0]
    sent = b"\n".join(bodies)
    assert str(auditee_repo).encode() in sent  # the trace did reach the sink
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"manifest" in b"".join(p.name.encode() for p in out.rglob("*"))
    for where in (sent, written, result.stdout.encode(), result.stderr.encode()):
        assert canary.encode() not in where


def _plant(repo: Path, case: str) -> str:
    """Make `repo` hostile as `case` says; returns what the one error line must name."""
    git_dir = repo / ".git"
    if case == "packed_refs_fifo":  # git would block reading it
        os.mkfifo(git_dir / "packed-refs")
        return ".git/packed-refs: refused, a FIFO"
    if case == "head_dev_zero":  # read whole, it once took 5.9 GB
        (git_dir / "HEAD").unlink()
        (git_dir / "HEAD").symlink_to("/dev/zero")
        return ".git/HEAD: refused, a symlink to a device"
    # a `.git` file pointing inside the target at a git dir whose HEAD is a FIFO
    moved = repo / "store.git"
    git_dir.rename(moved)
    (repo / ".git").write_text("gitdir: store.git\n")
    (moved / "HEAD").unlink()
    os.mkfifo(moved / "HEAD")
    return "store.git/HEAD: refused, a FIFO"


MEASURED = """import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)
"""


@pytest.mark.parametrize("case", ["packed_refs_fifo", "head_dev_zero", "gitdir_head_fifo"])
def test_a_special_file_in_the_git_dir_is_one_error_line_naming_it(
        case: str, auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    """Refused before git or the reader opens it: the audit ends as any failed acquisition
    (exit 3, one error line, a partial report), never blocked on a FIFO or filling memory
    (peak RSS of the audit, measured by a parent of its own, far below 1 GB)."""
    needle = _plant(auditee_repo, case)
    result = subprocess.run([sys.executable, "-c", MEASURED, sys.executable, "-m",
                             "automaton_auditor", str(auditee_repo), str(report_pdf),
                             "--no-cache", "-q", "--output-dir", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=300,
                            stdin=subprocess.DEVNULL)
    peak_kb, code = map(int, result.stdout.split()[-2:])
    assert code == 3, result.stderr
    assert peak_kb < 1024 * 1024
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and needle in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    assert next((tmp_path / "out").glob("*/report.md")).is_file()  # the partial report
