"""Cited paths that claim no file of the commit, though the commit has no file there.

A report quotes paths it does not claim: a file it says does not exist (a peer's error, an
earlier run's), the old side of a correction ("Claimed: src/tools/git_tools.py → Actual:
src/tools/repo_tools.py"), and its own file named at another folder ("reports/interim_report.pdf
— This document" while the audited PDF sits at the root). The first two are no claim at all;
the last is a path mismatch of the report itself, not a component it invents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from automaton_auditor.state import CitedPath

# The sentence says the file does not exist (a peer's or an earlier run's error, quoted:
# "Peer audit flagged src/graph.py and src/state.py as missing").
DISOWNED = re.compile(
    r"non-?existent|hallucinat\w*|no such file|\b(?:does|did)(?: not|n't) exist|renamed|"
    r"\bfake\b|\brequires? \S+ to exist\b|\b(?:flagged|reported|marked|listed|called\s+out)"
    r"\b[^;\n]{0,80}?\bas\s+(?:missing|absent|not\s+found)\b"
    r"(?!\s+(?:an?|the|its|their|some|any)\b)", re.IGNORECASE)  # not "as missing a docstring"
# Words right before a path that make it the old side of a correction: "renamed from X",
# "formerly X", "old path: X", "wrong path: X".
_OLD_BEFORE = re.compile(
    r"\b(?:(?:renamed|moved)\s+from|formerly|previously(?:\s+(?:named|called|at))?|"
    r"(?:old|former|previous|wrong|incorrect|stale)\s+(?:file\s*)?(?:name|path|location|"
    r"reference)\s*[:=]?)\s*[`'\"\u2018\u201c(]?$", re.IGNORECASE)
# Words right after it: "X → Actual: Y", "X -> corrected to Y", "X (old name)", "X was renamed
# to Y". An arrow alone is a flow ("graph.py → judges.py"), not a correction.
_OLD_AFTER = re.compile(
    r"^[`'\"\u2019\u201d)]?\s*(?:(?:->|\u2192|=>|\u21d2|-->)\s*(?:actual|correct(?:ed)?|"
    r"now|fixed|real)\b|\(\s*(?:old|former|previous)(?:\s+(?:file\s*)?(?:name|path))?\s*\)|"
    r",?\s*(?:(?:was|has\s+been|now)\s+)?renamed\s+to\b)", re.IGNORECASE)
# The words a report uses for itself, beside a path to a document.
_ITSELF = re.compile(r"\bthis\s+(?:document|report|pdf)\b", re.IGNORECASE)
_DOCUMENT_EXT = (".pdf", ".md", ".docx", ".tex", ".html")


def disowns(context: str) -> bool:
    """Does the sentence say the files it names do not exist?"""
    return bool(DISOWNED.search(context))


def old_side(text: str, start: int, end: int) -> bool:
    """Is text[start:end], a cited path, the old side of a correction? Then the report says
    the file is not (or no longer) there: no claim that it exists."""
    before = text[max(0, start - 60):start]
    return bool(_OLD_BEFORE.search(before) or _OLD_AFTER.match(text[end:end + 40]))


def names_the_report(item: CitedPath, report_name: str | None, files: Iterable[str]
                     ) -> list[str]:
    """The committed files a missing cited path names when it is the audited report itself at
    another folder: its file name is the report's, or the citation calls it "this document".
    Empty when it is not (the file name is committed nowhere, or the path is another file)."""
    name = item.path.rsplit("/", 1)[-1]
    itself = bool(report_name) and name.lower() == (report_name or "").lower()
    if not itself and not (name.lower().endswith(_DOCUMENT_EXT) and _ITSELF.search(
            item.context)):
        return []
    return sorted(f for f in files if f.rsplit("/", 1)[-1] == name)
