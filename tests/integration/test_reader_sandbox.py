"""The report's readers run in a contained child: a ceiling breached or a crash there is a
found=False fact with the reason, never a dead audit, and the audit's memory stays bounded."""

from __future__ import annotations

import resource
import sys
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from automaton_auditor.forensics import sandbox
from automaton_auditor.forensics.pdf.model import ReportLimits
from automaton_auditor.nodes import detectives
from automaton_auditor.rubric import load_rubric
from automaton_auditor.settings import Settings

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc")


def inflating_pdf(path: Path, size: int) -> Path:
    """A one-page PDF whose content stream (two Flate layers, a few KB on disk) inflates to
    `size` bytes of path operators."""
    inner = zlib.compressobj(9)
    block = b"0 0 m\n" * (1 << 18)
    parts = [inner.compress(block) for _ in range(size // len(block) + 1)] + [inner.flush()]
    stream = zlib.compress(b"".join(parts), 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
               b"<< /Length %d /Filter [/FlateDecode /FlateDecode] >>\nstream\n" % len(stream)
               + stream + b"\nendstream"]
    out, offsets = b"%PDF-1.7\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 5\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o
                                                         for o in offsets)
    out += b"trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    path.write_bytes(out)
    return path


def _state(report: Path, **settings: Any) -> dict[str, Any]:
    return {"target": ".", "report_path": str(report), "rubric": load_rubric().model_dump(),
            "settings": Settings(cache_dir=None, **settings).to_state()}


def test_a_pdf_that_inflates_past_the_memory_ceiling_is_a_fact_not_a_dead_audit(
        tmp_path: Path) -> None:
    bomb = inflating_pdf(tmp_path / "bomb.pdf", 400 << 20)
    assert bomb.stat().st_size < 8192
    update = detectives.vision_inspector(_state(bomb, reader_memory_mb=256))  # type: ignore[arg-type]
    status = update["detective_status"]["vision"]
    assert status.state == "degraded"
    assert "memory ceiling" in status.reason or "crashed" in status.reason, status.reason
    facts = update["evidences"]["vision"]
    assert facts and all(not e.found for e in facts)
    assert all(e.rationale == status.reason for e in facts)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mb < 1024, f"a child reached {peak_mb:.0f} MB"


def test_a_cpu_ceiling_and_a_bad_request_are_one_line_failures(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    # Forty pages of text: past the text-layer check, the reader must convert them, which
    # takes well over one second of CPU (a one-line page could be turned away before that).
    pdf = canvas.Canvas(str(tmp_path / "r.pdf"))
    for page in range(40):
        for line in range(40):
            pdf.drawString(72, 760 - 18 * line, f"Page {page} line {line}: the graph fans "
                                                "out to the detectives, then the judges.")
        pdf.showPage()
    pdf.save()
    request = {"path": str(tmp_path / "r.pdf"), "terms": [], "limits": asdict(ReportLimits())}
    with pytest.raises(sandbox.ReaderFailed) as slow:
        sandbox.start("doc", request, sandbox.ReaderBounds(cpu_s=1)).result()
    assert slow.value.kind == "cpu_time" and "1 s CPU-time ceiling" in str(slow.value)
    with pytest.raises(sandbox.ReaderFailed) as bad:
        sandbox.start("no such task", request, sandbox.ReaderBounds()).result()
    assert bad.value.kind == "crash" and "\n" not in str(bad.value)


def test_an_unreadable_report_is_the_doc_fact_with_its_reason(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
    update = detectives.doc_analyst(_state(truncated))  # type: ignore[arg-type]
    assert update["detective_status"]["doc"].state == "degraded"
    facts = update["evidences"]["doc"]
    assert facts and all(not e.found and "truncated.pdf" in e.rationale for e in facts)


def test_the_reader_gets_no_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-reader")
    monkeypatch.setenv("AUDITOR_DOCLING_FULL", "0")
    request = {"path": str(tmp_path / "none.pdf"), "terms": [],
               "limits": asdict(ReportLimits())}
    job = sandbox.start("doc", request, sandbox.ReaderBounds())
    try:
        environ = Path(f"/proc/{job.child.pid}/environ").read_bytes()
    finally:
        job.cancel()
    assert b"sk-canary-reader" not in environ and b"OPENAI_API_KEY" not in environ
    assert b"AUDITOR_DOCLING_FULL=0" in environ and b"HF_HUB_OFFLINE=1" in environ
