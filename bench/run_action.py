"""Run the GitHub Action's steps by hand, as a runner would, against a local repository.

    uv run python bench/run_action.py REPOSITORY --input report=docs/report.pdf \\
        --input fail-on="safe_tool_engineering<4" [--input fail-under=3]

Each `run:` step of action.yml runs in bash (``-eo pipefail``, as the runner's ``shell:
bash``) inside REPOSITORY, with the step's `env:` filled from the inputs (their defaults
otherwise) and earlier steps' outputs, and GITHUB_ACTION_PATH, GITHUB_OUTPUT, GITHUB_ENV and
RUNNER_TEMP set as a runner sets them. `uses:` steps are listed, not run: for setup-uv this
machine's uv goes on PATH, the SARIF upload needs GitHub. Prints each step's outputs and
ends with the last step's exit code: the gate.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
_EXPRESSION = re.compile(r"\$\{\{\s*(inputs|steps)\.([\w-]+)(?:\.outputs\.([\w-]+))?\s*\}\}")


@dataclass
class StepRun:
    """What one step did: its name, exit code and outputs (None code: a `uses:` step)."""

    name: str
    code: int | None
    outputs: dict[str, str] = field(default_factory=dict)
    uses: str = ""


def _read_pairs(path: Path) -> dict[str, str]:
    pairs = {}
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        key, sep, value = line.partition("=")
        if sep:
            pairs[key] = value
    return pairs


def _fill(value: Any, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    def one(match: re.Match[str]) -> str:
        kind, name, output = match.groups()
        if kind == "inputs":
            return inputs.get(name, "")
        return steps.get(name, {}).get(output or "", "")

    return _EXPRESSION.sub(one, str(value))


def _uv_dir(runner_temp: Path) -> str:
    """Where setup-uv would have put uv: here, the folder of the uv on PATH, else a shim that
    runs ``python3 -m uv`` (CI may have uv only as a Python module)."""
    found = shutil.which("uv")
    if found:
        return str(Path(found).parent)
    shim = runner_temp / "uv-bin" / "uv"
    shim.parent.mkdir(parents=True, exist_ok=True)
    shim.write_text('#!/bin/sh\nexec python3 -m uv "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return str(shim.parent)


def action_inputs(action: dict[str, Any], given: dict[str, str]) -> dict[str, str]:
    """The inputs a runner would pass: the given ones over the defaults; a missing
    required input is refused."""
    inputs = {}
    for name, spec in (action.get("inputs") or {}).items():
        if name in given:
            inputs[name] = given[name]
        elif spec.get("required") and "default" not in spec:
            raise SystemExit(f"error: input {name!r} is required")
        else:
            inputs[name] = str(spec.get("default", ""))
    unknown = sorted(set(given) - set(inputs))
    if unknown:
        raise SystemExit(f"error: action.yml has no input {', '.join(unknown)}")
    return inputs


def run_action(repository: Path, given: dict[str, str], runner_temp: Path,
               action_path: Path = ROOT,
               extra_env: dict[str, str] | None = None) -> list[StepRun]:
    """Run action.yml's steps in `repository` (RUNNER_TEMP: `runner_temp`, which keeps what
    they wrote); stops after the first failing step, as a runner does."""
    action = yaml.safe_load((action_path / "action.yml").read_text(encoding="utf-8"))
    inputs = action_inputs(action, given)
    runs: list[StepRun] = []
    steps: dict[str, dict[str, str]] = {}
    runner_temp.mkdir(parents=True, exist_ok=True)
    env_file = runner_temp / "github_env"
    env_file.touch()
    path_dirs: list[str] = []  # what setup steps put on PATH
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        if "uses" in step:
            if step["uses"].startswith("astral-sh/setup-uv@"):
                path_dirs.append(_uv_dir(runner_temp))
            runs.append(StepRun(name, None, uses=step["uses"]))
            continue
        output_file = runner_temp / f"output-{index}"
        output_file.touch()
        # A runner's shell has no virtual environment of ours active.
        base = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        base["PATH"] = os.pathsep.join([*path_dirs, base.get("PATH", "")])
        env = {**base, **(extra_env or {}), **_read_pairs(env_file),
               "GITHUB_ACTION_PATH": str(action_path), "GITHUB_OUTPUT": str(output_file),
               "GITHUB_ENV": str(env_file), "RUNNER_TEMP": str(runner_temp),
               "GITHUB_WORKSPACE": str(repository)}
        env.update({k: _fill(v, inputs, steps) for k, v in (step.get("env") or {}).items()})
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               step["run"]], cwd=repository, env=env, check=False)
        outputs = _read_pairs(output_file)
        if "id" in step:
            steps[step["id"]] = outputs
        runs.append(StepRun(name, done.returncode, outputs))
        if done.returncode != 0:
            break
    return runs


def main() -> None:
    """Command line: run the steps and exit with the gate's code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repository", type=Path)
    parser.add_argument("--input", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    given = dict(item.split("=", 1) for item in args.input if "=" in item)
    temp = Path(tempfile.mkdtemp(prefix="action-"))
    print(f"RUNNER_TEMP: {temp} (the reports and the SARIF file stay there)")
    runs = run_action(args.repository.resolve(), given, temp)
    for run in runs:
        status = f"uses {run.uses}" if run.code is None else f"exit {run.code}"
        print(f"{run.name}: {status}")
        for key, value in run.outputs.items():
            print(f"  {key}={value}")
    sys.exit(next((r.code for r in reversed(runs) if r.code is not None), 0))


if __name__ == "__main__":
    main()
