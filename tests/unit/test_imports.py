"""Imports that fail when the module loads: a name imported from a repository module that
neither defines nor imports it."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.imports import broken_imports


def _repo(tmp_path: Path, files: dict[str, str]) -> list[str]:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return sorted(files)


def test_a_name_the_imported_repository_module_lacks_is_an_import_failure(
        tmp_path: Path) -> None:
    files = _repo(tmp_path, {
        "src/__init__.py": "",
        "src/state.py": "from typing import TypedDict\n\nclass AgentState(TypedDict):\n"
                        "    repo_url: str\n",
        "src/graph.py": "from langgraph.graph import END\n"
                        "from src.state import AgentState, StateGraph\n"
                        "from .state import TypedDict\n\n"
                        "def build():\n    from src.state import Later\n",
    })
    found = broken_imports(tmp_path, files, ["src/graph.py"])
    assert [(d["path"], d["line"], d["code"], d["import_time"]) for d in found] == [
        ("src/graph.py", 2, "IMPORT", True)]
    assert found[0]["message"] == ("`StateGraph` is imported from src.state (src/state.py), "
                                   "which does not define it")


def test_names_bound_in_blocks_submodules_and_open_modules_are_found(tmp_path: Path) -> None:
    files = _repo(tmp_path, {
        "app/__init__.py": "",
        "app/nodes/__init__.py": "try:\n    from .judges import judge\nexcept ImportError:\n"
                                 "    judge = None\nif True:\n    LIMIT: int = 3\n",
        "app/nodes/judges.py": "def judge():\n    return 1\n",
        "app/star.py": "from app.nodes import *\n",
        "app/ext.py": "from requests import *\n",
        "app/lazy.py": "def __getattr__(name):\n    return name\n",
        "app/graph.py": "from app.nodes import judge, LIMIT, judges\nfrom app.star import judge\n"
                        "from app.ext import x\n"
                        "from app.lazy import y\nfrom . import nodes\nimport app.nodes\n"
                        "from nodes import judge\nfrom requests import get\n",
    })
    assert broken_imports(tmp_path, files, ["app/graph.py"]) == []
    # a broken or unreadable module claims nothing
    (tmp_path / "app" / "nodes" / "__init__.py").write_text("def broken(:\n")
    assert broken_imports(tmp_path, files, ["app/graph.py"]) == []


def test_star_imports_all_globals_and_loops_bind_names(tmp_path: Path) -> None:
    # a star import from a repository module brings that module's names (and no others);
    # ``__all__``, loop and ``with`` targets and ``global`` declarations bind theirs
    files = _repo(tmp_path, {
        "src/__init__.py": "",
        "src/models.py": "class Evidence:\n    pass\n",
        "src/state.py": "from .models import *\n__all__ = ['Lazy']\nfor Looped in []:\n"
                        "    pass\nwith open('x') as Handle:\n    pass\n"
                        "def setup():\n    global Later\n    Later = 1\n",
        "src/judges.py": "from src.state import Evidence, Lazy, Looped, Handle, Later\n"
                         "from src.state import JudicialOpinon\n",
        "src/dyn.py": "globals()['Made'] = 1\n",
        "src/user.py": "from src.dyn import Made\n",
    })
    found = broken_imports(tmp_path, files, ["src/judges.py", "src/user.py"])
    assert [(d["path"], d["line"], d["target"]) for d in found] == [
        ("src/judges.py", 2, "src/state.py")]
    assert "`JudicialOpinon` is imported from src.state" in found[0]["message"]


def test_a_relative_import_of_a_module_the_repository_lacks_fails_at_load(
        tmp_path: Path) -> None:
    """``from .nodes.detectives import X`` beside ``nodes/detective.py``: nothing can
    provide that module. A folder (a namespace package) or a file that exists, even one
    that does not parse, is no such failure."""
    files = _repo(tmp_path, {
        "src/graph.py": "from .state import AgentState\nfrom .nodes.detectives import D\n"
                        "from .tools.doc_tools import read\nfrom .utils import helpers\n",
        "src/state.py": "AgentState = dict\n",
        "src/nodes/detective.py": "D = 1\n",
        "src/tools/doc_tools.py": "  def read(:\n",
        "src/utils/helpers.py": "X = 1\n",
    })
    found = broken_imports(tmp_path, files, ["src/graph.py"])
    assert [(d["line"], d["import_time"], d["target"]) for d in found] == [(2, True, None)]
    assert "neither src/nodes/detectives.py nor a src/nodes/detectives/ package" in \
        found[0]["message"]


def test_a_module_held_only_in_another_letter_case_fails_at_load(tmp_path: Path) -> None:
    """hydropython: ``from src.agents.judges.tech_lead import TechLead`` while the file is
    ``src/agents/judges/Tech_lead.py``: Python matches module names by case."""
    files = _repo(tmp_path, {
        "src/graph.py": "from src.agents.judges.tech_lead import TechLead\n"
                        "from src.agents.judges.defense import Defense\n",
        "src/agents/judges/Tech_lead.py": "TechLead = 1\n",
        "src/agents/judges/defense.py": "Defense = 1\n",
    })
    found = broken_imports(tmp_path, files, ["src/graph.py"])
    assert [(d["line"], d["import_time"]) for d in found] == [(1, True)]
    assert "only in another letter case (src/agents/judges/Tech_lead.py)" in found[0]["message"]


def test_a_module_the_repository_s_own_package_lacks_fails_at_load(tmp_path: Path) -> None:
    """bethel4@interim: ``src/graph.py`` imports ``src.nodes.detectives`` while the file is
    ``nodes/detectives.py`` at the root: the repository's ``src`` package has no such module.
    A module it holds, a package folder without ``__init__``, or a library whose name is no
    folder of the repository is no such failure."""
    files = _repo(tmp_path, {
        "src/graph.py": "from src.nodes.detectives import repo_investigator\n"
                        "from src.state import AgentState\n"
                        "from src.tools import repo_tools\n"
                        "from langgraph.graph import StateGraph\n",
        "src/state.py": "AgentState = dict\n",
        "src/tools/repo_tools.py": "X = 1\n",
        "nodes/detectives.py": "repo_investigator = 1\n",
    })
    found = broken_imports(tmp_path, files, ["src/graph.py"])
    assert [(d["line"], d["import_time"]) for d in found] == [(1, True)], found
    assert "the repository's `src` package has no such module" in found[0]["message"]
