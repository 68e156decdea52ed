"""A remote LangGraph Server caller sends the report's bytes, not a path on the server: the
context builder writes them to the server's inbox, the audit reads that file, and the bytes
do not stay in the checkpointed state."""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from automaton_auditor.graph import compile_graph
from automaton_auditor.settings import Settings


def test_a_report_sent_as_bytes_is_audited_and_not_kept_in_the_state(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    settings = Settings(output_dir=str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"))
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "remote-1"}}
    final = graph.invoke({"target": str(auditee_repo), "report_path": "final_report.pdf",
                          "report_base64": base64.b64encode(report_pdf.read_bytes()).decode(),
                          "settings": settings.to_state(), "run_id": "remote-1"}, config)
    assert final["final_report"].overall_score > 0, final.get("errors")
    received = Path(final["final_report"].report_path)
    assert received.parent == tmp_path / "cache" / "inbox" and received.suffix == ".pdf"
    assert received.read_bytes() == report_pdf.read_bytes()
    assert graph.get_state(config).values["report_base64"] == ""


def test_bytes_that_are_not_base64_are_an_input_error(auditee_repo: Path,
                                                      tmp_path: Path) -> None:
    settings = Settings(output_dir=str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"))
    final = compile_graph().invoke({"target": str(auditee_repo), "report_path": "r.pdf",
                                    "report_base64": "not base64!",
                                    "settings": settings.to_state()})
    assert final["errors"] == ["input: report_base64 is not valid base64"]


def test_an_inbox_under_a_home_that_does_not_exist_never_creates_that_home(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a server run as a service user with HOME=/nonexistent: its platform cache lies under
    # that home, which the inbox must not create; the user's private fallback cache holds it
    home = tmp_path / "nonexistent"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    settings = Settings(output_dir=str(tmp_path / "out"),
                        cache_dir=str(home / ".cache" / "automaton-auditor"))
    final = compile_graph().invoke({"target": str(auditee_repo), "report_path": "r.pdf",
                                    "report_base64": base64.b64encode(
                                        report_pdf.read_bytes()).decode(),
                                    "settings": settings.to_state()})
    received = Path(final["final_report"].report_path)
    assert not home.exists()
    assert received.parent.name == "inbox" and received.is_relative_to(tmp_path / "tmp")
    assert received.read_bytes() == report_pdf.read_bytes()


@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_a_name_planted_in_the_inbox_is_replaced_not_followed(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path, planted: str) -> None:
    """Whoever can write the inbox knows the name the report's bytes will take (their
    SHA-256): a symlink there had the bytes written over the file it names, a FIFO blocked
    the write for ever."""
    data = report_pdf.read_bytes()
    inbox = tmp_path / "cache" / "inbox"
    inbox.mkdir(parents=True)
    name = inbox / f"{hashlib.sha256(data).hexdigest()}.pdf"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    if planted == "link":
        name.symlink_to(victim)
    else:
        os.mkfifo(name)
    settings = Settings(output_dir=str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"))
    box: dict[str, object] = {}

    def run() -> None:
        box["final"] = compile_graph().invoke({
            "target": str(auditee_repo), "report_path": "r.pdf",
            "report_base64": base64.b64encode(data).decode(), "settings": settings.to_state()})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the audit blocked on the planted inbox file"
    assert victim.read_text() == "keep me\n"
    assert not name.is_symlink() and name.read_bytes() == data


def test_without_a_cache_dir_the_inbox_is_not_a_shared_temporary_folder(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`$TMPDIR/inbox` is a name any local user can make first (and fill with links)."""
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setenv("AUDITOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", None)
    (tmp_path / "tmp").mkdir()
    settings = Settings(output_dir=str(tmp_path / "out"))
    final = compile_graph().invoke({"target": str(auditee_repo), "report_path": "r.pdf",
                                    "report_base64": base64.b64encode(
                                        report_pdf.read_bytes()).decode(),
                                    "settings": settings.to_state()})
    received = Path(final["final_report"].report_path)
    assert received.parent == tmp_path / "cache" / "inbox"
    assert not (tmp_path / "tmp" / "inbox").exists()
