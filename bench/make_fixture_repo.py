"""Generate the benchmark repository: about 10,000 lines of LangGraph-style Python in 250
commits, written with `git fast-import` (fixed dates: the same seed gives the same commits).

    uv run python bench/make_fixture_repo.py /tmp/bench-repo [--files 50] [--seed 0]

Generated data: build it in a temporary directory, never commit it.
"""

from __future__ import annotations

import argparse
import random
import subprocess
from pathlib import Path

GRAPH = '''"""The courtroom graph of fixture {seed}."""
import operator
from typing import Annotated

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field
from typing_extensions import TypedDict


class Evidence(BaseModel):
    goal: str
    found: bool
    confidence: float = Field(ge=0, le=1)


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

TOOLS = '''"""Sandboxed tools of fixture {seed}."""
import subprocess
import tempfile


def clone(url: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run(["git", "clone", "--", url, tmp], capture_output=True,
                                text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(result.stderr)
        return tmp
'''

FUNCTION = '''

def {name}(values: list[int], limit: int = {limit}) -> dict[str, int]:
    """Summarise values below {limit} (generated filler, step {step})."""
    total = 0
    seen: dict[str, int] = {{}}
    for index, value in enumerate(values):
        if value > limit:
            continue
        key = f"{name}-{{index % {mod}}}"
        seen[key] = seen.get(key, 0) + value
        total += value * {factor}
    if total > {limit} * {factor}:
        seen["overflow"] = total
    return seen
'''


def _chunks(seed: int, files: int, per_file: int) -> list[tuple[str, str, str]]:
    """(path, text appended, commit message) for every commit, in order."""
    rng = random.Random(seed)
    steps: list[tuple[str, str, str]] = [
        ("src/graph.py", GRAPH.format(seed=seed), "Wire the courtroom graph"),
        ("src/tools/repo_tools.py", TOOLS.format(seed=seed), "Add the sandboxed clone tool"),
    ]
    for round_ in range(per_file):
        for number in range(files):
            path = f"src/module_{number:03d}.py"
            body = "".join(FUNCTION.format(name=f"step_{round_}_{k}", limit=rng.randint(5, 99),
                                           mod=rng.randint(2, 9), factor=rng.randint(1, 7),
                                           step=round_)
                           for k in range(3 if (round_ + number) % 3 else 2))
            header = f'"""Generated module {number} (fixture {seed})."""\n' if round_ == 0 else ""
            steps.append((path, header + body, f"Module {number}: step {round_}"))
    return steps


def _fast_import_stream(steps: list[tuple[str, str, str]]) -> bytes:
    contents: dict[str, str] = {}
    out: list[bytes] = []
    for number, (path, text, message) in enumerate(steps):
        contents[path] = contents.get(path, "") + text
        data = contents[path].encode()
        when = 1_767_225_600 + number * 3_600  # one commit an hour from 2026-01-01
        msg = message.encode()
        out.append(b"commit refs/heads/main\n")
        out.append(f"committer Bench <bench@example.com> {when} +0000\n".encode())
        out.append(f"data {len(msg)}\n".encode() + msg + b"\n")
        # (fast-import chains commits on the same branch by itself)
        out.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
    return b"".join(out)


def make_fixture_repo(dest: Path, files: int = 50, seed: int = 0) -> Path:
    """Create the benchmark repository at `dest` (must not exist); returns its path.
    With the defaults: 252 commits and about 10,000 lines of Python."""
    per_file = 5
    steps = _chunks(seed, files, per_file)[: 2 + files * per_file - 2]  # 250 commits
    dest.mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(dest), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(dest)], check=True, env=env)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=dest, check=True, env=env,
                   input=_fast_import_stream(steps))
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=dest, check=True, env=env)
    return dest


def line_count(repo: Path) -> int:
    """Lines of Python in the work tree."""
    return sum(len(p.read_text().splitlines()) for p in repo.rglob("*.py"))


def main() -> None:
    """Command line: build one fixture repository and print its size."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    repo = make_fixture_repo(args.dest, args.files, args.seed)
    commits = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo, check=True,
                             capture_output=True, text=True).stdout.strip()
    print(f"{repo}: {line_count(repo)} lines of Python, {commits} commits")


if __name__ == "__main__":
    main()
