"""Hostile reports. A report that is missing or is not a regular file (a directory, a FIFO, a
device) is an input error: exit 2, refused at once. A report that is there but cannot be read
(empty, not a PDF, truncated, encrypted, too large) is evidence: exit 0, a `warning:` line and
the reason in the report. A PDF built to exhaust the reader (a decompression bomb, 10,000
pages, deep nesting) is read within the memory ceiling or given up on, and the audit ends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.builders import (
    FONT,
    TEXT,
    deep_pages_pdf,
    docx,
    hook,
    inflating_stream,
    make_pdf,
    many_pages_pdf,
    one_page_pdf,
    png,
    raw_pdf,
    special_at,
    stream,
)
from tests.hostile.harness import Case, Stream, audit_and_check, params


def missing(case: Case) -> Path:
    return case.sandbox / "no-such-report.pdf"


def written(data: bytes) -> Callable[[Case], Path]:
    def build(case: Case) -> Path:
        (case.sandbox / "report.pdf").write_bytes(data)
        return case.sandbox / "report.pdf"
    return build


def truncated(case: Case) -> Path:
    whole = make_pdf(case.sandbox / "whole.pdf").read_bytes()
    (case.sandbox / "report.pdf").write_bytes(whole[: len(whole) // 2])
    return case.sandbox / "report.pdf"


def encrypted(case: Case) -> Path:
    return make_pdf(case.sandbox / "report.pdf", encrypt="user-password")


def docx_renamed(case: Case) -> Path:
    return docx(case.sandbox / "report.pdf", "The graph fans out to the detectives.")


def png_renamed(case: Case) -> Path:
    return png(case.sandbox / "report.pdf")


def sparse_256mb(case: Case) -> Path:
    """A valid PDF padded (sparsely) to 256 MB: over the report size cap."""
    path = make_pdf(case.sandbox / "report.pdf")
    with path.open("r+b") as sparse:
        sparse.truncate(256 << 20)
    return path


def bomb(case: Case) -> Path:
    """Page 1 reads normally; page 2's content stream is ~4 KB that inflates to 2 GiB."""
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 6 0 R >> >> >>")
    return raw_pdf(case.sandbox / "report.pdf", [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        page % 5, page % 7, stream(TEXT), FONT,
        stream(inflating_stream(), b"/Filter [/FlateDecode /FlateDecode] ")])


def ten_thousand_pages(case: Case) -> Path:
    return many_pages_pdf(case.sandbox / "report.pdf", 10_000)


def deep_page_tree(case: Case) -> Path:
    return deep_pages_pdf(case.sandbox / "report.pdf", 5_000)


def nested_array(case: Case) -> Path:
    depth = 100_000
    return one_page_pdf(case.sandbox / "report.pdf",
                        page_extra=b"/Junk " + b"[" * depth + b"]" * depth + b" ")


def launch_action(case: Case) -> Path:
    """Open actions that a viewer would run: a Launch of a script and JavaScript."""
    script = hook(case.sandbox / "launch.sh", case.canary)
    action = (b"/OpenAction << /S /Launch /F (%s) /NewWindow true >> "
              b"/AA << /WC << /S /JavaScript /JS (app.launchURL\\('file://%s'\\)) >> >> "
              % (str(script).encode(), str(script).encode()))
    return one_page_pdf(case.sandbox / "report.pdf", catalog_extra=action)


def odd_name(case: Case) -> Path:
    folder = case.sandbox / "team (final) — équipe"
    folder.mkdir()
    return make_pdf(folder / "report v2 (final) $HOME;.pdf")


HTML = (b"<!doctype html><html><body><h1>Architecture</h1><p>The graph fans out to the "
        b"detectives.</p><script>fetch('http://127.0.0.1/')</script></body></html>")
# (id, builder, exit code, stream, needle, marks)
CASES: list[tuple[str, Callable[[Case], Path], int, Stream, str, tuple[object, ...]]] = [
    ("missing", missing, 2, "error", "not found", ()),
    ("directory", special_at("report.pdf", "dir"), 2, "error", "not a regular file", ()),
    ("fifo", special_at("report.pdf", "fifo"), 2, "error", "not a regular file", ()),
    ("dev-zero", lambda case: Path("/dev/zero"), 2, "error", "not a regular file", ()),
    ("symlink-dev-zero", special_at("report.pdf", "dev-zero"), 2, "error", "not a regular file",
     ()),
    ("empty", written(b""), 0, "warning", "report", ()),
    ("text-named-pdf", written(b"Architecture report, plain text.\n" * 50), 0, "warning",
     "report", ()),
    ("truncated", truncated, 0, "warning", "report", ()),
    ("encrypted", encrypted, 0, "warning", "report", ()),
    ("docx-renamed", docx_renamed, 0, "warning", "report", ()),
    ("html-renamed", written(HTML), 0, "warning", "report", ()),
    ("png-renamed", png_renamed, 0, "warning", "report", ()),
    ("over-size-cap", sparse_256mb, 0, "warning", "report", ()),
    ("bomb-2gib", bomb, 0, "any", "", (pytest.mark.hostile_slow,)),
    ("pages-10000", ten_thousand_pages, 0, "any", "", (pytest.mark.hostile_slow,)),
    ("deep-page-tree", deep_page_tree, 0, "any", "", ()),
    ("nested-array", nested_array, 0, "any", "", (pytest.mark.hostile_slow,)),
    ("launch-action", launch_action, 0, "any", "", ()),
    ("odd-name", odd_name, 0, "any", "", ()),
]


@pytest.mark.parametrize(("build", "code", "stream", "needle"), params(CASES))
def test_report(case: Case, good_repo: Path, build: Callable[[Case], Path], code: int,
                stream: Stream, needle: str) -> None:
    audit_and_check(case, good_repo, build(case), code, stream, needle, fast=code == 2)

