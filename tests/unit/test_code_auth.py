"""A clone handles authentication failures only when its code singles one out (a comparison,
search or except), never because "auth" is in an error message (`forensics.code.auth`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# Sanoy24/trp1-automation-auditor src/tools/repo_tools.py, shortened: a message only
MESSAGE_ONLY = '''
import shutil
import subprocess
import tempfile


def clone(url):
    tmp = tempfile.mkdtemp()
    try:
        result = subprocess.run(["git", "clone", url, tmp], capture_output=True, timeout=120)
        if result.returncode != 0:
            return None, f"git clone failed: {result.stderr}"
        return tmp, None
    except subprocess.TimeoutExpired:
        shutil.rmtree(tmp, ignore_errors=True)
        return None, "git clone timed out after 120s - repo may require authentication"
'''

# mamee13/automaton-auditor-swarm src/tools/forensics.py, shortened
LIBRARY_MESSAGE = '''
import tempfile

import git


def clone(url):
    tmp = tempfile.mkdtemp()
    try:
        git.Repo.clone_from(url, tmp, depth=1)
        return tmp
    except git.exc.GitCommandError as e:
        raise RuntimeError(f"Git clone failed (check URL/auth): {e.stderr}")
'''


def _auth(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"tools.py": text})
    return by_facet(code_findings(tmp_path, names)[0], "safety.auth_errors")


def _passed_on(finding) -> bool:
    """git's error passed on and no authentication test: not found, and neutral (neither
    support nor the failure pattern)."""
    return not finding.found and finding.pattern == "neutral" and \
        "no test for an authentication failure" in finding.rationale


def test_the_word_auth_in_a_message_is_no_test_and_git_s_error_passed_on_is_neutral(
        tmp_path: Path) -> None:
    """Neither clone tells an authentication failure apart (the word in a message is no
    test); both pass git's error on, which reports an authentication failure like any other:
    not found, and neutral rather than support or the failure pattern, saying so. A clone
    that swallows the error does neither: not found, the success pattern missing."""
    for name, text, line in (("message", MESSAGE_ONLY, 12), ("library", LIBRARY_MESSAGE, 13)):
        finding = _auth(tmp_path / name, text)
        assert _passed_on(finding), name
        assert "0 of 1" in finding.rationale and "1 more pass git's error on" in \
            finding.rationale, name
        assert finding.location == f"tools.py:{line}", name
    swallowed = LIBRARY_MESSAGE.replace('raise RuntimeError(f"Git clone failed (check URL/auth)'
                                        ': {e.stderr}")', 'return None')
    finding = _auth(tmp_path / "swallowed", swallowed)
    assert not finding.found and "0 more" in finding.rationale
    assert finding.pattern == "success"


def test_a_comparison_search_or_except_on_an_auth_failure_is_a_test(tmp_path: Path) -> None:
    tests = {
        # Hiwot-Beyene/TRP1-Automatos-Auditor's test
        "compare": ('        if result.returncode != 0:\n',
                    '        if "could not read Username" in result.stderr:\n'
                    '            raise PermissionError(url)\n'
                    '        if result.returncode != 0:\n', 13),
        "markers": ('        if result.returncode != 0:\n',
                    '        if any(m in result.stderr for m in ("Permission denied", "403")):\n'
                    '            raise PermissionError(url)\n'
                    '        if result.returncode != 0:\n', 13),
        "search": ('        if result.returncode != 0:\n',
                   '        if re.search("authentication failed", result.stderr, re.I):\n'
                   '            raise PermissionError(url)\n'
                   '        if result.returncode != 0:\n', 13),
        "except": ('    except subprocess.TimeoutExpired:\n',
                   '    except AuthenticationError:\n        raise\n'
                   '    except subprocess.TimeoutExpired:\n', 16),
    }
    for name, (old, new, line) in tests.items():
        text = MESSAGE_ONLY.replace(old, new).replace("import shutil\n", "import re\nimport "
                                                      "shutil\nfrom errors import "
                                                      "AuthenticationError\n")
        finding = _auth(tmp_path / name, text)
        assert finding.found, name
        assert finding.location == f"tools.py:{line}", name
        assert f"(tools.py:{line})" in finding.rationale, name


# NebiyouBelaineh/LangGraph-Automation-Auditor src/tools/repo_tools.py, shortened: the clone
# hands git's stderr to a helper that singles out the authentication failures
HELPER = '''
import subprocess
import tempfile

_PATTERNS = [
    ("authentication failed", "auth_failed", "Check your credentials."),
    ("repository not found", "repo_not_found", "Check the URL."),
]


def _classify_clone_error(stderr):
    lower = stderr.lower()
    for pattern, code, message in _PATTERNS:
        if pattern in lower:
            return code, message
    return "clone_failed", stderr


def clone(url):
    tmp = tempfile.mkdtemp()
    result = subprocess.run(["git", "clone", url, tmp], capture_output=True, timeout=120)
    if result.returncode != 0:
        code, message = _classify_clone_error(result.stderr)
        return None, code
    return tmp, None
'''


def test_a_helper_the_clone_hands_its_failure_to_can_test_for_authentication(
        tmp_path: Path) -> None:
    finding = _auth(tmp_path / "helper", HELPER)
    assert finding.found and "1 of 1" in finding.rationale
    assert finding.location == "tools.py:14" and "(tools.py:14)" in finding.rationale
    # the same helper called on success tells no failure apart
    after = HELPER.replace("        code, message = _classify_clone_error(result.stderr)\n", "")
    after = after.replace("    return tmp, None\n",
                          "    _classify_clone_error(result.stderr)\n    return tmp, None\n")
    assert "0 of 1" in _auth(tmp_path / "success", after).rationale


def test_a_helper_in_a_module_that_never_says_clone_is_read_too(tmp_path: Path) -> None:
    """Mistire: ``safety.parse_git_error(result.stderr)`` lives in a module of its own whose
    text never says "clone"; its test for an authentication failure still counts."""
    helper, clone = HELPER.split("\n\ndef clone(url):")
    helper = helper.replace("import subprocess\nimport tempfile\n", "")
    tools = "import subprocess\nimport tempfile\n\nimport errors\n\n\ndef clone(url):" + \
        clone.replace("_classify_clone_error(", "errors._classify_git_error(")
    names = write_repo(tmp_path, {"tools.py": tools,
                                  "errors.py": helper.replace("clone", "git")})
    finding = by_facet(code_findings(tmp_path, names)[0], "safety.auth_errors")
    assert finding.found and "1 of 1" in finding.rationale, finding.rationale
    assert finding.location.startswith("errors.py:")


# Bnobody47/The-Auditor src/tools/repo_tools.py, shortened: git's message yielded by name
YIELDED = '''
import subprocess
import tempfile
from contextlib import contextmanager


@contextmanager
def cloned_repo(url):
    tmp = tempfile.TemporaryDirectory()
    try:
        proc = subprocess.run(["git", "clone", url, tmp.name], capture_output=True, text=True)
        err = (proc.stderr or "").strip()
        if proc.returncode != 0:
            yield None, err
        else:
            yield tmp.name, err
    finally:
        tmp.cleanup()
'''

# Deregit2025/langgraph-agent-auditor src/tools/git_tools.py, shortened: the clone command
# handed to a helper that re-raises with git's stderr
WRAPPED = '''
import subprocess
import tempfile


class GitToolError(Exception):
    pass


def _safe_run(args):
    try:
        return subprocess.run(args, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        raise GitToolError(exc.stderr) from exc


def clone_repo_sandbox(url):
    tmp = tempfile.mkdtemp()
    _safe_run(["git", "clone", "--depth", "1", url, tmp])
    return tmp
'''


def test_git_s_error_yielded_by_name_or_raised_by_the_helper_is_passed_on(
        tmp_path: Path) -> None:
    """Bnobody47 and Deregit2025: each clone passes git's error on (a yield of the name
    holding stderr; a helper that re-raises it), and the fact said "0 more pass git's error
    on"."""
    for name, text, line in (("yielded", YIELDED, 14), ("wrapped", WRAPPED, 14)):
        finding = _auth(tmp_path / name, text)
        assert _passed_on(finding) and "1 more pass git's error on" in finding.rationale, name
        assert finding.location == f"tools.py:{line}", (name, finding.location)
    swallowed = WRAPPED.replace("raise GitToolError(exc.stderr) from exc", "return None")
    assert not _auth(tmp_path / "swallowed", swallowed).found


# zumi123/automaton_auditor src/tools/repo_tools.py, shortened: git's error raised on a failed
# exit status, inside the try whose handler drops it
RAISED_IN_TRY = '''
import subprocess
import tempfile


def clone_repo(git_url, timeout=60):
    temp_dir = tempfile.mkdtemp(prefix="auditor_repo_")
    try:
        res = subprocess.run(["git", "clone", git_url, temp_dir], capture_output=True,
                             text=True, timeout=timeout)
        if res.returncode != 0:
            raise RuntimeError(f"git clone failed: {res.stderr.strip()}")
        return temp_dir
    except Exception:
        return None
'''


def test_git_s_error_raised_into_a_handler_that_drops_it_is_not_passed_on(
        tmp_path: Path) -> None:
    """The raise carries git's message, but ``except Exception: return None`` around it
    hands the caller None: nothing is passed on. A handler that raises again, or one that
    catches another error only, lets it through."""
    finding = _auth(tmp_path / "dropped", RAISED_IN_TRY)
    assert not finding.found and "0 more pass git's error on" in finding.rationale
    for name, text in (
            ("again", RAISED_IN_TRY.replace("return None", "raise")),
            ("other", RAISED_IN_TRY.replace("except Exception:",
                                            "except subprocess.TimeoutExpired:"))):
        finding = _auth(tmp_path / name, text)
        assert _passed_on(finding) and "1 more pass git's error on" in finding.rationale, name
