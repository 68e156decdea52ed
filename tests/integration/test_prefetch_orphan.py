"""The contained report reader must not outlive an audit that is killed (SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import sys, time
from dataclasses import asdict
from automaton_auditor.forensics import sandbox
from automaton_auditor.forensics.pdf.model import ReportLimits
request = {"path": sys.argv[1], "terms": ["Metacognition"], "limits": asdict(ReportLimits())}
sandbox.start_keyed("k", "doc", request, sandbox.ReaderBounds())
print(sandbox.take("k").child.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purposes
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


@pytest.mark.skipif(sys.platform != "linux", reason="uses /proc and SIGKILL")
def test_worker_exits_when_the_audit_is_killed(report_pdf: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", SCRIPT, str(report_pdf)],
                              stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    worker = int(parent.stdout.readline().split()[0])
    assert _alive(worker)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _alive(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive, "the prefetch worker outlived the killed audit"
