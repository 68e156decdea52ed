"""Merge commits and hollow claims in the git narrative: merges are not counted as authored
commits, and subjects that claim an implementation over a diff adding nothing are a failure
fact (rubric: "meaningful commit messages")."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.git.acquire import GitLimits, acquire, git_findings, parse_target
from automaton_auditor.forensics.git.hollow import claims_implementation
from automaton_auditor.state import Finding
from tests.unit.test_git_concentration import code, facet, judged
from tests.unit.test_git_narrative import BASE, git

HOUR = 3600
# A step-by-step history: setup, tools, state, graph, judges, each a real diff.
STEPS: list[tuple[str, dict[str, str]]] = [
    ("chore: project setup with uv", {"pyproject.toml": "[project]\nname = 'x'\n"}),
    ("feat: git and ast tools", {"src/tools/repo_tools.py": code(60, "t")}),
    ("feat: typed state with reducers", {"src/state.py": code(50, "s")}),
    ("feat: graph with parallel detectives", {"src/graph.py": code(70, "g")}),
    ("feat: three judges with distinct personas", {"src/nodes/judges.py": code(80, "j")}),
    ("feat: chief justice rules", {"src/nodes/justice.py": code(60, "c")}),
]


def commit(root: Path, message: str, files: dict[str, str], when: int) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message, when=when)


def build(root: Path, extra: list[tuple[str, dict[str, str]]]) -> Path:
    """`STEPS` an hour apart, then the `extra` commits."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for index, (message, files) in enumerate([*STEPS, *extra]):
        commit(root, message, files, BASE + index * HOUR)
    return root


def audit(tmp_path: Path, repo: Path) -> list[Finding]:
    limits = GitLimits()
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    return git_findings(checkout.path, limits)


def test_subjects_that_claim_an_implementation() -> None:
    assert claims_implementation("feat(orchestration): implement fan-out/fan-in graph")
    assert claims_implementation("Add src/config.py for settings")
    assert not claims_implementation("created folder structure")
    assert not claims_implementation("feat: add __init__ placeholders")
    assert not claims_implementation("Infra: add .gitignore and remove the virtualenv")
    assert not claims_implementation("update readme")


def test_two_hollow_claims_are_a_failure_fact_and_cost_full_marks(tmp_path: Path) -> None:
    hollow = [("feat(judicial): implement Tech Lead synthesis logic", {"src/tech_lead.py": ""}),
              ("feat(orchestration): implement production graph", {"src/core/graph.py": ""})]
    found = audit(tmp_path, build(tmp_path / "target", hollow))
    fact = facet(found, "git.hollow_commits")
    assert fact.found and fact.pattern == "failure" and fact.confidence >= 0.7
    assert fact.content is not None and "implement production graph" in fact.content
    assert len(fact.data["hollow"]) == 2
    messages = facet(found, "git.commit_messages")
    assert "2 claim work their diff does not add" in messages.rationale
    assert judged(found).final_score == 4  # was 5: the messages overclaim


def test_one_hollow_claim_or_an_honest_scaffold_is_no_failure(tmp_path: Path) -> None:
    extra = [("feat: implement retry logic", {"src/retry.py": ""}),
             ("chore: scaffold folder structure", {"src/a/x.py": "", "src/b/y.py": ""}),
             ("feat: add empty commit", {})]
    found = audit(tmp_path, build(tmp_path / "target", extra))
    fact = facet(found, "git.hollow_commits")
    # "feat: add empty commit" announces its empty diff; the scaffold says so too
    assert not fact.found and len(fact.data["hollow"]) == 1
    assert judged(found).final_score == 5


def test_merge_commits_are_not_counted(tmp_path: Path) -> None:
    root = build(tmp_path / "target", [])
    for number in range(1, 4):
        git(root, "checkout", "-q", "-b", f"feature-{number}", "main~1")
        commit(root, f"feat: implement part {number}", {f"src/part{number}.py": code(20)},
               BASE + (10 + number) * HOUR)
        git(root, "checkout", "-q", "main")
        git(root, "merge", "-q", "--no-ff", "-m",
            f"Merge pull request #{number} from x/feature-add-part-{number}",
            f"feature-{number}", when=BASE + (10 + number) * HOUR + 60)
    found = audit(tmp_path, root)
    history = facet(found, "git.history")
    assert history.data["count"] == 9 and history.data["merges"] == 3
    assert "3 merge commit(s) not counted" in history.rationale
    assert facet(found, "git.commit_messages").rationale.startswith("9 of 9 authored")
    # a merge adds no line of its own and its subject says "add": still not hollow
    assert facet(found, "git.hollow_commits").data["hollow"] == []


def test_a_claim_over_new_files_holding_only_comments_is_hollow(tmp_path: Path) -> None:
    """ketewodros41-star: "feat: implement forensic tools for repo analysis, pdf extraction,
    and ast parsing" adds one line, ``# Automaton Auditor - tools package``, in a new
    ``__init__.py``; a comment implements nothing. A small commit adding one line of code
    is no hollow claim."""
    extra = [("feat: implement forensic tools for repo analysis",
              {"src/tools/__init__.py": "# Automaton Auditor - tools package\n"}),
             ("feat: implement production graph", {"src/core/flow.py": "# the graph\n\n"}),
             ("feat: add retry constant", {"src/retry.py": "RETRIES = 3\n"})]
    found = audit(tmp_path, build(tmp_path / "target", extra))
    fact = facet(found, "git.hollow_commits")
    assert fact.found and len(fact.data["hollow"]) == 2
    assert fact.content is not None and "(adds 1 comment line(s) only, 1 file(s))" in fact.content
    assert "add retry constant" not in fact.content
    assert "comment lines" in fact.rationale
