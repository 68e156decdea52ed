"""Safety facts read on what the code does: process calls checked through a helper, URL tests
made before the clone, a json.loads on a model reply only, a clone under the temp folder."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

RUN_HELPER = '''
import re
import subprocess
import tempfile
from pathlib import Path


def _run(cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, check=False, text=True, capture_output=True,
                          timeout=45)


def clone_repo(repo_url, destination):
    if not re.match(r"^https://github[.]com/[^/]+/[^/]+$", repo_url):
        raise ValueError("bad url")
    result = _run(["git", "clone", repo_url, str(destination)])
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return destination


def history(path):
    result = _run(["git", "log"], cwd=path)
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return result.stdout


def audit(url):
    with tempfile.TemporaryDirectory() as tmp:
        return history(clone_repo(url, Path(tmp)))
'''


def test_a_process_call_a_helper_returns_is_checked_by_its_callers(tmp_path: Path) -> None:
    """eyorata@interim: ``_run`` returns subprocess.run's result and both callers test its
    returncode; it read "0 of 1 subprocess calls checked"."""
    files = write_repo(tmp_path / "a", {"tools.py": RUN_HELPER})
    errors = by_facet(code_findings(tmp_path / "a", files)[0], "safety.subprocess_errors")
    assert errors.found and "_run" in errors.rationale
    assert "if result.returncode != 0:" in (errors.content or "")
    # one caller that ignores the result leaves the call unchecked
    careless = RUN_HELPER.replace('''    result = _run(["git", "log"], cwd=path)
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return result.stdout''', '''    return _run(["git", "log"], cwd=path).stdout''')
    files = write_repo(tmp_path / "b", {"tools.py": careless})
    errors = by_facet(code_findings(tmp_path / "b", files)[0], "safety.subprocess_errors")
    assert not errors.found


def test_only_a_test_of_the_url_before_the_clone_validates_it(tmp_path: Path) -> None:
    """Miked1991@interim: ``repo.head.is_valid()`` after the clone read as "URL checks in
    the clone function: 1"."""
    files = write_repo(tmp_path / "a", {"tools.py": RUN_HELPER})
    url = by_facet(code_findings(tmp_path / "a", files)[0], "safety.url_validation")
    assert url.found and "re.match" in (url.content or "")
    after = '''
import tempfile

import git


def clone(repo_url):
    """Safely clone a valid URL, sanitised."""
    path = tempfile.mkdtemp()
    repo = git.Repo.clone_from(repo_url, path, depth=1)
    if not repo.head.is_valid():
        return None
    return path
'''
    files = write_repo(tmp_path / "b", {"tools.py": after})
    url = by_facet(code_findings(tmp_path / "b", files)[0], "safety.url_validation")
    assert not url.found
    allowed = after.replace('    path = tempfile.mkdtemp()\n', '    if not repo_url.startswith('
                            '"https://github.com/"):\n        raise ValueError(repo_url)\n'
                            '    path = tempfile.mkdtemp()\n')
    files = write_repo(tmp_path / "c", {"tools.py": allowed})
    url = by_facet(code_findings(tmp_path / "c", files)[0], "safety.url_validation")
    assert url.found and "startswith" in (url.content or "")
    # a parse that only names the clone's folder decides nothing (yohans-kasaw)
    named = after.replace('    path = tempfile.mkdtemp()\n', '    name = urlparse(repo_url).path\n'
                          '    path = tempfile.mkdtemp(prefix=name)\n').replace(
        "import tempfile\n", "import tempfile\nfrom urllib.parse import urlparse\n")
    files = write_repo(tmp_path / "d", {"tools.py": named})
    url = by_facet(code_findings(tmp_path / "d", files)[0], "safety.url_validation")
    assert not url.found


EVIDENCE_PARSE = '''
import json

from langchain_openai import ChatOpenAI


def aggregator(state):
    inventory = state["evidences"][0].content or "[]"
    return {"files": json.loads(inventory)}


def judge(state):
    reply = ChatOpenAI(model="x").invoke("judge")
    return {"opinions": [json.loads(reply.content)]}
'''


def test_json_loads_of_an_evidence_field_is_no_model_output(tmp_path: Path) -> None:
    """eyorata@interim: ``json.loads(repo_inventory[0].content)`` parses an evidence field the
    code wrote itself (there is no model call in the repository); it read "model output
    parsed as free text". A model reply's content stays a free-text parse."""
    files = write_repo(tmp_path, {"nodes.py": EVIDENCE_PARSE})
    parse = by_facet(code_findings(tmp_path, files)[0], "llm.freeform_parse")
    assert parse.found and parse.data["locations"] == ["nodes.py:14"]


def test_a_reply_text_cleaned_in_place_is_still_the_reply(tmp_path: Path) -> None:
    """sumeyaaaa: ``text = response.content`` then ``text = text.split(fence)[1].strip()``
    before ``json.loads(text)``: the name's earlier value is the reply (only the last
    assignment was known, so the judges' fallback parse was missed)."""
    judge = EVIDENCE_PARSE.replace(
        '    return {"opinions": [json.loads(reply.content)]}',
        '    text = reply.content\n'
        '    if "```" in text:\n'
        '        text = text.split("```")[1].strip()\n'
        '    return {"opinions": [json.loads(text)]}')
    files = write_repo(tmp_path, {"nodes.py": judge})
    parse = by_facet(code_findings(tmp_path, files)[0], "llm.freeform_parse")
    assert parse.found and parse.data["locations"] == ["nodes.py:17"]


FIXED_TEMP = '''
import hashlib
import tempfile
from pathlib import Path

import git


def clone_repo_sandbox(repo_url):
    name = hashlib.md5(repo_url.encode()).hexdigest()[:8]
    base = Path(tempfile.gettempdir()) / "sandbox"
    clone_path = base / f"repo_{name}"
    git.Repo.clone_from(repo_url, str(clone_path))
    return str(clone_path)
'''


def test_a_clone_at_a_fixed_path_under_the_temp_folder_is_weak_not_the_worst(
        tmp_path: Path) -> None:
    """yohans-kasaw@interim: a clone into ``gettempdir()/sandbox/repo_<hash>`` read "clone not
    in a temporary directory" like a clone into the working directory (tools 1)."""
    files = write_repo(tmp_path / "a", {"tools.py": FIXED_TEMP})
    findings = code_findings(tmp_path / "a", files)[0]
    sandbox, root = (by_facet(findings, f) for f in ("safety.clone_sandbox",
                                                     "safety.clone_temp_root"))
    assert not sandbox.found and sandbox.confidence < 0.7  # no strong charge
    assert root.found and root.pattern == "success" and "gettempdir" in (root.content or "")
    # the working directory stays the strong failure, with no credit
    cwd = FIXED_TEMP.replace('Path(tempfile.gettempdir()) / "sandbox"', 'Path("work")')
    files = write_repo(tmp_path / "b", {"tools.py": cwd})
    findings = code_findings(tmp_path / "b", files)[0]
    sandbox, root = (by_facet(findings, f) for f in ("safety.clone_sandbox",
                                                     "safety.clone_temp_root"))
    assert not sandbox.found and sandbox.confidence >= 0.7
    assert not root.found and root.pattern == "neutral"


SANDBOX = '''
import subprocess
import tempfile
from urllib.parse import urlparse


def is_safe_url(url):
    parsed = urlparse(url)
    return parsed.scheme == "https" and "github.com" in parsed.netloc


class RepoSandbox:
    def __init__(self, repo_url):
        if not is_safe_url(repo_url):
            raise ValueError(repo_url)
        self.repo_url = repo_url

    def __enter__(self):
        self.temp_dir = tempfile.mkdtemp()
        subprocess.run(["git", "clone", self.repo_url, "."], cwd=self.temp_dir, check=True)
        return self.temp_dir
'''


def test_a_url_the_constructor_tests_before_storing_it_is_validated(tmp_path: Path) -> None:
    """Natnael-Alemseged: ``__enter__`` clones ``self.repo_url``, which ``__init__`` only
    stores after ``is_safe_url`` accepts it: the clone never sees an unchecked URL."""
    files = write_repo(tmp_path / "a", {"tools.py": SANDBOX})
    url = by_facet(code_findings(tmp_path / "a", files)[0], "safety.url_validation")
    assert url.found and "is_safe_url(repo_url)" in (url.content or "")
    # a constructor that stores the URL untested validates nothing
    untested = SANDBOX.replace("        if not is_safe_url(repo_url):\n"
                               "            raise ValueError(repo_url)\n", "")
    files = write_repo(tmp_path / "b", {"tools.py": untested})
    assert not by_facet(code_findings(tmp_path / "b", files)[0],
                        "safety.url_validation").found


def test_a_url_added_to_the_command_by_an_augmented_assignment_is_the_one_tested(
        tmp_path: Path) -> None:
    """NebiyouBelaineh: ``cmd += [repo_url, tmp]`` after ``if not
    repo_url.startswith("https://")``: the clone function's own test was not counted."""
    source = '''
import subprocess
import tempfile


def clone(repo_url):
    if not repo_url.startswith("https://"):
        return None
    tmp = tempfile.mkdtemp()
    cmd: list[str] = ["git", "clone"]
    cmd += [repo_url, tmp]
    subprocess.run(cmd, check=True)
    return tmp
'''
    files = write_repo(tmp_path, {"tools.py": source})
    url = by_facet(code_findings(tmp_path, files)[0], "safety.url_validation")
    assert url.found and url.rationale.startswith("URL checks in the clone function: 1;")
