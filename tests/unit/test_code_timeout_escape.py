"""A clone's ``timeout=`` raises ``subprocess.TimeoutExpired``, which ``except
CalledProcessError`` does not catch (`forensics.code.timeout_escape`): claimed when some
path up the callers leaves a graph node, uncaught."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.judging.offline import STRONG
from automaton_auditor.state import Evidence, Finding

from .test_code_ast_graph import by_facet, write_repo

GRAPH = '''
from typing import TypedDict

from langgraph.graph import StateGraph

from tools import clone


class State(TypedDict):
    url: str


def investigate(state):
    path = clone(state["url"])
    return {"url": path}


builder = StateGraph(State)
builder.add_node("investigate", investigate)
builder.set_entry_point("investigate")
builder.set_finish_point("investigate")
app = builder.compile()
'''

# the audited shape: only the clone's failure is caught, its time limit is not
TOOLS = '''
import subprocess
import tempfile


def clone(url):
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run(
            ["git", "clone", "--depth", "50", url, tmp],
            capture_output=True,
            timeout=60,
            check=True,
        )
    except subprocess.CalledProcessError as e:
        raise RuntimeError(f"Git clone failed: {e.stderr}")
    return tmp
'''

# the time limit is on a wrapper's process call
WRAPPER = '''
import subprocess
import tempfile


def _run(cmd):
    return subprocess.run(cmd, capture_output=True, timeout=120, check=True)


def clone(url):
    tmp = tempfile.mkdtemp()
    try:
        _run(["git", "clone", url, tmp])
    except subprocess.CalledProcessError:
        raise
    return tmp
'''


def _fact(tmp_path: Path, files: dict[str, str]) -> Finding:
    names = write_repo(tmp_path, files)
    return by_facet(code_findings(tmp_path, names)[0], "safety.timeout_uncaught")


def test_a_timeout_only_calledprocesserror_catches_leaves_the_node(tmp_path: Path) -> None:
    fact = _fact(tmp_path, {"tools.py": TOOLS, "graph.py": GRAPH})
    assert fact.found and fact.pattern == "failure"
    assert fact.location == "tools.py:9"
    assert "reaches its 60 s limit raises TimeoutExpired" in fact.rationale
    assert "the except at :15 catches only CalledProcessError" in fact.rationale
    assert "investigate (graph.py:13)" in fact.rationale
    assert "tools.py:15: except subprocess.CalledProcessError as e:" in (fact.content or "")


def test_a_handler_naming_the_timeout_catches_it(tmp_path: Path) -> None:
    caught = {
        "tuple": "except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:",
        "base": "except subprocess.SubprocessError as e:",
        "bare": "except:",
    }
    for name, clause in caught.items():
        tools = TOOLS.replace("except subprocess.CalledProcessError as e:", clause)
        assert not _fact(tmp_path / name, {"tools.py": tools, "graph.py": GRAPH}).found, name


def test_a_caller_catching_exception_catches_it(tmp_path: Path) -> None:
    graph = GRAPH.replace('    path = clone(state["url"])\n', '''    try:
        path = clone(state["url"])
    except Exception as e:
        return {"url": str(e)}
''')
    fact = _fact(tmp_path, {"tools.py": TOOLS, "graph.py": graph})
    assert not fact.found and "tools.py:9 caught at graph.py:16" in fact.rationale


def test_no_claim_where_a_caller_cannot_be_seen(tmp_path: Path) -> None:
    # nothing resolved calls the clone (a test does not count): not established; beside
    # the graph node, a test calling it is no path of the program's run
    test = "from tools import clone\n\n\ndef test_clone():\n    clone('u')\n"
    alone = _fact(tmp_path / "alone", {"tools.py": TOOLS, "tests/test_tools.py": test})
    assert not alone.found and "no resolved caller of clone (tools.py)" in alone.rationale
    assert _fact(tmp_path / "tested", {"tools.py": TOOLS, "graph.py": GRAPH,
                                       "tests/test_tools.py": test}).found
    # a node built by a wrapper call may run the function inside a try
    wrapped = GRAPH.replace('add_node("investigate", investigate)',
                            'add_node("investigate", guarded(investigate))').replace(
        "from tools import clone", "from tools import clone, guarded")
    guard = "\n\ndef guarded(fn):\n    def inner(state):\n        return fn(state)\n" \
            "    return inner\n"
    assert not _fact(tmp_path / "built", {"tools.py": TOOLS + guard,
                                          "graph.py": wrapped}).found


def test_the_wrapper_s_time_limit_is_read_in_the_wrapper_then_at_the_clone(
        tmp_path: Path) -> None:
    fact = _fact(tmp_path / "open", {"tools.py": WRAPPER, "graph.py": GRAPH})
    assert fact.found and "its 120 s limit" in fact.rationale
    caught = WRAPPER.replace(
        "    return subprocess.run(cmd, capture_output=True, timeout=120, check=True)\n",
        "    try:\n        return subprocess.run(cmd, timeout=120, check=True)\n"
        "    except subprocess.TimeoutExpired:\n        raise RuntimeError('slow')\n")
    assert not _fact(tmp_path / "caught", {"tools.py": caught, "graph.py": GRAPH}).found


def test_the_escape_alone_never_caps_the_tools() -> None:
    # a crash on a slow clone, not a sandbox escape: modest weight, no ceiling of its own
    fact = Evidence(goal="g", found=True, location="tools.py:9", rationale="r",
                    confidence=0.6, facet="safety.timeout_uncaught", pattern="failure",
                    source="repo", dimension="safe_tool_engineering")
    assert fact.confidence < STRONG
    assert confirmed_caps("safe_tool_engineering", [fact]) == []


def test_a_context_manager_s_clone_raises_out_of_the_with(tmp_path: Path) -> None:
    # the generator runs the clone as the caller's ``with`` enters it: followed there
    tools = TOOLS.replace("import subprocess\n", "import subprocess\nfrom contextlib import "
                          "contextmanager\n").replace("def clone(url):",
                                                      "@contextmanager\ndef clone(url):")
    tools = tools.replace("    return tmp\n", "    yield tmp\n")
    graph = GRAPH.replace('    path = clone(state["url"])\n', '''    try:
        with clone(state["url"]) as path:
            pass
    except RuntimeError:
        path = ""
''')
    fact = _fact(tmp_path / "open", {"tools.py": tools, "graph.py": graph})
    assert fact.found and "graph.py:17 (RuntimeError) let it through" in fact.rationale
    caught = graph.replace("except RuntimeError:", "except Exception:")
    assert not _fact(tmp_path / "caught", {"tools.py": tools, "graph.py": caught}).found


def test_one_uncaught_path_to_a_node_is_enough_beside_a_decorated_caller(
        tmp_path: Path) -> None:
    """NebiyouBelaineh: a @tool wrapper also calls the clone (not followed: a decorator may
    catch what it wraps), while the graph node calls it directly with no try."""
    tool = TOOLS + "\n\n@tool\ndef clone_tool(url):\n    return clone(url)\n"
    fact = _fact(tmp_path, {"tools.py": "from langchain_core.tools import tool\n" + tool,
                            "graph.py": GRAPH})
    assert fact.found and "investigate (graph.py:13)" in fact.rationale, fact.rationale
