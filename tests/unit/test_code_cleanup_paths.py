"""A clone's temporary directory removed only on the success path is not removed on every
path: an error between its making and the removal that goes to a handler leaving without
removing it, or that nothing catches, leaves it behind (`forensics.code.cleanup_paths`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# the clone helper makes the directory and returns it; the node removes it at the end of
# its try, and its except returns without removing it
HELPER = '''
import shutil
import subprocess
import tempfile


def clone(url):
    root = tempfile.mkdtemp()
    subprocess.run(["git", "clone", url, root], check=True, timeout=60)
    return root
'''

NODE = HELPER + '''

def investigate(state):
    try:
        path = clone(state["url"])
        log = read_log(path)
        shutil.rmtree(path)
    except Exception as e:
        return {"errors": [str(e)]}
    return {"log": log}


def read_log(path):
    return subprocess.run(["git", "log"], cwd=path, check=True, capture_output=True).stdout
'''


def _cleanup(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"tools.py": text})
    return by_facet(code_findings(tmp_path, names)[0], "safety.clone_cleanup")


def test_a_removal_an_error_skips_is_removed_only_when_no_error_occurs(
        tmp_path: Path) -> None:
    cleanup = _cleanup(tmp_path / "node", NODE)
    assert not cleanup.found and cleanup.pattern == "success"
    assert cleanup.rationale.startswith("Removed only when no error occurs")
    assert cleanup.data["on_error"] == ["tools.py:17"]
    assert cleanup.data["removed"] == ["tools.py:17"] and cleanup.data["kept"] == []
    content = cleanup.content or ""
    assert "tools.py:17: shutil.rmtree(path)" in content
    assert "tools.py:16: log = read_log(path)" in content
    assert "tools.py:18: except Exception as e:" in content
    assert "tools.py:19: return" in content


def test_a_finally_a_removing_handler_or_nothing_raising_removes_it_on_every_path(
        tmp_path: Path) -> None:
    final = NODE.replace('''        shutil.rmtree(path)
    except Exception as e:
        return {"errors": [str(e)]}''', '''    except Exception as e:
        return {"errors": [str(e)]}
    finally:
        shutil.rmtree(path, ignore_errors=True)''')
    handler = NODE.replace('''    except Exception as e:
        return''', '''    except Exception as e:
        shutil.rmtree(path, ignore_errors=True)
        return''')
    # the handler logs and goes on to the removal after the try
    goes_on = NODE.replace('''        shutil.rmtree(path)
    except Exception as e:
        return {"errors": [str(e)]}''', '''    except Exception as e:
        print(e)
        log = ""
    shutil.rmtree(path)''')
    quiet = NODE.replace("        log = read_log(path)\n", "        print(path)\n")
    for name, text in (("final", final), ("handler", handler), ("goes_on", goes_on),
                       ("quiet", quiet)):
        cleanup = _cleanup(tmp_path / name, text)
        assert cleanup.found, (name, cleanup.rationale)
        assert cleanup.data["on_error"] == [], name


def test_an_error_nothing_catches_leaves_the_directory_behind(tmp_path: Path) -> None:
    text = HELPER.split("\n\ndef")[0] + '''


def investigate(url):
    root = tempfile.mkdtemp()
    subprocess.run(["git", "clone", url, root], check=True)
    shutil.rmtree(root)
'''
    cleanup = _cleanup(tmp_path, text)
    assert not cleanup.found and cleanup.data["on_error"] == ["tools.py:11"]
    assert "nothing in that function catches the error" in cleanup.rationale
    assert "tools.py:10: subprocess.run" in (cleanup.content or "")


def test_a_removal_before_a_raise_is_a_failure_path_s_and_rescues_nothing(
        tmp_path: Path) -> None:
    # the helper removes the directory before raising when git is missing: that runs
    # only on a failure, so the caller's skipped removal still decides
    clone = '''    subprocess.run(["git", "clone", url, root], check=True, timeout=60)'''
    text = NODE.replace(clone, '''    if not shutil.which("git"):
        if root:
            shutil.rmtree(root)
        raise RuntimeError("no git")
    subprocess.run(["git", "clone", url, root], check=True, timeout=60)''')
    cleanup = _cleanup(tmp_path, text)
    assert not cleanup.found and len(cleanup.data["on_error"]) == 1


# the tools walk the clone and take ``.git`` out of the walk's list of folders; the clone is
# removed in the finally of the function that runs them
WALKED = HELPER + '''

def python_files(root):
    found = []
    for here, dirs, files in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        found += [f for f in files if f.endswith(".py")]
    return found


def investigate(url):
    path = clone(url)
    results = []
    try:
        results.append(python_files(path))
        results.append(len(python_files(path)))
    finally:
        shutil.rmtree(path, ignore_errors=True)
    return results
'''


def test_an_item_taken_out_of_a_list_is_no_removal_of_the_directory(tmp_path: Path) -> None:
    """``dirs.remove(".git")`` on a list a walk of the clone yields removes an item, not the
    clone: the calls that hand the clone to that walk are no removals, and the fact cites
    the ``rmtree`` in the ``finally``, the line that removes the directory."""
    cleanup = _cleanup(tmp_path / "walked", "import os\n" + WALKED)
    assert cleanup.found
    assert cleanup.data["removed"] == ["tools.py:30"]
    assert cleanup.location == "tools.py:30"
    assert cleanup.content == "tools.py:30: shutil.rmtree(path, ignore_errors=True)"


# the clone helper clears its own folder inside the destination before a retry; the caller
# runs it inside ``with TemporaryDirectory()``, whose exit removes the directory
IN_WITH = '''
import shutil
import subprocess
import tempfile
from pathlib import Path


def clone(url, destination):
    target = destination / "repo"
    for attempt in range(3):
        if subprocess.run(["git", "clone", url, str(target)], timeout=60).returncode == 0:
            return target
        shutil.rmtree(target, ignore_errors=True)
    raise RuntimeError("clone failed")


def investigate(url):
    with tempfile.TemporaryDirectory() as tmp:
        path = clone(url, Path(tmp))
        return sorted(p.name for p in path.iterdir())
'''


def test_a_with_temporary_directory_is_cited_at_its_with_line(tmp_path: Path) -> None:
    """The ``with`` removes the directory as its block ends: the fact cites that line, not
    the call of a helper that only clears a folder inside it."""
    cleanup = _cleanup(tmp_path / "with", IN_WITH)
    assert cleanup.found, cleanup.rationale
    assert cleanup.location == "tools.py:18"
    assert cleanup.content == "tools.py:18: with tempfile.TemporaryDirectory() as tmp:"
