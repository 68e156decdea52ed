"""The safety facts read the clone the code runs: a clone module nothing imports (an older
copy of the tool beside the one the graph's node uses) is listed as never run, not cited as
the clone, and a URL validator there validates nothing; a clone in the entry point that runs
the graph counts; when only code nothing runs clones, the clone fact says so."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import write_repo

GRAPH = '''
from langgraph.graph import StateGraph
from nodes.detectives import repo_node


def build(State):
    builder = StateGraph(State)
    builder.add_node("repo", repo_node)
    builder.set_entry_point("repo")
    builder.set_finish_point("repo")
    return builder.compile()
'''

NODE = '''
from tools.repo_tools import Cloner


def repo_node(state):
    cloner = Cloner()
    ok, where = cloner.clone_repository(state["repo_url"])
    return {"evidence": [where]}
'''

LIVE = '''
import subprocess
import tempfile


class Cloner:
    def clone_repository(self, url):
        tmp = tempfile.mkdtemp()
        result = subprocess.run(["git", "clone", url, tmp], capture_output=True)
        return result.returncode == 0, tmp
'''

# the same class and method names, in a module nothing imports
UNUSED = '''
import subprocess
import tempfile


def validate_url(url):
    if not url.startswith("https://"):
        raise ValueError(url)
    return url


class Cloner:
    def clone_repository(self, url):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["git", "clone", validate_url(url), tmp], check=True, timeout=60)
            return True, tmp
'''

MAIN = '''
import subprocess
import tempfile
from graph import build


def main(url):
    tmp = tempfile.mkdtemp()
    subprocess.run(["git", "clone", url, tmp], check=True, timeout=60)
    return build(dict).invoke({"repo_path": tmp})


if __name__ == "__main__":
    main("https://github.com/a/b")
'''


def _safety(tmp_path: Path, files: dict[str, str]) -> dict[str, Finding]:
    names = write_repo(tmp_path, {"graph.py": GRAPH, "tools/git_tools.py": UNUSED, **files})
    return {f.facet: f for f in code_findings(tmp_path, names)[0]
            if f.facet.startswith("safety.")}


def test_a_clone_module_nothing_imports_is_not_the_clone(tmp_path: Path) -> None:
    """The node's clone (tools/repo_tools.py) is the clone; the unused copy's clone is
    listed as never run and its validator credits nothing."""
    facts = _safety(tmp_path, {"nodes/detectives.py": NODE, "tools/repo_tools.py": LIVE})
    assert facts["safety.clone"].location.startswith("tools/repo_tools.py:")
    assert "nothing runs" not in facts["safety.clone"].rationale
    assert "tools/git_tools.py:" in facts["safety.clone_sandbox"].rationale
    assert not facts["safety.url_validation"].found
    assert not facts["safety.timeouts"].found


def test_the_entry_point_s_clone_runs(tmp_path: Path) -> None:
    """main.py, which runs the graph, clones: that is the clone, not the unused copy."""
    node = NODE.replace("from tools.repo_tools import Cloner\n", "").replace(
        "cloner = Cloner()", "").replace(
        'ok, where = cloner.clone_repository(state["repo_url"])', 'where = state["repo_path"]')
    facts = _safety(tmp_path, {"nodes/detectives.py": node, "main.py": MAIN})
    assert facts["safety.clone"].location.startswith("main.py:")
    assert "nothing runs" not in facts["safety.clone"].rationale


def test_only_code_nothing_runs_clones(tmp_path: Path) -> None:
    """With no other clone, the unused copy is still the clone, said to be in code nothing
    runs."""
    node = NODE.replace("from tools.repo_tools import Cloner\n", "").replace(
        "cloner = Cloner()", "").replace(
        'ok, where = cloner.clone_repository(state["repo_url"])', 'where = state["repo_path"]')
    facts = _safety(tmp_path, {"nodes/detectives.py": node})
    clone = facts["safety.clone"]
    assert clone.location.startswith("tools/git_tools.py:")
    assert "in code nothing runs: tools/git_tools.py" in clone.rationale
