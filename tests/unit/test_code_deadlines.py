"""A clone awaited through ``asyncio.wait_for(..., timeout)`` is bounded in time
(`forensics.code.deadlines`), as a ``timeout=`` on the call would bound it."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# the asyncio subprocess clone: waiting for the process is what is bounded
COMMUNICATE = '''
import asyncio
import shutil
import tempfile


async def clone(url):
    tmp = tempfile.mkdtemp()
    proc = await asyncio.create_subprocess_exec(
        "git", "clone", url, tmp, stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    shutil.rmtree(tmp)
    return out
'''

# the function that clones, awaited with a timeout by its caller
CALLER = '''
import asyncio
import shutil
import tempfile


async def clone_repo(url, dest):
    proc = await asyncio.create_subprocess_exec("git", "clone", url, dest)
    await proc.wait()


async def run(url):
    tmp = tempfile.mkdtemp()
    await asyncio.wait_for(clone_repo(url, tmp), 60)
    shutil.rmtree(tmp)
'''

# a project wrapper's clone call wrapped directly
WRAPPER = '''
import asyncio


async def run_git_async(args):
    proc = await asyncio.create_subprocess_exec("git", *args)
    return await proc.wait()


async def run(url, dest):
    return await asyncio.wait_for(run_git_async(["clone", url, dest]), timeout=60)
'''


def _facets(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"tools.py": text})
    findings = code_findings(tmp_path, names)[0]
    return (by_facet(findings, "safety.clone"), by_facet(findings, "safety.clone_sandbox"),
            by_facet(findings, "safety.timeouts"))


def test_an_asyncio_subprocess_clone_is_a_clone_bounded_by_wait_for(tmp_path: Path) -> None:
    clone, sandbox, timeouts = _facets(tmp_path / "communicate", COMMUNICATE)
    assert clone.found and sandbox.found and "tools.py:9: proc = await" in (
        sandbox.content or "")
    assert timeouts.found and timeouts.data["total"] == 1
    assert "1 of them awaited through asyncio.wait_for with a timeout" in timeouts.rationale
    unbounded = {
        "awaited": COMMUNICATE.replace("await asyncio.wait_for(proc.communicate(), "
                                       "timeout=120)", "await proc.communicate()"),
        "no limit": COMMUNICATE.replace("timeout=120", "timeout=None"),
    }
    for name, text in unbounded.items():
        assert not _facets(tmp_path / name, text)[2].found, name


def test_a_clone_function_every_caller_awaits_with_a_timeout_is_bounded(
        tmp_path: Path) -> None:
    assert _facets(tmp_path / "caller", CALLER)[2].found
    # one caller awaits it without a limit: not every run of the clone is bounded
    other = CALLER + "\n\nasync def again(url):\n    await clone_repo(url, tempfile.mkdtemp())\n"
    assert not _facets(tmp_path / "other", other)[2].found


def test_a_wrapped_clone_call_awaited_with_a_timeout_is_bounded(tmp_path: Path) -> None:
    clone, _, timeouts = _facets(tmp_path / "wrapper", WRAPPER)
    assert clone.found and timeouts.found
    assert not _facets(tmp_path / "bare", WRAPPER.replace(
        "asyncio.wait_for(run_git_async([\"clone\", url, dest]), timeout=60)",
        "run_git_async([\"clone\", url, dest])"))[2].found
