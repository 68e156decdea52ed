"""Placeholder files: a stage's stubs are not its code."""

from __future__ import annotations

import pytest

from automaton_auditor.forensics.git.progression import placeholder


@pytest.mark.parametrize("source", [
    "",
    '"""Judges."""\nimport os\n',
    "def judge(state):\n    '''TODO'''\n    return {}\n",
    "def a(s):\n    return {'opinions': []}\n\ndef b(s):\n    pass\n\n"
    "def c(s):\n    return a(s)['opinions'] + b(s)\n",
    "class Judge:\n    '''TODO'''\n",
    "def f():\n    raise NotImplementedError('later')\n",
])
def test_placeholders(source: str) -> None:
    assert placeholder(source)


@pytest.mark.parametrize("source", [
    "g = StateGraph(State)\ng.add_node('a', a)\n",
    "def build():\n    g = StateGraph(State)\n    g.add_edge(START, 'a')\n    return g.compile()\n",
    "class State(TypedDict):\n    evidences: list[str]\n",
    "def a(s):\n    return {}\n\ndef b(s):\n    return len(s)\n",
    "def broken(:\n",
])
def test_working_code(source: str) -> None:
    assert not placeholder(source)
