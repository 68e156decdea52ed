"""The further tests a failure-cap row (`judging.caps.FAILURE_CAPS`) may put on a fact's data
before it confirms the row's pattern: which facts of a facet a row applies to."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from automaton_auditor.state import Evidence


def identical_personas(fact: Evidence, share: float = 0.8) -> bool:
    """Two persona prompts share more than `share` of their text: the rubric's "personas that
    share most of their prompt text and so agree by construction" (the collusion fact's own
    threshold, a half, also marks prompts that merely share a template)."""
    overlap = fact.data.get("overlap") or {}
    return any(isinstance(v, int | float) and v > share for v in overlap.values())


def on_data(fact: Evidence) -> bool:
    """A dangerous call reached by data (the detectives mark it a security fact)."""
    return fact.security


def empty_file(fact: Evidence) -> bool:
    """The contradiction is a cited file said to hold work that holds no code."""
    return fact.data.get("kind") == "empty_file"


def many_statements(fact: Evidence, least: int = 4) -> bool:
    """The report holds at least `least` statements its code contradicts or placeholders."""
    total = fact.data.get("statements")
    return isinstance(total, int) and total >= least


def graded_cap(cap: int, default: bool = False, kinds: Sequence[str] = ()) -> Callable[..., bool]:
    """True for a fact graded `cap` (``data["cap"]``, or none when `default`) of `kinds`."""
    return lambda fact: (not kinds or fact.data.get("kind") in kinds) and (
        fact.data.get("cap") == cap or (default and fact.data.get("cap") is None))
