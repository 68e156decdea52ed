"""The text of a subprocess error (``str(e)`` of a CalledProcessError or TimeoutExpired) is
the command and its exit status: testing it for an auth word, or handing it on, neither
tells an authentication failure apart nor passes git's message on (`forensics.code.auth`);
its ``e.stderr`` does."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# a clone whose handler looks for an auth word in the error's text
TEXT_TEST = '''
import subprocess


def fetch_repo(address, into):
    try:
        subprocess.run(["git", "clone", address, into], check=True, capture_output=True)
    except subprocess.CalledProcessError as failure:
        text = repr(failure)
        if "permission" in text:
            return "denied"
        return text
    return into
'''

# a broad handler around a clone that raises on failure, handing the error's text on
BROAD_TEXT = '''
import subprocess


def fetch_repo(address, into):
    try:
        subprocess.check_call(["git", "clone", address, into])
        return into
    except Exception as problem:
        raise RuntimeError(f"could not fetch: {problem}") from problem
'''


def _auth(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"fetch.py": text})
    return by_facet(code_findings(tmp_path, names)[0], "safety.auth_errors")


def _passed_on(finding) -> bool:
    """git's error passed on and no authentication test: not found, and neutral (neither
    support nor the failure pattern)."""
    return not finding.found and finding.pattern == "neutral" and \
        "no test for an authentication failure" in finding.rationale


def test_an_auth_word_in_a_subprocess_error_s_text_is_no_test_and_passes_nothing_on(
        tmp_path: Path) -> None:
    for name, text, lines in (("test", TEXT_TEST, ("8:", "9:", "10:", "12:")),
                              ("broad", BROAD_TEXT, ("7:", "9:", "10:"))):
        finding = _auth(tmp_path / name, text)
        assert not finding.found, name
        assert "0 of 1" in finding.rationale and "0 more pass git's error on" in \
            finding.rationale, name
        assert "only through the text of a subprocess error" in finding.rationale, name
        quoted = [q.split(": ", 1)[0] for q in (finding.content or "").splitlines()]
        assert quoted == [f"fetch.py:{n.rstrip(':')}" for n in lines], (name, quoted)
        assert finding.location == f"fetch.py:{lines[2].rstrip(':')}", name


def test_the_error_s_output_still_tells_and_reports_the_failure(tmp_path: Path) -> None:
    """``failure.stderr`` holds git's message: testing it is an auth test, handing it on
    (also through a name built from it) passes git's error on; GitPython's error text
    includes git's stderr."""
    tested = TEXT_TEST.replace("repr(failure)", "failure.stderr.decode()")
    finding = _auth(tmp_path / "stderr", tested)
    assert finding.found and "1 of 1" in finding.rationale
    assert finding.location == "fetch.py:10"
    built = BROAD_TEXT.replace('raise RuntimeError(f"could not fetch: {problem}") from problem',
                               'detail = problem.output\n'
                               '        note = f"could not fetch: {detail}"\n'
                               '        raise RuntimeError(note)')
    finding = _auth(tmp_path / "built", built)
    assert _passed_on(finding) and "1 more pass git's error on" in finding.rationale
    assert finding.location == "fetch.py:12"
    library = BROAD_TEXT.replace("import subprocess", "import git").replace(
        'subprocess.check_call(["git", "clone", address, into])',
        "git.Repo.clone_from(address, into)")
    finding = _auth(tmp_path / "library", library)
    assert _passed_on(finding) and "1 more pass git's error on" in finding.rationale


def test_a_timeout_handler_is_not_where_the_helper_passes_git_s_error_on(
        tmp_path: Path) -> None:
    """The helper's timeout handler hands on the command (its text); the next handler
    hands on git's stderr, and that line is the fact's location."""
    helper = '''
import subprocess


def run_git(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30, check=True)
    except subprocess.TimeoutExpired as late:
        raise RuntimeError(f"timed out: {args}") from late
    except subprocess.CalledProcessError as failed:
        raise RuntimeError(failed.stderr) from failed


def fetch_repo(address, into):
    run_git(["git", "clone", address, into])
    return into
'''
    finding = _auth(tmp_path / "helper", helper)
    assert _passed_on(finding) and finding.location == "fetch.py:11"
