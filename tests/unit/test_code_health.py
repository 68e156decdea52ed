"""Code health from ruff (pyflakes and bandit's checks), run hardened on the checkout."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from automaton_auditor.forensics.code import analysers
from automaton_auditor.forensics.code.analysers import run_ruff
from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

STUB_STATE = '''
from pydantic import BaseModel


class AgentState(BaseModel):
    repo_url: str = ""
    evidences: list = []
'''

STUB_GRAPH = '''
from langgraph.graph import StateGraph, START, END
from state import AgentState


def detective(state: AgentState):
    state["evidences"] = [{"found": True}]
    return state


builder = StateGraph(AgentState)
builder.add_node("detective", detective)
builder.add_node("judge", judge_node)
builder.add_edge(START, "detective")
builder.add_edge("detective", "judge")
builder.add_edge("judge", END)
graph = builder.compile()


def judge_node(state):
    return {"evidences": state.evidences}
'''


def test_a_stub_that_cannot_run_is_charged(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"state.py": STUB_STATE, "graph.py": STUB_GRAPH})
    findings, _ = code_findings(tmp_path, files)
    undefined = by_facet(findings, "graph.undefined_names")
    assert undefined.found and undefined.pattern == "failure" and undefined.confidence >= 0.9
    assert undefined.data["names"] == ["judge_node"]
    assert undefined.data["import_time"] == ["graph.py:13"]
    assert "graph.py:13: builder.add_node(\"judge\", judge_node)  [F821" in (
        undefined.content or "")
    subscript = by_facet(findings, "state.subscript_on_model")
    assert subscript.found and subscript.location == "graph.py:7"
    assert subscript.data["nodes"] == ["detective"]


def test_undefined_names_only_in_local_annotations_or_error_paths(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"state.py": STUB_STATE.replace("BaseModel)", "dict)"),
                                  "graph.py": '''
from langgraph.graph import StateGraph, START, END
from state import AgentState


def detective(state):
    found: List[dict] = []
    try:
        return {"evidences": found}
    except Exception:
        logger.error("failed")
        raise


builder = StateGraph(AgentState)
builder.add_node("detective", detective)
builder.add_edge(START, "detective")
builder.add_edge("detective", END)
'''})
    undefined = by_facet(code_findings(tmp_path, files)[0], "graph.undefined_names")
    assert undefined.data["names"] == ["logger"]  # List sits in an unevaluated annotation
    assert undefined.confidence < 0.7 and undefined.data["import_time"] == []


def test_an_undefined_name_a_broad_except_swallows_is_skipped_not_charged(
        tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"state.py": STUB_STATE.replace("BaseModel)", "dict)"),
                                  "graph.py": '''
from langgraph.graph import StateGraph, START, END
from state import AgentState


def detective(state):
    found = []
    try:
        found.append(root / "judges.py")
    except Exception:
        pass
    try:
        found.append(other)
    except (KeyError, BaseException) as exc:
        print(exc)
    try:
        found.append(loud)
    except Exception:
        raise
    try:
        found.append(narrow)
    except KeyError:
        pass
    return {"evidences": found}


def judge(state):
    try:
        def later():
            return deferred
        return {"evidences": [later]}
    except Exception:
        return {}


builder = StateGraph(AgentState)
builder.add_node("detective", detective)
builder.add_node("judge", judge)
builder.add_edge(START, "detective")
builder.add_edge("detective", "judge")
builder.add_edge("judge", END)
'''})
    undefined = by_facet(code_findings(tmp_path, files)[0], "graph.undefined_names")
    # re-raised, too narrow a handler, or run later by a function defined in the try
    assert undefined.data["names"] == ["deferred", "loud", "narrow"]
    assert undefined.data["caught"] == [
        "graph.py:9 root: `except Exception` at graph.py:10",
        "graph.py:13 other: `except (KeyError, BaseException)` at graph.py:14"]
    assert "`root` at graph.py:9 silently skipped (caught by `except Exception` at " \
        "graph.py:10)" in undefined.rationale
    # a node whose only undefined name is swallowed runs: no failure to charge
    text = (tmp_path / "graph.py").read_text(encoding="utf-8")
    start, end = text.index("    try:\n        found.append(loud)"), text.index("    return {")
    (tmp_path / "graph.py").write_text(text[:start] + text[end:].replace(
        "return deferred", "return 1"), encoding="utf-8")
    undefined = by_facet(code_findings(tmp_path, files)[0], "graph.undefined_names")
    assert not undefined.found and undefined.rationale.startswith("No undefined name")
    assert len(undefined.data["caught"]) == 2


def test_shell_injection_from_bandit_rules_ignores_the_targets_config(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {
        "pyproject.toml": '[tool.ruff]\nexclude = ["*"]\n[tool.ruff.lint]\nselect = []\n',
        "ruff.toml": 'extend-exclude = ["tools.py"]\n',
        "tools.py": '''
import subprocess


def clone(url):
    subprocess.run(f"git clone {url}", shell=True)
    subprocess.run("ls -la", shell=True)
    return eval(url)
'''})
    findings, _ = code_findings(tmp_path, files)
    shell = by_facet(findings, "safety.shell_injection")
    assert shell.found and shell.security and shell.location == "tools.py:6"
    assert shell.data["locations"] == ["tools.py:6"]  # the constant command is not data
    assert "S602" in (shell.content or "")
    assert by_facet(findings, "safety.code_injection").security


def test_missing_ruff_is_a_clear_unchecked_finding(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(analysers, "ruff_binary", lambda: None)
    files = write_repo(tmp_path, {"state.py": STUB_STATE, "graph.py": STUB_GRAPH})
    undefined = by_facet(code_findings(tmp_path, files)[0], "graph.undefined_names")
    assert undefined.found is False and undefined.confidence == 0.0
    assert undefined.rationale == "Not checked: ruff not installed."


def _fake_ruff(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-ruff"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_a_hanging_analyser_is_killed_and_reported(tmp_path: Path, monkeypatch) -> None:
    pid_file = tmp_path / "pid"
    fake = _fake_ruff(tmp_path, f"echo $$ > {pid_file}\nexec sleep 30\n")
    monkeypatch.setattr(analysers, "ruff_binary", lambda: fake)
    (tmp_path / "a.py").write_text("x = 1\n")
    result = run_ruff(tmp_path, ["a.py"], timeout_s=0.5)
    assert (result.ran, result.status) == (False, "timeout")
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_output_is_capped_and_environment_scrubbed(tmp_path: Path, monkeypatch) -> None:
    env_file = tmp_path / "env"
    fake = _fake_ruff(tmp_path, f"env > {env_file}\nhead -c 5000 /dev/zero\n")
    monkeypatch.setattr(analysers, "ruff_binary", lambda: fake)
    monkeypatch.setattr(analysers, "MAX_OUTPUT", 1000)
    monkeypatch.setenv("RUFF_CONFIG", "/etc/evil.toml")
    (tmp_path / "a.py").write_text("x = 1\n")
    result = run_ruff(tmp_path, ["a.py"])
    assert (result.ran, result.status) == (False, "output too large")
    assert "RUFF_CONFIG" not in env_file.read_text()


NESTED_NODES = '''
from langgraph.graph import StateGraph, START, END
from state import AgentState


def build_graph():
    graph = StateGraph(AgentState)

    def chief_node(state: AgentState):
        state.repo_url = "done"  # an attribute: a Pydantic state takes it
        return {"evidences": [state.repo_url]}

    def report_node(state: AgentState):
        return {"evidences": state["evidences"]}

    graph.add_node("chief", chief_node)
    graph.add_node("report", report_node)
    graph.add_edge(START, "chief")
    graph.add_edge("chief", "report")
    graph.add_edge("report", END)
    return graph.compile()
'''


def test_nested_node_functions_are_read_and_attribute_stores_are_no_item_access(
        tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"state.py": STUB_STATE, "graph.py": NESTED_NODES})
    findings, _ = code_findings(tmp_path, files)
    subscript = by_facet(findings, "state.subscript_on_model")
    assert subscript.found and subscript.data["locations"] == ["graph.py:14"]
    assert subscript.data["nodes"] == ["report"]


def test_a_temp_prefix_only_compared_against_is_no_temporary_path(tmp_path: Path) -> None:
    """kidane-gebremedhin: a tuple of prefixes a path list is filtered by is no temporary
    file; a literal the code writes into still is."""
    files = write_repo(tmp_path, {"tools.py": '''
import os

SKIP = ("home/", "/tmp", "/home")


def keep(names):
    return [n for n in names if not any(n.startswith(p) or p in n for p in SKIP)]


def scratch(path):
    if path.startswith(("/tmp", "/var")) or path == "/tmp/x":
        return None
    return os.path.join("/tmp/work", path)
'''})
    temp = by_facet(code_findings(tmp_path, files)[0], "safety.insecure_temp")
    assert temp.found and temp.data["locations"] == ["tools.py:14"]
    assert temp.data["compared"] == ["tools.py:12", "tools.py:4"]
    assert "call(s) on data" not in temp.rationale


def test_a_graph_module_importing_a_module_that_cannot_load_cannot_load(
        tmp_path: Path) -> None:
    # graph.py imports nodes.py (its nodes), which imports helpers.py, whose own import
    # of a module the repository does not hold fails: graph.py fails on its import line
    files = write_repo(tmp_path, {
        "app/graph.py": '''
from langgraph.graph import StateGraph, START, END
from app.nodes import detective

builder = StateGraph(dict)
builder.add_node("detective", detective)
builder.add_edge(START, "detective")
builder.add_edge("detective", END)
''',
        "app/nodes.py": "from app.helpers import clean\n\n\ndef detective(state):\n"
                        "    return {'evidences': [clean(state)]}\n",
        "app/helpers.py": "from .missing import tidy\n\n\ndef clean(x):\n    return tidy(x)\n",
        "app/__init__.py": ""})
    undefined = by_facet(code_findings(tmp_path, files)[0], "graph.undefined_names")
    assert undefined.found
    assert "app/graph.py:3: from app.nodes import detective  [IMPORT imports " \
        "app/nodes.py, which cannot be imported]" in (undefined.content or "")
