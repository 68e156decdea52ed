"""A shallow clone (``--depth 1``) whose history the code then reads sees one commit, at most
N with ``--depth N`` (`forensics.code.shallow`); noted as context of the tools, never
charged."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# gemechisworku/automaton-auditor src/tools/repo_tools.py and src/nodes/detectives.py,
# shortened: the clone's path goes back to the node, which hands it to the history reader
TOOLS = '''
import subprocess
import tempfile
from pathlib import Path


def clone_repo(url):
    tmp_dir = tempfile.mkdtemp(prefix="clone_")
    subprocess.run(
        ["git", "clone", "--depth", "1", url, tmp_dir],
        capture_output=True, timeout=120, check=True)
    return tmp_dir


def extract_git_history(repo_path):
    path = Path(repo_path)
    result = subprocess.run(
        ["git", "log", "--format=%h %s", "--reverse"],
        cwd=path, capture_output=True, text=True, timeout=30)
    return result.stdout.splitlines()
'''

NODES = '''
from tools import clone_repo, extract_git_history


def repo_investigator(state):
    repo_path = clone_repo(state["repo_url"])
    history = extract_git_history(repo_path)
    return {"history": history}
'''


def _shallow(tmp_path: Path, tools: str, nodes: str = NODES):
    names = write_repo(tmp_path, {"tools.py": tools, "nodes.py": nodes})
    return by_facet(code_findings(tmp_path, names)[0], "safety.shallow_history")


def test_a_shallow_clone_whose_history_is_read_is_said_to_show_one_commit(
        tmp_path: Path) -> None:
    fact = _shallow(tmp_path / "gem", TOOLS)
    assert fact.found and fact.pattern == "neutral" and not fact.security
    assert fact.rationale.startswith("The clone is shallow (--depth 1 at tools.py:10) and a "
                                     "git history read runs in its directory at tools.py:18 (the "
                                     "directory made at tools.py:8")
    assert "carried through nodes.py:7" in fact.rationale
    assert fact.rationale.endswith("the history read has one commit.")
    assert (fact.content or "").splitlines() == [
        'tools.py:10: ["git", "clone", "--depth", "1", url, tmp_dir],',
        'tools.py:8: tmp_dir = tempfile.mkdtemp(prefix="clone_")',
        "nodes.py:7: history = extract_git_history(repo_path)",
        'tools.py:18: ["git", "log", "--format=%h %s", "--reverse"],']
    assert _shallow(tmp_path / "one", TOOLS.replace('"--depth", "1"', '"--depth=1"')).found


def test_a_full_clone_or_a_history_read_elsewhere_is_no_shallow_read(tmp_path: Path) -> None:
    cases = {
        "full": (TOOLS.replace('"--depth", "1", ', ""), NODES),
        # the history read runs in another directory than the shallow clone's
        "elsewhere": (TOOLS, NODES.replace("extract_git_history(repo_path)",
                                           'extract_git_history(".")')),
        # the shallow clone's history is never read
        "unread": (TOOLS, NODES.replace("extract_git_history(repo_path)", "[]")),
    }
    for name, (tools, nodes) in cases.items():
        assert not _shallow(tmp_path / name, tools, nodes).found, name


def test_a_deeper_shallow_clone_whose_history_is_read_holds_its_last_commits(
        tmp_path: Path) -> None:
    fact = _shallow(tmp_path, TOOLS.replace('"--depth", "1"', '"--depth=50"'))
    assert fact.found and fact.rationale.startswith("The clone is shallow (--depth 50 at "
                                                    "tools.py:10)")
    assert fact.rationale.endswith("the history read has at most the last 50 commits (a "
                                   "longer history is cut).")


LIBRARY = '''
import tempfile

from git import Repo


def commits(url):
    tmp = tempfile.mkdtemp()
    Repo.clone_from(url, tmp, depth=1)
    return [c.hexsha for c in Repo(tmp).iter_commits()]
'''


def test_gitpython_depth_and_iter_commits_in_one_function(tmp_path: Path) -> None:
    fact = _shallow(tmp_path / "lib", LIBRARY, "")
    assert fact.found and "--depth 1 at tools.py:9" in fact.rationale
    assert "read runs in its directory at tools.py:10" in fact.rationale


# GrimVad3r/automaton-auditor@interim src/tools/security.py and git_tools.py, shortened:
# git runs through a wrapper that puts "git" in front of the words it is given
WRAPPED = '''
import subprocess
import tempfile


def run_command(command, cwd=None):
    return subprocess.run(command, cwd=cwd, capture_output=True, timeout=30)


def run_git_command(git_args, cwd=None):
    command = ["git"] + git_args
    return run_command(command, cwd=cwd)


def clone(url):
    tmp = tempfile.mkdtemp()
    run_git_command(["clone", "--depth", "1", url, tmp])
    return tmp


def history(repo_path):
    return run_git_command(["log", "--oneline"], cwd=repo_path)


def analyze(url):
    path = clone(url)
    return history(repo_path=path)
'''


def test_a_history_read_through_a_git_wrapper_is_followed(tmp_path: Path) -> None:
    names = write_repo(tmp_path / "wrapped", {"tools.py": WRAPPED})
    fact = by_facet(code_findings(tmp_path / "wrapped", names)[0], "safety.shallow_history")
    assert fact.found, fact.rationale
    assert fact.rationale.startswith("The clone is shallow (--depth 1 at tools.py:17) and a "
                                     "git history read runs in its directory at tools.py:22")
    assert "tools.py:27: return history(repo_path=path)" in (fact.content or "")
    # a wrapper that puts no "git" in front runs no git history read
    plain = WRAPPED.replace('command = ["git"] + git_args', "command = list(git_args)")
    names = write_repo(tmp_path / "plain", {"tools.py": plain})
    assert not by_facet(code_findings(tmp_path / "plain", names)[0],
                        "safety.shallow_history").found


# rafia-10/automaton-auditor src/tools/repo_tools.py, shortened: the depth is a parameter
# whose default is 1, and the command goes through a wrapper that runs any argv
DEFAULT_DEPTH = '''
import shutil
import subprocess
import tempfile
from pathlib import Path


def safe_run(cmd, cwd=None, timeout=60):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def clone_repo(url, *, depth: int = 1, timeout: int = 120):
    tmp = Path(tempfile.mkdtemp(prefix="auditor_"))
    safe_run(["git", "clone", "--depth", str(depth), "--single-branch", url, str(tmp)],
             timeout=timeout)
    return tmp


def extract_git_history(repo_dir):
    return safe_run(["git", "log", "--oneline", "--reverse"], cwd=repo_dir).stdout
'''


def test_a_depth_taken_from_a_parameter_default_is_the_clone_depth(tmp_path: Path) -> None:
    fact = _shallow(tmp_path / "wrapped", DEFAULT_DEPTH)
    assert fact.found, fact.rationale
    assert fact.rationale.startswith("The clone is shallow (--depth 1 at tools.py:14)")
    # the same default in a direct process call
    direct = TOOLS.replace("def clone_repo(url):", "def clone_repo(url, depth=1):").replace(
        '"--depth", "1"', '"--depth", str(depth)')
    assert _shallow(tmp_path / "direct", direct).found
    # a caller that passes its own depth: the default says nothing about that clone
    passed = NODES.replace('clone_repo(state["repo_url"])', 'clone_repo(state["repo_url"], '
                           'depth=0)')
    for name, tools in [("wrapped-passed", DEFAULT_DEPTH), ("direct-passed", direct)]:
        assert not _shallow(tmp_path / name, tools, passed).found, name
    deep = _shallow(tmp_path / "deep", DEFAULT_DEPTH.replace("depth: int = 1",
                                                             "depth: int = 50"))
    assert "--depth 50 at tools.py:14" in deep.rationale


def test_a_shallow_clone_read_through_the_graph_state_is_not_denied(tmp_path: Path) -> None:
    """mamee13: one node stores the shallow clone's path in the state and another runs the
    history read there. The path is not traced through the state, so the fact says it is
    not established, and never that no history read runs in a shallow clone."""
    nodes = NODES.replace('''def repo_investigator(state):
    repo_path = clone_repo(state["repo_url"])
    history = extract_git_history(repo_path)
    return {"history": history}''', '''def prepare(state):
    return {"repo_path": clone_repo(state["repo_url"])}


def repo_investigator(state):
    return {"history": extract_git_history(state["repo_path"])}''')
    assert "def prepare(state):" in nodes
    fact = _shallow(tmp_path, TOOLS, nodes)
    assert not fact.found and fact.data["untraced"] and "limitation" not in fact.data
    # the report shows "(not established, ...)", not "(not found, ...)" (GrimVad3r@interim)
    assert fact.data["established"] is False
    assert fact.rationale.startswith("Not established: the code makes a shallow clone "
                                     "(--depth 1 at tools.py:10) and reads a git history "
                                     "(tools.py:18)"), fact.rationale
    assert "No history read runs" not in fact.rationale
