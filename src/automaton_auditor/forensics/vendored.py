"""Folders that hold other people's code a repository carries (a committed virtualenv,
installed packages, vendored libraries, build output, caches): neither the code a fact is
about nor work a commit did."""

from __future__ import annotations

import re

VENDORED_DIRS = (r"\.?venv[^/]*|env|\.env|site-packages|node_modules|vendor(ed)?|third_party|"
                 r"build|dist|__pycache__|\.tox|\.nox|\.eggs|\.git|\.mypy_cache|\.pytest_cache")
VENDORED = re.compile(rf"(^|/)({VENDORED_DIRS})/")


def is_vendored(path: str) -> bool:
    """The path lies in a folder of carried code (`VENDORED_DIRS`)."""
    return VENDORED.search(path) is not None
