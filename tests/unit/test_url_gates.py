"""A test of the repository URL validates it only when a bad URL cannot reach the clone: a
branch of it raises, returns or skips the clone, or the clone sits in the passing branch
(`forensics.code.url_checks`). A test whose branches both reach the clone only changes the
URL."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import by_facet, write_repo

# the URL's prefix is tested, but only to decide whether to add a mirror prefix
REWRITE = '''
import os
import subprocess


def fetch_repo(address, into):
    mirror = os.environ.get("MIRROR")
    if mirror and address.startswith("https://"):
        address = address.replace("https://", mirror)
    subprocess.run(["git", "clone", address, into], check=True, timeout=60)
    return into
'''


def _url(tmp_path: Path, text: str):
    names = write_repo(tmp_path, {"fetch.py": text})
    return by_facet(code_findings(tmp_path, names)[0], "safety.url_validation")


def test_a_test_whose_branches_both_reach_the_clone_is_no_validation(tmp_path: Path) -> None:
    finding = _url(tmp_path / "rewrite", REWRITE)
    assert not finding.found and "URL checks in the clone function: 0" in finding.rationale
    assert "Not a validation: fetch.py:8" in finding.rationale
    assert finding.location == "fetch.py:8"


def test_a_test_that_stops_a_bad_url_is_validation(tmp_path: Path) -> None:
    """A branch that raises, returns or exits, a clone only in the passing branch, and a
    pattern match bound to a name that a stopping test reads."""
    stops = {
        "raise": ('        address = address.replace("https://", mirror)\n',
                  '        raise ValueError(address)\n'),
        "return": ('        address = address.replace("https://", mirror)\n',
                   '        return None\n'),
        "exit": ('        address = address.replace("https://", mirror)\n',
                 '        sys.exit(2)\n'),
        "inside": ('        address = address.replace("https://", mirror)\n'
                   '    subprocess.run(["git", "clone", address, into], check=True, '
                   'timeout=60)\n',
                   '        subprocess.run(["git", "clone", address, into], check=True, '
                   'timeout=60)\n'),
    }
    for name, (old, new) in stops.items():
        text = REWRITE.replace(old, new).replace("import os\n", "import os\nimport sys\n")
        finding = _url(tmp_path / name, text)
        assert finding.found and "URL checks in the clone function: 1" in finding.rationale, \
            name
        assert "Not a validation" not in finding.rationale, name
    bound = REWRITE.replace(
        '    if mirror and address.startswith("https://"):\n'
        '        address = address.replace("https://", mirror)\n',
        '    shape = re.fullmatch(r"https://[\\w.-]+/[\\w./-]+", address)\n'
        '    if shape is None:\n'
        '        raise ValueError(address)\n').replace("import os\n", "import os\nimport re\n")
    finding = _url(tmp_path / "bound", bound)
    assert finding.found and finding.location == "fetch.py:9", finding.location
