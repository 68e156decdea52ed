"""SIGTERM, SIGHUP and SIGQUIT take Ctrl-C's path: one `error:` line that says how to resume, exit
128 + the signal, repeats ignored; a run stuck in a worker thread still ends, with the
hint, once the grace period is over."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

SCRIPT = """
import sys, time
from automaton_auditor import exits
exits.STOP_GRACE_S = 0.5
exits.install_sigint()
exits.set_resume_hint(lambda: "resume with: audit resume R1")
try:
    print("ready", flush=True)  # inside: the signal may come before the sleep starts
    time.sleep(60)
except KeyboardInterrupt:
    if {unwinds}:
        sys.stderr.write(exits.error_line(exits.interruption() + "; unwound") + "\\n")
        exits.note_error()
        sys.exit(exits.interrupted_code())
    time.sleep(60)  # waiting on a node that will not stop
"""


@pytest.mark.parametrize("unwinds", [True, False])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT])
def test_a_stop_signal_is_one_line_with_the_resume_hint(signum: int, unwinds: bool) -> None:
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(unwinds=unwinds)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        proc.send_signal(signum)
        proc.send_signal(signum)  # `timeout` signals the group and `uv run` forwards it
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    name = signal.Signals(signum).name
    end = "unwound" if unwinds else "resume with: audit resume R1"
    assert err.splitlines() == [f"error: stopped by {name}; child processes killed; {end}"]
    assert proc.returncode == 128 + signum
