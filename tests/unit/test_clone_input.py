"""What the clone is given (`forensics.code.clone_input`): a URL check an earlier graph node
makes and the route that stops the run before the clone (`url_gates`), a URL check that lets
a value beginning with '-' reach git's command list (`url_checks.dash_passes`), and a clone
function that uses a local path in place of a clone (`local_paths`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

TOOLS = '''
import subprocess
import tempfile


def clone_repo(url):
    tmp = tempfile.mkdtemp()
    subprocess.run(["git", "clone", "--depth", "1", url, tmp], check=True, timeout=60)
    return tmp
'''

GRAPH = '''
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from tools import clone_repo


class State(TypedDict):
    repo_url: str
    errors: Annotated[list[str], operator.add]
    path: str


def check_input(state: State) -> dict:
    errors = []
    url = state.get("repo_url", "")
    if not url.startswith("https://"):
        errors.append(f"bad url: {url}")
    return {"errors": errors}


def route(state: State) -> str:
    if state.get("errors"):
        return END
    return "investigate"


def investigate(state: State) -> dict:
    return {"path": clone_repo(state["repo_url"])}


builder = StateGraph(State)
builder.add_node("check_input", check_input)
builder.add_node("investigate", investigate)
builder.add_edge(START, "check_input")
builder.add_conditional_edges("check_input", route, {"investigate": "investigate", END: END})
builder.add_edge("investigate", END)
graph = builder.compile()
'''


def _facts(tmp_path: Path, files: dict[str, str], facet: str):
    names = write_repo(tmp_path, files)
    return by_facet(code_findings(tmp_path, names)[0], facet)


def test_an_earlier_node_that_tests_the_url_and_a_router_that_ends_the_run(tmp_path: Path
                                                                            ) -> None:
    """The check node lies on every path to the cloning node, records an error when the
    prefix test fails, and its router routes to END on that error: the URL is validated,
    with the test, the record and the route quoted and the test's strength said."""
    finding = _facts(tmp_path, {"tools.py": TOOLS, "graph.py": GRAPH},
                     "safety.url_validation")
    assert finding.found
    assert "node 'check_input' lies on every path from START" in finding.rationale
    assert "records an error at graph.py:20" in finding.rationale
    assert "router reads it at graph.py:25" in finding.rationale
    assert "begins with 'https://' passes (no host, path or pattern" in finding.rationale
    assert finding.location == "graph.py:19"
    assert finding.content is not None and 'return END' in finding.content
    assert finding.data["upstream"] == ["check_input"]


def test_an_earlier_node_that_raises_on_a_bad_url(tmp_path: Path) -> None:
    graph = GRAPH.replace('        errors.append(f"bad url: {url}")',
                          '        raise ValueError(url)')
    finding = _facts(tmp_path, {"tools.py": TOOLS, "graph.py": graph},
                     "safety.url_validation")
    assert finding.found and "it raises at graph.py:20, which ends the run" in \
        finding.rationale


def test_no_upstream_validation_without_a_stop(tmp_path: Path) -> None:
    """A recorded error no router reads, a check node the run can go around, and a raise
    the node itself catches stop nothing."""
    static = GRAPH.replace(
        'builder.add_conditional_edges("check_input", route, {"investigate": "investigate", '
        'END: END})', 'builder.add_edge("check_input", "investigate")')
    around = GRAPH.replace('builder.add_edge(START, "check_input")',
                           'builder.add_edge(START, "check_input")\n'
                           'builder.add_edge(START, "investigate")')
    caught = GRAPH.replace(
        '    if not url.startswith("https://"):\n        errors.append(f"bad url: {url}")',
        '    try:\n        if not url.startswith("https://"):\n            raise ValueError(url)\n'
        '    except ValueError:\n        pass')
    for name, graph in (("static", static), ("around", around), ("caught", caught)):
        finding = _facts(tmp_path / name, {"tools.py": TOOLS, "graph.py": graph},
                         "safety.url_validation")
        assert not finding.found, name
        assert "Checked before the clone's graph node" not in finding.rationale, name


BLACKLIST = '''
import subprocess
import tempfile


def clone_repo(url):
    if ".." in url or ";" in url:
        raise ValueError(url)
    if url.startswith("file://"):
        return url[7:]
    tmp = tempfile.mkdtemp()
    subprocess.run(["git", "clone", url, tmp], check=True, timeout=60)
    return tmp
'''


def test_a_substring_check_lets_a_leading_dash_reach_git(tmp_path: Path) -> None:
    """A check for forbidden substrings (and a prefix branch that leaves) keeps no value
    beginning with '-' from git's command list when no ``--`` comes before the URL; a
    ``--``, or a prefix the clone needs, does."""
    finding = _facts(tmp_path / "bare", {"tools.py": BLACKLIST}, "safety.url_validation")
    assert finding.found and "Weaker than it looks: at tools.py:12" in finding.rationale
    assert finding.data["leading_dash"] == ["tools.py:12"]
    separated = BLACKLIST.replace('["git", "clone", url, tmp]', '["git", "clone", "--", url, tmp]')
    prefixed = BLACKLIST.replace('if ".." in url or ";" in url:',
                                 'if not url.startswith("https://"):')
    for name, text in (("separated", separated), ("prefixed", prefixed)):
        finding = _facts(tmp_path / name, {"tools.py": text}, "safety.url_validation")
        assert finding.found and "Weaker than it looks" not in finding.rationale, name


LOCAL = '''
import subprocess
import tempfile
from pathlib import Path


def clone_repo(repo_url):
    repo_url = repo_url.strip()
    candidate = Path(repo_url)
    if candidate.exists():
        return candidate, None
    tmp = tempfile.mkdtemp()
    subprocess.run(["git", "clone", "--depth", "5", repo_url, tmp], check=True, timeout=60)
    return Path(tmp), None
'''


def test_a_local_path_used_in_place_of_a_clone_is_said(tmp_path: Path) -> None:
    finding = _facts(tmp_path / "local", {"tools.py": LOCAL}, "safety.local_path")
    assert finding.found and finding.pattern == "neutral"
    assert finding.location == "tools.py:10"
    assert finding.content == "tools.py:10: if candidate.exists(): ... return candidate, None"
    assert "read in place, not copied into a temporary directory" in finding.rationale
    message = LOCAL.replace("return candidate, None", 'return None, f"exists: {candidate}"')
    finding = _facts(tmp_path / "message", {"tools.py": message}, "safety.local_path")
    assert not finding.found


CALLER = '''
import os
import subprocess
import tempfile


def clone_sandbox(repo_url):
    tmp = tempfile.mkdtemp()
    subprocess.run(["git", "clone", repo_url, tmp], check=True, timeout=60)
    return tmp


def history(url):
    is_local = os.path.isdir(url)
    if is_local:
        path = url
    else:
        path = clone_sandbox(url)
    return subprocess.run(["git", "-C", path, "log"], capture_output=True, timeout=60)
'''


def test_a_caller_that_takes_a_local_path_instead_of_cloning_is_said(tmp_path: Path) -> None:
    """A function that calls the clone only in the ``else`` of an existence test of the URL
    (through a flag), and takes the URL itself as the repository in the body."""
    finding = _facts(tmp_path / "caller", {"tools.py": CALLER}, "safety.local_path")
    assert finding.found and finding.location == "tools.py:14"
    assert finding.content == ("tools.py:14: is_local = os.path.isdir(url) ... if is_local: "
                               "... path = url")
    # the clone in the body and the path in the else: no local path taken in its place
    swapped = CALLER.replace("    if is_local:\n", "    if not is_local:\n")
    finding = _facts(tmp_path / "swapped", {"tools.py": swapped}, "safety.local_path")
    assert not finding.found
