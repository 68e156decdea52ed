"""Placeholder files: a stage's stubs are not its code; the files are read in bounds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from automaton_auditor.forensics.git import history
from automaton_auditor.forensics.git.history import Commit
from automaton_auditor.forensics.git.progression import (
    placeholder,
    progression_finding,
    stage_firsts,
)
from tests.unit.test_git_concentration import code, facet, findings, stepwise
from tests.unit.test_git_hollow import audit, commit
from tests.unit.test_git_narrative import BASE, git, make_repo
from tests.unit.test_git_replay import slot

JUDGES_STUB = '''
def _opinion(judge, criterion, argument, score):
    return Opinion(judge=judge, criterion_id=criterion, score=score, argument=argument)

def prosecutor_node(state):
    """Placeholder implementation."""
    for dim in state.get("rubric_dimensions", []):
        argument = f"[Prosecutor] Placeholder assessment for '{dim['name']}'."
        state.setdefault("opinions", []).append(_opinion("Prosecutor", dim["id"], argument, 1))
    return state

def defense_node(state):
    for dim in state.get("rubric_dimensions", []):
        argument = f"[Defense] Placeholder recognition of effort for '{dim['name']}'."
        state.setdefault("opinions", []).append(_opinion("Defense", dim["id"], argument, 3))
    return state
'''
# The same judges once a model rules: "Placeholder" stays in a docstring and a fallback.
JUDGES_REAL = '''
def _run_judge(judge, state):
    try:
        llm = get_chat_model().with_structured_output(Batch)
    except Exception:
        return [Opinion(judge=judge, score=3, argument="LLM not configured; placeholder.")]
    return llm.invoke(prompt(judge, state)).opinions

def prosecutor_node(state):
    """Placeholder implementation."""
    return {"opinions": _run_judge("Prosecutor", state)}

def defense_node(state):
    return {"opinions": _run_judge("Defense", state)}
'''


@pytest.mark.parametrize("source", [
    "",
    '"""Judges."""\nimport os\n',
    "def judge(state):\n    '''TODO'''\n    return {}\n",
    "def a(s):\n    return {'opinions': []}\n\ndef b(s):\n    pass\n\n"
    "def c(s):\n    return a(s)['opinions'] + b(s)\n",
    "class Judge:\n    '''TODO'''\n",
    "def f():\n    raise NotImplementedError('later')\n",
    # a fan-in node that hands the state back untouched does nothing
    "def aggregate(state):\n    '''Fan-in.'''\n    return state\n",
    # judges whose every run writes a fixed score with text calling it a placeholder
    JUDGES_STUB,
])
def test_placeholders(source: str) -> None:
    assert placeholder(source)


@pytest.mark.parametrize("source", [
    "g = StateGraph(State)\ng.add_node('a', a)\n",
    "def build():\n    g = StateGraph(State)\n    g.add_edge(START, 'a')\n    return g.compile()\n",
    "class State(TypedDict):\n    evidences: list[str]\n",
    "def a(s):\n    return {}\n\ndef b(s):\n    return len(s)\n",
    "def broken(:\n",
    # a placeholder only on the fallback path (no model configured) is no placeholder
    JUDGES_REAL,
])
def test_working_code(source: str) -> None:
    assert not placeholder(source)


def test_read_blobs_reads_files_at_their_commit_in_bounds(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are read as the commit left them, in two git calls; a path git cannot resolve
    and a blob over the size bound are left out, and the total stays under its bound."""
    repo = make_repo(tmp_path / "r", [
        ("one", {"src/graph.py": "old = 1\n", "src/my tools.py": "t = 1\n"}),
        ("two", {"src/graph.py": "new = 2\n", "big.py": "x" * 5000}),
    ])
    shas = subprocess.run(["git", "-C", str(repo), "log", "--format=%H", "--reverse"],
                          capture_output=True, text=True, check=True).stdout.split()
    monkeypatch.setattr(history, "BLOB_BYTES", 4096)
    texts = history.read_blobs(repo, 30.0, [
        (shas[0], "src/graph.py"), (shas[1], "src/graph.py"), (shas[0], "src/my tools.py"),
        (shas[0], "big.py"), (shas[1], "big.py"), (shas[1], "gone.py")])
    assert texts == {(shas[0], "src/graph.py"): "old = 1\n",
                     (shas[1], "src/graph.py"): "new = 2\n",
                     (shas[0], "src/my tools.py"): "t = 1\n"}
    monkeypatch.setattr(history, "BLOBS_BYTES", 10)
    capped = history.read_blobs(repo, 30.0, [(shas[0], "src/graph.py"),
                                             (shas[1], "src/graph.py")])
    assert capped == {(shas[0], "src/graph.py"): "old = 1\n"}  # 8 bytes, then the bound


def test_stages_committed_in_a_burst_tell_no_progression(tmp_path: Path) -> None:
    """Eight stage commits hours apart progress from setup to tools to graph; the same
    commits a minute apart (a burst bringing all the code) show only the order the finished
    files were committed in."""
    fact = facet(findings(tmp_path / "a", stepwise()), "git.progression")
    assert fact.found
    burst = [(BASE + i * 60, message, files) for i, (_w, message, files)
             in enumerate(stepwise())]
    fact = facet(findings(tmp_path / "b", burst), "git.progression")
    assert not fact.found
    assert "start within one run of 8 commits minutes apart" in fact.rationale
    assert "brings 100% of the code" in fact.rationale


def test_stages_committed_in_a_replay_tell_no_progression(tmp_path: Path) -> None:
    """Twelve commits each adding one finished module in build order: a progression when
    dated as people commit; none when every date is typed in on a whole minute (a replay)."""
    modules = ["state", "tools/repo_tools", "tools/doc_tools", "nodes/detectives", "graph",
               "nodes/judges", "nodes/justice", "report", "config", "llm", "rubric", "main"]

    def repo(root: Path, offset: int) -> Path:
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", "main")
        commit(root, "chore: setup", {"pyproject.toml": "[project]\nname = 'x'\n"},
               slot(0) - 3_600 + offset)
        for index, name in enumerate(modules):
            commit(root, f"feat: add {name}", {f"src/{name}.py": code(80, name[-4:])},
                   slot(index) + offset)
        return root

    lived = audit(tmp_path / "lived", repo(tmp_path / "a", 37))
    assert facet(lived, "git.progression").found
    assert not facet(lived, "git.replayed_dates").found
    staged = audit(tmp_path / "staged", repo(tmp_path / "b", 0))
    assert facet(staged, "git.replayed_dates").found
    fact = facet(staged, "git.progression")
    assert not fact.found and "start in replayed commits" in fact.rationale


def test_a_burst_that_orders_nothing_between_tools_and_graph_is_not_held(
        tmp_path: Path) -> None:
    """Tools and graph start in one commit: the burst around it orders nothing between them,
    so the fact rests on what it did before (the state and setup start earlier)."""
    history = stepwise()
    tools = next(i for i, (_w, _m, files) in enumerate(history) if "src/tools/repo_tools.py"
                 in files)
    graph = next(i for i, (_w, _m, files) in enumerate(history) if "src/graph.py" in files)
    when, message, files = history[tools]
    history[tools] = (when, message, {**files, **history[graph][2]})
    del history[graph]
    burst = [(BASE + i * 60, message, files) for i, (_w, message, files) in enumerate(history)]
    fact = facet(findings(tmp_path, burst), "git.progression")
    assert fact.found and "minutes apart" not in fact.rationale


def test_a_graph_file_that_adds_no_node_does_not_start_the_graph_stage() -> None:
    """Ahmed-Hibet: 9366dc0 "Initial StateGraph skeleton" (``StateGraph(AgentState)
    .compile()``, no node, no edge) was read as the start of the graph stage, before the
    tools; the graph starts at the first commit that wires nodes."""
    files = {
        ("a", "src/graph.py"): "def build_graph():\n    builder = StateGraph(AgentState)\n"
                               "    return builder.compile()\n",
        ("b", "src/tools/repo_tools.py"): "def clone(url):\n    return run(['git', url])\n",
        ("c", "src/graph.py"): "def build_graph():\n    builder = StateGraph(AgentState)\n"
                               "    builder.add_node('a', a)\n    return builder.compile()\n"}
    commits = [Commit("a", 1, "d", "Initial StateGraph skeleton", added=["src/graph.py"]),
               Commit("b", 2, "d", "tools", added=["src/tools/repo_tools.py"]),
               Commit("c", 3, "d", "wire nodes", changed=["src/graph.py"])]
    firsts = stage_firsts(commits, lambda sha, path: files.get((sha, path)))
    assert firsts["graph"] == 2 and firsts["tools"] == 1


def test_placeholder_judges_do_not_start_their_stage() -> None:
    """Bnobody47: be3181b "first commit" brings tools, graph and judges whose every run
    writes a fixed score with "Placeholder assessment"; the model-backed judges arrive in
    60ff4e6. The judges stage starts there, and the fact says so."""
    files = {
        ("a", "src/tools/repo_tools.py"): "def clone(url):\n    return run(['git', url])\n",
        ("a", "src/graph.py"): "g = StateGraph(S)\ng.add_node('a', a)\n",
        ("a", "src/nodes/judges.py"): JUDGES_STUB,
        ("b", "src/nodes/judges.py"): JUDGES_REAL}
    first = ["pyproject.toml", *(p for s, p in files if s == "a")]
    commits = [Commit("a", 1, "d", "first commit", added=first, lines=500),
               Commit("b", 2, "d", "Enhance .env.example", changed=["src/nodes/judges.py"],
                      lines=200),
               Commit("c", 3, "d", "docs", changed=["README.md"], lines=0)]
    read = lambda sha, path: files.get((sha, path))  # noqa: E731
    firsts = stage_firsts(commits, read)
    assert firsts["judges"] == 1 and firsts["tools"] == firsts["graph"] == 0
    fact = progression_finding(commits, read=read)
    assert "judges: b d Enhance .env.example" in (fact.content or "")
    assert "all start in one commit, a (later: judges in b)" in fact.rationale


def test_a_commit_touching_a_stage_by_its_subject_only_and_no_code_starts_nothing() -> None:
    """NebiyouBelaineh: "chore: update .gitignore to include personal docs directory"
    ("persona" in its subject, 0 code lines) was quoted as the start of the judges."""
    files = {("c", "src/nodes/judges.py"): JUDGES_REAL}
    commits = [Commit("a", 1, "d", "tools", added=["src/tools/repo_tools.py"], lines=50),
               Commit("b", 2, "d", "chore: update .gitignore to include personal docs",
                      changed=[".gitignore"], lines=0),
               Commit("c", 3, "d", "add judges", added=["src/nodes/judges.py"], lines=200)]
    firsts = stage_firsts(commits, lambda sha, path: files.get((sha, path)))
    assert firsts["judges"] == 2


@pytest.mark.parametrize(("minutes", "staged"), [(17, True), (2, False), (45, False)])
def test_tools_started_in_the_same_sitting_after_the_graph_invert_nothing(
        minutes: int, staged: bool) -> None:
    """amare1990: setup and state in the afternoon, the graph runner at 20:42 and the
    detectives' tools at 20:59, then the judges: built in turn in one sitting, the order of
    the two says nothing against the progression. Two minutes apart the two were committed
    together (no order shown); three quarters of an hour apart the tools came later."""
    base = 1_700_000_000
    commits = [Commit("a", base, "d", "Initialize project with uv", added=["pyproject.toml"]),
               Commit("b", base + 3600, "d", "Define state", added=["src/state.py"]),
               Commit("c", base + 7200, "d", "Add graph runner", added=["src/graph.py"]),
               Commit("d", base + 7200 + minutes * 60, "d", "Implement detectives",
                      added=["src/tools/repo_tools.py"]),
               Commit("e", base + 9000 + minutes * 60, "d", "Add judges",
                      added=["src/nodes/judges.py"])]
    fact = progression_finding(commits)
    assert fact.found is staged, fact.rationale
    if not staged:
        assert "tools starts after graph" in fact.rationale
