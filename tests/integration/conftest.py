"""Fixtures for end-to-end runs: a git repository and a PDF built in the test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

GRAPH_PY = '''
import operator
from typing import Annotated
from pydantic import BaseModel
from typing_extensions import TypedDict
from langgraph.graph import StateGraph, START, END


class Evidence(BaseModel):
    goal: str
    found: bool


class AgentState(TypedDict):
    evidences: Annotated[dict, operator.ior]
    opinions: Annotated[list, operator.add]


def build():
    builder = StateGraph(AgentState)
    for name in ["repo_investigator", "doc_analyst", "evidence_aggregator", "prosecutor",
                 "defense", "tech_lead", "chief_justice"]:
        builder.add_node(name, lambda s: s)
    builder.add_edge(START, "repo_investigator")
    builder.add_edge(START, "doc_analyst")
    builder.add_edge(["repo_investigator", "doc_analyst"], "evidence_aggregator")
    for judge in ["prosecutor", "defense", "tech_lead"]:
        builder.add_edge("evidence_aggregator", judge)
    builder.add_edge(["prosecutor", "defense", "tech_lead"], "chief_justice")
    builder.add_edge("chief_justice", END)
    return builder.compile()
'''

TOOLS_PY = '''
import subprocess
import tempfile


def clone(url: str):
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run(["git", "clone", "--", url, tmp], capture_output=True,
                                text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(result.stderr)
        yield tmp  # the caller reads the clone while it exists
'''


# The first page of `make_report_pdf` below its title: it explains two rubric concepts and
# cites three paths.
REPORT_PAGE_1 = [
    "1 Architecture",
    "The graph in src/graph.py fans out to the detectives, which run in parallel.",
    "Dialectical Synthesis is implemented by three judge personas (prosecutor, defense,",
    "tech_lead) that run in parallel on the same evidence; the chief_justice node resolves",
    "their conflict with deterministic rules.",
    "Fan-In / Fan-Out: evidence_aggregator is the fan-in node after the detectives.",
    "The clone tool lives in src/tools/repo_tools.py and the judges in src/nodes/judges.py.",
]


def _git(repo: Path, *args: str, date: str | None = None) -> None:
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
           "HOME": str(repo), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


@pytest.fixture
def auditee_repo(tmp_path: Path) -> Path:
    """A small LangGraph-style repository with a stepwise history."""
    return make_auditee(tmp_path / "auditee")


def make_auditee(repo: Path, variant: int = 0) -> Path:
    """The auditee repository at `repo`; a `variant` > 0 adds one commit of its own, so each
    variant has a different commit (and its own cached facts and results)."""
    (repo / "src" / "tools").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    steps = [
        ("pyproject.toml", "[project]\nname='auditee'\n", "Set up the environment"),
        ("src/tools/repo_tools.py", TOOLS_PY, "Add sandboxed clone tool"),
        ("src/graph.py", GRAPH_PY, "Wire the graph with parallel detectives and judges"),
        ("README.md", "# auditee\n", "Document the graph"),
    ]
    for day, (path, text, message) in enumerate(steps, start=1):
        (repo / path).write_text(text, encoding="utf-8")
        _git(repo, "add", path)
        _git(repo, "commit", "-q", "-m", message, date=f"2026-02-{day:02d}T10:00:00")
    if variant:
        (repo / "CHANGELOG.md").write_text(f"# changes\n\nvariant {variant}\n", encoding="utf-8")
        _git(repo, "add", "CHANGELOG.md")
        _git(repo, "commit", "-q", "-m", f"Record variant {variant}", date="2026-02-05T10:00:00")
    return repo


@pytest.fixture
def report_pdf(tmp_path: Path) -> Path:
    """A two-page architecture report that cites one real and one invented path."""
    return make_report_pdf(tmp_path / "report.pdf")


def make_report_pdf(path: Path, title: str = "Architecture Report") -> Path:
    """The two-page report at `path` (another `title` gives another file, another hash)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=A4)
    y = 800
    for line in [title, "", *REPORT_PAGE_1]:
        pdf.drawString(60, y, line)
        y -= 18
    pdf.showPage()
    pdf.drawString(60, 800, "2 Reflection")
    pdf.drawString(60, 782, "Metacognition is mentioned here only in passing.")
    pdf.showPage()
    pdf.save()
    return path
