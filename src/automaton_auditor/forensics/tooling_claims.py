"""Report statements about how the project is set up, read against the repository's files.

Two clear cases: the project said to be tested ("pytest + coverage setup; unit tests for tools
and state models", `pdf.libraries.TESTS_CLAIM`) in a repository that holds no test file at
all (no ``test_*.py``, ``*_test.py``, ``conftest.py`` nor a ``tests/`` folder); and a package
manager said to run it ("Poetry environment with dependencies", `MANAGER_CLAIM`) whose lock
file the repository lacks while it holds another manager's (``uv.lock``). A plan, a gap or
a hedge ("no unit tests yet", "will add pytest cases", "should use Poetry"), or a sentence
about what the auditor looks for in other code, claims nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from automaton_auditor.forensics.pdf.libraries import MANAGER_CLAIM, MANAGERS, TESTS_CLAIM
from automaton_auditor.state import FeatureClaim, Finding

# Words that make the sentence a plan, a gap, a hedge, or a statement about audited code.
_HEDGE = re.compile(r"\b(?:no|not|never|without|lack\w*|missing|absent|need\w*|will|should|"
                    r"could|would|may|might|plan\w*|todo|future|add|adding|write|writing|yet|"
                    r"remain\w*|pending|gaps?|detect\w*|check\w*|flag\w*|scan\w*|rubric|"
                    r"peers?|evidence|e\.g|example|instead|rather|replac\w*|migrat\w*)\b|n't\b"
                    "|[\u23f8\u274c\U0001f504]"  # a status of not done
                    "|[\u2500-\u257f]", re.IGNORECASE)  # a drawn file tree's entry
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")
KINDS = ("tests_claim", "manager_claim")


def _where(claim: FeatureClaim) -> str:
    return f"report p.{claim.page}" if claim.page else "report"


def _finding(claim: FeatureClaim, goal: str, rationale: str, code: list[str]) -> Finding:
    return Finding(facet="claims.contradictions", goal=goal, found=True, pattern="failure",
                   content=f"{_where(claim)}: {claim.sentence}\n" + "\n".join(code),
                   location=_where(claim), confidence=0.85, rationale=rationale,
                   data={"kind": claim.feature, "code": code})


def _lock_mismatch(sentence: str, files: set[str]) -> tuple[str, str] | None:
    """(the manager said, the other lock file the repository holds) when the sentence says
    the project uses a manager whose lock file no folder holds, while one holds another's."""
    locks = {f.rsplit("/", 1)[-1] for f in files}
    for match in MANAGER_CLAIM.finditer(sentence):
        said = (match["tool"] or match["tool2"]).lower()
        tool = next(t for t in MANAGERS if t.lower() == said)
        others = sorted(lock for t, lock in MANAGERS.items() if t != tool and lock in locks)
        if MANAGERS[tool] not in locks and others:
            return tool, others[0]
    return None


def tooling_findings(claims: Sequence[FeatureClaim], repo_files: Sequence[str]) -> list[Finding]:
    """A `claims.contradictions` fact per sentence that says the project is tested while the
    repository holds no test file, or run by a package manager whose lock file it lacks while
    it holds another's; each quotes the sentence and the files."""
    files = set(repo_files)
    tested = sorted(f for f in files if _TEST_FILE.search(f))
    findings: list[Finding] = []
    for claim in claims:
        if claim.feature not in KINDS or _HEDGE.search(claim.sentence):
            continue
        if claim.feature == "tests_claim" and TESTS_CLAIM.search(claim.sentence) \
                and files and not tested:
            findings.append(_finding(
                claim, "The report says the project is tested; the repository holds no test",
                f"The report says the project has tests; none of the repository's "
                f"{len(files)} files is a test file (test_*.py, *_test.py, conftest.py, tests/).",
                [f"{len(files)} repository files: no test_*.py, *_test.py, conftest.py or "
                 "tests/ folder"]))
        elif claim.feature == "manager_claim" and (hit := _lock_mismatch(claim.sentence, files)):
            tool, other = hit
            findings.append(_finding(
                claim, "The report names a package manager the repository does not use",
                f"The report says the project uses {tool}; the repository holds no "
                f"{MANAGERS[tool]} but {other}.",
                [f"{other}: present", f"{MANAGERS[tool]}: absent"]))
    return findings
