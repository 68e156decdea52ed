"""The git narrative on fixture histories: a single bulk commit vs a stepwise history."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from automaton_auditor.forensics.git.acquire import (
    GitLimits,
    acquire,
    clone_with_blobs,
    git_findings,
    parse_target,
)
from automaton_auditor.forensics.git.history import Commit, is_vague
from automaton_auditor.forensics.git.materialize import materialize
from automaton_auditor.state import Finding

BASE = 1_700_000_000  # a fixed epoch so the facts are identical on every run


def git(repo: Path, *args: str, when: int = BASE) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": f"@{when} +0000",
           "GIT_COMMITTER_DATE": f"@{when} +0000", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env,
                   capture_output=True)


def make_repo(root: Path, steps: list[tuple[str, dict[str, str]]], gap_s: int = 3600) -> Path:
    """A repository whose commits add the given files, `gap_s` seconds apart."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for index, (message, files) in enumerate(steps):
        for rel, text in files.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message, when=BASE + index * gap_s)
    return root


STEPWISE = [
    ("chore: project setup with uv", {"pyproject.toml": "[project]\n", "README.md": "x\n"}),
    ("feat: git and ast tools", {"src/tools/repo_tools.py": "x = 1\n",
                                 "src/tools/doc_tools.py": "y = 1\n"}),
    ("feat: typed state", {"src/state.py": "s = 1\n"}),
    ("feat: graph with parallel detectives", {"src/graph.py": "g = 1\n"}),
    ("feat: three judges", {"src/nodes/judges.py": "j = 1\n"}),
    ("feat: chief justice synthesis", {"src/nodes/justice.py": "c = 1\n"}),
]
BULK = [("Add files via upload", {path: text for _m, files in STEPWISE
                                  for path, text in files.items()})]


def facet(findings: list[Finding], name: str) -> Finding:
    return next(f for f in findings if f.facet == name)


def audit(tmp_path: Path, steps: list[tuple[str, dict[str, str]]], gap_s: int = 3600
          ) -> list[Finding]:
    repo = make_repo(tmp_path / "target", steps, gap_s)
    limits = GitLimits()
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    return git_findings(checkout.path, limits)


def test_stepwise_history(tmp_path: Path) -> None:
    findings = audit(tmp_path, STEPWISE)
    history = facet(findings, "git.history")
    assert history.found and history.data["count"] == 6
    assert history.data["span_hours"] == 5.0
    assert history.content is not None and "feat: three judges" in history.content
    assert facet(findings, "git.bulk_upload").found is False
    progression = facet(findings, "git.progression")
    assert progression.found
    assert progression.data["order"] == ["setup", "tools", "state", "graph", "judges",
                                         "synthesis"]
    assert progression.data["inversions"] == 0


def test_single_bulk_commit(tmp_path: Path) -> None:
    findings = audit(tmp_path, BULK)
    assert facet(findings, "git.history").found is False
    bulk = facet(findings, "git.bulk_upload")
    assert bulk.found and bulk.pattern == "failure"
    assert bulk.data["largest_share"] == 1.0
    assert bulk.content is not None and "Add files via upload" in bulk.content
    assert "A src/graph.py" in bulk.content
    assert facet(findings, "git.progression").found is False
    assert facet(findings, "git.commit_messages").found is False


def test_commits_minutes_apart_are_clustered(tmp_path: Path) -> None:
    bulk = facet(audit(tmp_path, STEPWISE, gap_s=60), "git.bulk_upload")
    assert bulk.found and bulk.data["clustered"] and bulk.data["span_seconds"] == 300


def test_progression_out_of_order(tmp_path: Path) -> None:
    reordered = [STEPWISE[5], STEPWISE[4], STEPWISE[3], STEPWISE[0], STEPWISE[1], STEPWISE[2]]
    progression = facet(audit(tmp_path, reordered), "git.progression")
    assert progression.found is False and progression.data["inversions"] > 1


def test_narrative_is_deterministic(tmp_path: Path) -> None:
    first = audit(tmp_path / "a", STEPWISE)
    second = audit(tmp_path / "b", STEPWISE)
    assert [f.model_dump() for f in first] == [f.model_dump() for f in second]


def test_scaffold_commit_counts_as_setup(tmp_path: Path) -> None:
    scaffold = ("chore: scaffold", {path: "" for _m, files in STEPWISE for path in files})
    later = [(m, {p: t + "# real\n" for p, t in files.items()}) for m, files in STEPWISE[1:]]
    found = audit(tmp_path, [scaffold, *later])
    # it adds every code file, but empty: placeholders, not an upload of the code
    bulk = facet(found, "git.bulk_upload")
    assert bulk.data["largest_share"] == 1.0 and bulk.data["scaffold"]
    assert bulk.found is False and "placeholders: the code came later" in bulk.rationale
    progression = facet(found, "git.progression")
    assert progression.found
    assert progression.data["order"] == ["setup", "tools", "state", "graph", "judges",
                                         "synthesis"]
    assert progression.content is not None
    assert progression.content.splitlines()[0].endswith("chore: scaffold")


def test_late_move_of_the_code_is_not_a_bulk_upload(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "target", STEPWISE)
    git(repo, "mv", "src", "pkg")
    git(repo, "commit", "-q", "-m", "refactor: move code into pkg/", when=BASE + 99_999)
    limits = GitLimits()
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    bulk = facet(git_findings(checkout.path, limits), "git.bulk_upload")
    assert bulk.data["largest_share"] == 1.0 and bulk.data["restructure"]
    assert bulk.found is False and "a restructure" in bulk.rationale


def test_depth_limit_marks_a_shallow_history(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "target", STEPWISE)
    limits = GitLimits(depth=2)
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    assert checkout.shallow
    history = facet(git_findings(checkout.path, limits), "git.history")
    assert history.data["count"] == 2 and history.data["shallow"]
    assert "lower bound" in history.rationale and history.confidence < 1.0


def _clone(tmp_path: Path, repo: Path, limits: GitLimits) -> tuple[Path, str]:
    """The https clone path, over file:// (only tests and benchmarks may)."""
    dest, home = tmp_path / "clone", tmp_path / "home"
    dest.mkdir()
    home.mkdir()
    commit = clone_with_blobs(f"file://{repo}", dest, home, limits, time.monotonic() + 60,
                              allow_file=True)
    materialize(dest, commit, home, 60, limits.max_blob_bytes)
    return dest, commit


def test_clone_leaves_no_promisor_remote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "target", STEPWISE)
    limits = GitLimits()
    dest, _commit = _clone(tmp_path, repo, limits)
    config = (dest / ".git" / "config").read_text()
    assert "promisor" not in config and "[remote" not in config  # nothing to lazy-fetch from
    assert (dest / "src" / "graph.py").read_text() == "g = 1\n"
    assert facet(git_findings(dest, limits), "git.history").data["count"] == 6


def test_fallback_when_the_server_cannot_send_a_commit_by_id(tmp_path: Path,
                                                             monkeypatch) -> None:
    from automaton_auditor.forensics.git import clone as git_clone

    monkeypatch.setattr(git_clone, "fetch_commit_blobs", lambda *_a: "unsupported")
    repo = make_repo(tmp_path / "target", STEPWISE)
    limits = GitLimits()
    dest, _commit = _clone(tmp_path, repo, limits)
    assert (dest / "src" / "graph.py").read_text() == "g = 1\n"
    assert "[remote" not in (dest / ".git" / "config").read_text()
    assert facet(git_findings(dest, limits), "git.history").data["count"] == 6


def _burst_repo(root: Path) -> Path:
    """Five commits an hour apart adding 190 lines, then nine in four minutes adding 580
    (the 580-of-770 history the rubric calls clustered)."""
    repo = make_repo(root, [(f"feat: part {i}", {f"src/early_{i}.py": "x = 1\n" * 38})
                            for i in range(5)])
    start = BASE + 10 * 3600
    for i in range(9):
        (repo / "src" / f"late_{i}.py").write_text("y = 2\n" * (68 if i == 8 else 64))
        (repo / "notes.md").write_text("words\n" * (100 * (i + 1)))  # not code: not counted
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"feat: late {i}", when=start + i * 30)
    return repo


def test_a_burst_of_commits_within_minutes_is_a_failure_fact(tmp_path: Path) -> None:
    repo = _burst_repo(tmp_path / "target")
    limits = GitLimits()
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    burst = facet(git_findings(checkout.path, limits), "git.commit_bursts")
    assert burst.found and burst.pattern == "failure"
    assert burst.data["unit"] == "lines" and burst.data["total"] == 770
    assert burst.data["commits"] == 9 and burst.data["span_seconds"] == 240
    assert burst.data["share"] == round(580 / 770, 3)
    assert burst.confidence == round(0.55 + 0.35 * (580 / 770 - 0.5) / 0.4, 2)
    assert burst.rationale.startswith("Burst: 9 commits within 4 minutes added 75%")
    assert burst.content is not None and len(burst.content.splitlines()) == 9
    assert burst.content.splitlines()[-1].endswith("feat: late 8 (+68)")


def test_a_spread_history_has_no_burst(tmp_path: Path) -> None:
    burst = facet(audit(tmp_path, STEPWISE), "git.commit_bursts")
    assert not burst.found and burst.rationale.startswith("No burst: no 3 commits within")


def test_a_blobless_clone_measures_bursts_in_files(tmp_path: Path) -> None:
    # The old blobs are not there (and never fetched). Only notes.md's old versions are
    # missing here: left out of the count (no code), the code lines are read exactly.
    repo = _burst_repo(tmp_path / "target")
    git(repo, "config", "uploadpack.allowFilter", "true")
    limits = GitLimits()
    (tmp_path / "a").mkdir()
    dest, _commit = _clone(tmp_path / "a", repo, limits)
    burst = facet(git_findings(dest, limits), "git.commit_bursts")
    assert burst.data["unit"] == "lines" and burst.data["commits"] == 9
    # a code file rewritten later: its old blob is missing, so files touched stand in
    (repo / "src" / "late_8.py").write_text("z = 3\n" * 40)
    git(repo, "commit", "-q", "-am", "fix: late 8", when=BASE + 11 * 3600)
    (tmp_path / "b").mkdir()
    dest, _commit = _clone(tmp_path / "b", repo, limits)
    burst = facet(git_findings(dest, limits), "git.commit_bursts")
    assert burst.data["unit"] == "files" and burst.data["commits"] == 9
    assert burst.found and burst.confidence < 0.8


def _lines(count: int, name: str) -> str:
    return "".join(f"{name}_{n} = {n}\n" for n in range(count))


def test_one_commit_that_fills_a_scaffold_with_most_of_the_code_is_a_bulk_upload(
        tmp_path: Path) -> None:
    """The scaffold adds every file empty; the commit after it brings 600 of the 700 code
    lines: "a single commit brings most of the code", whichever commit added the files."""
    paths = [path for _m, files in STEPWISE[1:] for path in files]
    scaffold = ("chore: scaffold", {path: "" for path in paths})
    filled = ("feat: complete phase 1", {path: _lines(100, path.split("/")[-1][:-3])
                                         for path in paths})
    fixes = [(f"fix: step {n}", {paths[n]: _lines(150, f"v{n}")}) for n in range(2)]
    bulk = facet(audit(tmp_path, [STEPWISE[0], scaffold, filled, *fixes]), "git.bulk_upload")
    assert bulk.found and bulk.data["scaffold"]
    assert bulk.data["heaviest_share"] == round(600 / 700, 3)
    assert "brought 86% of the code lines" in bulk.rationale
    assert "feat: complete phase 1" in (bulk.content or "")


def test_a_heavy_commit_among_real_steps_or_in_a_tiny_project_is_no_bulk_upload(
        tmp_path: Path) -> None:
    steps = [(m, {p: _lines(120, p.split("/")[-1][:-3]) for p in files}) for m, files
             in STEPWISE]
    assert not facet(audit(tmp_path / "a", steps), "git.bulk_upload").found
    tiny = [STEPWISE[0], ("feat: all", {"src/state.py": _lines(200, "s")}),
            ("feat: more", {"src/graph.py": _lines(20, "g")})]
    bulk = facet(audit(tmp_path / "b", tiny), "git.bulk_upload")
    assert bulk.data["heaviest_commit"] is None and not bulk.found


def _code(count: int) -> str:
    return "".join(f"v{i} = {i}\n" for i in range(count))


def test_a_bulk_copy_of_every_stage_is_no_progression(tmp_path: Path) -> None:
    """One commit brings the code of every stage; later commits only touch them up."""
    steps = [("Initial commit.", {path: _code(60) for _m, files in STEPWISE
                                  for path in files}),
             ("fix tools", {"src/tools/repo_tools.py": _code(62)}),
             ("fix graph", {"src/graph.py": _code(61)}),
             ("docs", {"README.md": "y\n"})]
    progression = facet(audit(tmp_path, steps), "git.progression")
    assert progression.found is False
    assert progression.data["distinct_commits"] == 1


def test_empty_placeholder_files_build_no_stage(tmp_path: Path) -> None:
    """Empty tool and graph files first, then the graph's code before the tools' code."""
    steps = [("chore: setup", {"pyproject.toml": "[project]\n"}),
             ("chore: tool stubs", {"src/tools/repo_tools.py": ""}),
             ("chore: graph stub", {"src/graph.py": ""}),
             ("feat: graph", {"src/graph.py": _code(40)}),
             ("feat: tools", {"src/tools/repo_tools.py": _code(40)})]
    progression = facet(audit(tmp_path, steps), "git.progression")
    assert progression.found is False
    assert progression.data["order"] == ["setup", "graph", "tools"]


STUB_JUDGES = '''"""Judges."""


def prosecutor(state):
    """TODO: call the model."""
    return {"opinions": []}


def defense(state):
    raise NotImplementedError


def tech_lead(state):
    pass
'''


REAL_JUDGES = "".join(f"def {name}(state):\n    return {{'opinions': [score(state, {i})]}}\n\n"
                      for i, name in enumerate(["prosecutor", "defense", "tech_lead"]))


def test_stub_files_do_not_start_a_stage(tmp_path: Path) -> None:
    """A commit that lays out the judges as TODO stubs beside real work does not start the
    judges: the commit that gives them working code does."""
    steps = [("chore: setup", {"pyproject.toml": "[project]\n"}),
             ("feat: tools", {"src/tools/repo_tools.py": _code(40)}),
             ("feat: graph, judges to come", {"src/graph.py": _code(40),
                                               "src/nodes/judges.py": STUB_JUDGES}),
             ("feat: judges", {"src/nodes/judges.py": REAL_JUDGES})]
    progression = facet(audit(tmp_path, steps), "git.progression")
    assert progression.found
    firsts = progression.data["first_commit_per_stage"]
    assert firsts["judges"] != firsts["graph"]
    assert progression.content is not None and "judges: " in progression.content
    assert next(line for line in progression.content.splitlines()
                if line.startswith("judges:")).endswith("feat: judges")
    assert "working code" in progression.rationale


def test_no_progression_says_why(tmp_path: Path) -> None:
    """The rationale of a history that does not progress names the reason, not only an
    order with no out-of-order pair."""
    steps = [("Initial commit.", {path: _code(60) for _m, files in STEPWISE
                                  for path in files}),
             ("fix tools", {"src/tools/repo_tools.py": _code(62)}),
             ("fix graph", {"src/graph.py": _code(61)}),
             ("docs", {"README.md": "y\n"})]
    progression = facet(audit(tmp_path, steps), "git.progression")
    assert progression.found is False
    assert "No progression: setup, tools and graph all start in one commit" in \
        progression.rationale
    graph_first = [("chore: setup", {"pyproject.toml": "[project]\n"}),
                   ("feat: graph", {"src/graph.py": _code(40)}),
                   ("feat: tools", {"src/tools/repo_tools.py": _code(40)}),
                   ("docs", {"README.md": "y\n"})]
    late = facet(audit(tmp_path / "late", graph_first), "git.progression")
    assert late.found is False and "No progression: tools starts after graph" in late.rationale


# A day of scaffolding: a working template agent (a demo, 200 lines), a cache and a config;
# then one commit rewrites the template into the real agent and adds the state and tools.
TEMPLATE_THEN_REAL = [
    ("chore: project setup with uv", {"pyproject.toml": "[project]\n"}),
    ("first agent workflow try", {"src/agent.py": _lines(200, "weather")}),
    ("sqlite cache", {"src/cache.py": _lines(100, "cache")}),
    ("dev and prod config", {"src/config.py": _lines(100, "config")}),
    ("implement hierarchical graph, detectives and judges",
     {"src/agent.py": _lines(300, "auditor"), "src/state.py": _lines(150, "state"),
      "src/tools.py": _lines(150, "tools")}),
]


def test_a_commit_rewriting_a_template_into_most_of_todays_code_is_a_bulk_upload(
        tmp_path: Path) -> None:
    """The last commit adds 2 of the 5 code files and grows the code by 400 of 800 lines,
    but writes 600 of the 800 lines present today (the template's 200 are rewritten): a
    single commit brings most of the code, whatever the scaffold commits before it."""
    bulk = facet(audit(tmp_path, TEMPLATE_THEN_REAL), "git.bulk_upload")
    assert bulk.data["largest_share"] == 0.4 and bulk.data["heaviest_share"] == 0.5
    assert bulk.found
    assert bulk.data["today_share"] == 0.75 and bulk.data["today_lines"] == 800
    assert "wrote 75% of the 800 code lines present today (600 lines" in bulk.rationale
    assert "net +400" in bulk.rationale
    assert "implement hierarchical graph" in (bulk.content or "")


def test_a_reformat_of_every_line_is_no_bulk_upload(tmp_path: Path) -> None:
    """A late commit that rewrites every line (a reformat) is credited with all of today's
    code but grows it by nothing: it brought no code, it restyled it."""
    steps = [(m, {p: _lines(60, p.split("/")[-1][:-3]) for p in files})
             for m, files in STEPWISE]
    restyled = {p: _lines(60, "r" + p.split("/")[-1][:-3]) for _m, files in STEPWISE[1:]
                for p in files}
    bulk = facet(audit(tmp_path, [*steps, ("style: reformat", restyled)]), "git.bulk_upload")
    assert bulk.data["today_commit"] is None and bulk.data["today_share"] == 0.0
    assert bulk.found is False


def test_a_setup_commit_before_one_commit_starting_every_code_stage_is_no_progression(
        tmp_path: Path) -> None:
    """An initial commit of a .gitignore (setup), then one commit that starts the tools, the
    state, the graph, the judges and the synthesis: the code stages share one start."""
    steps = [("Initial commit", {".gitignore": "*.pyc\n"}),
             ("all nodes tools states and graph created",
              {path: _code(60) for _m, files in STEPWISE[1:] for path in files}),
             ("fix tools", {"src/tools/repo_tools.py": _code(62)}),
             ("report", {"README.md": "y\n"})]
    progression = facet(audit(tmp_path, steps), "git.progression")
    assert progression.data["order"][0] == "setup"
    assert progression.found is False
    assert ("No progression: tools, state, graph, judges, synthesis all start in one "
            "commit") in progression.rationale
    assert "all nodes tools states and graph created; only setup comes before it" in \
        progression.rationale


def test_every_blame_shares_one_time_limit(tmp_path: Path, monkeypatch) -> None:
    """The blames of all the code files share one time limit: once it has passed, the
    next file is not blamed and the kept lines stay unknown (the bulk-upload fact falls back
    to files added and net lines)."""
    from automaton_auditor.forensics.git import survival

    repo = make_repo(tmp_path / "target", TEMPLATE_THEN_REAL)
    commits = [Commit(sha="0" * 40, timestamp=0, date="", subject="x")]
    blamed: list[list[str]] = []
    real = survival.run_git

    def counting(args: list[str], **kw: object) -> object:
        if args[0] == "blame":
            blamed.append(args)
            clock[0] += 100.0  # each blame takes the whole limit
        return real(args, **kw)  # type: ignore[arg-type]

    clock = [0.0]
    monkeypatch.setattr(survival, "run_git", counting)
    monkeypatch.setattr(survival, "monotonic", lambda: clock[0])
    assert survival.add_kept_lines(repo, 60.0, commits, lambda p: p.endswith(".py")) is False
    assert len(blamed) == 1 and commits[0].kept is None


@pytest.mark.parametrize(("subject", "vague"), [
    ("Updated System", True),            # yakobd 961c698
    ("makin everything up to date", True),  # ketewodros41-star 1ee7a21
    ("final submisson", True),
    (":wq", True),                       # mamee13 7bd6df7
    ("Fix: Auditing System", False),     # names the auditing system
    ("appropirate documentation of project", False),
    ("Add clone timeout to repo_tools", False),
    # a conventional-commit type names the kind of change, not the change
    ("Feat : Bug fix", True),            # GrimVad3r
    ("chore: update", True),
    ("code added", True),                # Melaku-GA
    ("feat(graph): add conditional edges", False),
    ("docs: add README", False),
])
def test_a_subject_of_only_generic_words_is_vague(subject: str, vague: bool) -> None:
    assert is_vague(subject) is vague


def test_a_burst_counted_in_files_is_today_s_code_not_a_committed_venv() -> None:
    """zumi123: three commits 58 seconds apart bring five of today's six code files; hours
    later one commit adds the sixth with a committed .venv of 800 Python files and the next
    removes the .venv. Counted in files (the lines could not be read), the burst is the
    code's arrival, not the .venv's churn."""
    from automaton_auditor.forensics.git.story import story_findings

    venv = [f".venv/lib/site-packages/pkg_{n}.py" for n in range(800)]
    commits = [
        Commit(sha="a" * 40, timestamp=BASE, date="d1", subject="add state",
               added=["src/state.py", "README.md", "pyproject.toml"]),
        Commit(sha="b" * 40, timestamp=BASE + 8, date="d2", subject="add tools",
               added=["src/tools/repo_tools.py", "src/tools/doc_tools.py",
                      "src/nodes/detectives.py"]),
        Commit(sha="c" * 40, timestamp=BASE + 58, date="d3", subject="add graph",
               added=["src/graph.py"]),
        Commit(sha="d" * 40, timestamp=BASE + 12000, date="d4", subject="wire langgraph",
               added=["src/graph_langgraph.py", *venv]),
        Commit(sha="e" * 40, timestamp=BASE + 12135, date="d5", subject="remove venv",
               changed=venv),
        Commit(sha="f" * 40, timestamp=BASE + 12200, date="d6", subject="readme",
               changed=["README.md"]),
    ]
    today = ["README.md", "src/state.py", "src/tools/repo_tools.py", "src/tools/doc_tools.py",
             "src/nodes/detectives.py", "src/graph.py", "src/graph_langgraph.py"]
    burst = facet(story_findings(commits, today), "git.commit_bursts")
    assert burst.data["unit"] == "files" and burst.data["total"] == 6
    assert [c["sha"][0] for c in burst.data["burst"]] == ["a", "b", "c"]
    assert burst.found and burst.data["share"] == round(5 / 6, 3)
    assert burst.rationale.startswith("Burst: 3 commits within 58 seconds added 83% of the 6 "
                                      "code files present today")
    # the stages' order inside that burst is the order the files were committed in
    progression = facet(story_findings(commits, today), "git.progression")
    assert not progression.found
    assert "start within one run of 3 commits minutes apart" in progression.rationale


def test_lines_in_a_committed_venv_are_not_code_lines(tmp_path: Path) -> None:
    """Five commits an hour apart write the code; then three commits a minute apart add a
    .venv of 900 Python lines: counted in lines, that is no burst of code."""
    repo = make_repo(tmp_path / "target", [(f"feat: part {i}", {f"src/part_{i}.py": "x = 1\n"
                                                                * 40}) for i in range(5)])
    for i in range(3):
        (repo / ".venv" / "lib").mkdir(parents=True, exist_ok=True)
        (repo / ".venv" / "lib" / f"pkg_{i}.py").write_text("y = 2\n" * 300)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"chore: env {i}", when=BASE + 6 * 3600 + i * 30)
    limits = GitLimits()
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    burst = facet(git_findings(checkout.path, limits), "git.commit_bursts")
    assert burst.data["unit"] == "lines" and burst.data["total"] == 200
    assert not burst.found, burst.rationale
