"""Subprocess and git calls counted as checked for errors only when the code sees them fail:
``check=False`` is no check, an ``except`` must catch the call's error, and a returncode read
must be of that call's own result (`forensics.code.failures`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# Bnobody47/The-Auditor@interim src/tools/repo_tools.py, shortened
CHECK_FALSE = '''
import subprocess
import tempfile
from pathlib import Path


def _run_git_log(repo_dir):
    result = subprocess.run(["git", "log", "--oneline"], cwd=str(repo_dir),
                            capture_output=True, text=True, check=False)
    return result.stdout.strip()


def clone(url):
    tmp = tempfile.mkdtemp()
    subprocess.run(["git", "clone", url, tmp], check=False, capture_output=True)
    return _run_git_log(tmp)
'''


def _errors(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"tools.py": text})
    return by_facet(code_findings(tmp_path, names)[0], "safety.subprocess_errors")


def test_check_false_is_no_error_handling(tmp_path: Path) -> None:
    errors = _errors(tmp_path, CHECK_FALSE)
    assert not errors.found
    assert (errors.data["handled"], errors.data["total"]) == (0, 2)
    assert errors.data["unchecked"] == ["tools.py:8", "tools.py:15"]
    assert "0 of 2" in errors.rationale and "check=False" in (errors.content or "")


def test_check_true_a_raising_call_or_a_value_not_false_are_checked(tmp_path: Path) -> None:
    for i, call in enumerate(['subprocess.run(["git", "clone", url, tmp], check=True)',
                              'subprocess.check_output(["git", "clone", url, tmp])',
                              'subprocess.run(["git", "clone", url, tmp], check=strict)']):
        text = CHECK_FALSE.replace(
            'subprocess.run(["git", "clone", url, tmp], check=False, capture_output=True)', call
        ).replace("def clone(url):", "def clone(url, strict=True):")
        errors = _errors(tmp_path / str(i), text)
        assert errors.data["handled"] == 1, call
        assert errors.data["unchecked"] == ["tools.py:8"], call


def test_a_returncode_read_checks_only_the_call_whose_result_it_reads(tmp_path: Path) -> None:
    errors = _errors(tmp_path, '''
import subprocess


def clone(url, dest):
    subprocess.run(["git", "clone", url, dest], check=False)
    log = subprocess.run(["git", "-C", dest, "log"], capture_output=True)
    if log.returncode != 0:
        raise RuntimeError(log.stderr)
    code = subprocess.call(["git", "-C", dest, "fsck"])
    if code:
        raise RuntimeError("fsck")
    proc = subprocess.Popen(["git", "-C", dest, "gc"])
    if proc.wait() != 0:
        raise RuntimeError("gc")
''')
    assert (errors.data["handled"], errors.data["total"]) == (3, 4)
    assert errors.data["unchecked"] == ["tools.py:6"]
    assert errors.found
    assert "tools.py:8: if log.returncode != 0:" in (errors.content or "")


def test_only_an_except_that_catches_the_call_s_error_checks_it(tmp_path: Path) -> None:
    body = '''
import subprocess


def clone(url, dest):
    try:
        subprocess.run(["git", "clone", url, dest], timeout=60)
    {handler}
'''
    cases = {"except subprocess.SubprocessError as exc:\n        raise RuntimeError(url) "
             "from exc": 1,
             "except (ValueError, OSError) as exc:\n        return None, str(exc)": 1,
             "except (ValueError, OSError):\n        return None": 0,
             "except ValueError:\n        return None": 0,
             "finally:\n        print(url)": 0}
    for i, (handler, handled) in enumerate(cases.items()):
        errors = _errors(tmp_path / str(i), body.format(handler=handler))
        assert errors.data["handled"] == handled, handler


def test_the_read_exit_status_is_quoted_before_an_except_around_the_call(
        tmp_path: Path) -> None:
    # Sanoy24/trp1-automation-auditor src/tools/repo_tools.py, shortened
    errors = _errors(tmp_path, '''
import subprocess


def clone(url, dest):
    try:
        result = subprocess.run(["git", "clone", url, dest], capture_output=True, timeout=9)
        if result.returncode != 0:
            return None, result.stderr
        return dest, None
    except subprocess.TimeoutExpired:
        return None, "timed out"
''')
    assert errors.found
    assert (errors.content or "").splitlines()[1] == \
        "tools.py:8: if result.returncode != 0:"


def test_an_except_that_drops_the_error_is_no_check(tmp_path: Path) -> None:
    body = '''
import logging
import subprocess
import tempfile

import git


def clone(url):
    temp_dir = tempfile.TemporaryDirectory()
    try:
        git.Repo.clone_from(url, temp_dir.name)
        subprocess.run(["git", "-C", temp_dir.name, "log"], check=True)
        return temp_dir.name, temp_dir
    {handler}
'''
    swallowed = _errors(tmp_path / "swallowed", body.format(
        handler="except Exception:\n        return None, None"))
    assert not swallowed.found and swallowed.data["handled"] == 0
    assert sorted(swallowed.data["swallowed"]) == ["tools.py:12", "tools.py:13"]
    assert "Swallowed: 2 of them" in swallowed.rationale
    assert "tools.py:15: except Exception:\ntools.py:16: return None, None" in (
        swallowed.content or "")
    # the error kept, raised, logged or printed: a check
    for i, handler in enumerate(("except Exception as e:\n        return None, str(e)",
                                 "except Exception:\n        raise",
                                 "except git.GitCommandError:\n        raise RuntimeError(url)",
                                 "except Exception:\n        logging.exception(url)",
                                 "except Exception:\n        print('clone failed')\n"
                                 "        return None, None")):
        kept = _errors(tmp_path / str(i), body.format(handler=handler))
        assert kept.found and kept.data["handled"] == 2 and not kept.data["swallowed"], \
            handler


def test_a_retry_loop_s_continue_hands_the_failure_on_and_only_a_clone_names_auth(
        tmp_path: Path) -> None:
    retry = _errors(tmp_path / "retry", '''
import git


def clone(url, dest):
    for branch in ("main", "master"):
        try:
            return git.Repo.clone_from(url, dest, branch=branch)
        except git.GitCommandError:
            continue
    return None
''')
    assert retry.found and not retry.data["swallowed"]
    log = _errors(tmp_path / "log", '''
import subprocess


def history(path):
    try:
        return subprocess.run(["git", "log"], cwd=path, check=True).stdout
    except subprocess.CalledProcessError:
        return []
''')
    assert not log.found and log.data["swallowed"] == ["tools.py:7"]
    assert "does not say what failed: " in log.rationale and "authentication" not in log.rationale


def test_a_swallowed_read_beside_a_checked_clone_is_said_not_counted_against_it(
        tmp_path: Path) -> None:
    text = '''
import subprocess


def clone(url, dest):
    try:
        subprocess.run(["git", "clone", url, dest], check=True, timeout=60)
    except subprocess.CalledProcessError as e:
        raise ValueError(e.stderr)


def history(path):
    try:
        return subprocess.run(["git", "log"], cwd=path, check=True).stdout
    except subprocess.CalledProcessError:
        return []


def count(path):
    try:
        return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=path,
                                  check=True).stdout)
    except (subprocess.CalledProcessError, ValueError):
        return 0
'''
    errors = _errors(tmp_path / "read", text)
    assert errors.found and (errors.data["handled"], errors.data["total"]) == (1, 3)
    assert sorted(errors.data["swallowed"]) == ["tools.py:14", "tools.py:21"]
    assert "Not counted against the check" in errors.rationale
    assert "tools.py:15: except subprocess.CalledProcessError:\ntools.py:16: return []" in (
        errors.content or "")
    # the clone's own error swallowed: it counts against the check
    dropped = _errors(tmp_path / "clone", text.replace(
        "    except subprocess.CalledProcessError as e:\n        raise ValueError(e.stderr)",
        "    except subprocess.CalledProcessError:\n        return None"))
    assert not dropped.found and "authentication error included" in dropped.rationale
