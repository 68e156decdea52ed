"""A hostile `.git/HEAD` never travels into a trace: with LangSmith tracing on, pointed at a
fake endpoint on 127.0.0.1 that records every request (the integration suite's `sink`), a
HEAD naming a secret outside the target (40 hex digits: it would pass for a commit id)
reaches neither the tags nor anything else the run sends, while the run's own tags do arrive
(so the check is not vacuous). Beside that suite's cases, a HEAD that is a symlink to the
secret, under the hostile harness's checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.builders import valid_repo
from tests.hostile.harness import Case, audit, check
from tests.hostile.test_repositories import head_absolute, head_traversal
from tests.integration import test_head_canary

sink = test_head_canary.sink  # the recording endpoint, one copy of it


def head_symlink(case: Case) -> Path:
    """HEAD is a symlink to the secret: read naively, its first 40 characters are a commit."""
    repo = valid_repo(case.sandbox / "target", case.root.name)
    (repo / ".git" / "HEAD").unlink()
    (repo / ".git" / "HEAD").symlink_to(case.sandbox / "outside" / "secret.txt")
    return repo


@pytest.mark.parametrize("build", [head_symlink, head_absolute, head_traversal],
                         ids=["head-symlink", "head-absolute", "head-traversal"])
def test_hostile_head_stays_out_of_the_trace(case: Case, good_pdf: Path,
                                             sink: tuple[str, list[bytes]],
                                             build: object) -> None:
    url, bodies = sink
    case.extra_env = {"LANGSMITH_TRACING": "true", "LANGCHAIN_TRACING_V2": "true",
                      "LANGSMITH_ENDPOINT": url,
                      "LANGSMITH_API_KEY": "lsv2-fake-key", "LANGSMITH_PROJECT": "hostile"}
    assert callable(build)
    result = audit(case, build(case), good_pdf)
    check(result, 3, needle="HEAD", report=True)
    sent = b"\n".join(bodies)
    assert b"automaton-auditor" in sent, f"no trace reached the endpoint\n{result.describe()}"
    assert case.secret.encode() not in sent, "the secret behind HEAD was sent in the trace"
