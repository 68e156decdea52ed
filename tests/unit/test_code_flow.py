"""Behavioural code facts followed across functions: the call graph and clone sandboxes."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings, collect_facts
from automaton_auditor.forensics.code.callgraph import CallGraph

from .test_code_ast_graph import by_facet, write_repo

RUNNER = '''
import subprocess


def run_command(cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, check=True, timeout=60)


def _safe_run(args):
    return run_command(args)
'''

SANDBOX = '''
import tempfile


def _get_or_create_sandbox():
    path = tempfile.mkdtemp(prefix="audit_")
    return path
'''


def _sandbox(tmp_path: Path, files: dict[str, str]):
    names = write_repo(tmp_path, files)
    return by_facet(code_findings(tmp_path, names)[0], "safety.clone_sandbox")


def test_temp_dir_returned_by_a_helper_and_clone_run_by_a_wrapper(tmp_path: Path) -> None:
    finding = _sandbox(tmp_path, {
        "src/utils/runner.py": RUNNER, "src/utils/sandbox.py": SANDBOX,
        "src/tools/repo.py": '''
from src.utils.runner import run_command
from ..utils import sandbox as sb


def clone(url):
    dest = sb._get_or_create_sandbox()
    run_command(["git", "clone", "--depth", "50", url, dest])
    return dest
'''})
    assert finding.found, finding.rationale
    assert finding.location == "src/tools/repo.py:8"
    assert "src/utils/sandbox.py:6: path = tempfile.mkdtemp" in (finding.content or "")
    assert "src/tools/repo.py:8: run_command([\"git\", \"clone\"" in (finding.content or "")


def test_clone_through_a_wrapper_of_a_wrapper_into_the_working_directory(
        tmp_path: Path) -> None:
    finding = _sandbox(tmp_path, {"runner.py": RUNNER, "repo.py": '''
from runner import _safe_run


def clone(url):
    _safe_run(["git", "clone", url, "./repos/target"])
'''})
    assert finding.found is False
    assert finding.data["unproved"] == ["repo.py:6"]
    assert "0 of 1 clone call(s)" in finding.rationale


def test_command_built_by_the_caller_and_temp_dir_passed_in(tmp_path: Path) -> None:
    finding = _sandbox(tmp_path, {"git_ops.py": '''
import subprocess
import tempfile
from pathlib import Path


def execute(cmd):
    return subprocess.run(cmd, timeout=30)


def clone_into(url, where):
    cmd = ["git", "clone", url, str(Path(where) / "repo")]
    return execute(cmd)


def investigate(url):
    with tempfile.TemporaryDirectory() as tmp:
        clone_into(url, tmp)
'''})
    assert finding.found, finding.rationale
    content = finding.content or ""
    assert "git_ops.py:17: with tempfile.TemporaryDirectory() as tmp:" in content
    assert "git_ops.py:18: clone_into(url, tmp)" in content


def test_a_command_list_extended_with_the_temp_dir(tmp_path: Path) -> None:
    finding = _sandbox(tmp_path, {"repo_tools.py": '''
import subprocess
import tempfile


def clone(url, full=False):
    temp_dir = tempfile.mkdtemp(prefix="audit_")
    cmd = ["git", "clone"]
    if not full:
        cmd.extend(["--depth", "1"])
    cmd.extend([url, temp_dir])
    return subprocess.run(cmd, timeout=60)
'''})
    assert finding.found, finding.rationale
    assert "repo_tools.py:7: temp_dir = tempfile.mkdtemp" in (finding.content or "")
    # a list extended with a fixed path proves nothing
    fixed = _sandbox(tmp_path / "fixed", {"repo_tools.py": '''
import subprocess


def clone(url):
    cmd = ["git", "clone"]
    cmd.append(url)
    cmd.append("/srv/checkouts")
    return subprocess.run(cmd, timeout=60)
'''})
    assert fixed.found is False


def test_a_function_named_sandbox_that_returns_a_fixed_path_proves_nothing(
        tmp_path: Path) -> None:
    finding = _sandbox(tmp_path, {"tools.py": '''
import subprocess


def make_sandbox_dir():
    return "/srv/checkouts"


def clone(url):
    subprocess.run(["git", "clone", url, make_sandbox_dir()], timeout=5)
'''})
    assert finding.found is False


def test_call_graph_resolves_imports_self_and_instances(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": '''
import subprocess
class Base:
    def run(self, cmd):
        return subprocess.run(cmd)
''',
        "pkg/tool.py": '''
import subprocess
from .base import Base
from . import base as b


class Tool(Base):
    def go(self):
        return self.run(["ls"])


def main():
    t = Tool()
    t.go()
    b.Base().run(["x"])
''',
    })
    facts, _ = collect_facts(tmp_path, files)
    graph = CallGraph(facts)
    callees = {(k, t.qual) for k in graph.functions
               for _i, t in graph.callees(k)}
    assert (("pkg/tool.py", "Tool.go"), "Base.run") in callees
    assert (("pkg/tool.py", "main"), "Tool") in callees
    assert (("pkg/tool.py", "main"), "Tool.go") in callees
    assert graph.reachable([("pkg/tool.py", "main")]) == [
        ("pkg/tool.py", "main"), ("pkg/tool.py", "Tool.go"), ("pkg/base.py", "Base.run")]


MAIN_CLONE = '''
import subprocess
import tempfile

from tools.helpers import describe


def main(url):
    with tempfile.TemporaryDirectory() as temp_dir:
        subprocess.run(["git", "clone", url, temp_dir], check=True, timeout=60)
        return describe(temp_dir)


if __name__ == "__main__":
    main("https://github.com/a/b")
'''

ABANDONED = '''
import git


def describe(path):
    return path


def clone_repo_sandbox(repo_url):
    return git.Repo.clone_from(repo_url, "/tmp/fixed_sandbox")
'''


def test_a_clone_nothing_names_beside_a_clone_the_code_runs_is_not_counted(
        tmp_path: Path) -> None:
    finding = _sandbox(tmp_path, {"main.py": MAIN_CLONE, "tools/helpers.py": ABANDONED})
    assert finding.found, finding.rationale
    assert finding.data["never_run"] == ["tools/helpers.py:10"]
    assert "1 of 1 clone call(s)" in finding.rationale
    assert "nothing in the repository names" in finding.rationale


def test_a_clone_named_anywhere_still_counts(tmp_path: Path) -> None:
    # the fixed-directory clone is called from a file without trigger words, as a config
    # entry point, or through a method of a class something names: it may run
    callers = {
        "cli.py": "from tools.helpers import clone_repo_sandbox\nclone_repo_sandbox('u')\n",
        "pyproject.toml": "[project.scripts]\nsnap = 'tools.helpers:clone_repo_sandbox'\n",
    }
    for name, text in callers.items():
        files = {"main.py": MAIN_CLONE, "tools/helpers.py": ABANDONED, name: text}
        finding = _sandbox(tmp_path / name, files)
        assert not finding.found, name
        assert finding.data["never_run"] == [], name
        assert "1 of 2 clone call(s)" in finding.rationale, name


def test_a_clone_alone_in_code_nothing_names_is_still_the_repository_clone(
        tmp_path: Path) -> None:
    finding = _sandbox(tmp_path, {"tools/helpers.py": ABANDONED})
    assert not finding.found
    assert finding.data["unproved"] == ["tools/helpers.py:10"]
    assert finding.data["never_run"] == []


def test_a_library_decorator_may_register_a_clone_the_repository_s_own_wraps_it(
        tmp_path: Path) -> None:
    registered = ABANDONED.replace(
        "import git\n", "import git\nfrom langchain_core.tools import tool\n"
    ).replace("\ndef clone_repo", "\n@tool\ndef clone_repo")
    wrapped = ABANDONED.replace("import git\n", "import git\nfrom .cache import disk_cache\n"
                                ).replace("\ndef clone_repo", "\n@disk_cache\ndef clone_repo")
    kept = _sandbox(tmp_path / "tool", {"main.py": MAIN_CLONE, "tools/helpers.py": registered})
    assert kept.data["never_run"] == [] and not kept.found
    dropped = _sandbox(tmp_path / "cache", {"main.py": MAIN_CLONE, "tools/helpers.py": wrapped})
    assert dropped.data["never_run"] == ["tools/helpers.py:12"] and dropped.found


def _cleanup(tmp_path: Path, files: dict[str, str]):
    names = write_repo(tmp_path, files)
    return by_facet(code_findings(tmp_path, names)[0], "safety.clone_cleanup")


CLONE = '''
import shutil
import subprocess
import tempfile


def clone(url):
    root = tempfile.mkdtemp(prefix="audit_")
    subprocess.run(["git", "clone", url, root], check=True, timeout=60)
    return root
'''


def test_a_clone_directory_is_removed_by_the_caller_or_by_temporary_directory(
        tmp_path: Path) -> None:
    kept = _cleanup(tmp_path / "kept", {"tools.py": CLONE})
    assert not kept.found and kept.data["kept"] == ["tools.py:8"]
    assert "Never removed" in kept.rationale
    caller = CLONE + '''

def audit(url):
    where = clone(url)
    try:
        return len(where)
    finally:
        shutil.rmtree(where, ignore_errors=True)
'''
    removed = _cleanup(tmp_path / "caller", {"tools.py": caller})
    assert removed.found and removed.data["removed"] == ["tools.py:18"]
    # an rmtree of something else removes nothing of the clone
    other = caller.replace("shutil.rmtree(where", "shutil.rmtree('/tmp/reports'")
    assert not _cleanup(tmp_path / "other", {"tools.py": other}).found
    # a remover handed on to run later with the directory (a web framework's background task)
    later = CLONE + '''

def forget(path):
    shutil.rmtree(path)


def endpoint(url, tasks):
    where = clone(url)
    tasks.add_task(forget, where)
'''
    handed = _cleanup(tmp_path / "later", {"tools.py": later})
    assert handed.found and handed.data["removed"] == ["tools.py:19"]
    # a TemporaryDirectory handed back to the caller is removed with it, after use (its
    # path alone handed back is removed before use: test_code_lifetime)
    context = CLONE.replace('root = tempfile.mkdtemp(prefix="audit_")',
                            "holder = tempfile.TemporaryDirectory()\n    root = holder.name"
                            ).replace("return root", "return holder")
    assert _cleanup(tmp_path / "context", {"tools.py": context}).found


SANDBOX_CLASS = '''
import shutil
import subprocess
import tempfile


class Sandbox:
    def __init__(self, url):
        self.url = url
        self.root = None

    def open(self):
        self.root = tempfile.mkdtemp(prefix="audit_")
        subprocess.run(["git", "clone", self.url, self.root], check=True, timeout=60)
        return self.root

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def audit(url):
    box = Sandbox(url)
    where = box.open()
    return len(where)
'''


def test_a_removal_in_a_method_no_code_calls_removes_nothing(tmp_path: Path) -> None:
    """Natnael-Alemseged: ``RepoSandbox.cleanup()`` removes the clone's mkdtemp directory,
    but no code calls it (its class is named, the method never is, and a class with no
    base class has no framework calling what it overrides): the directory stays, and the
    dead removal is named. Called, it removes the directory."""
    kept = _cleanup(tmp_path / "idle", {"tools.py": SANDBOX_CLASS})
    assert not kept.found, kept.rationale
    assert "tools.py:18 is in Sandbox.cleanup, which no code calls" in kept.rationale
    called = SANDBOX_CLASS.replace("    return len(where)",
                                   "    try:\n        return len(where)\n"
                                   "    finally:\n        box.cleanup()")
    assert _cleanup(tmp_path / "called", {"tools.py": called}).found
