"""Modules that cannot be imported: the criteria whose credited functions live only there are
charged (`<family>.cannot_load`), as graph code that cannot run caps the graph."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analysers import Analysis
from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.loading import unimportable
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import Evidence

from .test_code_ast_graph import write_repo

JUDGES = '''
from langchain_openai import ChatOpenAI

from ..state import AgentState
from .helpers import build_context

PROSECUTOR = ("You are the Prosecutor. Trust no one, assume vibe coding, look for gaps, "
              "security flaws and laziness; argue for the lowest score the evidence allows.")
DEFENSE = ("You are the Defense attorney. Reward effort and intent, find the spirit of the "
           "law, highlight creative workarounds and argue for the highest defensible score.")
TECH_LEAD = ("You are the Tech Lead. Does it actually work? Is it maintainable? Weigh the "
             "architecture and technical debt, and give a pragmatic, realistic score.")


def _judge(state: AgentState, persona: str, prompt: str) -> dict:
    llm = ChatOpenAI(model="gpt-4o")
    reply = llm.invoke([("system", prompt), ("user", build_context(state))])
    return {"opinions": [{"judge": persona, "argument": reply.content}]}


def prosecutor(state: AgentState) -> dict:
    return _judge(state, "Prosecutor", PROSECUTOR)


def defense(state: AgentState) -> dict:
    return _judge(state, "Defense", DEFENSE)


def tech_lead(state: AgentState) -> dict:
    return _judge(state, "TechLead", TECH_LEAD)
'''

STATE = '''
import operator
from typing import Annotated, TypedDict


class AgentState(TypedDict):
    opinions: Annotated[list, operator.add]
'''

GRAPH = '''
from langgraph.graph import StateGraph, START, END

from .state import AgentState
from .nodes.judges import prosecutor, defense, tech_lead

builder = StateGraph(AgentState)
builder.add_node("prosecutor", prosecutor)
builder.add_node("defense", defense)
builder.add_node("tech_lead", tech_lead)
builder.add_edge(START, "prosecutor")
builder.add_edge(START, "defense")
builder.add_edge(START, "tech_lead")
builder.add_edge(["prosecutor", "defense", "tech_lead"], END)
graph = builder.compile()
'''

HELPERS = '''
def build_context(state):
    return str(state)
'''


def _repo(tmp_path: Path, helpers: bool) -> list[str]:
    files = {"app/__init__.py": "", "app/nodes/__init__.py": "", "app/state.py": STATE,
             "app/graph.py": GRAPH, "app/nodes/judges.py": JUDGES}
    if helpers:
        files["app/nodes/helpers.py"] = HELPERS
    return write_repo(tmp_path, files)


def _facet(tmp_path: Path, files: list[str], facet: str) -> list[Evidence]:
    findings, _ = code_findings(tmp_path, files)
    return [Evidence(**f.model_dump(), source="repo", dimension="judicial_nuance")
            for f in findings if f.facet == facet]


def test_judges_importing_a_missing_sibling_cannot_load(tmp_path: Path) -> None:
    facts = _facet(tmp_path, _repo(tmp_path, helpers=False), "judges.cannot_load")
    assert len(facts) == 1
    fact = facts[0]
    assert fact.found and fact.pattern == "failure"
    assert fact.location == "app/nodes/judges.py:5"
    assert "app/nodes/judges.py:5: from .helpers import build_context" in (fact.content or "")
    assert fact.data["modules"] == ["app/nodes/judges.py"]
    caps = confirmed_caps("judicial_nuance", [fact])
    assert [(row.facet, row.cap) for row, _ in caps] == [("judges.cannot_load", 2)]


def test_judges_whose_sibling_exists_are_not_charged(tmp_path: Path) -> None:
    assert _facet(tmp_path, _repo(tmp_path, helpers=True), "judges.cannot_load") == []


def _modules(tmp_path: Path, files: dict[str, str], roots: set[str],
             diagnostics: list[dict[str, object]] | None = None) -> dict[str, object]:
    paths = write_repo(tmp_path, files)
    facts: dict[str, dict[str, object]] = {p: {} for p in paths}
    for path in paths:
        try:
            compile((tmp_path / path).read_text(), path, "exec")
        except SyntaxError as exc:
            facts[path] = {"error": f"syntax error line {exc.lineno}: {exc.msg}"}
    return dict(unimportable(tmp_path, facts, Analysis("ruff", True, "ok", diagnostics or []),
                             roots))


def test_a_module_importing_one_that_cannot_load_cannot_load_either(tmp_path: Path) -> None:
    failed = _modules(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/broken.py": "def f(:\n    pass\n",
        "pkg/middle.py": "import os\nfrom .broken import f\n",
        "pkg/top.py": "from pkg.middle import f\n",
        "pkg/fine.py": "import os\n",
    }, {"pkg/top.py", "pkg/fine.py"})
    assert sorted(failed) == ["pkg/broken.py", "pkg/middle.py", "pkg/top.py"]
    assert failed["pkg/top.py"] == {"line": 1, "why": "it imports pkg/middle.py, which cannot "
                                    "be imported", "via": "pkg/middle.py"}


def test_what_does_not_run_on_import_is_left_out(tmp_path: Path) -> None:
    failed = _modules(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/guarded.py": "from typing import TYPE_CHECKING\n"
                          "try:\n    from .gone import x\nexcept ImportError:\n    x = None\n"
                          "if TYPE_CHECKING:\n    from .absent import y\n"
                          "if __name__ == '__main__':\n    from .missing import z\n"
                          "def f():\n    from .nowhere import w\n    return undefined_a\n"
                          "if x is None:\n    from .elsewhere import v\n",
        "pkg/loose.py": "VALUE = undefined_b\n",
    }, {"pkg/guarded.py", "pkg/loose.py"}, [
        {"path": "pkg/guarded.py", "line": 12, "code": "F821",
         "message": "Undefined name `undefined_a`"},
        {"path": "pkg/loose.py", "line": 1, "code": "F821",
         "message": "Undefined name `undefined_b`"}])
    assert sorted(failed) == ["pkg/loose.py"]


PROSECUTOR = '''
from ..state import AgentState
from .context import build_context
from .judges import _judge

PROSECUTOR = ("You are the Prosecutor. Trust no one, assume vibe coding, look for gaps, "
              "security flaws and laziness; argue for the lowest score the evidence allows.")


def prosecutor(state: AgentState) -> dict:
    return _judge(state, "Prosecutor", PROSECUTOR + build_context(state))
'''


def test_only_some_credited_modules_failing_is_said_not_charged(tmp_path: Path) -> None:
    files = _repo(tmp_path, helpers=True)
    # the Prosecutor moves to a module of its own, which imports a missing sibling
    judges = JUDGES.split("PROSECUTOR = ")[0] + "DEFENSE = " + JUDGES.split("DEFENSE = ")[1]
    files += write_repo(tmp_path, {
        "app/nodes/judges.py": judges.split("\n\n\ndef prosecutor")[0] + "\n\n\ndef defense"
        + judges.split("\n\n\ndef defense")[1],
        "app/nodes/prosecutor.py": PROSECUTOR,
        "app/graph.py": GRAPH.replace(
            "import prosecutor, defense, tech_lead",
            "import defense, tech_lead\nfrom .nodes.prosecutor import prosecutor")})
    facts = _facet(tmp_path, sorted(set(files)), "judges.cannot_load")
    assert len(facts) == 1 and not facts[0].found
    assert facts[0].data["modules"] == ["app/nodes/prosecutor.py"]
    assert facts[0].data["importable"] == ["app/nodes/judges.py"]
    assert "can be imported: not charged" in facts[0].rationale
    assert confirmed_caps("judicial_nuance", facts) == []


def test_a_caught_import_failure_whose_handler_ends_the_import_cannot_load(
        tmp_path: Path) -> None:
    # The body's import fails; the handler tries a module the package lacks, and its own
    # handler exits: importing `server` ends the process, so it cannot be imported.
    failed = _modules(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/broken.py": "def f(:\n    pass\n",
        "pkg/server.py": "import sys\ntry:\n    from pkg.broken import f\nexcept ImportError:\n"
                         "    try:\n        from pkg.engine import f\n"
                         "    except ImportError:\n        sys.exit(1)\n",
        "pkg/reraise.py": "try:\n    from .broken import f\nexcept Exception:\n"
                          "    print('no engine')\n    raise\n",
        "pkg/soft.py": "try:\n    from .broken import f\nexcept ImportError:\n    f = None\n",
        "pkg/fine.py": "import sys\ntry:\n    from .soft import f\nexcept ImportError:\n"
                       "    sys.exit(1)\n",
    }, {"pkg/server.py", "pkg/reraise.py", "pkg/soft.py", "pkg/fine.py"})
    assert sorted(failed) == ["pkg/broken.py", "pkg/reraise.py", "pkg/server.py"]
    server = failed["pkg/server.py"]
    assert server["line"] == 3 and server["via"] == "pkg/broken.py"
    assert "the handler's fallback fails too (line 6:" in str(server["why"])
    assert "ends the import (line 8)" in str(server["why"])
    assert "ends the import (line 5)" in str(failed["pkg/reraise.py"]["why"])
