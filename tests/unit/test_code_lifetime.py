"""A clone whose TemporaryDirectory is removed as its function returns the path: deleted
before use, never "removed after use" (`forensics.code.lifetime`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo
from .test_code_auth import LIBRARY_MESSAGE

# Bnobody47/The-Auditor@interim src/tools/repo_tools.py, shortened: the object is a local
DROPPED = '''
import subprocess
import tempfile
from pathlib import Path


def clone(url):
    tmp_dir = tempfile.TemporaryDirectory()
    target = Path(tmp_dir.name) / "repo"
    subprocess.run(["git", "clone", url, str(target)], check=True)
    return target
'''

# Azazh/the-automaton-auditor@interim src/tools/repo_tools.py, shortened
WITH_BLOCK = '''
import subprocess
import tempfile


def clone(url):
    with tempfile.TemporaryDirectory() as temp_dir:
        try:
            subprocess.run(["git", "clone", url, temp_dir], check=True)
            return temp_dir
        except subprocess.CalledProcessError as e:
            raise RuntimeError(e.stderr)
'''


def _facets(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"tools.py": text})
    findings = code_findings(tmp_path, names)[0]
    return (by_facet(findings, "safety.clone_cleanup"),
            by_facet(findings, "safety.clone_deleted_early"))


def test_a_returned_path_of_a_dropped_temporary_directory_is_deleted_before_use(
        tmp_path: Path) -> None:
    for name, text, made, ret in (("dropped", DROPPED, 8, 11), ("with", WITH_BLOCK, 7, 10)):
        cleanup, early = _facets(tmp_path / name, text)
        assert not cleanup.found, name
        assert cleanup.rationale.startswith("Removed before use"), name
        assert early.found and early.pattern == "failure" and not early.security, name
        assert early.data["early"] == sorted([f"tools.py:{made}", f"tools.py:{ret}"]), name
        assert f"tools.py:{ret}: return" in (early.content or ""), name


def test_a_clone_deleted_before_use_is_said_and_charged_as_not_cleaned_up(
        tmp_path: Path) -> None:
    """bethel4/automaton-auditor@interim: the clone writes into a TemporaryDirectory whose
    path its function returns; the directory is gone when the caller uses it. The clone is
    still isolated from the working tree (a sandbox, said to be deleted before use), and the
    cleanup fact, which weighs where there is a sandboxed clone, is not found."""
    for name, text in (("dropped", DROPPED), ("with", WITH_BLOCK)):
        names = write_repo(tmp_path / name, {"tools.py": text})
        findings = code_findings(tmp_path / name, names)[0]
        sandbox = by_facet(findings, "safety.clone_sandbox")
        assert sandbox.found, name
        assert "Deleted before use: 1 of them write into a TemporaryDirectory deleted as " \
            "its function returns the path" in sandbox.rationale, name
        # the cleanup fact weighs where there is a sandboxed clone (judging.extras)
        cleanup = by_facet(findings, "safety.clone_cleanup")
        assert cleanup.pattern == "success" and not cleanup.found, name


def test_a_directory_that_lives_while_the_caller_uses_it_is_not_deleted_early(
        tmp_path: Path) -> None:
    kept_alive = {
        # a context manager yields the path: the caller works inside the with
        "yielded": WITH_BLOCK.replace("import tempfile\n",
                                      "import tempfile\nfrom contextlib import contextmanager"
                                      "\n").replace("def clone", "@contextmanager\ndef clone"
                                                    ).replace("return temp_dir",
                                                              "yield temp_dir"),
        # the object goes back with the path: it lives as long as the caller keeps it
        "handed": DROPPED.replace("return target", "return tmp_dir, target"),
        # the clone is used inside the block, only its summary leaves
        "used": WITH_BLOCK.replace("return temp_dir", "return len(temp_dir)"),
    }
    for name, text in kept_alive.items():
        cleanup, early = _facets(tmp_path / name, text)
        assert not early.found, name
        assert cleanup.found and cleanup.data["early"] == [], name


# Kemrish/Tenx-week2-automaton-auditor src/tools/git_tools.py, shortened: the clone goes to a
# folder inside the mkdtemp dir, and cleanup() removes only that folder
SUBFOLDER = '''
import shutil
import subprocess
import tempfile
from pathlib import Path

import git


class GitTool:
    def __init__(self):
        self.sandbox_dir = tempfile.mkdtemp()
        self.repo_path = None

    def clone(self, url):
        self.repo_path = Path(self.sandbox_dir) / f"{url.split('/')[-1]}_x"
        git.Repo.clone_from(url, self.repo_path, depth=50)
        return self.repo_path

    def log(self):
        return subprocess.run(["git", "log"], cwd=self.repo_path, timeout=30)

    def cleanup(self):
        shutil.rmtree(self.repo_path, ignore_errors=True)


def run(url):
    tool = GitTool()
    tool.clone(url)
    tool.cleanup()
'''

# mamee13/automaton-auditor-swarm src/tools/forensics.py: removed only when the clone fails
FAILURE_ONLY = LIBRARY_MESSAGE.replace(
    "import tempfile\n", "import shutil\nimport tempfile\n").replace(
    "    except git.exc.GitCommandError as e:\n",
    "    except git.exc.GitCommandError as e:\n        shutil.rmtree(tmp, ignore_errors=True)\n")


def _safety(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"tools.py": text})
    findings = code_findings(tmp_path, names)[0]
    return by_facet(findings, "safety.clone_cleanup"), by_facet(findings, "safety.timeouts")


def test_removing_a_folder_inside_the_temp_dir_or_only_on_failure_is_no_cleanup(
        tmp_path: Path) -> None:
    sub, _ = _safety(tmp_path / "sub", SUBFOLDER)
    assert not sub.found and sub.data["kept"] == ["tools.py:12"]
    assert "tools.py:24 removes only a path inside it" in sub.rationale
    assert "tools.py:24: " in (sub.content or "")
    # the mkdtemp dir itself removed after use is a cleanup
    whole = SUBFOLDER.replace("rmtree(self.repo_path", "rmtree(self.sandbox_dir")
    assert _safety(tmp_path / "whole", whole)[0].found
    failing, _ = _safety(tmp_path / "failing", FAILURE_ONLY)
    assert not failing.found and "tools.py:14 removes it only in an except handler" \
        in failing.rationale
    # ... and with a finally, it is removed on success too
    always = FAILURE_ONLY.replace("{e.stderr}\")\n",
                                  "{e.stderr}\")\n    finally:\n"
                                  "        shutil.rmtree(tmp)\n")
    assert _safety(tmp_path / "always", always)[0].found


def test_a_timeout_on_another_subprocess_call_does_not_bound_the_clone(
        tmp_path: Path) -> None:
    _, timeouts = _safety(tmp_path / "sub", SUBFOLDER)
    assert not timeouts.found and timeouts.data["total"] == 1
    assert "tools.py:21" in timeouts.rationale  # the git log call's timeout, named apart
    killed = SUBFOLDER.replace("depth=50)", "depth=50, kill_after_timeout=60)")
    assert _safety(tmp_path / "killed", killed)[1].found


def test_a_removal_of_a_path_read_back_from_the_state_is_named_not_counted(
        tmp_path: Path) -> None:
    # temesgen5335/Automation-Auditor, shortened: one node returns the clone's directory in
    # its update, a later node removes state["temp_repo_path"]
    nodes = FAILURE_ONLY + '''

def investigate(state):
    path = clone(state["repo_url"])
    return {"temp_repo_path": path}


def finish(state):
    temp_path = state.get("temp_repo_path")
    shutil.rmtree(temp_path)
'''
    cleanup, _ = _safety(tmp_path, nodes)
    assert not cleanup.found and cleanup.data["through_state"]
    assert cleanup.rationale.startswith("Not shown removed after a successful run")
    assert "tools.py:25 removes a path read from its state ('temp_repo_path')" \
        in cleanup.rationale


# NebiyouBelaineh/LangGraph-Automation-Auditor src/tools/repo_tools.py, shortened (mkdtemp for
# TemporaryDirectory): the dir is removed only when the clone failed, in an ``if`` that returns
FAILED_BRANCH = '''
import shutil
import subprocess
import tempfile


def clone(url):
    tmp = tempfile.mkdtemp()
    result = subprocess.run(["git", "clone", url, tmp], capture_output=True, timeout=120)
    if result.returncode != 0:
        shutil.rmtree(tmp)
        return None
    return tmp
'''


def test_a_removal_only_in_a_failure_branch_that_returns_is_no_cleanup(
        tmp_path: Path) -> None:
    failing, _ = _safety(tmp_path / "failing", FAILED_BRANCH)
    assert not failing.found and failing.data["kept"] == ["tools.py:8"]
    assert "tools.py:11 removes it only in an except handler or a failure branch" \
        in failing.rationale
    tests = {"not ok": ("    if result.returncode != 0:\n",
                        "    ok = result.returncode == 0\n    if not ok:\n"),
             "raise": ("        return None\n", "        raise RuntimeError(url)\n"),
             "failed or": ("    if result.returncode != 0:\n",
                           "    if result.failed or result.returncode != 0:\n")}
    for name, (old, new) in tests.items():
        assert not _safety(tmp_path / name, FAILED_BRANCH.replace(old, new))[0].found, name
    # a branch that does not leave the function, or whose test is no failure test, may run
    # after a successful clone: its removal counts (removed when no error occurs: the clone
    # raising its timeout skips it)
    kept = {"falls through": ("        return None\n", "        print(url)\n"),
            "other test": ("    if result.returncode != 0:\n", "    if url:\n")}
    for name, (old, new) in kept.items():
        cleanup = _safety(tmp_path / name, FAILED_BRANCH.replace(old, new))[0]
        assert cleanup.data["removed"] == ["tools.py:11"] and not cleanup.data["kept"], name
        assert cleanup.data["on_error"] == ["tools.py:11"], name


# NebiyouBelaineh/LangGraph-Automation-Auditor src/tools/repo_tools.py, shortened: the object
# is parked in a module-level dict on success and cleaned up only when the clone failed
REGISTERED = '''
import subprocess
import tempfile

_ACTIVE_CLONES = {}


def clone(url):
    td = tempfile.TemporaryDirectory(prefix="auditor_clone_")
    _ACTIVE_CLONES[td.name] = td
    tmp = td.name
    result = subprocess.run(["git", "clone", url, tmp], capture_output=True, timeout=120)
    if result.returncode != 0:
        _ACTIVE_CLONES.pop(tmp, None)
        td.cleanup()
        return None
    return tmp
'''


def test_a_temporary_directory_kept_in_a_module_level_container_is_not_removed_after_use(
        tmp_path: Path) -> None:
    cleanup, early = _facets(tmp_path / "registered", REGISTERED)
    assert not cleanup.found and not early.found
    assert cleanup.data["kept"] == ["tools.py:9"] and cleanup.data["alive"] == ["tools.py:10"]
    assert "tools.py:10 keeps the TemporaryDirectory object in a module-level container" \
        in cleanup.rationale
    assert "tools.py:10: _ACTIVE_CLONES[td.name] = td" in (cleanup.content or "")
    assert "tools.py:15 removes it only in an except handler or a failure branch" \
        in cleanup.rationale
    shapes = {  # also kept: put in by a method call, or the name declared global
        "appended": REGISTERED.replace("_ACTIVE_CLONES = {}", "_ACTIVE_CLONES = []").replace(
            "_ACTIVE_CLONES[td.name] = td", "_ACTIVE_CLONES.append(td)"),
        "global": REGISTERED.replace("_ACTIVE_CLONES = {}", "td = None").replace(
            "    _ACTIVE_CLONES[td.name] = td\n", "    global td\n"),
    }
    for name, text in shapes.items():
        cleanup, _ = _facets(tmp_path / name, text)
        assert not cleanup.found and cleanup.data["alive"], name
    # taken out and cleaned up by a function something calls (a node, once the detectives
    # are done), not only by a model's tool
    release = ("\n\ndef cleanup_all():\n    for held in _ACTIVE_CLONES.values():\n"
               "        held.cleanup()\n\n\n@tool\ndef cleanup_tool():\n"
               "    cleanup_all()\n")
    cleanup, _ = _facets(tmp_path / "tool", REGISTERED + release)
    assert not cleanup.found and cleanup.data["alive"]
    assert "tools.py:22 cleans it up in a function that no code runs, or only a model's " \
        "tool" in cleanup.rationale
    called = REGISTERED + release + "\n\ndef aggregate(state):\n    cleanup_all()\n"
    # a function nothing names never runs (bettyabay/Automaton-Auditor's
    # cleanup_all_repositories), so neither does the cleanup it calls
    cleanup, _ = _facets(tmp_path / "unnamed", called)
    assert not cleanup.found and "tools.py:22 cleans it up" in cleanup.rationale
    # named as a graph node, it runs
    node = called + "\n\nbuilder.add_node(\"aggregate\", aggregate)\n"
    cleanup, _ = _facets(tmp_path / "called", node)
    assert cleanup.found and "tools.py:22: held.cleanup()" in (cleanup.content or "")
    removes_itself = {
        # a container of the function's own goes with it: the object is finalised
        "local": REGISTERED.replace("td = tempfile", "_ACTIVE_CLONES = {}\n    td = tempfile"),
        # cleaned up on the success path too
        "cleaned": REGISTERED.replace("    return tmp\n", "    td.cleanup()\n    return 1\n"),
    }
    for name, text in removes_itself.items():
        cleanup, _ = _facets(tmp_path / name, text)
        assert cleanup.found and not cleanup.data["alive"], name


INSIDE = '''
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def clone(url):
    tmp = tempfile.mkdtemp()
    dest = INSIDE_TMP
    subprocess.run(["git", "clone", url, dest], check=True, timeout=60)
    count = len(os.listdir(dest))
    shutil.rmtree(INSIDE_TMP)
    return count
'''


def test_a_clone_into_a_path_inside_the_temp_dir_is_sandboxed_and_its_removal_is_partial(
        tmp_path: Path) -> None:
    for i, inside in enumerate(('f"{tmp}/repo"', 'os.path.join(tmp, "repo")',
                                'Path(tmp) / "repo"', 'tmp + "/repo"', 'tmp + "/" + url',
                                'f"{tmp}/{url}"')):
        text = INSIDE.replace("INSIDE_TMP", inside)
        names = write_repo(tmp_path / str(i), {"tools.py": text})
        findings = code_findings(tmp_path / str(i), names)[0]
        sandbox = by_facet(findings, "safety.clone_sandbox")
        cleanup = by_facet(findings, "safety.clone_cleanup")
        assert sandbox.found and "tools.py:10: tmp = tempfile.mkdtemp()" in (
            sandbox.content or ""), inside
        # removing the folder inside leaves the temp dir itself behind
        assert not cleanup.found and "tools.py:14 removes only a path inside it" in \
            cleanup.rationale, inside
    for i, itself in enumerate(('f"{tmp}"', 'f"{tmp}/"', "str(tmp)")):
        text = INSIDE.replace("dest = INSIDE_TMP", 'dest = f"{tmp}/repo"').replace(
            "INSIDE_TMP", itself)
        names = write_repo(tmp_path / f"w{i}", {"tools.py": text})
        cleanup = by_facet(code_findings(tmp_path / f"w{i}", names)[0],
                           "safety.clone_cleanup")
        # removed itself, after the clone; a failed clone (nothing catches it) skips it
        assert cleanup.data["removed"] == ["tools.py:14"] and not cleanup.data["kept"], itself
        assert cleanup.data["on_error"] == ["tools.py:14"], itself


# gashawbekele06's repo_tools.py shape: the path leaves the with-block inside a dict
IN_A_DICT = '''
import subprocess
import tempfile


def clone(url):
    with tempfile.TemporaryDirectory() as tmp_dir:
        subprocess.run(["git", "clone", url, tmp_dir], check=True)
        return {"success": True, "path": tmp_dir}


def clone_kw(url):
    with tempfile.TemporaryDirectory() as tmp_dir:
        subprocess.run(["git", "clone", url, tmp_dir], check=True)
        return dict(ok=True, path=tmp_dir)
'''


def test_a_path_returned_inside_a_dict_is_deleted_before_use(tmp_path: Path) -> None:
    cleanup, early = _facets(tmp_path, IN_A_DICT)
    assert early.found and not cleanup.found
    assert sorted(early.data["early"]) == sorted(
        ["tools.py:7", "tools.py:9", "tools.py:13", "tools.py:15"])
