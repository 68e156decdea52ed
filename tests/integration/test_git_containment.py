"""Issue 15: what CI hands a job — a shallow checkout — and every other git setup is audited
on what it holds, never lazy-fetches, starts a bounded number of processes and leaves none
behind, even when the audit is stopped (SIGTERM) or killed (SIGKILL) mid-acquisition.

Processes are counted by sampling /proc for the containment marker (every process the audit
starts carries ``AUDITOR_CONTAINED=<audit pid>``); nothing here asserts a duration.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from automaton_auditor.forensics.git.acquire import (
    GitLimits,
    acquire,
    git_findings,
    parse_target,
)
from tests.unit.test_containment import marked, until
from tests.unit.test_git_narrative import STEPWISE, facet, git, make_repo

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
MAX_PROCESSES = 60  # the bound on processes alive at once


@contextmanager
def sampled(pid: int) -> Iterator[list[int]]:
    """Count the live processes marked for `pid` every 20 ms; yields the samples."""
    samples: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append(len(marked(str(pid))))
            stop.wait(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join()


def clone(*args: str) -> None:
    subprocess.run(["git", "clone", "-q", *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull,
                        "GIT_CONFIG_NOSYSTEM": "1"})


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "origin", STEPWISE)
    git(repo, "config", "uploadpack.allowFilter", "true")
    return repo


def _arm(repo: Path, canary: Path) -> None:
    """Hostile config and hooks: every way a git run in the target could execute code or
    fetch, plus an include that would block git on a FIFO if it read this config."""
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("post-checkout", "pre-upload-pack", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {canary}\n")
        (hooks / name).chmod(0o755)
    fifo = repo.parent / "config.fifo"
    os.mkfifo(fifo)
    for key, value in (("core.fsmonitor", f"touch {canary}"),
                       ("remote.origin.uploadpack", f"touch {canary}; git-upload-pack"),
                       ("remote.origin.promisor", "true"),
                       ("extensions.partialClone", "origin"),
                       ("uploadpack.packObjectsHook", f"touch {canary}"),
                       ("protocol.file.allow", "always"),
                       ("include.path", str(fifo))):
        with (repo / ".git" / "config").open("a") as handle:
            section, _, name = key.rpartition(".")
            head, _, sub = section.partition(".")
            handle.write(f'[{head} "{sub}"]\n' if sub else f"[{head}]\n")
            handle.write(f"\t{name} = {value}\n")


SETUPS = ["depth1", "depth1_hostile", "blobless_origin_gone", "treeless_origin_gone",
          "alternates", "bare"]


def _target(setup: str, origin: Path, tmp_path: Path) -> Path:
    target = tmp_path / "target"
    url = f"file://{origin}"
    if setup.startswith("depth1"):
        clone("--depth", "1", url, str(target))
        if setup == "depth1_hostile":
            _arm(target, tmp_path / "CANARY")
    elif setup.endswith("origin_gone"):
        spec = "blob:none" if setup.startswith("blobless") else "tree:0"
        clone(f"--filter={spec}", "--no-local", url, str(target))
        shutil.rmtree(origin)
    elif setup == "alternates":
        clone("--shared", str(origin), str(target))
    else:
        clone("--bare", str(origin), str(target))
    return target


@pytest.mark.parametrize("setup", SETUPS)
def test_every_git_setup_is_audited_on_what_it_holds(setup: str, origin: Path,
                                                     tmp_path: Path) -> None:
    target = _target(setup, origin, tmp_path)
    limits = GitLimits(timeout_s=120)
    with sampled(os.getpid()) as samples:
        checkout = acquire(parse_target(str(target), limits), tmp_path / "work", limits)
        findings = git_findings(checkout.path, limits)
    assert until(lambda: marked(str(os.getpid())) == [])
    assert max(samples) < MAX_PROCESSES
    assert not (tmp_path / "CANARY").exists()
    # HEAD's files are all there: every setup holds the blobs of the commit it checked out
    assert (checkout.path / "src" / "graph.py").read_text() == "g = 1\n"
    assert checkout.skipped == {}
    assert "[remote" not in (checkout.path / ".git" / "config").read_text()
    history, bulk = facet(findings, "git.history"), facet(findings, "git.bulk_upload")
    if setup.startswith("depth1"):
        assert checkout.shallow and history.data["count"] == 1 and history.data["shallow"]
        assert history.pattern == "neutral" and "lower bound" in history.rationale
        assert bulk.found is False and bulk.rationale.startswith("Not judged: the history "
                                                                 "is shallow")
    else:
        assert not checkout.shallow and history.data["count"] == len(STEPWISE)
        assert history.found and history.pattern == "success"
    if setup == "treeless_origin_gone":  # commits and dates hold, the paths are unknown
        assert history.data["paths_known"] is False and not bulk.found


# A stand-in for git that, once acquisition reads the object store, hangs and leaves an
# orphan behind (or forks a storm): the audit must still leave nothing running.
SHIM = """#!/bin/sh
case " $* " in
  *" cat-file --batch-check"*) {action} ;;
esac
exec {git} "$@"
"""
HANG = "(sleep 600 &) ; exec sleep 600"
STORM = "i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); done; wait"


def _audit(target: Path, report: Path, out: Path, tmp_path: Path, *extra: str,
           shim: str | None = None, cwd: Path | None = None,
           env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    environ = {**os.environ, **(env or {})}
    if shim is not None:
        bin_dir = tmp_path / "shim"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "git").write_text(SHIM.format(action=shim, git=shutil.which("git")))
        (bin_dir / "git").chmod(0o755)
        environ["PATH"] = f"{bin_dir}:{environ['PATH']}"
    return subprocess.Popen([sys.executable, "-m", "automaton_auditor", str(target),
                             str(report), "--no-cache", "--output-dir", str(out), *extra],
                            cwd=cwd, env=environ, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


@contextmanager
def cleanup(proc: subprocess.Popen[str]) -> Iterator[None]:
    try:
        yield
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        for pid in marked(str(proc.pid)) + marked(f"{proc.pid}:watchdog"):
            os.kill(pid, signal.SIGKILL)  # only if the test already failed


def gone(pid: int) -> bool:
    """No process of the audit `pid` is left, its watchdog included."""
    return marked(str(pid)) == [] and marked(f"{pid}:watchdog") == []


@pytest.mark.parametrize("setup", ["depth1", "depth1_hostile"])
def test_a_depth_one_checkout_is_audited_with_a_shallow_warning(
        setup: str, origin: Path, report_pdf: Path, tmp_path: Path) -> None:
    target = _target(setup, origin, tmp_path)
    hostile = setup == "depth1_hostile"
    if hostile:  # its config names a FIFO: reading it would block the uncommitted check
        (target / "README.md").write_text("changed\n")
    proc = _audit(target, report_pdf, tmp_path / "out", tmp_path, "-q")
    with cleanup(proc), sampled(proc.pid) as samples:
        _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert max(samples) < MAX_PROCESSES
    assert until(lambda: gone(proc.pid))
    assert not (tmp_path / "CANARY").exists()
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 + hostile and "history is shallow" in warnings[-1], err
    if hostile:
        assert "uncommitted changes (1 path(s), e.g. README.md)" in warnings[0]
    report = next((tmp_path / "out").glob("*/report.md")).read_text()
    errors = report.split("## Errors and Warnings", 1)[1]
    assert "history is shallow" in errors and "lower bound" in errors


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL, signal.SIGHUP,
                                    signal.SIGQUIT, signal.SIGINT])
def test_an_audit_stopped_mid_acquisition_leaves_no_process(
        signum: int, origin: Path, report_pdf: Path, tmp_path: Path) -> None:
    target = _target("depth1", origin, tmp_path)
    proc = _audit(target, report_pdf, tmp_path / "out", tmp_path, "-q", shim=HANG)
    with cleanup(proc):
        # acquisition is under way once the stand-in's sleepers run
        assert until(lambda: len(marked(str(proc.pid))) >= 2, 120)
        os.kill(proc.pid, signum)
        if signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            os.kill(proc.pid, signum)  # `timeout` and a launcher (uv run) both send one
        _out, err = proc.communicate(timeout=60)
        assert until(lambda: gone(proc.pid))
    # SIGKILL: the children notice on their own (PR_SET_PDEATHSIG, the watchdog's pipe)
    expected = -signal.SIGKILL if signum == signal.SIGKILL else 128 + signum
    assert proc.returncode == expected
    if signum != signal.SIGKILL:  # SIGTERM takes Ctrl-C's path: one line, how to resume
        errors = [line for line in err.splitlines() if line.startswith("error: ")]
        said = "interrupted" if signum == signal.SIGINT else \
            f"stopped by {signal.Signals(signum).name}; child processes killed"
        assert len(errors) == 1 and errors[0].startswith(f"error: {said}; "), err
        assert "resume with: audit resume " in errors[0] or "nothing to resume" in errors[0]
        if "resume with: " in errors[0]:  # a checkpoint: the partial report is written from it
            assert "; partial report written; " in errors[0]
            report = next((tmp_path / "out").glob("*/report.md")).read_text()
            assert "The audit was stopped early" in report


def test_a_process_storm_is_a_one_line_error_and_a_partial_report(
        origin: Path, report_pdf: Path, tmp_path: Path) -> None:
    target = _target("depth1", origin, tmp_path)
    proc = _audit(target, report_pdf, tmp_path / "out", tmp_path, "-q", shim=STORM)
    with cleanup(proc), sampled(proc.pid) as samples:
        _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 3
    assert max(samples) < MAX_PROCESSES
    assert until(lambda: gone(proc.pid))
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "process_limit" in errors[0], err
    assert "partial report written" in errors[0]
    assert next((tmp_path / "out").glob("*/report.md")).is_file()


def test_a_ci_checkout_is_audited_by_the_exit_code_table(
        auditee_repo: Path, report_pdf: Path, tmp_path: Path) -> None:
    """The way CI checks out: depth 1, detached HEAD, CI=true, no TTY, a HOME and a cache
    directory that cannot be written (under a regular file, so even root cannot)."""
    checkout = tmp_path / "ci"
    clone("--depth", "1", f"file://{auditee_repo}", str(checkout))
    git(checkout, "checkout", "-q", "--detach", "HEAD")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    home = tmp_path / "home"
    home.mkdir(mode=0o555)
    env = {"CI": "true", "HOME": str(home), "AUDITOR_CACHE_DIR": str(blocker / "cache"),
           "XDG_CACHE_HOME": str(blocker / "xdg"), "TERM": "dumb"}
    # --output-dir: the auditor writes into the audited repository only when told to
    proc = subprocess.Popen([sys.executable, "-m", "automaton_auditor", ".", str(report_pdf),
                             "--fail-under", "3", "--output-dir", "audit"], cwd=checkout,
                            env={**os.environ, **env},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    with cleanup(proc):
        _out, err = proc.communicate(timeout=300)
    report = next(checkout.glob("audit/*/report.json"))
    import json

    overall = json.loads(report.read_text())["overall_score"]
    assert proc.returncode == (1 if overall < 3 else 0), err
    assert "Traceback" not in err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2, err
    assert "history is shallow" in warnings[1]
    assert warnings[0].startswith(f"warning: cache directory {blocker / 'cache'} is not "
                                  "writable")
    assert until(lambda: gone(proc.pid))
