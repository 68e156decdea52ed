"""Where a fact points, structured: a file and line, a report page, a commit, or the
repository as a whole; and the link a reader can follow (a GitHub blob URL for GitHub
targets, the relative path otherwise).

Detectives write locations as short strings (``src/graph.py:56``, ``report p.7``,
``commit d0f7ed64388e``, ``git log``, ``.``); this is the one place that reads them back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, urlsplit

from automaton_auditor.output.mdsafe import md_code
from automaton_auditor.state import Evidence

LocationKind = Literal["file", "report", "commit", "repository"]

_FILE = re.compile(r"^(?P<path>[^\s:][^:]*?)(?::(?P<line>\d+)(?:-\d+)?)?$")
_PAGE = re.compile(r"^report(?: p\.(?P<page>\d+))?$")
_COMMIT = re.compile(r"^commit (?P<sha>[0-9a-f]{7,40})$")
_GITHUB = re.compile(r"^/(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class Location:
    """A parsed location: `path` and `line` for a file, `page` for the report, `commit`
    for a commit; `kind` says which."""

    kind: LocationKind
    text: str
    path: str | None = None
    line: int | None = None
    page: int | None = None
    commit: str | None = None

    @property
    def in_file(self) -> bool:
        """True when the location names a file of the repository."""
        return self.kind == "file"


def parse_location(text: str) -> Location:
    """Read a detective's location string back into its parts."""
    value = text.strip()
    if page := _PAGE.match(value):
        number = page.group("page")
        return Location("report", value, page=int(number) if number else None)
    if commit := _COMMIT.match(value):
        return Location("commit", value, commit=commit.group("sha"))
    if value in ("", ".", "git log") or " " in value:
        return Location("repository", value)
    if match := _FILE.match(value):
        line = match.group("line")
        return Location("file", value, path=match.group("path"),
                        line=int(line) if line else None)
    return Location("repository", value)


def evidence_locations(evidence: Evidence) -> list[Location]:
    """Every file location a fact quotes (its `data["locations"]`, which call facts list),
    or its one location."""
    listed = evidence.data.get("locations")
    if isinstance(listed, list) and listed:
        parsed = [parse_location(str(item)) for item in listed]
        files = [loc for loc in parsed if loc.in_file]
        if files:
            return files
    return [parse_location(evidence.location)]


def github_repo(repo_url: str) -> str | None:
    """``owner/name`` for an https GitHub URL, None for anything else (local paths, other
    hosts)."""
    parts = urlsplit(repo_url)
    if parts.scheme != "https" or (parts.hostname or "").lower() != "github.com":
        return None
    match = _GITHUB.match(parts.path)
    return f"{match.group('owner')}/{match.group('repo')}" if match else None


def location_url(location: Location, repo_url: str, commit: str | None) -> str | None:
    """A URL for a file or commit location of a GitHub target at a known commit; None
    otherwise (the reader gets the relative path as text)."""
    repo = github_repo(repo_url)
    if repo is None or not commit:
        return None
    if location.kind == "file" and location.path:
        anchor = f"#L{location.line}" if location.line else ""
        return f"https://github.com/{repo}/blob/{commit}/{quote(location.path)}{anchor}"
    if location.kind == "commit" and location.commit:
        return f"https://github.com/{repo}/commit/{location.commit}"
    return None


def markdown_location(text: str, repo_url: str, commit: str | None) -> str:
    """A location as Markdown: a link for GitHub targets, code text otherwise."""
    location = parse_location(text)
    url = location_url(location, repo_url, commit)
    shown = md_code(location.text or ".")
    return f"[{shown}]({url})" if url else shown
